"""Monte Carlo of the schemes whose workers all start together, on any cluster (DESIGN §7).

Sync and k-sync: every worker starts one mini-batch per iteration, the K-th finish is the
iteration's time; local SGD: every worker runs H mini-batches back to back per round, the
slowest sum plus D, per local step.  The mini-batch times come from :meth:`Cluster.jobs`, worker
by worker, so a Markov state advances once per started mini-batch (a cancelled one included)
and carries over from one iteration to the next.  Without a state the iterations are
independent (the t-interval applies); with one they are a stationary sequence (the states
start from the stationary law), averaged by batch means over independent replicas.
"""

from __future__ import annotations

import math

import numpy as np

from .. import limits
from ..clusters import Cluster
from ..delays import Delay
from ..params import ceil_div
from .batchmeans import cv2
from .batchmeans import layout as batch_layout

__all__ = ["JobQueues", "laws", "layout", "kofm_times", "local_sgd_times", "kbatch_sync_times", "cluster_cost",
           "kbatch_sync_cost", "REPLICAS", "BATCHES"]

#: replicas and batches per replica of a run on a cluster with a state (32 batch means)
REPLICAS, BATCHES = 4, 8
#: batches of the one run of a deterministic cluster (a replay)
DETERMINISTIC_BATCHES = 32


def laws(cluster: Cluster) -> list[Delay]:
    """Every law a mini-batch of the cluster can have."""
    return [law for _, mix in cluster.marginals() for _, law in mix]


def layout(cluster: Cluster, K: int, iterations: int, renewal: bool, lockstep: bool) -> tuple[int, int, int, int]:
    """Replicas, warm-up, measured updates per replica and batches per replica of a run on a
    cluster.  The renewal schemes as on i.i.d. workers (the warm-up for the most variable law:
    :func:`~distsgd.engines.batchmeans.layout`); with a state, each batch spans at least
    10·memory mini-batches of every worker (a worker does about K/m per update of a renewal
    scheme, at least one per iteration of the others), so the batch means are nearly
    independent; a deterministic cluster (a replay) has one run, its 32 batches along it.
    Without a state nor renewal: one run of independent iterations."""
    m = cluster.m
    if renewal:
        R, w, n, B = batch_layout(m, K, iterations, max(laws(cluster), key=cv2), lockstep)
        per_worker = K / m
    elif cluster.stateful:
        R, B, w = REPLICAS, BATCHES, 0
        n = max(4, ceil_div(iterations, R * B)) * B
        per_worker = 1.0
    else:
        return 1, 0, iterations, 1
    if cluster.deterministic:  # replicas would be copies: one run, its batches along it
        R, B = 1, DETERMINISTIC_BATCHES
        n = ceil_div(max(n * R, iterations), B) * B
    if cluster.stateful:
        span = math.ceil(min(10.0 * cluster.memory / per_worker, float(limits.MAX_ITERATIONS)))
        n = max(n, span * B)
    return R, w, n, B


def cluster_cost(cluster: Cluster, jobs_per_iteration: int) -> float:
    """One iteration (≈ ns): ≈ 25 ns per mini-batch drawn and ranked, 60 with a Markov state."""
    return (60.0 if cluster.stateful else 25.0) * cluster.m * jobs_per_iteration


def kbatch_sync_cost(cluster: Cluster, K: int, replicas: int) -> float:
    """One k-batch-sync iteration of one replica (≈ ns): every worker's first d ≈ 2K/m + 2 jobs
    drawn, summed and ranked (≈ 40 ns each, 75 with a state), plus, with a state, the ≈ 60 µs
    of one lockstep iteration shared by the replicas."""
    per_job = 75.0 if cluster.stateful else 40.0
    step = 60_000.0 / max(1, replicas) if cluster.stateful else 0.0
    return per_job * cluster.m * _kbatch_depth(cluster.m, K) + step


class JobQueues:
    """Every (replica, worker) slot's upcoming mini-batch times, drawn from the cluster ahead in
    blocks and handed out in order, so that each worker's n-th started mini-batch is the
    cluster's n-th for that worker (a Markov state or a replay position advances exactly once
    per started mini-batch; nothing drawn is ever dropped).  Slot r·m + i is worker i of
    replica r; the slots of one call are distinct.  Each slot's queue holds [pos, end) of a row
    of capacity 2·width; a refill keeps what is left and draws ``width`` more.  Memory:
    R·m·2·width times."""

    def __init__(self, cluster: Cluster, rng: np.random.Generator, R: int, width: int = 16) -> None:
        self.cluster, self.rng = cluster, rng
        self.state = cluster.start(rng, R)
        self.width = max(1, width)
        n = R * cluster.m
        self.x = np.empty((n, 2 * self.width))
        self.slow = np.zeros((n, 2 * self.width), dtype=bool)
        self.pos = np.zeros(n, dtype=np.int64)
        self.end = np.zeros(n, dtype=np.int64)
        self._refill(np.arange(n))

    def _refill(self, slots: np.ndarray) -> None:
        """Move each slot's unused times to the front and draw ``width`` more after them."""
        left = self.end[slots] - self.pos[slots]
        cap = self.x.shape[1]
        at = np.minimum(self.pos[slots][:, None] + np.arange(cap), cap - 1)
        x = np.take_along_axis(self.x[slots], at, axis=1)
        slow = np.take_along_axis(self.slow[slots], at, axis=1)
        new_x, new_slow = self.cluster.draw(self.rng, self.state, slots, self.width)
        put = left[:, None] + np.arange(self.width)
        np.put_along_axis(x, put, new_x, axis=1)
        np.put_along_axis(slow, put, False if new_slow is None else new_slow, axis=1)
        self.x[slots], self.slow[slots] = x, slow
        self.pos[slots], self.end[slots] = 0, left + self.width

    def peek(self, slots: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
        """The next ``depth`` times of each slot and whether each ran slow, without using them."""
        if depth > self.width:  # longer queues (room for what is left plus a new block)
            self.width = max(depth, 2 * self.width)
            grow = 2 * self.width - self.x.shape[1]
            self.x = np.hstack([self.x, np.empty((self.x.shape[0], grow))])
            self.slow = np.hstack([self.slow, np.zeros((self.slow.shape[0], grow), dtype=bool)])
        short = slots[self.end[slots] - self.pos[slots] < depth]
        if short.size:
            self._refill(short)
        at = self.pos[slots][:, None] + np.arange(depth)
        return (np.take_along_axis(self.x[slots], at, axis=1),
                np.take_along_axis(self.slow[slots], at, axis=1))

    def advance(self, slots: np.ndarray, counts: np.ndarray | int) -> None:
        """Mark the next ``counts`` times of each slot (peeked before) as started."""
        self.pos[slots] += counts

    def take(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The next time of each slot, started now, and whether it ran slow."""
        x, slow = self.peek(slots, 1)
        self.advance(slots, 1)
        return x[:, 0], slow[:, 0]


def kbatch_sync_times(cluster: Cluster, K: int, R: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """(R, n): k-batch-sync iterations on a cluster.  Every worker starts at the iteration's
    start and computes back to back; the K-th completion overall ends the iteration and the
    jobs in progress are cancelled (each counted as started).  Without a state the iterations
    are independent and R·n of them run side by side; with one, R runs of n iterations."""
    m = cluster.m
    if not cluster.stateful:  # independent iterations: fresh jobs for each, no queue
        out = np.empty(R * n)
        rows = max(1, limits.CHUNK // (m * 2 * _kbatch_depth(m, K)))
        for s in range(0, R * n, rows):
            r = min(rows, R * n - s)
            out[s:s + r] = _kbatch_fresh(cluster, K, r, rng)
        return out.reshape(R, n)
    q = JobQueues(cluster, rng, R, _kbatch_depth(m, K))
    out = np.empty((R, n))
    for j in range(n):
        out[:, j] = _kbatch_iteration(q, R, m, K)
    return out


def _kbatch_fresh(cluster: Cluster, K: int, rows: int, rng: np.random.Generator) -> np.ndarray:
    """``rows`` independent k-batch-sync iterations of a cluster without a state: every worker's
    first d jobs, their cumulative sums, the K-th smallest; where a worker's d-th completion
    comes before it, every row draws d more (nothing is discarded, so no row is selected)."""
    m = cluster.m
    d = _kbatch_depth(m, K)
    done = np.cumsum(cluster.jobs(rng, None, rows, d), axis=2)
    while True:
        T = np.partition(done.reshape(rows, -1), K - 1, axis=1)[:, K - 1]
        if done.shape[2] >= K or not (done[:, :, -1] < T[:, None]).any():
            return T
        more = min(done.shape[2], K - done.shape[2])
        done = np.concatenate([done, done[:, :, -1:] + np.cumsum(cluster.jobs(rng, None, rows, more), axis=2)],
                              axis=2)


def _kbatch_depth(m: int, K: int) -> int:
    """Mini-batches per worker looked at first: a few more than the K/m a worker does on average."""
    return min(K, 2 * ceil_div(K, m) + 2)


def _kbatch_iteration(q: JobQueues, R: int, m: int, K: int) -> np.ndarray:
    """One k-batch-sync iteration of R replicas from their queues: (R,) its time.  Each worker's
    completions are the cumulative sums of its next jobs; the iteration's time T is the K-th
    smallest of all of them; worker i started #{its completions < T} + 1 jobs (the one in
    progress at T, or the one that ended at T)."""
    slots = np.arange(R * m)
    d = _kbatch_depth(m, K)
    while True:
        x, _ = q.peek(slots, d)
        done = np.cumsum(x.reshape(R, m, d), axis=2)
        T = np.partition(done.reshape(R, m * d), K - 1, axis=1)[:, K - 1]
        # a worker whose d-th completion is before T might have more: look deeper
        if d == K or not (done[:, :, -1] < T[:, None]).any():
            break
        d = min(K, 2 * d)
    started = np.minimum((done < T[:, None, None]).sum(axis=2) + 1, d)
    q.advance(slots, started.ravel())
    return T


def _blocks(cluster: Cluster, R: int, n: int, per: int, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    """(R, m, b·per) mini-batch times, block after block, b·per·m·R ≤ limits.CHUNK."""
    state = cluster.start(rng, R)
    b = max(1, limits.CHUNK // (R * cluster.m * per))
    for s in range(0, n, b):
        k = min(b, n - s)
        yield k, cluster.jobs(rng, state, R, k * per)


def kofm_times(cluster: Cluster, K: int, R: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """(R, n): the K-th of the m mini-batches started together, n iterations of R replicas."""
    out = np.empty((R, n))
    s = 0
    for k, x in _blocks(cluster, R, n, 1, rng):
        out[:, s:s + k] = np.partition(x, K - 1, axis=1)[:, K - 1, :]
        s += k
    return out


def local_sgd_times(cluster: Cluster, H: int, D: float, R: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """(R, n): per local step, (max_i Σ_h X_ih + D)/H of n rounds of R replicas."""
    out = np.empty((R, n))
    s = 0
    for k, x in _blocks(cluster, R, n, H, rng):
        sums = x.reshape(R, cluster.m, k, H).sum(axis=3)
        out[:, s:s + k] = (sums.max(axis=1) + D) / H
        s += k
    return out

"""Event-by-event runs that record every worker's intervals: the Gantt chart of the timeline page.

For drawing, not for estimating: each simulator fills :class:`Intervals` for a few iterations
and returns the update times.  Outcomes: a gradient that was ``used`` fresh or ``stale``, work
``cancelled`` at an update, a worker ``waiting`` idle, the local-SGD averaging round
(``communicating``), or work still running when the window ends (``in flight``).  On a cluster
(DESIGN §7) every worker takes its own next mini-batch, and each interval of work says whether
that mini-batch ran slow (a slow worker, a slow Markov state, a slow time of a replayed trace).
"""

from __future__ import annotations

import numpy as np

from ..clusters import Cluster
from ..delays import Delay
from .clusters import JobQueues

__all__ = ["Intervals", "Jobs", "k_of_m_timeline", "kbatch_sync_timeline", "local_sgd_timeline", "renewal_timeline",
           "dpsgd_timeline", "adpsgd_timeline"]


class Intervals:
    """The timeline's intervals, column by column (empty waits and cancellations dropped)."""

    def __init__(self) -> None:
        self.worker: list[int] = []
        self.start: list[float] = []
        self.end: list[float] = []
        self.outcome: list[str] = []
        self.staleness: list[int] = []
        self.slow: list[bool] = []

    def add(self, w: int, s: float, e: float, outcome: str, staleness: int = 0, slow: bool = False) -> None:
        if e > s or outcome in ("used", "stale"):
            self.worker.append(int(w))
            self.start.append(float(s))
            self.end.append(float(e))
            self.outcome.append(outcome)
            self.staleness.append(int(staleness))
            self.slow.append(bool(slow))

    def add_block(self, w: np.ndarray, s: np.ndarray, e: np.ndarray, outcome: np.ndarray,
                  slow: np.ndarray | None = None) -> None:
        """Many intervals at once (vectorised; staleness 0), in the order given."""
        keep = (e > s) | (outcome == "used") | (outcome == "stale")
        self.worker.extend(w[keep].tolist())
        self.start.extend(s[keep].tolist())
        self.end.extend(e[keep].tolist())
        self.outcome.extend(outcome[keep].tolist())
        self.staleness.extend([0] * int(keep.sum()))
        self.slow.extend((np.zeros(w.shape, dtype=bool) if slow is None else slow)[keep].tolist())


class Jobs:
    """Each worker's next mini-batch times for a timeline (one run): i.i.d. draws of a delay, in
    the order the i.i.d. engines have always drawn them, or a cluster's per-worker sequences."""

    def __init__(self, source: Delay | Cluster, rng: np.random.Generator) -> None:
        self.rng = rng
        self.delay = source if isinstance(source, Delay) else None
        self.queues = JobQueues(source, rng, 1) if isinstance(source, Cluster) else None

    def take(self, workers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The next mini-batch of each of ``workers`` (distinct), started now, and whether it runs slow."""
        if self.queues is not None:
            return self.queues.take(workers)
        assert self.delay is not None
        return self.delay.sample(self.rng, workers.size), np.zeros(workers.size, dtype=bool)

    def take_one(self, worker: int) -> tuple[float, bool]:
        x, slow = self.take(np.array([worker]))
        return float(x[0]), bool(slow[0])

    def rows(self, m: int, H: int) -> tuple[np.ndarray, np.ndarray]:
        """The next H mini-batches of every worker, (m, H), and which run slow."""
        if self.queues is not None:
            every = np.arange(m)
            x, slow = self.queues.peek(every, H)
            self.queues.advance(every, H)
            return x, slow
        assert self.delay is not None
        return self.delay.sample(self.rng, (m, H)), np.zeros((m, H), dtype=bool)


def k_of_m_timeline(delay: Delay | Cluster, m: int, K: int, iterations: int, rng: np.random.Generator,
                    out: Intervals) -> list[float]:
    """Sync (K = m) and k-sync: all m start together; the update uses the first K, the other
    m − K computations are cancelled."""
    jobs = Jobs(delay, rng)
    updates, t0 = [], 0.0
    every = np.arange(m)
    for _ in range(iterations):
        x, slow = jobs.take(every)
        x = t0 + x
        tK = np.sort(x)[K - 1]
        for i in range(m):
            if x[i] <= tK:
                out.add(i, t0, x[i], "used", slow=slow[i])
                out.add(i, x[i], tK, "waiting")
            else:
                out.add(i, t0, tK, "cancelled", slow=slow[i])
        t0 = tK
        updates.append(t0)
    return updates


def local_sgd_timeline(delay: Delay | Cluster, m: int, H: int, D: float, iterations: int,
                       rng: np.random.Generator, out: Intervals) -> list[float]:
    """Per worker and round: H local steps, the wait for the slowest, the averaging round D (vectorised)."""
    jobs = Jobs(delay, rng)
    updates, t0 = [], 0.0
    kinds = np.array(["used"] * H + ["waiting", "communicating"], dtype=object)
    idle = np.zeros((m, 2), dtype=bool)
    for _ in range(iterations):
        steps, slow = jobs.rows(m, H)
        ends = t0 + np.cumsum(steps, axis=1)
        slowest = ends[:, -1].max()
        s_blk = np.concatenate([np.full((m, 1), t0), ends, np.full((m, 1), slowest)], axis=1)
        e_blk = np.concatenate([ends, np.full((m, 1), slowest), np.full((m, 1), slowest + D)], axis=1)
        out.add_block(np.repeat(np.arange(m), H + 2), s_blk.ravel(), e_blk.ravel(), np.tile(kinds, m),
                      np.hstack([slow, idle]).ravel())
        t0 = slowest + D
        updates.append(t0)
    return updates


def kbatch_sync_timeline(delay: Delay | Cluster, m: int, K: int, iterations: int, rng: np.random.Generator,
                         out: Intervals) -> list[float]:
    """Each iteration, every worker computes back to back on the same parameters until K
    gradients exist overall; the rest is cancelled."""
    jobs = Jobs(delay, rng)
    updates, t0 = [], 0.0
    for _ in range(iterations):
        t0 = _kbatch_sync_iteration(jobs, m, K, t0, out)
        updates.append(t0)
    return updates


def _kbatch_sync_iteration(jobs: Jobs, m: int, K: int, t0: float, out: Intervals) -> float:
    starts = np.full(m, t0)
    x, slow = jobs.take(np.arange(m))
    ends = t0 + x
    done: list[tuple[float, int, float, bool]] = []
    while len(done) < K:
        i = int(np.argmin(ends))
        done.append((ends[i], i, starts[i], bool(slow[i])))
        if len(done) == K:
            break  # the iteration ends: i does not start again
        starts[i] = ends[i]
        xi, slow[i] = jobs.take_one(i)
        ends[i] = starts[i] + xi
    T = done[-1][0]
    for e, i, s, sl in done:
        out.add(i, s, e, "used", slow=sl)
    starts[done[-1][1]] = T  # the K-th finisher has nothing in progress
    for i in range(m):
        out.add(i, starts[i], T, "cancelled", slow=slow[i])
    return T


def renewal_timeline(delay: Delay | Cluster, m: int, K: int, waits: bool, iterations: int,
                     rng: np.random.Generator, out: Intervals) -> list[float]:
    """Event by event: a worker that finishes pushes; every K pushes the server updates.  With
    ``waits`` (k-async) the pushers wait for the update and restart on it; otherwise (async,
    k-batch-async) a pusher reads the current parameters and restarts at once."""
    jobs = Jobs(delay, rng)
    start = np.zeros(m)
    finish, slow = jobs.take(np.arange(m))
    read = np.zeros(m, dtype=int)
    version = 0
    pushed: list[tuple[int, float]] = []  # (worker, push time) since the last update
    updates: list[float] = []
    while version < iterations:
        busy = np.where(np.isinf(start), np.inf, finish)
        i = int(np.argmin(busy))
        t = float(finish[i])
        st = version - read[i]
        out.add(i, start[i], t, "used" if st == 0 else "stale", st, slow=slow[i])
        pushed.append((i, t))
        if waits:
            start[i] = np.inf  # waiting for the update
        else:
            read[i] = version + (1 if len(pushed) == K else 0)
            start[i] = t
            x, slow[i] = jobs.take_one(i)
            finish[i] = t + x
        if len(pushed) == K:
            version += 1
            updates.append(t)
            if waits:
                for w, tp in pushed:
                    out.add(w, tp, t, "waiting")
                    read[w] = version
                    start[w] = t
                    x, slow[w] = jobs.take_one(w)
                    finish[w] = t + x
            pushed = []
    t_end = updates[-1]
    for i in range(m):
        if np.isfinite(start[i]) and start[i] < t_end:
            out.add(i, start[i], t_end, "in flight", slow=slow[i])
    return updates


def dpsgd_timeline(delay: Delay | Cluster, closed: np.ndarray, iterations: int, rng: np.random.Generator,
                   out: Intervals) -> list[float]:
    """D-PSGD (DESIGN §12): node i starts iteration k + 1 once it and every neighbour (``closed[i]``,
    its closed neighbourhood) have finished iteration k, t_i(k+1) = max_{j ∈ N(i) ∪ {i}} t_j(k) + X_i(k).
    A node that finished before its slowest neighbour is ``waiting``; every gradient is ``used``
    fresh (on the node's own model).  The "updates" are the times the last node ends an iteration."""
    m = closed.shape[0]
    jobs = Jobs(delay, rng)
    every = np.arange(m)
    t = np.zeros(m)
    updates: list[float] = []
    for k in range(iterations):
        start = t[closed].max(axis=1)
        if k:
            out.add_block(every, t, start, np.full(m, "waiting", dtype=object))
        x, slow = jobs.take(every)
        t = start + x
        out.add_block(every, start, t, np.full(m, "used", dtype=object), slow)
        updates.append(float(t.max()))
    return updates


def adpsgd_timeline(delay: Delay | Cluster, indptr: np.ndarray, indices: np.ndarray, iterations: int,
                    rng: np.random.Generator, out: Intervals) -> list[float]:
    """AD-PSGD (DESIGN §12): no node waits.  When node i finishes a gradient it averages its model
    with a uniformly random neighbour j, applies the gradient and starts again at once.  An
    interval is ``used`` when node i's model did not change while it computed, else ``stale`` with
    the number of changes (averagings it took part in, started by a neighbour); each finish is an
    "update"."""
    m = indptr.size - 1
    jobs = Jobs(delay, rng)
    start = np.zeros(m)
    finish, slow = jobs.take(np.arange(m))
    changes = np.zeros(m, dtype=np.int64)  # changes to each node's model since it last read it
    updates: list[float] = []
    while len(updates) < iterations:
        i = int(np.argmin(finish))
        t = float(finish[i])
        st = int(changes[i])
        out.add(i, start[i], t, "used" if st == 0 else "stale", st, slow=slow[i])
        lo, hi = int(indptr[i]), int(indptr[i + 1])
        if hi > lo:
            j = int(indices[lo + int(rng.integers(hi - lo))])
            changes[j] += 1
        changes[i] = 0  # i averages, applies its gradient and reads its model
        updates.append(t)
        start[i] = t
        x, slow[i] = jobs.take_one(i)
        finish[i] = t + x
    t_end = updates[-1]
    for i in range(m):
        if start[i] < t_end:
            out.add(i, start[i], t_end, "in flight", slow=slow[i])
    return updates

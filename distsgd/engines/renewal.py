"""Monte Carlo engines for the renewal schemes (async, k-async, k-batch-async): long runs.

* :func:`merged_stream` — k-batch-async (and async, K = 1): workers never wait, so each is an
  independent renewal process and the run is a merge of m cumulative sums, streamed in
  windows of time (memory does not grow with the run);
* :func:`kasync_blocks` — k-async: stepped update by update, restarting the K pushers, by a
  compiled kernel (:mod:`~distsgd.engines.runtime_kernels`, which releases the GIL) or by its numpy
  reference path (R replicas in lockstep); both give the same numbers for the same seed.

Both give an :class:`UpdateTrace` (update times, the workers of each update, each gradient's
staleness) that the runtime Monte Carlo and the SGD simulation consume, and both stream into
:class:`~distsgd.engines.batchmeans.BatchMeans` for long runs.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .. import jit, limits
from ..clusters import Cluster
from ..delays import Delay
from ..params import ceil_div
from . import runtime_kernels as kernels
from .batchmeans import BatchMeans
from .clusters import JobQueues

#: what the engines draw mini-batch times from: one law for every worker (i.i.d.), or a cluster
#: (DESIGN §7) whose workers each consume their own sequence (:class:`~.clusters.JobQueues`)
Source = Delay | Cluster

__all__ = [
    "UpdateTrace", "kasync_blocks", "kasync_trace", "kasync_batch_means", "kasync_cost", "kasync_cluster_cost",
    "merged_stream", "merged_trace", "merged_batch_means", "merged_cost", "push_staleness", "Source", "earliest",
]


#: k-async cost (≈ ns) per path: the overhead of one step shared by the replicas, then per
#: replica, per worker and per pusher.  The numpy path steps R replicas in lockstep (measured on
#: an idle 2-core machine, one core: 12 µs per step at R = 4, m = 16; 46 µs at R = 150, m = 16;
#: 271 µs at R = 150, m = 100; 45 µs at R = 4, m = 1000, K = 250 — the model is within ×0.6–2.7
#: of these, erring high).  The compiled stepper (kernels.kasync_steps) has no per-step overhead:
#: ≈ 3 ns per worker (the merge) and 70 ns per pusher (its draw, the sort of the new finish
#: times) plus the batch means (measured on a loaded 2-core machine, kernel alone: 140–170 ns at
#: m = 16, K = 4; 1.5–1.6 µs at m = 100, K = 25; 19–20 µs at m = 1000, K = 250 — erring high)
KASYNC_NUMPY = (15_000.0, 100.0, 10.0, 20.0)
KASYNC_KERNEL = (0.0, 40.0, 3.0, 70.0)


def kasync_cost(m: int, K: int, replicas: int) -> float:
    """One k-async update of one replica (≈ ns) on the path in force (:data:`distsgd.jit.ENABLED`):
    the step shared by the replicas, plus per replica, per worker and per pusher."""
    step, replica, worker, pusher = KASYNC_KERNEL if jit.ENABLED else KASYNC_NUMPY
    return step / max(1, replicas) + replica + worker * m + pusher * K


def kasync_cluster_cost(m: int, K: int, replicas: int) -> float:
    """One k-async update of one replica on a cluster (≈ ns): the numpy path plus each
    pusher's job taken from its worker's queue (≈ 30 µs per lockstep step shared by the
    replicas, 200 ns per pusher; benchmarks/results/clusters.md measured 86–109 µs at m = 1000,
    K = 250 and 0.65–1.05 ms at m = 10 000, K = 2500)."""
    step, replica, worker, pusher = KASYNC_NUMPY
    return (step + 30_000.0) / max(1, replicas) + replica + worker * m + (pusher + 200.0) * K


def merged_cost(m: int, K: int) -> float:
    """One update of the merged renewal processes (≈ ns): ≈ 200–400 ns per push (random access
    into per-worker state grows with m) plus the bookkeeping of one update."""
    return (200.0 + 0.002 * m) * K + 100.0


@dataclass(eq=False)
class UpdateTrace:
    """``updates`` consecutive updates in each of R independent replicas, in lockstep.

    times      (R, n)      wall-clock time of each update, from the start of the run
    workers    (R, n, K)   worker ids whose gradients form each update, in push order
                           (None for schemes whose gradients are all fresh)
    staleness  (R, n, K)   update index − version the gradient was computed on
    reads_after_update (K,) True where that push's worker next reads the parameters
                           *after* the update (k-async, and the K-th push of k-batch-async);
                           False where it reads at once, before the update (k-batch-async).
    """

    times: np.ndarray
    workers: np.ndarray | None = None
    staleness: np.ndarray | None = None
    reads_after_update: np.ndarray | None = None

    @property
    def replicas(self) -> int:
        return self.times.shape[0]

    @property
    def updates(self) -> int:
        return self.times.shape[1]


def kasync_blocks(delay: Source, m: int, K: int, R: int, rng: np.random.Generator,
                   record: bool, total: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
    """k-async, R replicas, yielded in blocks of updates for as long as asked.

    The K workers with the earliest finish times (ties by worker id) push in that order, wait
    for the update at the K-th push, then restart on the new parameters; the others are not
    interrupted.  Each block is (times (R, b), staleness (R, b, K), workers (R, b, K) in push
    order or None); the blocks add up to ``total`` updates.  The compiled stepper
    (:func:`~distsgd.engines.runtime_kernels.kasync_steps`) when kernels are compiled, else the numpy
    reference :func:`_kasync_blocks_numpy`: the same random numbers, the same results.  On a
    cluster each pusher takes its own worker's next mini-batch (the numpy path).
    """
    if isinstance(delay, Cluster):
        return _kasync_steps_numpy(_QueuedJobs(delay, rng, R), m, K, R, record, total)
    blocks = _kasync_blocks_kernel if jit.ENABLED else _kasync_blocks_numpy
    return blocks(delay, m, K, R, rng, record, total)


class _FreshJobs:
    """i.i.d. jobs as the compiled stepper reads them: every worker's first, then per block of
    b updates one (R, b, K) draw, a fresh job per pusher per update."""

    def __init__(self, delay: Delay, rng: np.random.Generator, R: int, K: int) -> None:
        self.delay, self.rng, self.R, self.K = delay, rng, R, K
        self.draws = np.empty((R, 0, K))

    def first(self, m: int) -> np.ndarray:
        return self.delay.sample(self.rng, (self.R, m))

    def block(self, b: int) -> None:
        self.draws = self.delay.sample(self.rng, (self.R, b, self.K))

    def next(self, jj: int, slots: np.ndarray) -> np.ndarray:
        return self.draws[:, jj]


class _QueuedJobs:
    """A cluster's jobs: each pusher (slot r·m + i) takes its own worker's next mini-batch."""

    def __init__(self, cluster: Cluster, rng: np.random.Generator, R: int) -> None:
        self.q, self.R = JobQueues(cluster, rng, R), R

    def first(self, m: int) -> np.ndarray:
        return self.q.take(np.arange(self.R * m))[0].reshape(self.R, m)

    def block(self, b: int) -> None:
        pass

    def next(self, jj: int, slots: np.ndarray) -> np.ndarray:
        return self.q.take(slots)[0].reshape(self.R, -1)


def _kasync_block(R: int, K: int) -> int:
    """Updates per block: the fresh draws of a block, (R, b, K), stay within limits.CHUNK."""
    return int(max(16, min(4096, limits.CHUNK // (R * (K + 2)))))


def _kasync_blocks_kernel(delay: Delay, m: int, K: int, R: int, rng: np.random.Generator,
                          record: bool, total: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
    """:func:`kasync_blocks` by the compiled stepper, replica by replica within each block."""
    finish = delay.sample(rng, (R, m))
    read = np.zeros((R, m), dtype=np.int64)
    block = _kasync_block(R, K)
    no_workers = np.empty((0, 0, 0), dtype=np.int32)
    made = np.empty(R, dtype=np.int64)
    j = 0
    while j < total:
        b = min(block, total - j)
        draws = delay.sample(rng, (R, b, K))  # one fresh job per pusher per update
        times = np.empty((R, b))
        stale = np.empty((R, b, K), dtype=np.int64)
        workers = np.empty((R, b, K), dtype=np.int32) if record else None
        kernels.kasync_steps(finish, read, draws, np.full(R, j), times, stale,
                             workers if workers is not None else no_workers, record, np.inf, made)
        j += b
        yield times, stale, workers


def _kasync_blocks_numpy(delay: Delay, m: int, K: int, R: int, rng: np.random.Generator,
                         record: bool, total: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
    """:func:`kasync_blocks` in numpy for i.i.d. workers: the reference of the compiled stepper."""
    return _kasync_steps_numpy(_FreshJobs(delay, rng, R, K), m, K, R, record, total)


def _kasync_steps_numpy(jobs: _FreshJobs | _QueuedJobs, m: int, K: int, R: int,
                        record: bool, total: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
    """:func:`kasync_blocks` in numpy, R replicas in lockstep: the K earliest by a stable sort of
    each replica's finish times, so ties go by worker id; the pushers' next jobs from ``jobs``."""
    finish = jobs.first(m).ravel()  # flat: worker i of replica r at r·m + i
    read = np.zeros(R * m, dtype=np.int64)
    base = (np.arange(R) * m)[:, None]
    fin2 = finish.reshape(R, m)
    block = _kasync_block(R, K)
    j = 0
    while j < total:
        b = min(block, total - j)
        jobs.block(b)
        times = np.empty((R, b))
        stale = np.empty((b, R, K), dtype=np.int64)
        workers = np.empty((b, R, K), dtype=np.int32) if record else None
        for jj in range(b):
            idx = earliest(fin2, K)  # push order
            flat = (idx + base).ravel()
            t = finish[flat[K - 1::K]]
            if workers is not None:
                workers[jj] = idx
            times[:, jj] = t
            stale[jj] = j - read[flat].reshape(R, K)
            read[flat] = j + 1
            finish[flat] = (t[:, None] + jobs.next(jj, flat)).ravel()
            j += 1
        yield times, stale.transpose(1, 0, 2), (workers.transpose(1, 0, 2) if workers is not None else None)


def kasync_trace(delay: Source, m: int, K: int, R: int, n: int, rng: np.random.Generator,
                  record: bool) -> UpdateTrace:
    """The first n updates of :func:`kasync_blocks` as one trace."""
    times = np.empty((R, n))
    staleness = np.empty((R, n, K), dtype=np.int32)
    workers = np.empty((R, n, K), dtype=np.int32) if record else None
    got = 0
    for t, stale, w in kasync_blocks(delay, m, K, R, rng, record, n):
        b = t.shape[1]
        times[:, got:got + b] = t
        staleness[:, got:got + b] = stale
        if workers is not None and w is not None:
            workers[:, got:got + b] = w
        got += b
    trace = UpdateTrace(times, staleness=staleness)
    if record:
        trace.workers = workers
        trace.reads_after_update = np.ones(K, dtype=bool)
    return trace


def earliest(fin: np.ndarray, K: int) -> np.ndarray:
    """Each row's K smallest by (value, column), in that order: (R, K) column indices.  A stable
    argsort for short rows; for long ones an argpartition, sorted by (value, column), and a
    stable argsort only for the rows where ties at the K-th value leave the choice open."""
    R, m = fin.shape
    if m <= 64 or K == m:
        return np.argsort(fin, axis=1, kind="stable")[:, :K]
    idx = np.argpartition(fin, K - 1, axis=1)[:, :K]
    v = np.take_along_axis(fin, idx, axis=1).max(axis=1, keepdims=True)
    open_rows = np.flatnonzero(np.count_nonzero(fin <= v, axis=1) > K)
    if open_rows.size:
        idx[open_rows] = np.argsort(fin[open_rows], axis=1, kind="stable")[:, :K]
    idx.sort(axis=1)  # by column, then stably by value
    order = np.argsort(np.take_along_axis(fin, idx, axis=1), axis=1, kind="stable")
    return np.take_along_axis(idx, order, axis=1)


def merged_stream(delay: Source, m: int, K: int, pushes: int, rng: np.random.Generator,
                  window: int = limits.RENEWAL_WINDOW,
                  ) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """One run of k-batch-async (async: K = 1): its first ``pushes`` pushes in time order, in
    blocks ``(g0, t, w, prev)``: push g0 + i happens at t[i], by worker w[i], whose previous
    push was push prev[i] (−1 for its first).

    Nobody waits, so worker i's completions are the cumulative sums of its own mini-batch times
    (i.i.d. ``delay``, or worker i's sequence of a cluster).
    The run is merged window by window in time: each window has a goal time (the last one
    plus a step learned so that about ``window`` pushes fall in it); every worker whose drawn
    path ends before the goal draws more completions (doubling) until none does; then every
    completion up to the goal is known and emitted in time order, and the rest is carried
    over.  A worker whose time no longer moves (draws lost in rounding next to a large time)
    lowers the goal to its time, and too much drawn lowers it to the earliest path end, so the
    loop always ends and memory stays O(window + m).

    A push's previous push (hence its staleness) is read off the merged stream itself
    (:func:`_previous_push`): where one worker's completion times tie (a zero draw, or one lost
    in rounding next to a large time) its pushes may merge in either order, but the stream
    stays consistent.  The old engine took the previous push from the draw order while a
    non-stable sort had merged tied pushes the other way round: negative staleness
    (Weibull k = 0.2).
    """
    paths = _Paths(delay, m, rng)
    last_push = np.full(m, -1, dtype=np.int64)   # each worker's last emitted push
    carry_t, carry_w = np.empty(0), np.empty(0, dtype=paths.ids.dtype)
    g0 = 0
    done_to = 0.0          # every push up to this time has been emitted
    rate = -1.0            # pushes per unit time, learned from the windows so far
    while g0 < pushes:
        want = min(window, pushes - g0)
        k = max(2, ceil_div(want, m))
        # (the drawn parts live only inside _split_at: memory stays O(window + m))
        if rate < 0:  # first window: everyone draws k; the goal is the earliest path end
            goal, t, w, carry_t, carry_w = _split_at(carry_t, carry_w, *paths.draw_all(k))
        else:
            goal, t, w, carry_t, carry_w = _split_at(
                carry_t, carry_w, *paths.draw_until(done_to + want / rate, k, window, carry_t.size))
        rate = _learn_rate(rate, t.size, goal, done_to, m)
        done_to = goal
        if t.size > pushes - g0:
            t, w = t[:pushes - g0], w[:pushes - g0]
        if t.size == 0:
            continue
        yield g0, t, w, _previous_push(g0, w, last_push)
        g0 += t.size


class _Paths:
    """Each worker's completion times so far (cumulative sums of its own mini-batch times)."""

    def __init__(self, delay: Source, m: int, rng: np.random.Generator) -> None:
        self.m = m
        self.last = np.zeros(m)  # each worker's last drawn completion
        # small ints: numpy sorts them by radix
        self.ids = np.arange(m, dtype=np.int16 if m < 2**15 else np.int32)
        self.source, self.rng = delay, rng
        # one run: worker i is the cluster's slot i
        self.state = delay.start(rng, 1) if isinstance(delay, Cluster) else None

    def _sample(self, workers: np.ndarray, k: int) -> np.ndarray:
        """The next k mini-batch times of each of ``workers``, (len, k)."""
        if isinstance(self.source, Cluster):
            return self.source.draw(self.rng, self.state, workers, k)[0]
        return self.source.sample(self.rng, (workers.size, k))

    def draw_all(self, k: int) -> tuple[float, list[np.ndarray], list[np.ndarray]]:
        """k completions for every worker; the goal is the earliest path end."""
        new = np.cumsum(self._sample(self.ids, k), axis=1)
        self.last = new[:, -1].copy()
        return float(self.last.min()), [new.ravel()], [np.repeat(self.ids, k)]

    def draw_until(self, goal: float, k: int, window: int, carried: int,
                   ) -> tuple[float, list[np.ndarray], list[np.ndarray]]:
        """Draw (doubling) for every worker whose path ends before the goal, until none does.

        A worker whose time no longer moves (draws lost in rounding) lowers the goal to its
        time; more than 4·(window + m) completions in hand lowers it to the earliest path end."""
        last, ids = self.last, self.ids
        parts_t: list[np.ndarray] = []
        parts_w: list[np.ndarray] = []
        size = carried
        while True:
            need = np.flatnonzero(last < goal)
            if need.size == 0:
                return goal, parts_t, parts_w
            if size > 4 * (window + self.m):
                goal = float(last.min())  # enough drawn: emit what is known
                continue
            kk = max(2, min(k, ceil_div(window + self.m, need.size)))
            before = last[need]
            new = before[:, None] + np.cumsum(self._sample(need, kk), axis=1)
            last[need] = new[:, -1]
            parts_t.append(new.ravel())
            parts_w.append(np.repeat(ids[need], kk))
            size += new.size
            stuck = last[need] == before
            if stuck.any():
                goal = min(goal, float(last[need][stuck].min()))
            k *= 2


def _split_at(carry_t: np.ndarray, carry_w: np.ndarray, goal: float, parts_t: list[np.ndarray],
              parts_w: list[np.ndarray]) -> tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The completions up to the goal in time order (times, workers) and the rest to carry over."""
    all_t = np.concatenate([carry_t, *parts_t])
    all_w = np.concatenate([carry_w, *parts_w])
    known = all_t <= goal
    t, w = all_t[known], all_w[known]
    order = np.argsort(t)  # ties between pushes may fall either way: see _previous_push
    return goal, t[order], w[order], all_t[~known], all_w[~known]


def _learn_rate(rate: float, emitted: int, goal: float, done_to: float, m: int) -> float:
    """Pushes per unit time, from the window [done_to, goal] that emitted ``emitted`` pushes."""
    elapsed = goal - done_to
    if elapsed > 0:
        rate = emitted / elapsed if emitted else (rate / 4 if rate > 0 else 1.0 / elapsed)
    elif rate < 0:
        rate = math.inf  # nothing learned yet (all at time 0): the next goal is the path ends
    if not math.isfinite(rate) or rate <= 0:
        rate = m / max(goal, 1e-300) if goal > 0 else 1e300
    return rate


def _previous_push(g0: int, w: np.ndarray, last_push: np.ndarray) -> np.ndarray:
    """For pushes g0, g0 + 1, … by workers w (in time order), each one's worker's previous push
    (−1 for its first); ``last_push`` is updated.  A compiled loop
    (:func:`~distsgd.engines.runtime_kernels.previous_pushes`) when kernels are compiled, else the numpy
    reference :func:`_previous_push_numpy`."""
    if not jit.ENABLED:
        return _previous_push_numpy(g0, w, last_push)
    prev = np.empty(w.size, dtype=np.int64)
    kernels.previous_pushes(g0, w, last_push, prev)
    return prev


def _previous_push_numpy(g0: int, w: np.ndarray, last_push: np.ndarray) -> np.ndarray:
    """For pushes g0, g0 + 1, … by workers w (in time order), each one's worker's previous push
    (−1 for its first); ``last_push`` is updated.  Each worker's pushes keep the order they have
    in the merged stream: a *stable* sort by worker (radix for int16; unique keys otherwise), so
    prev is the worker's previous push in the stream even where its times tie."""
    E = w.size
    g = np.arange(g0, g0 + E, dtype=np.int64)
    if w.dtype == np.int16:
        by_w = np.argsort(w, kind="stable")
    else:
        by_w = np.argsort(w.astype(np.int64) * E + np.arange(E))
    ws, gs = w[by_w], g[by_w]
    first = np.ones(E, dtype=bool)
    first[1:] = ws[1:] != ws[:-1]
    prev_s = np.empty(E, dtype=np.int64)
    prev_s[1:] = gs[:-1]
    prev_s[first] = last_push[ws[first]]
    prev = np.empty(E, dtype=np.int64)
    prev[by_w] = prev_s
    final = np.ones(E, dtype=bool)
    final[:-1] = first[1:]
    last_push[ws[final]] = gs[final]
    return prev


def push_staleness(g: np.ndarray, prev: np.ndarray, K: int) -> np.ndarray:
    """Push g is used in update ⌊g/K⌋ and was computed on the version read just after its
    worker's previous push g' (⌊(g'+1)/K⌋ updates done; 0 for a first push, g' = −1)."""
    return g // K - (prev + 1) // K


def merged_trace(delay: Source, m: int, K: int, R: int, n: int, rng: np.random.Generator,
                        record: bool) -> UpdateTrace:
    """k-batch-async (and async, K = 1): n updates of R independent runs (see
    :func:`merged_stream`); every K-th push is an update."""
    P = n * K
    times = np.empty((R, n))
    staleness = np.empty((R, P), dtype=np.int32)
    workers = np.empty((R, P), dtype=np.int32) if record else None
    for r in range(R):
        for g0, t, w, prev in merged_stream(delay, m, K, P, rng):
            g = np.arange(g0, g0 + t.size, dtype=np.int64)
            staleness[r, g0:g0 + t.size] = push_staleness(g, prev, K)
            if workers is not None:
                workers[r, g0:g0 + t.size] = w
            ends = g % K == K - 1
            times[r, g[ends] // K] = t[ends]
    trace = UpdateTrace(times, staleness=staleness.reshape(R, n, K))
    if workers is not None:
        trace.workers = workers.reshape(R, n, K)
        ra = np.zeros(K, dtype=bool)
        ra[-1] = True
        trace.reads_after_update = ra
    return trace


def kasync_batch_means(delay: Source, m: int, K: int, R: int, w: int, n: int, B: int,
                       rng: np.random.Generator, keep: bool) -> tuple[list[BatchMeans], str]:
    """All R replicas in lockstep, streamed in blocks of updates: memory does not grow with n."""
    bm = BatchMeans(R, w, n, B, keep)
    j0 = 0
    for times, stale, _ in kasync_blocks(delay, m, K, R, rng, False, w + n):
        b = times.shape[1]
        bm.add_staleness(np.arange(j0, j0 + b)[None, :, None], stale)
        j0 += b
        if bm.add_times(times):
            break
    return [bm], "update-by-update run, K pushers restart"


def merged_batch_means(delay: Source, m: int, K: int, R: int, w: int, n: int, B: int,
                       rng: np.random.Generator, keep: bool) -> tuple[list[BatchMeans], str]:
    """Replica by replica, each streamed window by window."""
    acc = []
    for r in range(R):
        bm = BatchMeans(1, w, n, B, keep and r == 0)
        for g0, t, _, prev in merged_stream(delay, m, K, (w + n) * K, rng):
            g = np.arange(g0, g0 + t.size, dtype=np.int64)
            bm.add_staleness(g // K, push_staleness(g, prev, K))
            ends = g % K == K - 1
            bm.add_times(t[ends][None, :])
        acc.append(bm)
    return acc, "merged renewal processes (workers never wait)"

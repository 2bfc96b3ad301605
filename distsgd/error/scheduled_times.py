"""Update times of a fresh scheme whose K (k-sync) or H (local SGD) is set per replica and changes
between checkpoints (DESIGN §13): the same processes as the fixed-K engines, continued.

* i.i.d. delays: the iterations of k-sync and the rounds of local SGD are independent, so a
  replica's next updates with value v are the scheme's own engine with K = v (or H = v):
  ``Scheme.iteration_times`` (exact order statistics, the sum law of H delays);
* a cluster (DESIGN §7): every worker's mini-batches come from
  :class:`~distsgd.engines.clusters.JobQueues`, one
  per worker per k-sync iteration (the K-th of the m started together; the job stream does not
  depend on K) and H per worker per local-SGD round, so a Markov state or a replay position
  advances exactly as in the fixed-K engines, across the checkpoints.

:meth:`ScheduledTimes.peek` draws the next ``count`` update durations of some replicas with one
value without using them; :meth:`ScheduledTimes.advance` marks how many each replica used (the
rest of an i.i.d. draw is dropped: independent of everything before, so the law stays exact).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import jit, limits
from ..clusters import Cluster
from ..delays import Delay
from ..engines import runtime_kernels as kernels
from ..engines.clusters import JobQueues
from ..engines.renewal import earliest
from ..params import ParameterError
from ..schemes import Scheme

__all__ = ["UpdateLog", "ScheduledTimes", "ScheduledKAsync", "kasync_block", "QUEUE_DEPTH"]

#: jobs a worker's queue is peeked ahead on a cluster (a peek of one round takes H of them)
QUEUE_DEPTH = 256


class UpdateLog:
    """Each replica's updates so far: times and values (R, cap), padded with inf and 0, ``n`` of
    them each; for k-async also each update's workers in push order and their staleness
    (R, cap, kmax), padded with −1 and 0."""

    def __init__(self, R: int, kmax: int | None = None, cap: int = 64) -> None:
        self.times = np.full((R, cap), np.inf)
        self.values = np.zeros((R, cap), dtype=np.int64)
        self.n = np.zeros(R, dtype=np.int64)
        self.kmax = kmax
        self.workers = None if kmax is None else np.full((R, cap, kmax), -1, dtype=np.int32)
        self.stale = None if kmax is None else np.zeros((R, cap, kmax), dtype=np.int32)

    def last(self, rows: np.ndarray) -> np.ndarray:
        """The time of each replica's last update (0 before the first)."""
        n = self.n[rows]
        return np.where(n > 0, self.times[rows, np.maximum(n - 1, 0)], 0.0)

    def _room(self, need: int, max_updates: int) -> None:
        if need > max_updates:
            raise ParameterError("time", "runs_too_long", cap=max_updates)
        cap = self.times.shape[1]
        if need <= cap:
            return
        grow = max(need, 2 * cap) - cap
        R = self.times.shape[0]
        if self.kmax is not None and R * (cap + grow) * self.kmax > limits.MAX_TRACE_VALUES:
            raise ParameterError("replicas", "gradient_trace_replicas", scheme="k-async", cap=limits.MAX_TRACE_VALUES,
                                 updates=cap + grow, fit=max(1, limits.MAX_TRACE_VALUES // ((cap + grow) * self.kmax)))
        self.times = np.hstack([self.times, np.full((R, grow), np.inf)])
        self.values = np.hstack([self.values, np.zeros((R, grow), dtype=np.int64)])
        if self.workers is not None and self.stale is not None:
            self.workers = np.concatenate([self.workers, np.full((R, grow, self.workers.shape[2]), -1, np.int32)], 1)
            self.stale = np.concatenate([self.stale, np.zeros((R, grow, self.stale.shape[2]), np.int32)], 1)

    def append(self, rows: np.ndarray, t: np.ndarray, used: np.ndarray, value: int, max_updates: int,
               workers: np.ndarray | None = None, stale: np.ndarray | None = None) -> None:
        """The first used[i] times of row i of ``t`` (g, b) as replica rows[i]'s next updates, with
        the value; for k-async also their pushers and staleness (g, b, value)."""
        self._room(int((self.n[rows] + used).max()), max_updates)
        r, c = np.nonzero(np.arange(t.shape[1])[None, :] < used[:, None])
        at = self.n[rows][r] + c
        self.times[rows[r], at] = t[r, c]
        self.values[rows[r], at] = value
        if workers is not None and stale is not None:
            assert self.workers is not None and self.stale is not None
            self.workers[rows[r], at, :value] = workers[r, c]
            self.stale[rows[r], at, :value] = stale[r, c]
        self.n[rows] += used


class ScheduledTimes:
    """Per-update durations of ``scheme`` (k-sync or local SGD) in R replicas, each replica with
    its own K or H (the scheme's ``schedulable`` parameter)."""

    def __init__(self, scheme: Scheme, source: Delay | Cluster, R: int, rng: np.random.Generator) -> None:
        parameter = type(scheme).schedulable
        assert parameter in ("K", "H") and scheme.fresh
        self.scheme, self.source, self.parameter, self.rng = scheme, source, parameter, rng
        self.queues = JobQueues(source, rng, R) if isinstance(source, Cluster) else None
        self._cache: dict[int, Scheme] = {}
        self._mean: dict[int, float] = {}  # the mean update duration drawn so far with each value

    def at(self, value: int) -> Scheme:
        """The scheme with K (or H) = value."""
        s = self._cache.get(value)
        if s is None:
            s = self._cache[value] = dataclasses.replace(self.scheme, **{self.parameter: int(value)})
        return s

    def jobs_per_update(self, value: int) -> int:
        """Mini-batches each worker starts in one update: 1 (k-sync) or H (a local-SGD round)."""
        return int(value) if self.parameter == "H" else 1

    def max_count(self, rows: int, value: int) -> int:
        """Updates :meth:`peek` may draw at once for ``rows`` replicas: the drawn durations within
        CHUNK, and on a cluster at most QUEUE_DEPTH jobs a worker (every worker's queue is as long
        as the deepest peek)."""
        per = self.jobs_per_update(value)
        count = limits.CHUNK // max(1, rows * self.scheme.m * per)
        if self.queues is not None:
            count = min(count, QUEUE_DEPTH // per)
        return int(max(1, count))

    def peek(self, rows: np.ndarray, value: int, count: np.ndarray) -> np.ndarray:
        """(len(rows), count.max()): the durations of the next count[i] updates of replica
        rows[i] with K (or H) = value, in wall-clock time per update (a local-SGD round is H steps
        and D), padded with nan.  i.i.d. delays draw Σ count durations at once; a cluster's queues
        are peeked count.max() jobs deep for every replica."""
        s, width = self.at(value), int(count.max())
        if self.queues is None:
            assert isinstance(self.source, Delay)
            per = s.iteration_times(self.source, int(count.sum()), self.rng) * s.steps_per_update
            out = np.full((rows.size, width), np.nan)
            out[np.arange(width)[None, :] < count[:, None]] = per  # row by row, in order
            return out
        m, per_job = self.scheme.m, self.jobs_per_update(value)
        slots = (rows[:, None] * m + np.arange(m)).ravel()
        x, _ = self.queues.peek(slots, width * per_job)
        x = x.reshape(rows.size, m, width, per_job)
        if self.parameter == "K":
            return np.partition(x[..., 0], value - 1, axis=1)[:, value - 1, :]
        return x.sum(axis=3).max(axis=1) + getattr(s, "comm_delay", 0.0)

    def advance(self, rows: np.ndarray, value: int, used: np.ndarray) -> None:
        """Mark the first ``used[i]`` peeked updates of replica rows[i] as run."""
        if self.queues is not None:
            m = self.scheme.m
            slots = (rows[:, None] * m + np.arange(m)).ravel()
            self.queues.advance(slots, np.repeat(used, m) * self.jobs_per_update(value))

    def extend(self, log: UpdateLog, value: np.ndarray, until: float, max_updates: int) -> None:
        """Draw updates for every replica whose last update ended by ``until`` (or that has none)
        until one ends after it, each with the replica's value."""
        need = np.flatnonzero(log.last(np.arange(log.n.size)) <= until)
        for v in np.unique(value[need]):
            rows = need[value[need] == v]
            while rows.size:
                start = log.last(rows)
                # a few first, then (from the mean duration drawn so far with v) what each replica
                # needs to pass ``until``, about; the rest of a draw is dropped, so overdrawing costs
                mean = self._mean.get(int(v))
                if mean is None:
                    count = np.full(rows.size, 4)
                else:
                    count = np.ceil((until - start) / mean).astype(np.int64) + 1
                count = np.clip(count, 1, self.max_count(rows.size, int(v)))
                d = self.peek(rows, int(v), count)
                self._mean[int(v)] = max(float(np.nanmean(d)), 1e-300)
                t = start[:, None] + np.cumsum(d, axis=1)
                over = t > until  # nan padding: never
                done = over.any(axis=1)
                used = np.where(done, over.argmax(axis=1) + 1, count)
                self.advance(rows, int(v), used)
                log.append(rows, t, used, int(v), max_updates)
                rows = rows[~done]


class ScheduledKAsync:
    """k-async (DESIGN §2.2) in R replicas, each with its own K, continued across checkpoints:
    the K workers with the earliest finish times (ties by worker id) push in that order and wait
    for the update at the K-th push, then read the new parameters and take their next mini-batch;
    the others go on.  The process of :func:`~distsgd.engines.renewal.kasync_blocks` with K per
    replica (see :meth:`extend`)."""

    def __init__(self, scheme: Scheme, source: Delay | Cluster, R: int, rng: np.random.Generator) -> None:
        self.m, self.source, self.rng = scheme.m, source, rng
        self.queues = JobQueues(source, rng, R) if isinstance(source, Cluster) else None
        self.finish = self._jobs(np.arange(R), np.tile(np.arange(self.m), (R, 1)))
        self.read = np.zeros((R, self.m), dtype=np.int64)
        self._rate: dict[int, float] = {}  # K → updates per unit time of a replica, as drawn so far

    def _jobs(self, rows: np.ndarray, workers: np.ndarray) -> np.ndarray:
        """The next mini-batch time of each (row, worker) of ``workers`` (len(rows), k)."""
        if self.queues is None:
            assert isinstance(self.source, Delay)
            return self.source.sample(self.rng, workers.shape)
        x, _ = self.queues.peek((rows[:, None] * self.m + workers).ravel(), 1)
        self.queues.advance((rows[:, None] * self.m + workers).ravel(), 1)
        return x[:, 0].reshape(workers.shape)

    def extend(self, log: UpdateLog, value: np.ndarray, until: float, max_updates: int) -> None:
        """Step every replica whose last update ended by ``until`` until one ends after it: on a
        cluster one update at a time (the pushers' next jobs from their queues), for i.i.d. delays
        in blocks of updates with the pushers' next job times drawn ahead, (rows, b, K), by the
        compiled stepper of the fixed runs when kernels are enabled, else by :func:`kasync_block`
        (the same numbers)."""
        rows = np.flatnonzero(log.last(np.arange(log.n.size)) <= until)
        if self.queues is not None:
            while rows.size:
                for v in np.unique(value[rows]):
                    g = rows[value[rows] == v]
                    idx = earliest(self.finish[g], int(v))  # (g, v) in push order
                    t = self.finish[g, idx[:, -1]]
                    j = log.n[g]
                    one = np.ones(g.size, dtype=np.int64)
                    log.append(g, t[:, None], one, int(v), max_updates, idx[:, None],
                               (j[:, None] - self.read[g[:, None], idx])[:, None])
                    self.read[g[:, None], idx] = (j + 1)[:, None]
                    self.finish[g[:, None], idx] = t[:, None] + self._jobs(g, idx)
                rows = rows[log.last(rows) <= until]
            return
        assert isinstance(self.source, Delay)
        step = kernels.kasync_steps if jit.ENABLED else kasync_block
        for v in np.unique(value[rows]):
            g, K = rows[value[rows] == v], int(v)
            while g.size:
                # a block long enough to pass ``until`` in most replicas, from the updates per unit
                # time seen so far with this K (the rest of a block's draws are dropped)
                start = log.last(g)
                rate = self._rate.get(K, 0.0)
                b = int(min(max(4, np.ceil(np.quantile(until - start, 0.75) * rate * 1.1) + 1),
                            max(1, limits.CHUNK // (g.size * (K + 2)))))
                draws = self.source.sample(self.rng, (g.size, b, K))
                times, made = np.empty((g.size, b)), np.empty(g.size, dtype=np.int64)
                stale, workers = np.empty((g.size, b, K), dtype=np.int64), np.empty((g.size, b, K), dtype=np.int32)
                finish, read = self.finish[g], self.read[g]
                step(finish, read, draws, log.n[g], times, stale, workers, True, until, made)
                self.finish[g], self.read[g] = finish, read
                log.append(g, times, made, K, max_updates, workers, stale)
                spent = float((log.last(g) - start).sum())
                if spent > 0:
                    self._rate[K] = float(made.sum()) / spent
                g = g[log.last(g) <= until]


def kasync_block(finish: np.ndarray, read: np.ndarray, draws: np.ndarray, j0: np.ndarray, times: np.ndarray,
                 stale: np.ndarray, workers: np.ndarray, record: bool, until: float, made: np.ndarray) -> None:
    """:func:`~distsgd.engines.runtime_kernels.kasync_steps` in numpy, the replicas in lockstep
    (the K earliest by :func:`~distsgd.engines.renewal.earliest`): the reference of the compiled
    stepper, the same numbers for the same draws."""
    R, b, K = draws.shape
    on = np.arange(R)
    made[:] = b
    for jj in range(b):
        if jj:
            stop = times[on, jj - 1] > until
            made[on[stop]] = jj
            on = on[~stop]
            if not on.size:
                break
        idx = earliest(finish[on], K)  # (g, K) in push order
        t = finish[on, idx[:, -1]]
        j = (j0[on] + jj)[:, None]
        times[on, jj] = t
        stale[on, jj] = j - read[on[:, None], idx]
        read[on[:, None], idx] = j + 1
        if record:
            workers[on, jj] = idx
        finish[on[:, None], idx] = t[:, None] + draws[on, jj]

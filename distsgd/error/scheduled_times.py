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

from .. import limits
from ..clusters import Cluster
from ..delays import Delay
from ..engines.clusters import JobQueues
from ..schemes import Scheme

__all__ = ["ScheduledTimes", "QUEUE_DEPTH"]

#: jobs a worker's queue is peeked ahead on a cluster (a peek of one round takes H of them)
QUEUE_DEPTH = 256


class ScheduledTimes:
    """Per-update durations of ``scheme`` (k-sync or local SGD) in R replicas, each replica with
    its own K or H (the scheme's ``schedulable`` parameter)."""

    def __init__(self, scheme: Scheme, source: Delay | Cluster, R: int, rng: np.random.Generator) -> None:
        parameter = type(scheme).schedulable
        assert parameter in ("K", "H") and scheme.fresh
        self.scheme, self.source, self.parameter, self.rng = scheme, source, parameter, rng
        self.queues = JobQueues(source, rng, R) if isinstance(source, Cluster) else None
        self._cache: dict[int, Scheme] = {}

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

    def peek(self, rows: np.ndarray, value: int, count: int) -> np.ndarray:
        """(len(rows), count): the durations of the next ``count`` updates of these replicas with
        K (or H) = value, in wall-clock time per update (a local-SGD round is H steps and D)."""
        s = self.at(value)
        if self.queues is None:
            assert isinstance(self.source, Delay)
            per = s.iteration_times(self.source, rows.size * count, self.rng) * s.steps_per_update
            return per.reshape(rows.size, count)
        m, per_job = self.scheme.m, self.jobs_per_update(value)
        slots = (rows[:, None] * m + np.arange(m)).ravel()
        x, _ = self.queues.peek(slots, count * per_job)
        x = x.reshape(rows.size, m, count, per_job)
        if self.parameter == "K":
            return np.partition(x[..., 0], value - 1, axis=1)[:, value - 1, :]
        return x.sum(axis=3).max(axis=1) + getattr(s, "comm_delay", 0.0)

    def advance(self, rows: np.ndarray, value: int, used: np.ndarray) -> None:
        """Mark the first ``used[i]`` peeked updates of replica rows[i] as run."""
        if self.queues is not None:
            m = self.scheme.m
            slots = (rows[:, None] * m + np.arange(m)).ravel()
            self.queues.advance(slots, np.repeat(used, m) * self.jobs_per_update(value))

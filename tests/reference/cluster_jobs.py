"""Reference job sources: who is slow, and for how long (DESIGN §7), one draw at a time.

A *job source* is the law of the time each worker needs for each of its mini-batches.  The
reference event models (tests/reference/simpy_models.py) call ``jobs.next(i)`` whenever worker
i *starts* a mini-batch — a mini-batch that is later cancelled counts as started — and use the
returned float as its computation time.  Written from DESIGN §7's table only, to be obviously
correct rather than fast: no vectorisation, no state shared between workers, and nothing from
``distsgd.clusters`` or ``distsgd.engines``.  A law X ~ F is a ``distsgd.delays`` Delay, drawn
with ``float(delay.sample(rng))``; a straggler's time is that draw multiplied by s (so the
shift is scaled too, as §7 says).

Every source records what it handed out: ``records[i]`` is the list of ``(time, slow)`` of
worker i's mini-batches in order, ``slow`` True for a mini-batch of a slow worker (static
stragglers) or taken in the slow state (Markov slowdowns), False otherwise.  Tests count
with it.

Worker ids are 0-based here: §7's "workers 1..b" are ids 0..b−1.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from distsgd.delays import Delay

__all__ = [
    "JobSource",
    "IIDJobs",
    "StaticJobs",
    "GroupJobs",
    "MarkovJobs",
    "ReplayJobs",
    "PerWorkerJobs",
    "PooledJobs",
]


def _draw(delay: Delay, rng: np.random.Generator) -> float:
    """One X ~ F: a single ``delay.sample`` call (the stream the i.i.d. models always used)."""
    return float(delay.sample(rng))


class JobSource:
    """Base of the job sources: ``m`` workers; ``next(i)`` is worker i's next mini-batch time.

    Subclasses implement ``_next(i) -> (time, slow)``; ``next`` checks i, records and returns
    the time.  ``record=False`` keeps no records (the models' adapter for a plain Delay uses it
    so that the reference models cost what they always cost).
    """

    m: int

    def __init__(self, m: int, *, record: bool = True) -> None:
        if int(m) != m or m < 1:
            raise ValueError(f"need m ≥ 1 workers (got {m!r})")
        self.m = int(m)
        self.record = record
        self.records: list[list[tuple[float, bool]]] = [[] for _ in range(self.m)]

    def next(self, i: int) -> float:
        """Worker i's next mini-batch time (call it when worker i starts a mini-batch)."""
        if not 0 <= i < self.m:
            raise IndexError(f"worker {i} out of range 0..{self.m - 1}")
        t, slow = self._next(i)
        if self.record:
            self.records[i].append((t, slow))
        return t

    def _next(self, i: int) -> tuple[float, bool]:
        raise NotImplementedError

    # -- what was handed out ---------------------------------------------------------------
    def started(self, i: int | None = None) -> int:
        """Number of mini-batches started by worker i (by every worker when i is None)."""
        if i is None:
            return sum(len(r) for r in self.records)
        return len(self.records[i])

    def times(self, i: int) -> np.ndarray:
        """Worker i's mini-batch times, in order."""
        return np.array([t for t, _ in self.records[i]], dtype=float)

    def slow_flags(self, i: int) -> np.ndarray:
        """Worker i's slow flags, in order."""
        return np.array([s for _, s in self.records[i]], dtype=bool)


class IIDJobs(JobSource):
    """iid: every mini-batch of every worker an independent X ~ F (DESIGN §2's model).

    Exactly one ``delay.sample(rng)`` per call and nothing else from ``rng``, whatever i is:
    the random stream of the reference models before job sources existed.
    """

    def __init__(self, delay: Delay, m: int, rng: np.random.Generator, *, record: bool = True) -> None:
        super().__init__(m, record=record)
        self.delay = delay
        self.rng = rng

    def _next(self, i: int) -> tuple[float, bool]:
        return _draw(self.delay, self.rng), False


class StaticJobs(JobSource):
    """Static stragglers: workers 0..slow−1 take s·X, the others X (X ~ F, independent)."""

    def __init__(self, delay: Delay, m: int, slow: int, slowdown: float, rng: np.random.Generator) -> None:
        super().__init__(m)
        if not 0 <= slow <= m:
            raise ValueError(f"need 0 ≤ slow ≤ m (got slow={slow}, m={m})")
        if not slowdown >= 1.0:
            raise ValueError(f"need slowdown ≥ 1 (got {slowdown})")
        self.delay, self.slow, self.slowdown, self.rng = delay, int(slow), float(slowdown), rng

    def _next(self, i: int) -> tuple[float, bool]:
        x = _draw(self.delay, self.rng)
        if i < self.slow:
            return self.slowdown * x, True
        return x, False


class GroupJobs(JobSource):
    """Groups ``N1*SPEC1 + N2*SPEC2 + …``: ``groups = [(N1, F1), (N2, F2), …]``; the first N1
    worker ids take F1, the next N2 take F2, and so on (m = N1 + N2 + …)."""

    def __init__(self, groups: Sequence[tuple[int, Delay]], rng: np.random.Generator) -> None:
        if not groups or any(n < 1 for n, _ in groups):
            raise ValueError(f"need at least one group, each of ≥ 1 worker (got {groups!r})")
        self.law: list[Delay] = []
        self.group_of: list[int] = []
        for g, (n, delay) in enumerate(groups):
            self.law += [delay] * n
            self.group_of += [g] * n
        super().__init__(len(self.law))
        self.rng = rng

    def _next(self, i: int) -> tuple[float, bool]:
        return _draw(self.law[i], self.rng), False


class MarkovJobs(JobSource):
    """Random slowdowns: each worker has a hidden state, normal or slow (slow: s·X).

    Worker i's first mini-batch: slow with probability π (the stationary law).  Before each
    later mini-batch of the same worker the state moves by the two transition probabilities
    of DESIGN §7: normal → slow with probability π(1−ρ), slow → normal with probability
    (1−π)(1−ρ).  Workers are independent (one state each; one shared ``rng``).
    """

    def __init__(self, delay: Delay, m: int, slow_fraction: float, persistence: float, slowdown: float,
                 rng: np.random.Generator) -> None:
        super().__init__(m)
        if not 0.0 <= slow_fraction < 1.0:
            raise ValueError(f"need 0 ≤ slow_fraction < 1 (got {slow_fraction})")
        if not 0.0 <= persistence < 1.0:
            raise ValueError(f"need 0 ≤ persistence < 1 (got {persistence})")
        if not slowdown >= 1.0:
            raise ValueError(f"need slowdown ≥ 1 (got {slowdown})")
        self.delay, self.rng = delay, rng
        self.pi, self.rho, self.slowdown = float(slow_fraction), float(persistence), float(slowdown)
        self.p_normal_to_slow = self.pi * (1.0 - self.rho)
        self.p_slow_to_normal = (1.0 - self.pi) * (1.0 - self.rho)
        self.state: list[bool | None] = [None] * self.m      # None: worker i has not started yet

    def _next(self, i: int) -> tuple[float, bool]:
        s = self.state[i]
        if s is None:                                      # first mini-batch: stationary law
            s = bool(self.rng.random() < self.pi)
        elif s:                                            # slow: back to normal?
            s = not (self.rng.random() < self.p_slow_to_normal)
        else:                                              # normal: turns slow?
            s = bool(self.rng.random() < self.p_normal_to_slow)
        self.state[i] = s
        x = _draw(self.delay, self.rng)
        return (self.slowdown * x, True) if s else (x, False)


class ReplayJobs(JobSource):
    """Replay of a measured table ``times[i, j]`` (worker i, step j), shape (m, S): worker i's
    n-th mini-batch (n = 0, 1, …) takes ``times[i, n mod S]``.

    Only the steps at which every worker has a time are used: a column with a NaN is dropped
    and counted in ``dropped``; S is the number of complete steps.
    """

    def __init__(self, times: np.ndarray) -> None:
        t = np.asarray(times, dtype=float)
        if t.ndim != 2:
            raise ValueError(f"need a 2-D table (worker, step) (got shape {t.shape})")
        complete = ~np.isnan(t).any(axis=0)
        self.dropped = int((~complete).sum())
        t = t[:, complete]
        if t.shape[1] == 0:
            raise ValueError("no step at which every worker has a time")
        if not (np.isfinite(t).all() and (t > 0).all()):
            raise ValueError("times must be finite and positive")
        super().__init__(t.shape[0])
        self.table = t
        self.S = t.shape[1]
        self.n = [0] * self.m                              # mini-batches started by each worker

    def _next(self, i: int) -> tuple[float, bool]:
        t = float(self.table[i, self.n[i] % self.S])
        self.n[i] += 1
        return t, False


class PerWorkerJobs(JobSource):
    """Per-worker trace law: worker i draws uniformly (with replacement) from its own times."""

    def __init__(self, per_worker: Sequence[np.ndarray], rng: np.random.Generator) -> None:
        self.values = [np.asarray(v, dtype=float).ravel() for v in per_worker]
        if not self.values or any(v.size == 0 for v in self.values):
            raise ValueError("need at least one worker, each with at least one time")
        super().__init__(len(self.values))
        self.rng = rng

    def _next(self, i: int) -> tuple[float, bool]:
        v = self.values[i]
        return float(v[self.rng.integers(v.size)]), False


class PooledJobs(JobSource):
    """Pooled trace law: every worker draws uniformly (with replacement) from all the times."""

    def __init__(self, values: np.ndarray, m: int, rng: np.random.Generator) -> None:
        super().__init__(m)
        self.values = np.asarray(values, dtype=float).ravel()
        if self.values.size == 0:
            raise ValueError("need at least one time")
        self.rng = rng

    def _next(self, i: int) -> tuple[float, bool]:
        return float(self.values[self.rng.integers(self.values.size)]), False

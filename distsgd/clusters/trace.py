"""A measured trace as a cluster (DESIGN §7): replayed, or resampled per worker or pooled.

* ``replay``: worker i's n-th mini-batch takes its own time of the n-th complete step
  (cyclically): a deterministic run, the trace's own order, bursts and stragglers kept;
* ``per-worker``: each mini-batch of worker i is drawn from every time worker i has in the file;
* ``pooled``: each mini-batch of every worker is drawn from all the times (DESIGN §2's
  ``empirical`` law): the i.i.d. answer, which forgets who was slow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..delays import Delay
from ..delays.empirical import Empirical
from ..params import ParameterError
from .base import Cluster, Group, M
from .kinds import SLOW_RATIO, flags, sample_groups

if TYPE_CHECKING:
    from ..traces import Trace

__all__ = ["TraceCluster", "TRACE_MODES"]

TRACE_MODES = ("replay", "per-worker", "pooled")


@dataclass(frozen=True, eq=False)
class TraceCluster(Cluster):
    """A loaded :class:`~distsgd.traces.Trace` in one of the three modes.  ``workers`` is m for
    a pooled trace of times only (one column); otherwise m is the trace's worker count."""

    trace: Trace
    mode: str = "replay"
    workers: int | None = None
    kind: ClassVar[str] = "trace"

    def __post_init__(self) -> None:
        if self.mode not in TRACE_MODES:
            raise ParameterError("trace_mode", "one_of_bare", choices=", ".join(TRACE_MODES), value=self.mode)
        t = self.trace
        if t.layout == "column":
            if self.mode != "pooled":
                raise ParameterError("trace_mode", "trace_times_only", trace=t.name)
            if self.workers is None:
                raise ParameterError("m", "trace_give_m", trace=t.name)
            object.__setattr__(self, "workers", M.check(self.workers, "m"))
            return
        if self.workers is not None and M.check(self.workers, "m") != t.m:
            raise ParameterError("m", "trace_m", trace=t.name, workers=t.m, m=self.workers)
        object.__setattr__(self, "workers", M.check(t.m, "m"))
        if self.mode == "replay" and t.times.shape[1] == 0:
            raise ParameterError("trace", "trace_no_complete_step", trace=t.name)

    @property
    def m(self) -> int:
        assert self.workers is not None
        return self.workers

    @cached_property
    def _laws(self) -> tuple[Group, ...]:
        """Per-worker laws, consecutive workers with identical times merged into one group."""
        if self.mode == "pooled":
            return (Group(self.m, Empirical.from_values(self.trace.pooled, name=self.trace.name)),)
        out: list[Group] = []
        prev: np.ndarray | None = None
        for i, x in enumerate(self.trace.per_worker):
            if prev is not None and x.size == prev.size and np.array_equal(x, prev):
                out[-1] = Group(out[-1].count + 1, out[-1].delay)
            else:
                out.append(Group(1, Empirical.from_values(x, name=f"{self.trace.name}[{self.trace.workers[i]}]")))
            prev = x
        return tuple(out)

    @property
    def groups(self) -> tuple[Group, ...] | None:
        return None if self.mode == "replay" else self._laws

    def marginals(self) -> list[tuple[int, list[tuple[float, Delay]]]]:
        if self.mode != "replay":
            return super().marginals()
        return [(n, list(mix)) for n, mix in self._replayed]

    @cached_property
    def _replayed(self) -> tuple[tuple[int, tuple[tuple[float, Delay], ...]], ...]:
        """Each worker's replayed times as its law (built once: every run-length estimate asks)."""
        return tuple((1, ((1.0, Empirical.from_values(row, name=f"{self.trace.name}[{w}]")),))
                     for row, w in zip(self.trace.times, self.trace.workers, strict=True))

    @property
    def stateful(self) -> bool:
        return self.mode == "replay"

    @property
    def deterministic(self) -> bool:
        return self.mode == "replay"

    @property
    def memory(self) -> float:
        # a replay repeats with period S: a batch of ten times S/10, a whole cycle of every
        # worker, holds every step once
        return self.trace.times.shape[1] / 10.0 if self.mode == "replay" else 1.0

    @cached_property
    def _slow_times(self) -> np.ndarray:
        """(m, S): a replayed time is slow at ≥ 1.2 × its step's median (DESIGN §7's threshold)."""
        t = self.trace.times
        return t >= SLOW_RATIO * np.median(t, axis=0, keepdims=True)

    def start(self, rng: np.random.Generator, R: int) -> np.ndarray | None:
        return np.zeros(R * self.m, dtype=np.int64) if self.mode == "replay" else None

    def draw(self, rng: np.random.Generator, state: np.ndarray | None, slots: np.ndarray,
             depth: int) -> tuple[np.ndarray, np.ndarray | None]:
        if self.mode != "replay":
            groups = self._laws
            if len(groups) == 1:
                return groups[0].delay.sample(rng, (len(slots), depth)), None
            x, _ = sample_groups(groups, self.m, rng, slots, depth)
            return x, flags(self._stragglers[np.asarray(slots) % self.m], depth)
        if state is None or state.size % self.m or state.size <= np.max(slots, initial=-1):
            raise ParameterError("state", "cluster_state")
        t = self.trace.times
        S = t.shape[1]
        w = np.asarray(slots) % self.m
        at = (state[slots][:, None] + np.arange(depth)) % S
        state[slots] = (state[slots] + depth) % S
        return t[w[:, None], at], self._slow_times[w[:, None], at]

    @cached_property
    def _stragglers(self) -> np.ndarray:
        """(m,) the persistent stragglers of the trace's summary (slowdown ≥ 1.2), whose every
        drawn mini-batch the timeline marks slow in per-worker mode (an emerging straggler is
        slow only for part of the trace, which per-worker draws forget)."""
        if self.trace.layout == "column":
            return np.zeros(self.m, dtype=bool)
        return np.array([(r["slowdown"] or 0.0) >= SLOW_RATIO for r in self.trace.summary(SLOW_RATIO)], dtype=bool)

    def worker_means(self) -> np.ndarray:
        if self.mode == "replay":
            return np.asarray(self.trace.times.mean(axis=1))
        return np.concatenate([np.full(g.count, g.delay.mean) for g in self._laws])

    def exact_kth_mean(self, K: int) -> float | None:
        """Sync / k-sync on a replay: every worker starts one mini-batch per iteration, so
        iteration j is step j and E[T] = mean_j (K-th smallest of t[·, j]) exactly."""
        if self.mode != "replay":
            return None
        t = self.trace.times
        return float(np.partition(t, K - 1, axis=0)[K - 1].mean())

    def exact_local_sgd_mean(self, H: int, D: float) -> float | None:
        """Local SGD on a replay: round r uses steps rH … rH + H − 1 (cyclically); the per-step
        mean over one full cycle of lcm(S, H)/H rounds, exactly; None when that cycle has more
        than 10⁸ times (or not a replay)."""
        if self.mode != "replay":
            return None
        S = self.trace.times.shape[1]
        rounds = S // math.gcd(S, H)
        if rounds * H * self.m > 100_000_000:
            return None
        cols = np.arange(rounds * H) % S
        sums = self.trace.times[:, cols].reshape(self.m, rounds, H).sum(axis=2)
        return float((sums.max(axis=0) + D).mean() / H)

    def parameters(self) -> dict[str, Any]:
        t = self.trace
        return {"mode": self.mode, "file": t.name, "digest": t.digest[:16], "workers": self.m,
                "steps": int(t.times.shape[1]) if t.layout != "column" else 0}

    @property
    def label(self) -> str:
        what = {"replay": "replayed", "per-worker": "per-worker laws of", "pooled": "pooled times of"}[self.mode]
        return f"{self.m} workers, {what} {self.trace.name}"

"""The cluster kinds of DESIGN §7, each with its parameters' domains and its sampler."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..delays import Delay, check_delay
from ..params import ParameterError
from .base import PERSISTENCE, SLOW, SLOW_FRACTION, SLOWDOWN, Cluster, Group, M, scaled

__all__ = ["IID", "Static", "Groups", "Markov"]


#: a worker (or one of its mini-batches) counts as slow on the timeline from this many times the
#: median worker's mean (groups) or its step's median (a replayed trace): DESIGN §7's threshold
SLOW_RATIO = 1.2


def sample_groups(groups: tuple[Group, ...], m: int, rng: np.random.Generator, slots: np.ndarray,
                  depth: int) -> tuple[np.ndarray, np.ndarray]:
    """``depth`` i.i.d. times of each slot (r·m + i) from the law of worker i's group, and each
    slot's group index."""
    bounds = np.cumsum([g.count for g in groups])
    group = np.searchsorted(bounds, np.asarray(slots) % m, side="right")
    x = np.empty((len(slots), depth))
    for k, g in enumerate(groups):
        rows = np.flatnonzero(group == k)
        if rows.size:
            x[rows] = g.delay.sample(rng, (rows.size, depth))
    return x, group


def flags(slow: np.ndarray, depth: int) -> np.ndarray | None:
    """A slot's slow flag for each of its ``depth`` mini-batches (None when no slot is slow)."""
    return np.repeat(slow[:, None], depth, axis=1) if slow.any() else None


@dataclass(frozen=True, eq=False)
class _OneLaw(Cluster):
    """m workers whose mini-batch times derive from one law ``delay``."""

    delay: Delay
    workers: int

    def __post_init__(self) -> None:
        check_delay(self.delay)
        object.__setattr__(self, "workers", M.check(self.workers, "m"))

    @property
    def m(self) -> int:
        return self.workers


@dataclass(frozen=True, eq=False)
class IID(_OneLaw):
    """Every mini-batch of every worker i.i.d. ``delay`` (DESIGN §2's model)."""

    kind: ClassVar[str] = "iid"

    @property
    def groups(self) -> tuple[Group, ...]:
        return (Group(self.workers, self.delay),)

    def draw(self, rng: np.random.Generator, state: np.ndarray | None, slots: np.ndarray,
             depth: int) -> tuple[np.ndarray, np.ndarray | None]:
        return self.delay.sample(rng, (len(slots), depth)), None

    def worker_means(self) -> np.ndarray:
        return np.full(self.workers, self.delay.mean)

    def parameters(self) -> dict[str, Any]:
        return {"delay": self.delay.key}

    @property
    def label(self) -> str:
        return f"{self.workers} × {self.delay.label}"


@dataclass(frozen=True, eq=False)
class _Slowed(_OneLaw):
    """One law ``delay`` for m workers, some mini-batches ``slowdown`` times slower (s·X)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        s = SLOWDOWN.check(getattr(self, "slowdown"), "slowdown")  # noqa: B009 - a subclass's field
        object.__setattr__(self, "slowdown", s)
        object.__setattr__(self, "_slow_delay", scaled(self.delay, s))

    @property
    def slow_delay(self) -> Delay:
        """The law of a slow mini-batch, s·X."""
        return self._slow_delay  # type: ignore[attr-defined]


@dataclass(frozen=True, eq=False)
class Static(_Slowed):
    """Workers 0 … b − 1 always ``slowdown`` times slower: s·X, the shift scaled too."""

    slow: int
    slowdown: float
    kind: ClassVar[str] = "static"

    def __post_init__(self) -> None:
        super().__post_init__()
        b = SLOW.check(self.slow, "slow")
        if b > self.workers:
            raise ParameterError("slow", "too_many_slow", m=self.workers, slow=b)
        object.__setattr__(self, "slow", b)

    @property
    def groups(self) -> tuple[Group, ...]:
        parts = (Group(self.slow, self.slow_delay), Group(self.workers - self.slow, self.delay))
        return tuple(g for g in parts if g.count)

    @property
    def iid_delay(self) -> Delay | None:
        if self.slow == 0 or self.slowdown == 1.0:
            return self.delay
        return self.slow_delay if self.slow == self.workers else None

    def draw(self, rng: np.random.Generator, state: np.ndarray | None, slots: np.ndarray,
             depth: int) -> tuple[np.ndarray, np.ndarray | None]:
        x = self.delay.sample(rng, (len(slots), depth))
        slow = np.asarray(slots) % self.workers < self.slow
        x[slow] *= self.slowdown
        return x, flags(slow, depth) if self.slowdown > 1.0 else None

    def worker_means(self) -> np.ndarray:
        out = np.full(self.workers, self.delay.mean)
        out[: self.slow] = self.slow_delay.mean
        return out

    def parameters(self) -> dict[str, Any]:
        return {"delay": self.delay.key, "slow": self.slow, "slowdown": self.slowdown}

    @property
    def label(self) -> str:
        return f"{self.workers} × {self.delay.label}, {self.slow} of them {self.slowdown:g}× slower"


@dataclass(frozen=True, eq=False)
class Groups(Cluster):
    """Consecutive groups of workers, each with its own law: ``N1*SPEC1 + N2*SPEC2 + …``."""

    parts: tuple[Group, ...]
    kind: ClassVar[str] = "groups"

    def __post_init__(self) -> None:
        parts = tuple(self.parts) if isinstance(self.parts, (tuple, list)) else None
        if not parts:
            raise ParameterError("workers", "give_group")
        for i, g in enumerate(parts):
            if not isinstance(g, Group):
                raise ParameterError("workers", "group_type", n=i + 1, type=type(g).__name__)
            M.check(g.count, "workers")
            check_delay(g.delay)
        M.check(sum(g.count for g in parts), "m")
        object.__setattr__(self, "parts", parts)

    @property
    def m(self) -> int:
        return sum(g.count for g in self.parts)

    @property
    def groups(self) -> tuple[Group, ...]:
        return self.parts

    def draw(self, rng: np.random.Generator, state: np.ndarray | None, slots: np.ndarray,
             depth: int) -> tuple[np.ndarray, np.ndarray | None]:
        x, group = sample_groups(self.parts, self.m, rng, slots, depth)
        means = np.array([g.delay.mean for g in self.parts])
        slow_group = means >= SLOW_RATIO * float(np.median(self.worker_means()))
        return x, flags(slow_group[group], depth)

    def worker_means(self) -> np.ndarray:
        return np.concatenate([np.full(g.count, g.delay.mean) for g in self.parts])

    def parameters(self) -> dict[str, Any]:
        return {"workers": " + ".join(f"{g.count}*{g.delay.key}" for g in self.parts)}

    @property
    def label(self) -> str:
        return " + ".join(f"{g.count} × {g.delay.label}" for g in self.parts)


@dataclass(frozen=True, eq=False)
class Markov(_Slowed):
    """Random slowdowns with persistence (DESIGN §7).

    Each worker has a hidden state, normal or slow (s·X).  Before each of its mini-batches
    after the first, the state is kept with probability ρ and otherwise drawn afresh, slow
    with probability π: it turns slow with probability π(1 − ρ) and back to normal with
    (1 − π)(1 − ρ); π is the long-run fraction of slow mini-batches and ρ the lag-one
    correlation of the state.  The first state is drawn from the stationary law (slow with
    probability π); workers are independent.  A cancelled mini-batch counts as started.
    """

    slow_fraction: float
    persistence: float
    slowdown: float
    kind: ClassVar[str] = "markov"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "slow_fraction", SLOW_FRACTION.check(self.slow_fraction, "slow_fraction"))
        object.__setattr__(self, "persistence", PERSISTENCE.check(self.persistence, "persistence"))

    @property
    def trivial(self) -> bool:
        """No slow mini-batch ever (π = 0) or slow ones as fast as the others (s = 1)."""
        return self.slow_fraction == 0.0 or self.slowdown == 1.0

    @property
    def groups(self) -> tuple[Group, ...] | None:
        # ρ = 0: every mini-batch i.i.d. from the mixture; but the mixture is not a Delay family,
        # so the engines sample it through jobs() like any other state
        return (Group(self.workers, self.delay),) if self.trivial else None

    def marginals(self) -> list[tuple[int, list[tuple[float, Delay]]]]:
        if self.trivial:
            return super().marginals()
        p = self.slow_fraction
        return [(self.workers, [(1.0 - p, self.delay), (p, self.slow_delay)])]

    @property
    def stateful(self) -> bool:
        return not self.trivial

    @property
    def memory(self) -> float:
        return 1.0 / (1.0 - self.persistence)  # a state lasts 1/(1 − ρ) mini-batches before a redraw

    def start(self, rng: np.random.Generator, R: int) -> np.ndarray | None:
        if self.trivial:
            return None
        return rng.random(R * self.workers) < self.slow_fraction

    def draw(self, rng: np.random.Generator, state: np.ndarray | None, slots: np.ndarray,
             depth: int) -> tuple[np.ndarray, np.ndarray | None]:
        n = len(slots)
        x = self.delay.sample(rng, (n, depth))
        if self.trivial:
            return x, None
        if state is None or state.ndim != 1 or state.size % self.workers or state.size <= np.max(slots, initial=-1):
            raise ParameterError("state", "cluster_state")
        # before job d ≥ 1 the state is redrawn with probability 1 − ρ; job 0 takes the carried state
        redraw = rng.random((n, depth)) >= self.persistence
        redraw[:, 0] = False
        fresh = rng.random((n, depth)) < self.slow_fraction
        last = np.maximum.accumulate(np.where(redraw, np.arange(depth), -1), axis=1)
        slow = np.where(last >= 0, np.take_along_axis(fresh, np.maximum(last, 0), axis=1), state[slots][:, None])
        keep = rng.random(n) < self.persistence
        state[slots] = np.where(keep, slow[:, -1], rng.random(n) < self.slow_fraction)
        x[slow] *= self.slowdown
        return x, slow

    def worker_means(self) -> np.ndarray:
        p = self.slow_fraction
        return np.full(self.workers, (1.0 - p) * self.delay.mean + p * self.slow_delay.mean)

    def parameters(self) -> dict[str, Any]:
        return {"delay": self.delay.key, "slow_fraction": self.slow_fraction, "persistence": self.persistence,
                "slowdown": self.slowdown}

    @property
    def label(self) -> str:
        return (f"{self.workers} × {self.delay.label}, slow {self.slowdown:g}× with π = {self.slow_fraction:g}, "
                f"ρ = {self.persistence:g}")

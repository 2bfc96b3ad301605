"""Clusters (DESIGN §7): the law of the time each worker needs for each of its mini-batches.

The i.i.d. model is one kind (:class:`IID`); the others say who is slow and for how long:
:class:`Static` (b workers always s times slower), :class:`Groups` (each group its own law) and
:class:`Markov` (every worker switches between normal and s times slower, with persistence ρ).
A cluster declares its parameters' domains here, next to the model, and gives the engines one
thing: the next mini-batch times of every worker of R independent replicas (:meth:`Cluster.jobs`),
worker by worker in order, advancing whatever state the kind carries (the Markov states).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .. import limits
from ..delays import Delay
from ..params import Domain, ParameterError

__all__ = ["Cluster", "Group", "M", "SLOW", "SLOWDOWN", "SLOW_FRACTION", "PERSISTENCE"]

M = Domain("m", 1, limits.MAX_WORKERS, integer=True, symbol="m", doc="number of workers")
SLOW = Domain("slow", 0, limits.MAX_WORKERS, integer=True, symbol="b", doc="workers that are always slow")
SLOWDOWN = Domain("slowdown", 1.0, 1e6, symbol="s", doc="how many times longer a slow mini-batch takes")
SLOW_FRACTION = Domain("slow_fraction", 0.0, 1.0, high_open=True, symbol="π",
                       doc="long-run fraction of slow mini-batches")
PERSISTENCE = Domain("persistence", 0.0, 1.0, high_open=True, symbol="ρ",
                     doc="lag-one correlation of a worker's slow/normal state")


@dataclass(frozen=True)
class Group:
    """``count`` workers (consecutive ids) whose mini-batch times are i.i.d. ``delay``."""

    count: int
    delay: Delay


class Cluster(ABC):
    """Who is slow: the law of worker i's n-th mini-batch time, for i = 0 … m − 1."""

    kind: ClassVar[str]

    @property
    @abstractmethod
    def m(self) -> int:
        """The number of workers."""

    @property
    def groups(self) -> tuple[Group, ...] | None:
        """Independent workers, grouped by law in worker order; None when the mini-batch times
        of one worker are not independent of each other (Markov slowdowns with ρ > 0)."""
        return None

    def marginals(self) -> list[tuple[int, list[tuple[float, Delay]]]]:
        """Groups of workers whose one mini-batch, on its own, has the same law: (count,
        [(weight, law), …]) — a mixture where a hidden state decides (Markov slowdowns)."""
        assert self.groups is not None
        return [(g.count, [(1.0, g.delay)]) for g in self.groups]

    @property
    def iid_delay(self) -> Delay | None:
        """The one law of every mini-batch of every worker when they are all i.i.d. (then the
        i.i.d. engines and formulas apply exactly), else None."""
        groups = self.groups
        return groups[0].delay if groups is not None and len(groups) == 1 else None

    @property
    def stateful(self) -> bool:
        """True when :meth:`draw` carries a state from one call to the next."""
        return False

    @property
    def memory(self) -> float:
        """About how many consecutive mini-batches of one worker stay correlated (1 without a
        state): each batch mean of a run on this cluster spans ten times this many."""
        return 1.0

    @property
    def deterministic(self) -> bool:
        """True when every run is the same (a replayed trace): replicas would be copies."""
        return False

    def start(self, rng: np.random.Generator, R: int) -> np.ndarray | None:
        """The state of R fresh replicas, one entry per slot r·m + i (None for the kinds without one)."""
        return None

    @abstractmethod
    def draw(self, rng: np.random.Generator, state: np.ndarray | None, slots: np.ndarray,
             depth: int) -> tuple[np.ndarray, np.ndarray | None]:
        """The next ``depth`` mini-batch times of each slot (worker i of replica r is slot
        r·m + i; the slots distinct), (len(slots), depth), in the order the worker starts them,
        and which of them ran slow ((len(slots), depth) bool, or None when none did or the kind
        cannot say); ``state`` (from :meth:`start`) is advanced for those slots."""

    def jobs(self, rng: np.random.Generator, state: np.ndarray | None, R: int, depth: int) -> np.ndarray:
        """The next ``depth`` mini-batch times of every worker of R replicas, (R, m, depth)."""
        x, _ = self.draw(rng, state, np.arange(R * self.m), depth)
        return x.reshape(R, self.m, depth)

    def exact_kth_mean(self, K: int) -> float | None:
        """E[T] of sync / k-sync when the kind knows it exactly by itself (a replayed trace), else None."""
        return None

    def exact_local_sgd_mean(self, H: int, D: float) -> float | None:
        """E[T] per local step of local SGD when the kind knows it exactly by itself, else None."""
        return None

    @abstractmethod
    def worker_means(self) -> np.ndarray:
        """E[X_i], the long-run mean mini-batch time of each worker (m,)."""

    @abstractmethod
    def parameters(self) -> dict[str, Any]:
        """The kind's parameters, as the JSON ``cluster`` field shows them (DESIGN §7)."""

    def as_dict(self) -> dict[str, Any]:
        """``{"kind": …, …its parameters…}``: the JSON ``cluster`` field."""
        return {"kind": self.kind, **self.parameters()}

    @property
    def key(self) -> str:
        """A canonical text of the cluster (its kind, m and parameters): equal clusters, equal keys."""
        return json.dumps({"m": self.m, **self.as_dict()}, sort_keys=True, default=str)

    @property
    @abstractmethod
    def label(self) -> str:
        """A short description for titles and legends."""

    def __str__(self) -> str:
        return self.label


def scaled(delay: Delay, s: float) -> Delay:
    """``delay.scaled(s)``, with a ParameterError naming ``slowdown`` when s·X leaves the family's
    domain (e.g. a rate below its bound)."""
    try:
        return delay.scaled(s)
    except ParameterError as exc:
        raise ParameterError("slowdown", "slowdown_outside", s=s, law=delay.label, error=exc) from None


"""Time to reach an error target ε: from the bound (closed form in J) and from a simulated curve.

>>> import numpy as np
>>> time_to_target(np.array([0.0, 1.0, 2.0]), np.array([1.0, 0.5, 0.2]), 0.5)
1.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..clusters import Cluster
from ..delays import Delay
from ..estimate import Estimate
from ..params import Domain
from ..random import Seed
from ..reasons import Phrase
from ..schemes import Scheme
from .bounds import _bound_constants
from .problem import Problem
from .simulate import ErrorSimulation
from .timing import per_update_runtime, runtime_for_time_axis

__all__ = ["TargetTime", "time_to_target", "bound_time_to_target", "simulated_time_to_target",
           "simulated_time_to_metric"]


@dataclass(frozen=True)
class TargetTime:
    """Wall-clock time to reach error ε: a value, ``inf`` if never, None if unknown;
    ``low``/``high`` bracket it where a band exists (simulation)."""

    value: float | None
    source: str
    low: float | None = None
    high: float | None = None
    why: Phrase | None = None  # why the bound gives no time ("bound unavailable: …" in ``source``)

    @classmethod
    def unavailable(cls, why: Phrase) -> TargetTime:
        """No time from the bound, and why."""
        return cls(None, f"bound unavailable: {why}", why=why)


def time_to_target(t: np.ndarray, curve: np.ndarray, eps: float) -> float:
    """First grid time at which a (piecewise-constant) curve is ≤ ε; inf if it never is."""
    hit = np.flatnonzero(np.asarray(curve) <= eps)
    return float(t[hit[0]]) if hit.size else math.inf


def bound_time_to_target(scheme: Scheme, delay: Delay | Cluster, problem: Problem, eps: float,
                         gamma: float | None = None, p0: float | None = None,
                         runtime: Estimate | None = None, seed: Seed = 0) -> TargetTime:
    """t* = E[T] · log((ε − F)/(F0 − F)) / log(rate) from the bound; inf when ε ≤ floor."""
    eps = Domain("eps", 0.0, 1e12, low_open=True).check(eps, "eps")
    floor, rate, _, why, _ = _bound_constants(scheme, problem, gamma, p0)
    if floor is None:
        assert why is not None
        return TargetTime.unavailable(why)
    if eps >= problem.f0:
        return TargetTime(0.0, "bound")
    if eps <= floor:
        return TargetTime(math.inf, "bound (ε is below its floor)")
    est = runtime or runtime_for_time_axis(scheme, delay, seed)
    if est.value is None:
        return TargetTime(None, "E[T] unknown")
    assert rate is not None  # a floor comes with its contraction rate
    J = math.log((eps - floor) / (problem.f0 - floor)) / math.log(rate)
    return TargetTime(J * per_update_runtime(scheme, est), "bound")


def simulated_time_to_target(sim: ErrorSimulation, eps: float) -> TargetTime:
    """From the simulated mean, bracketed by the times the band's edges reach ε."""
    return TargetTime(time_to_target(sim.time, sim.mean, eps), "simulated mean",
                      low=time_to_target(sim.time, sim.ci95_low, eps),
                      high=time_to_target(sim.time, sim.ci95_high, eps))


def simulated_time_to_metric(sim: ErrorSimulation, name: str, target: float) -> TargetTime:
    """First grid time at which the simulated mean of a metric (e.g. test accuracy) is ≥
    ``target``, bracketed by the times its band's upper and lower edges reach it; None if the
    simulation has no such metric."""
    if name not in sim.metrics:
        return TargetTime(None, f"no {name}")
    mean, low, high = sim.metrics[name]
    return TargetTime(time_to_target(sim.time, -mean, -target), "simulated mean",
                      low=time_to_target(sim.time, -high, -target), high=time_to_target(sim.time, -low, -target))

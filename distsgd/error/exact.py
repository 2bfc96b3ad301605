"""The exact expected error of the model problem, for fresh-gradient schemes and local SGD.

Per coordinate with a = 1 − ηh: fresh schemes ``E[w²] ← a² E[w²] + η²σ²/(b d K)``; local SGD per
round ``E[w²] ← a^{2H} E[w²] + η²σ²/(b d m) Σ_{k<H} a^{2k}`` (closed form of the geometric
series).  Against time, averaged over simulated timing paths of the update count N(t).

>>> from distsgd import make_scheme
>>> from distsgd.error import Problem
>>> P = Problem(eta=0.1, L=1.0, mu=1.0, sigma2=0.0, b=1, f0=1.0, dim=1)
>>> exact_error(make_scheme("sync", m=2), P, [0, 1, 2]).round(6).tolist()   # noiseless: (1 − η)^{2J}
[1.0, 0.81, 0.6561]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import limits
from ..clusters import Cluster
from ..delays import Delay
from ..estimate import Estimate
from ..montecarlo import iteration_cost
from ..random import Seed, generator
from ..schemes import GraphScheme, Scheme
from .graph_run import graph_model_vs_time
from .problem import Problem
from .timing import counts_at, covering_trace, updates_needed

__all__ = ["exact_error", "exact_error_vs_time", "ModelCurve", "geom"]


def exact_error(scheme: Scheme, problem: Problem, iterations: Any) -> np.ndarray | None:
    """E[f(w_J)] − f* exactly, for fresh-gradient schemes and local SGD (None otherwise).

    Per coordinate with a = 1 − ηh: fresh schemes ``s ← a² s + η²σ²/(b d K)``; local SGD per
    round ``s ← a^{2H} s + η²σ²/(b d m) Σ_{k<H} a^{2k}``.  Closed form of the geometric series.
    """
    if not scheme.fresh or isinstance(scheme, GraphScheme):
        return None
    J = np.asarray(iterations, dtype=float)
    h, w0, eta = problem.h, problem.w0, problem.eta
    a = 1 - eta * h
    v = problem.noise_sd**2 * eta**2
    add: np.ndarray | float
    if scheme.averages_models:
        H = scheme.steps_per_update
        rho = a ** (2 * H)
        add = v / scheme.m * geom(a**2, H)
    else:
        rho = a**2
        add = v / scheme.grads_per_update
    Jc = J[..., None]
    with np.errstate(over="ignore", invalid="ignore"):
        s = rho**Jc * w0**2 + add * geom(rho, Jc)
    return 0.5 * (s * h).sum(axis=-1)


def geom(r: np.ndarray, n: int | np.ndarray) -> np.ndarray:
    """Σ_{k<n} r^k (broadcast over r and n), stable at r = 1."""
    r = np.asarray(r, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = (1 - r**n) / (1 - r)
    return np.where(np.isclose(r, 1.0), np.asarray(n, dtype=float), out)


@dataclass(frozen=True, eq=False)
class ModelCurve:
    """The model problem's exact expected error after n updates, averaged over the random
    number of updates N(t) by time t — exact in the SGD noise, Monte Carlo in the timing:
    ``mean[i]`` estimates E[e(N(t_i))] from ``paths`` simulated timing paths, with standard
    error ``stderr[i]`` (no SGD is simulated)."""

    mean: np.ndarray
    stderr: np.ndarray
    paths: int

    METHOD = ("exact expected error of the model problem after n updates, averaged over "
              "simulated timing paths of the update count N(t)")


def exact_error_vs_time(scheme: Scheme, delay: Delay | Cluster, problem: Problem, t: Any, paths: int = 2000,
                        seed: Seed = 0, runtime: Estimate | None = None) -> ModelCurve | None:
    """E[e(N(t))] with e the exact error after n updates (:func:`exact_error`) and N(t) the
    number of updates by t, averaged over ``paths`` sampled timing paths (fewer when one path
    is costly); see :class:`ModelCurve`.  None for the asynchronous schemes.  ``runtime`` as
    :func:`~distsgd.error.simulate_error`'s."""
    if isinstance(scheme, GraphScheme):
        graph = graph_model_vs_time(scheme, delay, problem, t, min(paths, 400), seed, runtime)
        return None if graph is None else ModelCurve(*graph)
    if not scheme.fresh:
        return None
    t = np.asarray(t, dtype=float)
    rng = generator(seed)
    n = updates_needed(scheme, delay, float(t.max()), seed, runtime)
    # fewer paths when one path of the timing process is costly (the standard error says so)
    paths = int(max(16, min(paths, limits.AXIS_MC_COST / (n * iteration_cost(scheme, delay)))))
    counts = np.empty((paths, t.size), dtype=np.int64)
    group = max(1, limits.MODEL_PATHS_GROUP // n)
    for g0 in range(0, paths, group):
        r = min(group, paths - g0)
        tr = covering_trace(scheme, delay, n, r, float(t.max()), rng)
        counts[g0:g0 + r] = counts_at(tr.times, t)
    table = exact_error(scheme, problem, np.arange(counts.max() + 1))
    assert table is not None  # a fresh-gradient scheme
    e = table[counts]
    return ModelCurve(e.mean(axis=0), e.std(axis=0, ddof=1) / math.sqrt(paths), paths)

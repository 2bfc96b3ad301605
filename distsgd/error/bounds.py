"""Upper bounds on the error (Dutta et al., AISTATS 2018, Thms 1 and 4), against iterations and time.

Fresh gradients: ``F_K + (1 − ημ)^J (F0 − F_K)``, ``F_K = ηLσ²/(2μbK)`` (needs η ≤ 1/L);
asynchronous: ``F'_K + (1 − ημγ')^J (F0 − F'_K)``, ``γ' = 1 − γ + p0/2``,
``F'_K = ηLσ²/(2μγ'bK)`` (needs η ≤ 1/(2L(M_G/K + 1)) with M_G = 1 for this model, as
recalled from the paper).  Against time with J(t) = t / E[T].

>>> from distsgd import make_scheme
>>> from distsgd.error import Problem
>>> P = Problem(eta=0.1, L=2.0, mu=0.5, sigma2=1.0, b=1, f0=1.0, dim=4)
>>> c = error_bound(make_scheme("sync", m=4), P, [0, 10])
>>> c.kind, round(c.floor, 6)   # F_K = ηLσ²/(2μbK) = 0.2/4
('upper_bound', 0.05)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..clusters import Cluster
from ..delays import Delay
from ..estimate import Estimate
from ..params import Domain
from ..random import Seed
from ..schemes import GraphScheme, Scheme
from .problem import P0, Problem
from .timing import per_update_runtime, runtime_for_time_axis

__all__ = ["BoundCurve", "error_bound", "bound_vs_time"]


@dataclass(frozen=True, eq=False)
class BoundCurve:
    """A bound as a function of iterations or time.  ``values`` is None when its step-size
    condition fails (``note`` says which); ``floor`` is the error it tends to."""

    x: np.ndarray
    values: np.ndarray | None
    kind: str
    floor: float | None
    rate: float | None
    condition: str
    note: str = ""
    runtime: Estimate | None = None
    gamma_prime: float | None = None


def _bound_constants(scheme: Scheme, problem: Problem, gamma: float | None,
                     p0: float | None) -> tuple[float | None, float | None, str, str, float | None]:
    """(floor, contraction, condition text, note if violated, γ')."""
    eta, L, mu, s2, b = problem.eta, problem.L, problem.mu, problem.sigma2, problem.b
    if scheme.averages_models:
        return None, None, "", ("no bound is drawn for local SGD (Dutta et al.'s bounds are for a parameter server); "
                                "on the model problem its exact curve is drawn instead"), None
    if isinstance(scheme, GraphScheme):
        return None, None, "", ("Dutta et al.'s bounds are for a parameter server, not a graph; "
                                + ("ad-psgd has no exact curve either" if scheme.gossip else
                                   "on the model problem the exact d-psgd curve (DESIGN §12.4) is drawn instead")), None
    K = scheme.grads_per_update
    if scheme.fresh:
        cond = "η ≤ 1/L"
        if eta > 1 / L:
            return None, None, cond, f"the bound needs η ≤ 1/L = {1 / L:.4g} (η = {eta:g})", None
        return eta * L * s2 / (2 * mu * b * K), 1 - eta * mu, cond, "", None
    if gamma is None or p0 is None:
        missing = "γ" if gamma is None else "p₀"
        return None, None, "", f"the asynchronous bound needs {missing}", None
    # a measured γ may exceed 1 (near the noise floor stale and fresh gradients differ by
    # noise alone); the bound assumes γ ≤ 1, so then it is not drawn
    gamma = Domain("gamma", 0.0, math.inf).check(gamma, "gamma")
    p0 = P0.check(p0, "p0")
    gp = 1 - gamma + p0 / 2
    if gamma > 1:
        return None, None, "γ ≤ 1", f"γ = {gamma:.3g} > 1: the bound's assumption on stale gradients fails", gp
    limit = 1 / (2 * L * (1 / K + 1))
    cond = "η ≤ 1/(2L(1/K + 1)) and γ' = 1 − γ + p₀/2 > 0"
    if eta > limit:
        return None, None, cond, f"the asynchronous bound needs η ≤ 1/(2L(1/K+1)) = {limit:.4g} (η = {eta:g})", gp
    if gp <= 0:
        return None, None, cond, f"γ' = 1 − γ + p₀/2 = {gp:.3g} ≤ 0: no contraction", gp
    if eta * mu * gp >= 1:
        return None, None, cond, f"ημγ' = {eta * mu * gp:.3g} ≥ 1", gp
    return eta * L * s2 / (2 * mu * gp * b * K), 1 - eta * mu * gp, cond, "", gp


def error_bound(scheme: Scheme, problem: Problem, iterations: Any, gamma: float | None = None,
                p0: float | None = None) -> BoundCurve:
    """Upper bound on E[f(w_J)] − f* after J iterations (Dutta et al. 2018, Thms 1 and 4)."""
    J = np.asarray(iterations, dtype=float)
    floor, rate, cond, note, gp = _bound_constants(scheme, problem, gamma, p0)
    if floor is None:
        return BoundCurve(J, None, "unavailable", None, None, cond, note, gamma_prime=gp)
    values = floor + rate**J * (problem.f0 - floor)
    return BoundCurve(J, values, "upper_bound", floor, rate, cond, "", gamma_prime=gp)


def bound_vs_time(scheme: Scheme, delay: Delay | Cluster, problem: Problem, t: Any, gamma: float | None = None,
                  p0: float | None = None, seed: Seed = 0,
                  runtime: Estimate | None = None) -> BoundCurve:
    """The bound with J(t) = t / E[T] (DESIGN §3)."""
    t = np.asarray(t, dtype=float)
    est = runtime or runtime_for_time_axis(scheme, delay, seed)
    if est.value is None or not math.isfinite(est.value) or est.value <= 0:
        return BoundCurve(t, None, "unavailable", None, None, "", "E[T] is infinite or unknown", est)
    c = error_bound(scheme, problem, t / per_update_runtime(scheme, est), gamma, p0)
    return BoundCurve(t, c.values, c.kind, c.floor, c.rate, c.condition, c.note, est, c.gamma_prime)

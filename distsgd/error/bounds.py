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
from ..reasons import Phrase
from ..schemes import GraphScheme, Scheme
from .problem import P0, Problem
from .timing import per_update_runtime, runtime_for_time_axis

__all__ = ["BoundCurve", "error_bound", "bound_vs_time"]


@dataclass(frozen=True, eq=False)
class BoundCurve:
    """A bound as a function of iterations or time.  ``values`` is None when its step-size
    condition fails (``why`` says which, :attr:`note` in English); ``floor`` is the error it
    tends to."""

    x: np.ndarray
    values: np.ndarray | None
    kind: str
    floor: float | None
    rate: float | None
    condition: str
    why: Phrase | None = None
    runtime: Estimate | None = None
    gamma_prime: float | None = None

    @property
    def note(self) -> str:
        """Why the bound is not drawn, in English ('' when it is)."""
        return "" if self.why is None else str(self.why)


def _bound_constants(scheme: Scheme, problem: Problem, gamma: float | None,
                     p0: float | None) -> tuple[float | None, float | None, str, Phrase | None, float | None]:
    """(floor, contraction, condition text, why it does not hold, γ')."""
    eta, L, mu, s2, b = problem.eta, problem.L, problem.mu, problem.sigma2, problem.b
    if scheme.averages_models:
        return None, None, "", Phrase("bound_local_sgd"), None
    if isinstance(scheme, GraphScheme):
        return None, None, "", Phrase("bound_graph_adpsgd" if scheme.gossip else "bound_graph_dpsgd"), None
    K = scheme.grads_per_update
    if scheme.fresh:
        cond = "η ≤ 1/L"
        if eta > 1 / L:
            return None, None, cond, Phrase("bound_eta_fresh", limit=1 / L, eta=eta), None
        return eta * L * s2 / (2 * mu * b * K), 1 - eta * mu, cond, None, None
    if gamma is None or p0 is None:
        return None, None, "", Phrase("bound_async_needs", missing="γ" if gamma is None else "p₀"), None
    # a measured γ may exceed 1 (near the noise floor stale and fresh gradients differ by
    # noise alone); the bound assumes γ ≤ 1, so then it is not drawn
    gamma = Domain("gamma", 0.0, math.inf).check(gamma, "gamma")
    p0 = P0.check(p0, "p0")
    gp = 1 - gamma + p0 / 2
    if gamma > 1:
        return None, None, "γ ≤ 1", Phrase("bound_gamma_above_1", gamma=gamma), gp
    limit = 1 / (2 * L * (1 / K + 1))
    cond = "η ≤ 1/(2L(1/K + 1)) and γ' = 1 − γ + p₀/2 > 0"
    if eta > limit:
        return None, None, cond, Phrase("bound_eta_async", limit=limit, eta=eta), gp
    if gp <= 0:
        return None, None, cond, Phrase("bound_no_contraction", gp=gp), gp
    if eta * mu * gp >= 1:
        return None, None, cond, Phrase("bound_eta_mu_gp", x=eta * mu * gp), gp
    return eta * L * s2 / (2 * mu * gp * b * K), 1 - eta * mu * gp, cond, None, gp


def error_bound(scheme: Scheme, problem: Problem, iterations: Any, gamma: float | None = None,
                p0: float | None = None) -> BoundCurve:
    """Upper bound on E[f(w_J)] − f* after J iterations (Dutta et al. 2018, Thms 1 and 4)."""
    J = np.asarray(iterations, dtype=float)
    floor, rate, cond, why, gp = _bound_constants(scheme, problem, gamma, p0)
    if floor is None:
        return BoundCurve(J, None, "unavailable", None, None, cond, why, gamma_prime=gp)
    values = floor + rate**J * (problem.f0 - floor)
    return BoundCurve(J, values, "upper_bound", floor, rate, cond, None, gamma_prime=gp)


def bound_vs_time(scheme: Scheme, delay: Delay | Cluster, problem: Problem, t: Any, gamma: float | None = None,
                  p0: float | None = None, seed: Seed = 0,
                  runtime: Estimate | None = None) -> BoundCurve:
    """The bound with J(t) = t / E[T] (DESIGN §3)."""
    t = np.asarray(t, dtype=float)
    est = runtime or runtime_for_time_axis(scheme, delay, seed)
    if est.value is None or not math.isfinite(est.value) or est.value <= 0:
        return BoundCurve(t, None, "unavailable", None, None, "", Phrase("bound_runtime_unknown"), est)
    c = error_bound(scheme, problem, t / per_update_runtime(scheme, est), gamma, p0)
    return BoundCurve(t, c.values, c.kind, c.floor, c.rate, c.condition, c.why, est, c.gamma_prime)

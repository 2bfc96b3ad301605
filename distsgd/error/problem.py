"""The model problem and the SGD hyper-parameters (DESIGN §3), with their domains.

Model problem: ``f(w) = ½ Σ_i h_i w_i²`` with h_i evenly spaced in [μ, L] (h = μ when d = 1),
f* = 0, every coordinate of w₀ equal and scaled so that f(w₀) = F0.  A gradient at w is
``h ⊙ w + ξ`` with ξ ~ N(0, σ²/(b·d)·I), so E‖ξ‖² = σ²/b.  An update averages the K
gradients of the iteration: ``w ← w − η · mean(g)``.

>>> p = Problem(eta=0.1, L=2.0, mu=0.5, sigma2=1.0, b=1, f0=1.0, dim=3)
>>> p.h.tolist(), round(float(0.5 * (p.h * p.w0**2).sum()), 12)
([0.5, 1.25, 2.0], 1.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import limits
from ..engines.batchmeans import t95
from ..params import Domain, ParameterError
from ..problems.base import Constant, Constants

__all__ = ["Problem", "QuadraticProblem", "LearningRate", "RECORD_BLOCK", "ETA", "L_SMOOTH", "MU", "SIGMA2", "BATCH",
           "F0", "DIM", "GAMMA", "P0", "TIME", "POINTS", "REPLICAS", "MAX_REPLICAS", "MAX_UPDATES", "MAX_WORK",
           "ETA_MAX", "C_ADAPT"]

ETA = Domain("eta", 0.0, 100.0, low_open=True, symbol="η", doc="learning rate")
L_SMOOTH = Domain("L", 0.0, 1e6, low_open=True, symbol="L", doc="smoothness (largest curvature)")
MU = Domain("mu", 0.0, 1e6, low_open=True, symbol="μ", doc="strong convexity (smallest curvature)")
SIGMA2 = Domain("sigma2", 0.0, 1e6, symbol="σ²", doc="gradient noise variance E‖ξ‖² per sample")
BATCH = Domain("b", 1, 1_000_000, integer=True, symbol="b", doc="mini-batch size")
F0 = Domain("f0", 0.0, 1e9, low_open=True, symbol="F₀", doc="initial error f(w₀) − f*")
DIM = Domain("dim", 1, 1000, integer=True, symbol="d", doc="model dimension")
GAMMA = Domain("gamma", 0.0, 1.0, symbol="γ", doc="staleness-gradient factor")
P0 = Domain("p0", 0.0, 1.0, symbol="p₀", doc="lower bound on P(gradient is fresh)")
TIME = Domain("time", 0.0, 1e12, low_open=True, symbol="T", doc="wall-clock horizon")
POINTS = Domain("points", 2, 10_000, integer=True, doc="points on the time grid")
MAX_REPLICAS = limits.MAX_REPLICAS
REPLICAS = Domain("replicas", 1, MAX_REPLICAS, integer=True, doc="independent SGD runs")
MAX_UPDATES = limits.MAX_UPDATES
#: a cap on replicas × updates × K × d (array-element work of one simulation)
MAX_WORK = limits.MAX_SGD_WORK
ETA_MAX = Domain("eta_max", 0.0, 100.0, low_open=True, symbol="η_max")
C_ADAPT = Domain("C", 0.0, 1e9, low_open=True, symbol="C")


@dataclass(frozen=True)
class Problem:
    """The model problem and the SGD hyper-parameters (DESIGN §3)."""

    eta: float = 0.05
    L: float = 2.0
    mu: float = 0.5
    sigma2: float = 1.0
    b: int = 1
    f0: float = 1.0
    dim: int = 10

    def __post_init__(self) -> None:
        for dom, name in ((ETA, "eta"), (L_SMOOTH, "L"), (MU, "mu"), (SIGMA2, "sigma2"),
                          (BATCH, "b"), (F0, "f0"), (DIM, "dim")):
            object.__setattr__(self, name, dom.check(getattr(self, name), name))
        if self.mu > self.L:
            raise ParameterError("mu", "mu_above_L", L=self.L, mu=self.mu)

    @property
    def h(self) -> np.ndarray:
        """Curvatures h_i, evenly spaced in [μ, L]."""
        return np.linspace(self.mu, self.L, self.dim) if self.dim > 1 else np.array([self.mu])

    @property
    def w0(self) -> np.ndarray:
        """Equal coordinates with f(w₀) = F0: c = √(2F0 / Σh)."""
        return np.full(self.dim, math.sqrt(2 * self.f0 / self.h.sum()))

    @property
    def noise_sd(self) -> float:
        """Per-coordinate standard deviation of one gradient's noise: √(σ²/(b d))."""
        return math.sqrt(self.sigma2 / (self.b * self.dim))

    def gradient_problem(self) -> QuadraticProblem:
        """This problem as a problem of the protocol (:class:`QuadraticProblem`)."""
        return QuadraticProblem(self)


@dataclass(frozen=True)
class LearningRate:
    """Learning-rate rule for the asynchronous schemes (fresh schemes always use η).

    constant:  η
    adaptive:  η_j = min(C / ‖w_j − w_τ‖², η_max), ‖·‖² averaged over the update's K gradients
               (Dutta et al. 2018, staleness-dependent rate); η_max when nothing is stale
    staleness: η / max(1, staleness) for each gradient
    """

    rule: str = "constant"
    C: float = 0.01
    eta_max: float | None = None

    RULES = ("constant", "adaptive", "staleness")

    def __post_init__(self) -> None:
        if self.rule not in self.RULES:
            raise ParameterError("lr_rule", "one_of", choices=", ".join(self.RULES), value=self.rule)
        object.__setattr__(self, "C", C_ADAPT.check(self.C, "C"))
        if self.eta_max is not None:
            object.__setattr__(self, "eta_max", ETA_MAX.check(self.eta_max, "eta_max"))


class QuadraticProblem:
    """The model problem as a :class:`~distsgd.problems.GradientProblem` (DESIGN §9): f(w) =
    ½ Σᵢ hᵢ wᵢ², f* = 0; a gradient of b samples is h∘w plus Gaussian noise of total variance
    σ²/b, so σ²* = σ² and every constant is exact (L, μ, σ², F₀ and d of ``model``; η and b are
    the run's).  Run by :func:`~distsgd.error.general.simulate_problem` it is the process of
    :func:`~distsgd.error.simulate_error` with other draws; its exact curve stays with
    :mod:`distsgd.error.exact`."""

    name = "quadratic"

    def __init__(self, model: Problem) -> None:
        self.model = model
        self.dim = model.dim
        self.h = model.h
        exact = [Constant(v, "exact") for v in (model.L if model.dim > 1 else model.mu, model.mu,
                                                 model.sigma2, model.sigma2, model.f0)]
        self.constants = Constants(Constant(0.0, "exact", 0.0), *exact)

    def w0(self) -> np.ndarray:
        return self.model.w0

    def loss(self, W: np.ndarray) -> np.ndarray:
        """½ Σᵢ hᵢ wᵢ² of each row of W (R, d)."""
        return 0.5 * (W * W) @ self.h

    def grad(self, W: np.ndarray, rng: np.random.Generator, b: int) -> np.ndarray:
        """h∘w plus N(0, σ²/(b·d)) in each coordinate: an unbiased gradient with variance σ²/b."""
        sd = math.sqrt(self.model.sigma2 / (b * self.dim))
        return W * self.h + rng.normal(0.0, sd, W.shape) if sd > 0 else W * self.h


#: models recorded before they are evaluated together (the loss of a block is one matrix product)
RECORD_BLOCK = 256


def band(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over replicas (rows) and the Student-t 95 % band (infinite with one replica)."""
    R = x.shape[0]
    mean = x.mean(axis=0)
    hw = t95(R - 1) * x.std(axis=0, ddof=1) / math.sqrt(R) if R > 1 else np.full(mean.shape, np.inf)
    return mean, mean - hw, mean + hw

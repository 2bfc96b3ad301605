"""The model problem of DESIGN §3 as a problem of the protocol (DESIGN §9).

f(w) = ½ Σᵢ hᵢ wᵢ², the curvatures hᵢ evenly spaced in [μ, L], minimum f* = 0 at w = 0, start
w₀ with f(w₀) = F₀.  A mini-batch gradient of b samples is h∘w plus Gaussian noise of total
variance σ²/b (σ²/(b·d) per coordinate), so σ²* = σ² exactly, and the bound's σ² (which must
hold everywhere) is σ² too.  Run through :func:`~distsgd.error.general.simulate_problem` it is
the same process as the model problem's own engine (:func:`~distsgd.error.simulate_error`),
with other noise draws; its exact expected curve stays with :mod:`distsgd.error.exact`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .base import Constant, Constants

if TYPE_CHECKING:
    from ..error.problem import Problem

__all__ = ["QuadraticProblem"]


class QuadraticProblem:
    """:class:`~distsgd.error.Problem` (its L, μ, σ², F₀ and d; η and b are the run's) as a
    :class:`~distsgd.problems.GradientProblem`."""

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
        sd = np.sqrt(self.model.sigma2 / (b * self.dim))
        return W * self.h + rng.normal(0.0, sd, W.shape) if sd > 0 else W * self.h

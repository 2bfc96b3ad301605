"""A user's own problem from plain functions (DESIGN §9): ``from_functions(loss, grad, w0, …)``.

The functions follow the protocol of :mod:`distsgd.problems.base` (W of shape (R, d)); they are
checked on first use — shapes and finiteness, a :class:`~distsgd.params.ParameterError` naming the
function.  Constants not given are computed and labelled ``estimated``: f* by L-BFGS (on
``full_grad`` if given, else on finite differences of ``loss``) with the gradient norm it
stopped at, σ²* from gradients of one row drawn at that point; L, μ and the σ² bound stay
unknown unless given (the bound then says it cannot be drawn).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any

import numpy as np
from scipy.optimize import minimize

from .. import limits
from ..params import Domain, ParameterError
from ..random import Seed, generator
from .base import Constant, Constants, checked_output

__all__ = ["FunctionProblem", "from_functions", "FD_MAX_DIM", "SIGMA2_DRAWS"]

#: the largest d whose f* is found on finite differences of the loss (2d loss calls a gradient)
FD_MAX_DIM = 200
#: one-row gradients drawn at the optimum to estimate σ²*
SIGMA2_DRAWS = 4096
_VALUE = Domain("constant", -1e12, 1e12)
_POSITIVE = Domain("constant", 0.0, 1e12, low_open=True)


class FunctionProblem:
    """See the module's docstring."""

    def __init__(self, loss: Callable[[np.ndarray], Any], grad: Callable[[np.ndarray, np.random.Generator, int], Any],
                 w0: Any, *, f_star: float | None = None, L: float | None = None, mu: float | None = None,
                 sigma2: float | None = None, metrics: Callable[[np.ndarray], dict[str, Any]] | None = None,
                 full_grad: Callable[[np.ndarray], Any] | None = None, name: str = "functions", seed: Seed = 0) -> None:
        for fn, what in ((loss, "loss"), (grad, "grad")):
            if not callable(fn):
                raise ParameterError(what, "problem_not_callable", type=type(fn).__name__)
        w = np.asarray(w0, dtype=np.float64) if np.ndim(w0) == 1 else None
        if w is None or w.size == 0 or not np.isfinite(w).all():
            raise ParameterError("w0", "problem_bad_output", function="w0", what=f"{np.shape(w0)}",
                                 expected="a finite vector")
        if w.size > limits.PROBLEM_MAX_DIM:
            raise ParameterError("w0", "problem_dim_cap", dim=w.size, cap=limits.PROBLEM_MAX_DIM)
        self.name, self.dim, self._w0, self._seed = name, int(w.size), w, seed
        self._loss, self._grad, self._metrics, self._full = loss, grad, metrics, full_grad
        self._given = {"f_star": None if f_star is None else _VALUE.check(f_star, "f_star"),
                       "L": None if L is None else _POSITIVE.check(L, "L"),
                       "mu": None if mu is None else _POSITIVE.check(mu, "mu"),
                       "sigma2": None if sigma2 is None else _POSITIVE.check(sigma2, "sigma2")}
        if L is not None and mu is not None and mu > L:
            raise ParameterError("mu", "mu_above_L", L=L, mu=mu)

    def w0(self) -> np.ndarray:
        return self._w0.copy()

    def loss(self, W: np.ndarray) -> np.ndarray:
        return checked_output("loss", self._loss(W), (W.shape[0],))

    def grad(self, W: np.ndarray, rng: np.random.Generator, b: int) -> np.ndarray:
        return checked_output("grad", self._grad(W, rng, b), W.shape)

    def metrics(self, W: np.ndarray) -> dict[str, np.ndarray]:
        if self._metrics is None:
            return {}
        out = self._metrics(W)
        return {str(k): checked_output(f"metrics[{k!r}]", v, (W.shape[0],)) for k, v in dict(out).items()}

    def _minimise(self) -> tuple[np.ndarray, float, float]:
        """(ŵ, f(ŵ), ‖∇f(ŵ)‖) by L-BFGS from w0."""
        if self._full is None and self.dim > FD_MAX_DIM:
            raise ParameterError("f_star", "problem_f_star_needed", dim=self.dim, cap=FD_MAX_DIM)
        full = self._full

        def f(w: np.ndarray) -> float:
            return float(self.loss(w[None])[0])

        jac = ((lambda w: checked_output("full_grad", full(w[None]), (1, self.dim))[0]) if full is not None
               else "3-point")
        res = minimize(f, self._w0, jac=jac, method="L-BFGS-B", options={"gtol": 1e-10, "ftol": 1e-15,
                                                                           "maxiter": 10_000})
        g = np.asarray(res.jac, dtype=np.float64)
        return np.asarray(res.x), float(res.fun), float(np.linalg.norm(g))

    @cached_property
    def w_star(self) -> np.ndarray:
        return self._minimise()[0]

    @cached_property
    def constants(self) -> Constants:
        """The given constants (kind ``given``) and the estimated ones (see the module)."""
        g = self._given
        mu = None if g["mu"] is None else Constant(g["mu"], "given")
        if g["f_star"] is not None:
            f_star = Constant(g["f_star"], "given")
            w_star = None
        else:
            w_star, value, gnorm = self._minimise()
            self.__dict__["w_star"] = w_star
            gap = gnorm**2 / (2 * g["mu"]) if g["mu"] is not None else None
            f_star = Constant(value, "estimated", gap)
        if g["sigma2"] is not None:
            sigma2 = Constant(g["sigma2"], "given")
        else:
            at = self.w_star if w_star is None else w_star
            draws = self.grad(np.tile(at, (SIGMA2_DRAWS, 1)), generator(self._seed), 1)
            sigma2 = Constant(float(((draws - draws.mean(axis=0)) ** 2).sum(axis=1).mean()), "estimated")
        assert f_star.value is not None
        F0 = float(self.loss(self._w0[None])[0]) - f_star.value
        unknown = Constant(None, "unknown")
        return Constants(f_star=f_star, L=unknown if g["L"] is None else Constant(g["L"], "given"), mu=mu or unknown,
                         sigma2=sigma2, sigma2_bound=unknown, F0=Constant(F0, f_star.kind))


def from_functions(loss: Callable[[np.ndarray], Any], grad: Callable[[np.ndarray, np.random.Generator, int], Any],
                   w0: Any, *, f_star: float | None = None, L: float | None = None, mu: float | None = None,
                   sigma2: float | None = None, metrics: Callable[[np.ndarray], dict[str, Any]] | None = None,
                   full_grad: Callable[[np.ndarray], Any] | None = None, name: str = "functions",
                   seed: Seed = 0) -> FunctionProblem:
    """A problem from ``loss(W) → (R,)``, ``grad(W, rng, b) → (R, d)`` (unbiased, b rows drawn with
    replacement) and ``w0`` (d,); see the module's docstring for the constants (``seed``: the
    stream of the gradients that estimate σ²* when it is not given)."""
    return FunctionProblem(loss, grad, w0, f_star=f_star, L=L, mu=mu, sigma2=sigma2, metrics=metrics,
                           full_grad=full_grad, name=name, seed=seed)

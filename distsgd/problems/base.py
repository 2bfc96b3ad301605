"""What a problem is (DESIGN §9): a vectorised gradient oracle over R replicas and the constants
the theory needs, each with its kind.

A problem has ``name``, ``dim``, ``w0()``, ``loss(W)``, ``grad(W, rng, b)``, ``constants`` and,
optionally, ``metrics(W)`` and ``full_grad(W)`` (the exact gradient, for the measured staleness
factor γ).  ``W`` is always (R, d): one model per replica.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..params import Domain, ParameterError

__all__ = ["Constant", "Constants", "GradientProblem", "LAM", "DEFAULT_LAM", "TEST_FRACTION", "SPLIT_SEED",
           "TARGET_ACCURACY", "GAP_CERTIFIED", "KINDS", "checked_output", "data_rows"]

#: the kinds a constant can have: known in closed form, a bound that holds, a number computed to a
#: stated accuracy but not certified, a value the user gave, or not known (value None)
KINDS = ("exact", "bound", "estimated", "given", "unknown")
#: the certified gap f(ŵ) − f* ≤ ‖∇f(ŵ)‖² / (2μ) below which f* is reported as ``exact``
GAP_CERTIFIED = 1e-10

LAM = Domain("lam", 0.0, 1e6, low_open=True, symbol="λ", doc="L2 regularisation of logistic regression")
#: λ when none is given (DESIGN §9)
DEFAULT_LAM = 1e-2
TEST_FRACTION = Domain("test_fraction", 0.0, 0.9, symbol="", doc="fraction of the rows held out for testing")
SPLIT_SEED = Domain("split_seed", 0, 2**32 - 1, integer=True, doc="seed of the stratified train/test split")
TARGET_ACCURACY = Domain("target_accuracy", 0.0, 1.0, low_open=True, doc="test accuracy to reach")


@dataclass(frozen=True)
class Constant:
    """A number the theory uses, with its kind (one of :data:`KINDS`) and, for f*, the certified
    gap f(ŵ) − f* ≤ ``gap``."""

    value: float | None
    kind: str
    gap: float | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value, "kind": self.kind}
        if self.gap is not None:
            out["gap"] = self.gap
        return out


@dataclass(frozen=True)
class Constants:
    """f* (with its certificate), L, μ, σ²* (the gradient variance at the optimum, per sample),
    the bound σ² that holds everywhere, and F0 = f(w0) − f*."""

    f_star: Constant
    L: Constant
    mu: Constant
    sigma2: Constant
    sigma2_bound: Constant
    F0: Constant

    def as_json(self) -> dict[str, dict[str, Any]]:
        return {name: getattr(self, name).as_json() for name in ("f_star", "L", "mu", "sigma2", "sigma2_bound", "F0")}


@runtime_checkable
class GradientProblem(Protocol):
    """The protocol of DESIGN §9 (see the module's docstring)."""

    name: str
    dim: int

    def w0(self) -> np.ndarray: ...

    def loss(self, W: np.ndarray) -> np.ndarray: ...

    def grad(self, W: np.ndarray, rng: np.random.Generator, b: int) -> np.ndarray: ...

    @property
    def constants(self) -> Constants: ...


def data_rows(problem: Any) -> tuple[int, int]:
    """(training rows one loss evaluation reads, held-out rows the metrics read): the problem's
    ``n`` and ``n_test`` where it says them (logistic regression), else (1, 0) — the unit in which
    the work caps count an evaluation (each row a pass over d numbers)."""
    def rows(name: str, default: int) -> int:
        v = getattr(problem, name, None)
        return int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0 else default
    return max(1, rows("n", 1)), rows("n_test", 0)


def checked_output(function: str, value: Any, shape: tuple[int, ...]) -> np.ndarray:
    """A problem function's output as float64 of ``shape``, finite; else a ParameterError of
    parameter ``problem`` naming the function and what it gave."""
    try:
        out = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError("problem", "problem_bad_output", function=function, what=type(value).__name__,
                             expected=f"an array of shape {shape}") from None
    if out.shape != shape:
        raise ParameterError("problem", "problem_bad_output", function=function, what=f"shape {out.shape}",
                             expected=f"shape {shape}")
    if not np.isfinite(out).all():
        raise ParameterError("problem", "problem_bad_output", function=function, what="a non-finite value",
                             expected="finite numbers")
    return out

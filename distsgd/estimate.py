"""An analytic value and how far to trust it (DESIGN §2, "Analytic results carry a kind").

* ``exact`` — a closed form evaluated in floating point;
* ``numerical`` — quadrature or a lattice computation whose estimated relative error is at
  most :data:`REL_TOL` (``error`` holds the estimated absolute error);
* ``approximation`` — the same computations when the error estimate exceeds it;
* ``upper_bound`` / ``lower_bound`` — a bound, not the value;
* ``infinite`` — the expectation diverges; ``value`` is None;
* ``unavailable`` — no formula or bound is known; ``value`` is None.

>>> Estimate(2.5, "exact", "a closed form").value
2.5
>>> unavailable("no formula").kind
'unavailable'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from .params import ParameterError
from .reasons import Phrase

__all__ = ["Kind", "KINDS", "VALUE_KINDS", "REL_TOL", "Estimate", "infinite", "unavailable", "numeric_kind"]

Kind = Literal["exact", "numerical", "upper_bound", "lower_bound", "approximation", "infinite", "unavailable"]
KINDS: tuple[Kind, ...] = get_args(Kind)
#: the kinds whose value *is* E[T] (to the stated accuracy), not a bound or an approximation
VALUE_KINDS: tuple[Kind, ...] = ("exact", "numerical")
#: relative error below which a computed value is reported as ``numerical`` (DESIGN §2)
REL_TOL = 1e-6


@dataclass(frozen=True)
class Estimate:
    """An analytic value with its kind (one of :data:`KINDS`) and how it was obtained.

    ``value`` is None exactly when ``kind`` is ``infinite`` or ``unavailable``.  ``std`` is the
    standard deviation of the per-iteration runtime where it is cheap (order-statistic
    schemes), else None; ``error`` is the estimated absolute error of numerical results;
    ``notes`` the warnings of a Monte Carlo run an approximation came from.
    """

    value: float | None
    kind: Kind
    method: str
    std: float | None = None
    error: float | None = None
    #: warnings about the value (an approximation from a Monte Carlo run whose variance is infinite)
    notes: tuple[Phrase, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("value", "std", "error"):  # plain floats (JSON-friendly), not numpy scalars
            v = getattr(self, name)
            if v is not None:
                object.__setattr__(self, name, float(v))
        if self.kind not in KINDS:
            raise ParameterError("kind", "one_of", choices=", ".join(KINDS), value=self.kind)
        if (self.value is None) != (self.kind in ("infinite", "unavailable")):
            raise ParameterError("value", "value_none_iff", kind=self.kind)

    def scaled(self, factor: float, offset: float = 0.0, method: str | None = None) -> Estimate:
        """``factor·value + offset`` with std and error scaled alike (for per-step runtimes).

        >>> Estimate(4.0, "exact", "E[X]", std=2.0).scaled(0.5, 1.0)
        Estimate(value=3.0, kind='exact', method='E[X]', std=1.0, error=None)
        """
        if self.value is None:
            return Estimate(None, self.kind, method or self.method)
        return Estimate(self.value * factor + offset, self.kind, method or self.method,
                        None if self.std is None else self.std * abs(factor),
                        None if self.error is None else self.error * abs(factor), self.notes)

    def renamed(self, method: str) -> Estimate:
        """The same estimate with another ``method`` text."""
        return Estimate(self.value, self.kind, method, self.std, self.error, self.notes)


def infinite(method: str) -> Estimate:
    """The expectation diverges."""
    return Estimate(None, "infinite", method)


def unavailable(method: str) -> Estimate:
    """No formula or bound is known (``method`` says why)."""
    return Estimate(None, "unavailable", method)


def numeric_kind(value: float, error: float) -> Kind:
    """``numerical`` when the estimated error is within :data:`REL_TOL` of the value, else ``approximation``.

    >>> numeric_kind(1.0, 1e-9), numeric_kind(1.0, 1e-3)
    ('numerical', 'approximation')
    """
    return "numerical" if error <= REL_TOL * abs(value) else "approximation"

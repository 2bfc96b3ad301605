"""Parameter domains and the one validation path every entry point goes through.

A :class:`Domain` is declared once, next to the model that owns the parameter
(``delays.py``, ``schemes.py``, ``sgd.py``); the API, the CLI, the URL parser and
the widgets all call :meth:`Domain.check`, so they give the same message for the
same bad value.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

__all__ = ["ParameterError", "Domain", "shortest"]


class ParameterError(ValueError):
    """A bad input value. ``parameter`` names it; the message says the allowed range."""

    def __init__(self, parameter: str, message: str) -> None:
        self.parameter = parameter
        super().__init__(f"{parameter}: {message}")


def shortest(x: float) -> str:
    """Shortest text that reads back as the same float (``2.0`` → ``2``)."""
    r = repr(float(x))
    return r[:-2] if r.endswith(".0") else r


def _fmt(x: float | int) -> str:
    if isinstance(x, int) and not isinstance(x, bool) and abs(x) >= 10**16:
        text = str(x)  # exact (seeds), shortened only when absurdly long
        return text if len(text) <= 40 else f"{text[:20]}…({len(text)} digits)"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if x and (abs(x) >= 1e6 or abs(x) <= 1e-4) and math.log10(abs(x)).is_integer():
        return f"{'-' if x < 0 else ''}1e{int(math.log10(abs(x)))}"
    if float(x).is_integer() and abs(x) < 1e16:
        return str(int(x))
    return repr(float(x))


@dataclass(frozen=True)
class Domain:
    """The allowed values of one real or integer parameter.

    ``low``/``high`` are the bounds, open or closed as flagged; ``integer`` asks
    for a whole number.  ``symbol`` and ``doc`` are for labels in the UI.
    """

    name: str
    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    integer: bool = False
    symbol: str = ""
    doc: str = ""

    def describe(self) -> str:
        """The allowed range in words, e.g. ``a number > 0`` or ``an integer in [1, 100000]``."""
        kind = "an integer" if self.integer else "a number"
        lo, hi = self.low, self.high
        if math.isinf(lo) and math.isinf(hi):
            return kind
        if math.isinf(hi):
            return f"{kind} {'>' if self.low_open else '≥'} {_fmt(lo)}"
        if math.isinf(lo):
            return f"{kind} {'<' if self.high_open else '≤'} {_fmt(hi)}"
        left = "(" if self.low_open else "["
        right = ")" if self.high_open else "]"
        return f"{kind} in {left}{_fmt(lo)}, {_fmt(hi)}{right}"

    def contains(self, value: float | int) -> bool:
        """True when ``value`` lies in the domain (ints are compared as ints: exactly)."""
        if isinstance(value, float) and math.isnan(value):
            return False
        if value < self.low or (self.low_open and value == self.low):
            return False
        if value > self.high or (self.high_open and value == self.high):
            return False
        return True

    def _bad(self, label: str, value: object) -> ParameterError:
        shown = _fmt(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else repr(value)
        if isinstance(value, str):
            shown = repr(value if len(value) <= 40 else value[:40] + "…")
        return ParameterError(label, f"must be {self.describe()} (got {shown})")

    def check(self, value: object, name: str | None = None) -> float | int:
        """Return ``value`` as float (or int) if it lies in the domain, else raise ParameterError.

        Integer domains are exact: an ``int`` (or numpy integer) is compared and returned as
        an int, never through a float (a 63-bit seed stays itself); a string is read with
        ``int()`` first; a float is accepted only when it is a whole number of magnitude
        ≤ 2**53, where every integer is a float exactly.  Booleans and None are refused.
        """
        label = name or self.name
        if isinstance(value, bool) or value is None:
            raise ParameterError(label, f"must be {self.describe()} (got {value!r})")
        if isinstance(value, str):
            text = value.strip()
            if len(text) > 400:
                raise self._bad(label, value)
            parsed: object = None
            if self.integer:
                try:
                    parsed = int(text)
                except ValueError:
                    parsed = None
            if parsed is None:
                try:
                    parsed = float(text)
                except ValueError:
                    raise self._bad(label, value) from None
            value = parsed
        if isinstance(value, numbers.Integral):
            n = int(value)
            if not self.contains(n):
                raise self._bad(label, n)
            return n if self.integer else self._as_float(n, label)
        if not isinstance(value, numbers.Real):
            raise ParameterError(label, f"must be {self.describe()} (got {type(value).__name__})")
        try:
            x = float(value)
        except (OverflowError, ValueError, TypeError):
            raise self._bad(label, value) from None
        if self.integer:
            if not math.isfinite(x) or not x.is_integer():
                raise self._bad(label, value)
            if abs(x) > 2.0**53:
                raise ParameterError(label, f"must be {self.describe()}, given exactly: {x!r} is a float, "
                                            "and floats above 2**53 are not exact integers (pass an int)")
            n = int(x)
            if not self.contains(n):
                raise self._bad(label, n)
            return n
        if math.isnan(x) or not self.contains(x):
            raise self._bad(label, x)
        return x

    def _as_float(self, n: int, label: str) -> float:
        try:
            x = float(n)
        except OverflowError:
            raise self._bad(label, n) from None
        if not self.contains(x):
            raise self._bad(label, x)
        return x

    def clamp(self, value: float) -> float | int:
        """The nearest allowed value (for UI clamping of out-of-range URL values)."""
        try:
            x = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError, OverflowError):
            raise ParameterError(self.name, f"cannot clamp {value!r}: not a number") from None
        if math.isnan(x):
            raise ParameterError(self.name, "cannot clamp NaN")
        x = min(max(x, self.low), self.high)
        if self.integer:
            n = int(round(x))
            if self.low_open and n <= self.low:
                n = math.floor(self.low) + 1
            if self.high_open and n >= self.high:
                n = math.ceil(self.high) - 1
            return n
        if self.low_open and x <= self.low:
            x = math.nextafter(self.low, math.inf)
        if self.high_open and x >= self.high:
            x = math.nextafter(self.high, -math.inf)
        return x

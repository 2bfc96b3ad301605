"""Parameter domains and the one validation path every entry point goes through.

A :class:`Domain` is declared once, next to the model that owns the parameter
(``delays.py``, ``schemes.py``, ``sgd.py``); the API, the CLI, the URL parser and
the widgets all call :meth:`Domain.check`, so they give the same message for the
same bad value.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast, overload

from .reasons import Phrase, english

__all__ = ["ParameterError", "Domain", "shortest", "ceil_div", "jsonable", "from_jsonable"]


class ParameterError(ValueError):
    """A bad input value: ``parameter`` names it, ``reason`` is a code of
    :data:`distsgd.reasons.REASONS` and ``fields`` fill its template (a field may be a
    :class:`~distsgd.reasons.Phrase` or a nested ParameterError).  ``detail`` is the English the
    template makes, ``str(exc)`` is ``"parameter: detail"``; the dashboard translates from the
    code and fields (:func:`distsgd.ui.controls.explain`).

    >>> exc = ParameterError("m", "timeline_workers", cap=64, m=100)
    >>> str(exc), exc.reason, exc.fields
    ('m: the timeline draws at most 64 workers (got 100)', 'timeline_workers', {'cap': 64, 'm': 100})
    """

    def __init__(self, parameter: str, reason: str, /, **fields: Any) -> None:
        self.parameter = parameter
        self.reason = reason
        self.fields = fields
        self.detail = english(reason, **fields)
        super().__init__(f"{parameter}: {self.detail}")

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled as its parts (it crosses from a dashboard worker process: ui/workers.py)
        return (_rebuild, (type(self), self.parameter, self.reason, self.fields))

    def as_dict(self) -> dict[str, Any]:
        """``{"parameter", "reason", "fields"}`` as JSON can hold it (:func:`jsonable`),
        e.g. for a chart row saying why a scheme was not simulated."""
        out: dict[str, Any] = jsonable(self)
        return out


def _rebuild(cls: type[ParameterError], parameter: str, reason: str, fields: dict[str, Any]) -> ParameterError:
    return cls(parameter, reason, **fields)


def jsonable(value: Any) -> Any:
    """A refusal's field as JSON can hold it (a chart row carries a refusal so): a Phrase as
    ``{"reason", "fields"}``, a ParameterError as ``{"parameter", "reason", "fields"}``
    (recursively), a tuple as a list, a numpy scalar as a Python number; :func:`from_jsonable`
    reverses it."""
    if isinstance(value, ParameterError):
        return {"parameter": value.parameter, "reason": value.reason, "fields": jsonable(value.fields)}
    if isinstance(value, Phrase):
        return {"reason": value.code, "fields": jsonable(value.fields)}
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    item = getattr(value, "item", None)  # a numpy scalar
    return item() if callable(item) else str(value)


def from_jsonable(value: Any) -> Any:
    """The inverse of :func:`jsonable`: ``{"parameter", "reason", "fields"}`` a ParameterError,
    ``{"reason", "fields"}`` a Phrase, anything else as it is (fields rebuilt recursively)."""
    if isinstance(value, Mapping) and set(value) in ({"reason", "fields"}, {"parameter", "reason", "fields"}):
        fields = {k: from_jsonable(v) for k, v in value["fields"].items()}
        if "parameter" in value:
            return ParameterError(value["parameter"], value["reason"], **fields)
        return Phrase(value["reason"], **fields)
    return value


def shortest(x: float) -> str:
    """Shortest text that reads back as the same float (``2.0`` → ``2``).

    >>> shortest(2.0), shortest(0.1), shortest(1e-7)
    ('2', '0.1', '1e-07')
    """
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


#: what :meth:`Domain.check` returns: ``int`` for an integer domain, else ``float``
N = TypeVar("N", bound=float)


@dataclass(frozen=True)
class Domain(Generic[N]):
    """The allowed values of one real or integer parameter.

    ``low``/``high`` are the bounds, open or closed as flagged; ``integer`` asks
    for a whole number.  ``symbol`` and ``doc`` are for labels in the UI.
    For a type checker, ``Domain(..., integer=True)`` is a ``Domain[int]`` and one
    without ``integer`` a ``Domain[float]``: the type :meth:`check` and :meth:`clamp` return.

    >>> rate = Domain("rate", 0.0, 1e9, low_open=True, symbol="λ")
    >>> rate.describe()
    'a number in (0, 1e9]'
    >>> Domain("m", 1, 1000, integer=True).describe()
    'an integer in [1, 1000]'
    """

    name: str
    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    integer: bool = False
    symbol: str = ""
    doc: str = ""

    if TYPE_CHECKING:  # typing only: at run time the dataclass's own __init__ is used
        @overload
        def __init__(self: Domain[int], name: str, low: float = ..., high: float = ...,
                     low_open: bool = ..., high_open: bool = ..., *, integer: Literal[True],
                     symbol: str = ..., doc: str = ...) -> None: ...

        @overload
        def __init__(self: Domain[float], name: str, low: float = ..., high: float = ...,
                     low_open: bool = ..., high_open: bool = ..., integer: Literal[False] = ...,
                     symbol: str = ..., doc: str = ...) -> None: ...

        @overload
        def __init__(self: Domain[float | int], name: str, low: float = ..., high: float = ...,
                     low_open: bool = ..., high_open: bool = ..., integer: bool = ...,
                     symbol: str = ..., doc: str = ...) -> None: ...

        def __init__(self, name: str, low: float = ..., high: float = ..., low_open: bool = ...,
                     high_open: bool = ..., integer: bool = ..., symbol: str = ..., doc: str = ...) -> None: ...

    def describe(self) -> str:
        """The allowed range in words, e.g. ``a number > 0`` or ``an integer in [1, 100000]``."""
        return str(self.phrase())

    def phrase(self) -> Phrase:
        """:meth:`describe` as a :class:`~distsgd.reasons.Phrase` (its code and numbers), which the
        dashboard shows in the reader's language."""
        kind = "integer" if self.integer else "number"
        lo, hi = self.low, self.high
        if math.isinf(lo) and math.isinf(hi):
            return Phrase("an_integer" if self.integer else "a_number")
        if math.isinf(hi):
            return Phrase(f"{kind}_{'gt' if self.low_open else 'ge'}", bound=_fmt(lo))
        if math.isinf(lo):
            return Phrase(f"{kind}_{'lt' if self.high_open else 'le'}", bound=_fmt(hi))
        left = "(" if self.low_open else "["
        right = ")" if self.high_open else "]"
        return Phrase(f"{kind}_in", interval=f"{left}{_fmt(lo)}, {_fmt(hi)}{right}")

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
        return ParameterError(label, "out_of_domain", range=self.phrase(), value=shown)

    def check(self, value: object, name: str | None = None) -> N:
        """Return ``value`` as float (or int) if it lies in the domain, else raise ParameterError.

        Integer domains are exact: an ``int`` (or numpy integer) is compared and returned as
        an int, never through a float (a 63-bit seed stays itself); a string is read with
        ``int()`` first; a float is accepted only when it is a whole number of magnitude
        ≤ 2**53, where every integer is a float exactly.  Booleans and None are refused.
        ``name`` replaces the domain's name in the message.

        >>> M = Domain("m", 1, 1000, integer=True)
        >>> M.check(16), M.check("16"), M.check(16.0)
        (16, 16, 16)
        >>> M.check(2.5)
        Traceback (most recent call last):
        ...
        distsgd.params.ParameterError: m: must be an integer in [1, 1000] (got 2.5)
        >>> Domain("eta", 0.0, 100.0, low_open=True).check(0, "learning rate")
        Traceback (most recent call last):
        ...
        distsgd.params.ParameterError: learning rate: must be a number in (0, 100] (got 0)
        >>> Domain("eta", 0.0, 100.0, low_open=True).check(" 0.05 ")
        0.05
        """
        label = name or self.name
        if isinstance(value, bool) or value is None:
            raise ParameterError(label, "out_of_domain", range=self.phrase(), value=repr(value))
        if isinstance(value, str):
            value = self._parse(value, label)
        if isinstance(value, numbers.Integral):
            return cast(N, self._check_int(int(value), label))
        if not isinstance(value, numbers.Real):
            raise ParameterError(label, "out_of_domain", range=self.phrase(), value=type(value).__name__)
        return cast(N, self._check_real(value, label))

    def _parse(self, value: str, label: str) -> int | float:
        """A string read as a number: with ``int()`` first in an integer domain, else ``float()``."""
        text = value.strip()
        if len(text) > 400:
            raise self._bad(label, value)
        if self.integer:
            try:
                return int(text)
            except ValueError:
                pass
        try:
            return float(text)
        except ValueError:
            raise self._bad(label, value) from None

    def _check_int(self, n: int, label: str) -> int | float:
        """An exact integer: compared as an int, then returned as one (or as a float)."""
        if not self.contains(n):
            raise self._bad(label, n)
        return n if self.integer else self._as_float(n, label)

    def _check_real(self, value: numbers.Real, label: str) -> int | float:
        """Any other real number: a float, or a whole number ≤ 2**53 in an integer domain."""
        try:
            x = float(value)
        except (OverflowError, ValueError, TypeError):
            raise self._bad(label, value) from None
        if self.integer:
            if not math.isfinite(x) or not x.is_integer():
                raise self._bad(label, value)
            if abs(x) > 2.0**53:
                raise ParameterError(label, "float_not_exact", range=self.phrase(), value=repr(x))
            return self._check_int(int(x), label)
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

    def clamp(self, value: float | str) -> N:
        """The nearest allowed value (for UI clamping of out-of-range URL values).

        >>> M = Domain("m", 1, 1000, integer=True)
        >>> M.clamp(5000), M.clamp(-3), M.clamp(7.6)
        (1000, 1, 8)
        >>> Domain("p", 0.0, 1.0).clamp("1.5")
        1.0
        """
        return cast(N, self._clamp(value))

    def _clamp(self, value: float | str) -> int | float:
        try:
            x = float(value)
        except (TypeError, ValueError, OverflowError):
            raise ParameterError(self.name, "cannot_clamp", value=repr(value)) from None
        if math.isnan(x):
            raise ParameterError(self.name, "cannot_clamp_nan")
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


def ceil_div(a: int, b: int) -> int:
    """⌈a/b⌉ for positive integers, exactly (no float rounding).

    >>> ceil_div(7, 2), ceil_div(8, 2)
    (4, 4)
    """
    return -(-a // b)

"""Delay distributions: the random time X one worker needs for one mini-batch gradient.

Every distribution is a frozen dataclass whose parameters are declared once, with
their domains, in ``PARAMS``; every one takes an optional shift Δ ≥ 0 (the sample is
Δ + Y).  Spec strings (DESIGN §2) such as ``pareto(xm=1, alpha=2.5)`` are read by
:func:`parse_delay` and written back by ``str(delay)``; the two round-trip.

cdf/sf/ppf/isf/pdf come from ``scipy.stats`` (loc = Δ); ``sample`` uses direct numpy
samplers where one exists (inverse-cdf otherwise).  ``isf`` is kept separate from
``ppf`` so that upper order statistics of many workers keep their precision
(``isf(v)`` for tiny ``v`` rather than ``ppf(1 − v)``).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import stat
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from scipy import special, stats

from . import limits
from .params import Domain, ParameterError
from .params import shortest as _fmt

__all__ = [
    "Delay",
    "Exponential",
    "Pareto",
    "LogNormal",
    "TruncatedNormal",
    "Weibull",
    "Uniform",
    "Empirical",
    "parse_delay",
    "check_delay",
    "DELAY_NAMES",
    "SHIFT",
    "EMPIRICAL_MAX_VALUES",
    "EMPIRICAL_MAX_BYTES",
]

# Domains are declared once, here, next to each family (DESIGN §6).  Their bounds keep every
# law *representable*: samples, their squares and sums of 1e7 of them stay finite, the mean
# and variance are finite floats unless truly infinite (never NaN).  The reasons for each
# bound are in distsgd/limits.py: time scales within [TIME_SCALE_MIN, TIME_SCALE_MAX] =
# [1e-9, 1e6], Pareto α ≥ 1/4, Weibull k ≥ 0.02, lognormal μ within [-20, 14] and σ ≤ 10.
_T_MIN, _T_MAX = limits.TIME_SCALE_MIN, limits.TIME_SCALE_MAX
assert (1e-6, 1e9) == (1 / _T_MAX, round(1 / _T_MIN)), "the rate domain below is 1/the time scales"

#: the shift Δ is a time: at most the largest time scale
SHIFT = Domain("shift", 0.0, _T_MAX, symbol="Δ", doc="constant part of every delay (Δ + Y)")
EMPIRICAL_MAX_VALUES = limits.EMPIRICAL_MAX_VALUES
EMPIRICAL_MAX_BYTES = limits.EMPIRICAL_MAX_BYTES
#: one time of a measured trace: positive and at most limits.MAX_TRACE_TIME
TRACE_TIME = Domain("time", 0.0, limits.MAX_TRACE_TIME, low_open=True, doc="one measured time")


#: the variable of a shifted density: f(x) = g(x − Δ)
_SHIFTED_VAR = "(x-\\Delta)"


def _array(x: Any, name: str) -> np.ndarray:
    """``x`` as a float array, or ParameterError naming ``name`` (no NaN allowed)."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError(name, f"must be a number or an array of numbers (got {type(x).__name__})") from None
    if np.isnan(a).any():
        raise ParameterError(name, "must not be NaN")
    return a


def _probabilities(q: Any, name: str = "q") -> np.ndarray:
    a = _array(q, name)
    if not (np.all(a >= 0.0) and np.all(a <= 1.0)):
        raise ParameterError(name, "probabilities must lie in [0, 1]")
    return a


def _size(size: Any) -> Any:
    """A sample size (None, an int or a tuple of ints) whose product is at most limits.MAX_SAMPLE_SIZE."""
    if size is None:
        return None
    dims = size if isinstance(size, (tuple, list)) else (size,)
    out = []
    total = 1
    for d in dims:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            raise ParameterError("size", f"must be an int or a tuple of ints (got {size!r})")
        if d < 0:
            raise ParameterError("size", f"must not be negative (got {size!r})")
        out.append(int(d))
        total *= int(d)
    if total > limits.MAX_SAMPLE_SIZE:
        raise ParameterError("size", f"at most {limits.MAX_SAMPLE_SIZE} values per call (got {total}); "
                                     "draw in chunks")
    return tuple(out) if isinstance(size, (tuple, list)) else out[0]


@dataclass(frozen=True, kw_only=True)
class Delay(ABC):
    """A non-negative delay X = Δ + Y with Y from a named family."""

    shift: float = 0.0

    name: ClassVar[str]
    PARAMS: ClassVar[tuple[Domain, ...]]
    #: spec keyword → dataclass field, where they differ (``mean`` is taken by the property)
    FIELDS: ClassVar[dict[str, str]] = {}

    def __post_init__(self) -> None:
        for dom in self.PARAMS + (SHIFT,):
            attr = self.FIELDS.get(dom.name, dom.name)
            object.__setattr__(self, attr, dom.check(getattr(self, attr), dom.name))
        self._check_joint()

    def _check_joint(self) -> None:
        """Constraints between parameters (e.g. low < high)."""

    # -- the family, without the shift ------------------------------------------------
    @abstractmethod
    def _scipy(self) -> Any:
        """The frozen scipy distribution of Y (shift not included)."""

    @cached_property
    def _dist(self) -> Any:
        return self._scipy()

    def _sample_base(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        return self._dist.ppf(rng.random(size))

    # -- public interface ---------------------------------------------------------------
    def parameters(self) -> dict[str, float]:
        """The family parameters by spec keyword (shift excluded), in declaration order."""
        return {d.name: getattr(self, self.FIELDS.get(d.name, d.name)) for d in self.PARAMS}

    def sample(self, rng: Any, size: Any = None) -> np.ndarray:
        """``size`` i.i.d. draws of X (vectorised); ``rng`` a Generator or a seed."""
        from .random import generator
        size = _size(size)
        x = np.asarray(self._sample_base(generator(rng), size), dtype=float)
        return x + self.shift if self.shift else x

    # public cdf/sf/pdf/ppf/isf validate their argument, then call the family's _cdf … _isf
    # (infinite values at the ends, ppf(1) = ∞ or x = ±∞, are results, not warnings)
    def cdf(self, x: Any) -> np.ndarray:
        with np.errstate(all="ignore"):
            return self._cdf(_array(x, "x"))

    def sf(self, x: Any) -> np.ndarray:
        with np.errstate(all="ignore"):
            return self._sf(_array(x, "x"))

    def pdf(self, x: Any) -> np.ndarray:
        with np.errstate(all="ignore"):
            return self._pdf(_array(x, "x"))

    def ppf(self, q: Any) -> np.ndarray:
        """Quantile function: the smallest x with P(X ≤ x) ≥ q, for q in [0, 1]."""
        with np.errstate(all="ignore"):
            return self._ppf(_probabilities(q))

    def isf(self, q: Any) -> np.ndarray:
        """Inverse survival function: the x with P(X > x) = q (precise for tiny q)."""
        with np.errstate(all="ignore"):
            return self._isf(_probabilities(q))

    def _cdf(self, x: np.ndarray) -> np.ndarray:
        return self._dist.cdf(x - self.shift)

    def _sf(self, x: np.ndarray) -> np.ndarray:
        return self._dist.sf(x - self.shift)

    def _pdf(self, x: np.ndarray) -> np.ndarray:
        return self._dist.pdf(x - self.shift)

    def _ppf(self, q: np.ndarray) -> np.ndarray:
        return self._dist.ppf(q) + self.shift

    def _isf(self, q: np.ndarray) -> np.ndarray:
        return self._dist.isf(q) + self.shift

    @property
    def mean(self) -> float:
        return float(self._dist.mean()) + self.shift

    @property
    def var(self) -> float:
        """Variance of X: a finite float, or ``inf`` only when it truly diverges (never NaN)."""
        return float(self._dist.var())

    @property
    def std(self) -> float:
        return math.sqrt(self.var)

    @property
    def tail_index(self) -> float:
        """α such that P(X > x) decays like x^{-α}: E[X^p] < ∞ iff p < α.  ``inf`` for the
        families with every moment finite (all but Pareto; a trace is bounded)."""
        return math.inf

    @property
    def support(self) -> tuple[float, float]:
        lo, hi = self._dist.support()
        return float(lo) + self.shift, float(hi) + self.shift

    @cached_property
    def is_nlu(self) -> bool:
        """New-longer-than-used: P(X > s+t | X > t) ≤ P(X > s) for all s, t ≥ 0.

        A shift keeps the property (for s or t < Δ the inequality is monotonicity of sf), and
        it cannot give it to the parametric families that lack it (their tails decide); a
        measured trace is checked with its shift.  Computed once per object.
        """
        return self._nlu()

    @abstractmethod
    def _nlu(self) -> bool: ...

    @property
    def key(self) -> str:
        """A short string that identifies the law exactly (a cache key): the spec string for
        the parametric families (it round-trips through :func:`parse_delay`)."""
        return str(self)

    @property
    def label(self) -> str:
        """Short human label, e.g. ``Δ + Exp(λ=2)`` with numbers filled in."""
        base = self._label()
        return f"{_fmt(self.shift)} + {base}" if self.shift else base

    @abstractmethod
    def _label(self) -> str: ...

    @property
    def latex(self) -> str:
        """The density of X in LaTeX (for st.latex): ``f(x) = g(x)``, or with a shift
        ``f(x) = g(x − Δ)`` — the family's density written in the variable ``(x-\\Delta)``."""
        if self.shift:
            return "f(x) = " + self._latex(_SHIFTED_VAR) + ",\\quad \\Delta = " + _fmt(self.shift)
        return "f(x) = " + self._latex("x")

    @abstractmethod
    def _latex(self, v: str) -> str:
        """The density of the unshifted family in the variable ``v`` (with its parameters)."""

    def spec_items(self) -> list[tuple[str, float | str]]:
        items: list[tuple[str, float | str]] = list(self.parameters().items())
        if self.shift:
            items.append(("shift", self.shift))
        return items

    def __str__(self) -> str:
        args = ", ".join(f"{k}={_fmt(v) if isinstance(v, float) else v}" for k, v in self.spec_items())
        return f"{self.name}({args})"


@dataclass(frozen=True, kw_only=True)
class Exponential(Delay):
    """X = Δ + Exp(λ): memoryless; E[X] = Δ + 1/λ.  Spec ``exp(rate=λ)`` or ``shifted-exp(rate=λ, shift=Δ)``."""

    rate: float
    name: ClassVar[str] = "exp"
    PARAMS: ClassVar[tuple[Domain, ...]] = (
        # 1/λ is a time scale: λ in [1/TIME_SCALE_MAX, 1/TIME_SCALE_MIN] = [1e-6, 1e9]
        Domain("rate", 1e-6, 1e9, symbol="λ", doc="rate of the exponential part"),
    )

    def _scipy(self) -> Any:
        return stats.expon(scale=1.0 / self.rate)

    def _sample_base(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        return rng.exponential(1.0 / self.rate, size)

    def _ppf(self, q: np.ndarray) -> np.ndarray:
        return -np.log1p(-q) / self.rate + self.shift

    def _isf(self, q: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return -np.log(q) / self.rate + self.shift

    @property
    def mean(self) -> float:
        return 1.0 / self.rate + self.shift

    @property
    def var(self) -> float:
        return 1.0 / self.rate**2

    def _nlu(self) -> bool:
        return True

    def _label(self) -> str:
        return f"Exp(λ={_fmt(self.rate)})"

    def _latex(self, v: str) -> str:
        return f"\\lambda e^{{-\\lambda {v}}},\\ {v} \\ge 0,\\quad \\lambda = {_fmt(self.rate)}"

    def __str__(self) -> str:
        if self.shift:
            return f"shifted-exp(rate={_fmt(self.rate)}, shift={_fmt(self.shift)})"
        return f"exp(rate={_fmt(self.rate)})"


@dataclass(frozen=True, kw_only=True)
class Pareto(Delay):
    """Pareto I on [x_m, ∞): P(Y > y) = (x_m / y)^α.  Mean infinite for α ≤ 1, variance for α ≤ 2."""

    xm: float
    alpha: float
    name: ClassVar[str] = "pareto"
    PARAMS: ClassVar[tuple[Domain, ...]] = (
        Domain("xm", _T_MIN, _T_MAX, symbol="x_m", doc="scale (minimum) of the Pareto"),
        # α ≥ 1/4: samples x_m·U^{-1/α} and sums of their squares stay finite (limits.py)
        Domain("alpha", limits.PARETO_ALPHA_MIN, 1e3, symbol="α", doc="tail index; smaller is heavier"),
    )

    def _scipy(self) -> Any:
        return stats.pareto(b=self.alpha, scale=self.xm)

    def _sample_base(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        # numpy's pareto is Lomax (Pareto II); 1 + Lomax is Pareto I with x_m = 1.
        return self.xm * (1.0 + rng.pareto(self.alpha, size))

    def _ppf(self, q: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", over="ignore"):
            return self.xm * (1.0 - q) ** (-1.0 / self.alpha) + self.shift

    def _isf(self, q: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", over="ignore"):
            return self.xm * q ** (-1.0 / self.alpha) + self.shift

    @property
    def mean(self) -> float:
        if self.alpha <= 1:
            return math.inf
        return self.alpha * self.xm / (self.alpha - 1) + self.shift

    @property
    def var(self) -> float:
        a = self.alpha
        if a <= 2:
            return math.inf
        return a * self.xm**2 / ((a - 1) ** 2 * (a - 2))

    @property
    def tail_index(self) -> float:
        return self.alpha

    def _nlu(self) -> bool:
        return False

    def _label(self) -> str:
        return f"Pareto(x_m={_fmt(self.xm)}, α={_fmt(self.alpha)})"

    def _latex(self, v: str) -> str:
        return (f"\\frac{{\\alpha x_m^\\alpha}}{{{v}^{{\\alpha+1}}}},\\ {v} \\ge x_m,"
                f"\\quad x_m = {_fmt(self.xm)},\\ \\alpha = {_fmt(self.alpha)}")


@dataclass(frozen=True, kw_only=True)
class LogNormal(Delay):
    """log Y ~ Normal(μ, σ²); E[Y] = exp(μ + σ²/2).  Neither NLU nor NWU in general."""

    mu: float
    sigma: float
    name: ClassVar[str] = "lognormal"
    PARAMS: ClassVar[tuple[Domain, ...]] = (
        # e^μ (the median) is a time scale; σ ≤ 10 keeps mean and variance finite (limits.py)
        Domain("mu", limits.LOGNORMAL_MU_MIN, limits.LOGNORMAL_MU_MAX, symbol="μ", doc="mean of log X"),
        Domain("sigma", 0.0, limits.LOGNORMAL_SIGMA_MAX, low_open=True, symbol="σ",
               doc="standard deviation of log X"),
    )

    def _scipy(self) -> Any:
        return stats.lognorm(s=self.sigma, scale=math.exp(self.mu))

    def _sample_base(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        return rng.lognormal(self.mu, self.sigma, size)

    # closed forms with Φ = ndtr (faster than scipy's generic path, precise in both tails)
    def _zscore(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return (np.log(np.maximum(x - self.shift, 0.0)) - self.mu) / self.sigma

    def _cdf(self, x: np.ndarray) -> np.ndarray:
        return special.ndtr(self._zscore(x))

    def _sf(self, x: np.ndarray) -> np.ndarray:
        return special.ndtr(-self._zscore(x))

    def _pdf(self, x: np.ndarray) -> np.ndarray:
        y = x - self.shift
        z = self._zscore(x)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            d = np.exp(-0.5 * z * z) / (y * self.sigma * math.sqrt(2 * math.pi))
        return np.where((y <= 0) | ~np.isfinite(d), 0.0, d)

    @property
    def mean(self) -> float:
        return math.exp(self.mu + self.sigma**2 / 2) + self.shift

    @property
    def var(self) -> float:
        return math.expm1(self.sigma**2) * math.exp(2 * self.mu + self.sigma**2)

    def _nlu(self) -> bool:
        return False

    def _label(self) -> str:
        return f"LogNormal(μ={_fmt(self.mu)}, σ={_fmt(self.sigma)})"

    def _latex(self, v: str) -> str:
        return (f"\\frac{{1}}{{{v}\\,\\sigma\\sqrt{{2\\pi}}}} e^{{-(\\ln {v}-\\mu)^2/(2\\sigma^2)}},"
                f"\\quad \\mu = {_fmt(self.mu)},\\ \\sigma = {_fmt(self.sigma)}")


@dataclass(frozen=True, kw_only=True)
class TruncatedNormal(Delay):
    """Normal(μ, σ²) conditioned on Y ≥ 0 (not clipped); μ, σ are those of the untruncated normal.

    Log-concave density, hence increasing failure rate, hence NLU.
    """

    mean_: float
    std_: float
    name: ClassVar[str] = "normal"
    PARAMS: ClassVar[tuple[Domain, ...]] = (
        Domain("mean", -_T_MAX, _T_MAX, symbol="μ", doc="mean of the untruncated normal"),
        Domain("std", _T_MIN, _T_MAX, symbol="σ", doc="std of the untruncated normal"),
    )
    FIELDS: ClassVar[dict[str, str]] = {"mean": "mean_", "std": "std_"}

    def _check_joint(self) -> None:
        # P(N(μ, σ²) ≥ 0) must not underflow, or the conditioned law is numerically meaningless.
        if self.mean_ / self.std_ < -30:
            raise ParameterError("mean", f"mean/std must be ≥ -30 so that P(N ≥ 0) is representable "
                                         f"(got {_fmt(self.mean_ / self.std_)})")

    def _scipy(self) -> Any:
        return stats.truncnorm(a=-self.mean_ / self.std_, b=np.inf, loc=self.mean_, scale=self.std_)

    # Closed forms with Φ = ndtr (far faster than scipy's generic truncnorm, and precise in both
    # tails): with Z0 = N(0,1) and P0 = Φ(μ/σ) = P(N(μ, σ²) ≥ 0), for y ≥ 0
    # P(Y > y) = Φ((μ − y)/σ) / P0, and the inverse is y = μ − σ Φ⁻¹(q P0).
    @cached_property
    def _p0(self) -> float:
        return float(special.ndtr(self.mean_ / self.std_))

    def _sf(self, x: np.ndarray) -> np.ndarray:
        y = x - self.shift
        return np.where(y <= 0, 1.0, special.ndtr((self.mean_ - y) / self.std_) / self._p0)

    def _cdf(self, x: np.ndarray) -> np.ndarray:
        if self.mean_ < 0:  # the difference form below would cancel: both terms are near 1
            return 1.0 - self._sf(x)
        y = x - self.shift
        num = special.ndtr(y / self.std_ - self.mean_ / self.std_) - special.ndtr(-self.mean_ / self.std_)
        return np.where(y <= 0, 0.0, num / self._p0)

    def _pdf(self, x: np.ndarray) -> np.ndarray:
        y = x - self.shift
        with np.errstate(over="ignore", under="ignore"):
            dens = np.exp(-0.5 * ((y - self.mean_) / self.std_) ** 2) / (self.std_ * math.sqrt(2 * math.pi))
        return np.where(y < 0, 0.0, dens / self._p0)

    def _isf(self, q: np.ndarray) -> np.ndarray:
        return np.maximum(self.mean_ - self.std_ * special.ndtri(q * self._p0), 0.0) + self.shift

    def _ppf(self, q: np.ndarray) -> np.ndarray:
        if self.mean_ < 0:
            return self._isf(1.0 - q)
        lo = special.ndtr(-self.mean_ / self.std_)  # P(N ≤ 0) before conditioning
        return np.maximum(self.mean_ + self.std_ * special.ndtri(lo + q * self._p0), 0.0) + self.shift

    def _sample_base(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        # inverse survival function of a uniform in (0, 1]: exact, and never +inf
        return self._isf(1.0 - rng.random(size)) - self.shift

    def _nlu(self) -> bool:
        return True

    def _label(self) -> str:
        return f"N⁺(μ={_fmt(self.mean_)}, σ={_fmt(self.std_)})"

    def _latex(self, v: str) -> str:
        return (f"\\frac{{\\varphi(({v}-\\mu)/\\sigma)}}{{\\sigma\\,\\Phi(\\mu/\\sigma)}},\\ {v} \\ge 0,"
                f"\\quad \\mu = {_fmt(self.mean_)},\\ \\sigma = {_fmt(self.std_)}")


@dataclass(frozen=True, kw_only=True)
class Weibull(Delay):
    """P(Y > y) = exp(−(y/s)^k).  NLU iff k ≥ 1 (k < 1 has a decreasing failure rate)."""

    shape: float
    scale: float
    name: ClassVar[str] = "weibull"
    PARAMS: ClassVar[tuple[Domain, ...]] = (
        # k ≥ 0.02: Γ(1 + 2/k) (the variance) stays a finite float (limits.py)
        Domain("shape", limits.WEIBULL_SHAPE_MIN, 1e3, symbol="k", doc="shape; k < 1 is heavy-ish tailed"),
        Domain("scale", _T_MIN, _T_MAX, symbol="s", doc="scale"),
    )

    def _scipy(self) -> Any:
        return stats.weibull_min(c=self.shape, scale=self.scale)

    def _sample_base(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        return self.scale * rng.weibull(self.shape, size)

    # closed forms (several times faster than scipy's generic path; the analytic lattices call
    # them millions of times): with z = (y/s)^k, P(Y > y) = e^{-z}, P(Y ≤ y) = −expm1(−z)
    def _z(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", under="ignore"):
            return (np.maximum(x - self.shift, 0.0) / self.scale) ** self.shape

    def _sf(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(under="ignore"):
            return np.exp(-self._z(x))

    def _cdf(self, x: np.ndarray) -> np.ndarray:
        return -np.expm1(-self._z(x))

    def _pdf(self, x: np.ndarray) -> np.ndarray:
        y = x - self.shift
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            u = np.maximum(y, 0.0) / self.scale
            d = self.shape / self.scale * u ** (self.shape - 1.0) * np.exp(-(u ** self.shape))
        return np.where(y < 0, 0.0, np.where(np.isnan(d), 0.0, d))

    def _isf(self, q: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", over="ignore"):
            return self.scale * (-np.log(q)) ** (1.0 / self.shape) + self.shift

    @property
    def mean(self) -> float:
        return self.scale * math.gamma(1.0 + 1.0 / self.shape) + self.shift

    @property
    def var(self) -> float:
        k = self.shape
        g1, g2 = math.gamma(1.0 + 1.0 / k), math.gamma(1.0 + 2.0 / k)
        return self.scale**2 * max(g2 - g1 * g1, 0.0)

    def _nlu(self) -> bool:
        return self.shape >= 1

    def _label(self) -> str:
        return f"Weibull(k={_fmt(self.shape)}, s={_fmt(self.scale)})"

    def _latex(self, v: str) -> str:
        return (f"\\frac{{k}}{{s}}\\left(\\frac{{{v}}}{{s}}\\right)^{{k-1}} e^{{-({v}/s)^k}},\\ {v} \\ge 0,"
                f"\\quad k = {_fmt(self.shape)},\\ s = {_fmt(self.scale)}")


@dataclass(frozen=True, kw_only=True)
class Uniform(Delay):
    """Uniform on [a, b], 0 ≤ a < b.  NLU."""

    low: float
    high: float
    name: ClassVar[str] = "uniform"
    PARAMS: ClassVar[tuple[Domain, ...]] = (
        Domain("low", 0.0, _T_MAX, symbol="a", doc="lower end"),
        Domain("high", _T_MIN, _T_MAX, symbol="b", doc="upper end"),
    )

    def _check_joint(self) -> None:
        if not self.low < self.high:
            raise ParameterError("high", f"must be greater than low={_fmt(self.low)} (got {_fmt(self.high)})")
        # the width b − a is the time scale of the law
        if self.high - self.low < _T_MIN * max(1.0, self.high):
            raise ParameterError("high", f"the width high − low must be at least {_fmt(_T_MIN)}·max(1, high) "
                                         f"(got {self.high - self.low:.3g})")

    def _scipy(self) -> Any:
        return stats.uniform(loc=self.low, scale=self.high - self.low)

    def _sample_base(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        return rng.uniform(self.low, self.high, size)

    def _isf(self, q: np.ndarray) -> np.ndarray:
        w = self.high - self.low  # clipped: a − b + b rounds outside [a, b] when a ≪ b
        return np.clip(self.high - w * q, self.low, self.high) + self.shift

    def _ppf(self, q: np.ndarray) -> np.ndarray:
        return np.clip(self.low + (self.high - self.low) * q, self.low, self.high) + self.shift

    @property
    def mean(self) -> float:
        return (self.low + self.high) / 2 + self.shift

    @property
    def var(self) -> float:
        return (self.high - self.low) ** 2 / 12.0

    def _nlu(self) -> bool:
        return True

    def _label(self) -> str:
        return f"U({_fmt(self.low)}, {_fmt(self.high)})"

    def _latex(self, v: str) -> str:
        return (f"\\frac{{1}}{{b-a}},\\ a \\le {v} \\le b,"
                f"\\quad a = {_fmt(self.low)},\\ b = {_fmt(self.high)}")


class _EmpiricalLaw:
    """The resampling law of a finite trace: mass 1/n on each observed value."""

    def __init__(self, values: np.ndarray) -> None:
        self.x = np.sort(values)
        self.n = self.x.size

    def cdf(self, t: Any) -> np.ndarray:
        return np.searchsorted(self.x, t, side="right") / self.n

    def sf(self, t: Any) -> np.ndarray:
        return 1.0 - self.cdf(t)

    def pdf(self, t: Any) -> np.ndarray:  # no density: a histogram is drawn instead
        return np.zeros_like(np.asarray(t, dtype=float))

    def ppf(self, q: Any) -> np.ndarray:
        # generalised inverse inf{x : F(x) ≥ q}
        idx = np.ceil(np.asarray(q, dtype=float) * self.n).astype(np.int64) - 1
        return self.x[np.clip(idx, 0, self.n - 1)]

    def isf(self, q: Any) -> np.ndarray:
        # inf{x : P(X > x) ≤ q} = x_(n - floor(q n)) in 1-based order
        idx = self.n - 1 - np.floor(np.asarray(q, dtype=float) * self.n).astype(np.int64)
        return self.x[np.clip(idx, 0, self.n - 1)]

    def mean(self) -> float:
        return float(self.x.mean())

    def var(self) -> float:
        return float(self.x.var())

    def support(self) -> tuple[float, float]:
        return float(self.x[0]), float(self.x[-1])


@dataclass(frozen=True, kw_only=True, eq=False)
class Empirical(Delay):
    """A measured trace, resampled: X takes each observed value with probability 1/n.

    Spec ``empirical(file=path)`` reads a text/CSV column of positive times (API and CLI only;
    the dashboard builds one from an upload with :meth:`from_values`).  Every time must lie in
    (0, limits.MAX_TRACE_TIME]; a trace holds 2 to limits.EMPIRICAL_MAX_VALUES of them.
    """

    values: np.ndarray = field(repr=False)
    file: str = "<data>"
    name: ClassVar[str] = "empirical"
    PARAMS: ClassVar[tuple[Domain, ...]] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.file, str):
            raise ParameterError("file", f"must be a file name (got {type(self.file).__name__})")
        raw = self.values
        size = getattr(raw, "size", None)
        if isinstance(size, (int, np.integer)) and size > EMPIRICAL_MAX_VALUES:
            raise ParameterError("file", f"a trace may hold at most {EMPIRICAL_MAX_VALUES} values (got {size})")
        try:
            v = np.array(raw, dtype=float).ravel()
        except (TypeError, ValueError, OverflowError):
            raise ParameterError("file", f"a trace must be numbers (got {type(raw).__name__})") from None
        if v.size < 2:
            raise ParameterError("file", f"a trace needs at least 2 values (got {v.size})")
        if v.size > EMPIRICAL_MAX_VALUES:
            raise ParameterError("file", f"a trace may hold at most {EMPIRICAL_MAX_VALUES} values (got {v.size})")
        bad = np.flatnonzero(~((v > 0) & (v <= limits.MAX_TRACE_TIME)))
        if bad.size:
            i = int(bad[0])
            raise ParameterError("file", f"value #{i + 1} ({v[i]!r}): every time in a trace must be "
                                         f"{TRACE_TIME.describe()}")
        v.setflags(write=False)
        object.__setattr__(self, "values", v)

    @classmethod
    def from_values(cls, values: Any, name: str = "<data>", shift: float = 0.0) -> "Empirical":
        return cls(values=values, file=name, shift=shift)

    @classmethod
    def from_text(cls, text: str, name: str = "<data>", shift: float = 0.0) -> "Empirical":
        if not isinstance(text, str):
            raise ParameterError("file", f"expected text (got {type(text).__name__})")
        return cls.from_values(_parse_trace(text), name=name, shift=shift)

    @classmethod
    def from_file(cls, path: str, shift: float = 0.0) -> "Empirical":
        """Read a trace from a *regular* file of at most limits.EMPIRICAL_MAX_BYTES.

        Devices (/dev/zero), FIFOs and directories are refused without reading; a FIFO is never
        opened for blocking reads (the open is non-blocking and checked again on the open file),
        and at most the byte cap + 1 bytes are read.
        """
        if not isinstance(path, (str, os.PathLike)):
            raise ParameterError("file", f"expected a path (got {type(path).__name__})")
        path = os.fspath(path)
        shown = path if len(path) <= 200 else path[:200] + "…"
        if "\x00" in path:
            raise ParameterError("file", f"cannot read {shown!r}: not a valid path")
        try:
            st = os.stat(path)
        except (OSError, ValueError) as exc:
            raise ParameterError("file", f"cannot read {shown!r}: {getattr(exc, 'strerror', None) or exc}") from None
        if not stat.S_ISREG(st.st_mode):
            raise ParameterError("file", f"cannot read {shown!r}: not a regular file")
        if st.st_size > EMPIRICAL_MAX_BYTES:
            raise ParameterError("file", f"{shown!r} is larger than {EMPIRICAL_MAX_BYTES // 2**20} MiB")
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        except OSError as exc:
            raise ParameterError("file", f"cannot read {shown!r}: {exc.strerror or exc}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced since the stat above
                raise ParameterError("file", f"cannot read {shown!r}: not a regular file")
            with os.fdopen(fd, "rb", closefd=False) as fh:
                data = fh.read(EMPIRICAL_MAX_BYTES + 1)
        except OSError as exc:
            raise ParameterError("file", f"cannot read {shown!r}: {exc.strerror or exc}") from None
        finally:
            os.close(fd)
        if len(data) > EMPIRICAL_MAX_BYTES:
            raise ParameterError("file", f"{shown!r} is larger than {EMPIRICAL_MAX_BYTES // 2**20} MiB")
        return cls.from_text(data.decode("utf-8", errors="replace"), name=path, shift=shift)

    @cached_property
    def _digest(self) -> str:
        return hashlib.sha1(self.values.tobytes()).hexdigest()

    @property
    def key(self) -> str:
        """``empirical(sha1=…, n=…[, shift=Δ])``: a digest of the values plus the shift (the file
        name is not part of the law)."""
        tail = f", shift={_fmt(self.shift)}" if self.shift else ""
        return f"empirical(sha1={self._digest}, n={self.values.size}{tail})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Empirical) and self.shift == other.shift
                and self._digest == other._digest)

    def __hash__(self) -> int:
        return hash((self._digest, self.shift))

    def __reduce__(self) -> Any:
        return (Empirical.from_values, (np.asarray(self.values), self.file, self.shift))

    def _scipy(self) -> Any:
        return _EmpiricalLaw(self.values)

    def _sample_base(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        return self.values[rng.integers(0, self.values.size, size)]

    @property
    def mean(self) -> float:
        return float(self.values.mean()) + self.shift

    @property
    def var(self) -> float:
        return float(self.values.var())

    def parameters(self) -> dict[str, float]:
        return {}

    def spec_items(self) -> list[tuple[str, float | str]]:
        items: list[tuple[str, float | str]] = [("file", self.file)]
        if self.shift:
            items.append(("shift", self.shift))
        return items

    def _nlu(self) -> bool:
        # sf(s + t) ≤ sf(s)·sf(t), i.e. n·#{X > s+t} ≤ #{X > s}·#{X > t} in exact integer
        # counts.  sf is a step function, so the worst cases sit at its jumps: every pair of
        # distinct observed values (and 0) when there are at most 2 000 of them, else 2 000
        # observed order statistics evenly spread in rank.  Rows are checked in blocks and the
        # check stops at the first violation.  The law checked is that of X = Δ + Y: a shift
        # can make a trace NLU (sf(s+t) falls to 0 sooner), so the shifted values are used.
        x = self._dist.x + self.shift  # sorted
        n = x.size
        distinct = np.empty(n, dtype=bool)
        distinct[0] = True
        np.not_equal(x[1:], x[:-1], out=distinct[1:])
        if int(distinct.sum()) <= 2000:
            pts = x[distinct]
        else:
            pts = x[np.unique(np.round(np.linspace(0, n - 1, 2000)).astype(np.int64))]
        pts = np.concatenate([[0.0], pts])
        above = (n - np.searchsorted(x, pts, side="right")).astype(np.int64)  # #{X > p}
        rows = max(1, 2**20 // pts.size)
        for i0 in range(0, pts.size, rows):
            q = pts[i0:i0 + rows, None] + pts[None, :]
            lhs = (n - np.searchsorted(x, q.ravel(), side="right")).reshape(q.shape).astype(np.int64) * n
            if np.any(lhs > above[i0:i0 + rows, None] * above[None, :]):
                return False
        return True

    def _label(self) -> str:
        return f"trace {os.path.basename(self.file)} (n={self.values.size})"

    def _latex(self, v: str) -> str:
        return f"\\tfrac{{1}}{{n}}\\textstyle\\sum_i \\delta({v} - x_i),\\quad n = {self.values.size}"


def _parse_trace(text: str) -> np.ndarray:
    """First column of a text/CSV file: numbers, one per line; a header line and # comments allowed.

    A value that is not a time in (0, limits.MAX_TRACE_TIME] is refused with its line number."""
    out: list[float] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        first = re.split(r"[,;\s]+", line)[0]
        try:
            value = float(first)
        except ValueError:
            if out:  # only the first data line may be a header
                raise ParameterError("file", f"line {lineno}: {first[:40]!r} is not a number") from None
            continue
        if not (0 < value <= limits.MAX_TRACE_TIME):
            raise ParameterError("file", f"line {lineno}: {first[:40]!r} is not a time in "
                                         f"(0, {_fmt(limits.MAX_TRACE_TIME)}] (every time in a trace must be "
                                         "a finite number > 0)")
        out.append(value)
        if len(out) > EMPIRICAL_MAX_VALUES:
            raise ParameterError("file", f"a trace may hold at most {EMPIRICAL_MAX_VALUES} values")
    return np.asarray(out, dtype=float)


# -- spec strings ------------------------------------------------------------------------

_FAMILIES: dict[str, type[Delay]] = {
    "exp": Exponential,
    "shifted-exp": Exponential,
    "pareto": Pareto,
    "lognormal": LogNormal,
    "normal": TruncatedNormal,
    "weibull": Weibull,
    "uniform": Uniform,
    "empirical": Empirical,
}
_ALIASES = {"exponential": "exp", "shifted-exponential": "shifted-exp", "shifted_exp": "shifted-exp",
            "truncnorm": "normal", "truncated-normal": "normal", "trace": "empirical"}
DELAY_NAMES: tuple[str, ...] = tuple(_FAMILIES)


def _spec_keys(cls: type[Delay]) -> dict[str, str]:
    """Spec keyword → dataclass field name."""
    keys = {d.name: cls.FIELDS.get(d.name, d.name) for d in cls.PARAMS}
    if cls is Empirical:
        keys["file"] = "file"
    keys["shift"] = "shift"
    return keys


_SPEC_RE = re.compile(r"^\s*([A-Za-z][\w-]*)\s*(?:\((.*)\))?\s*$", re.S)


def check_delay(delay: object) -> Delay:
    """``delay`` itself if it is a Delay, else a ParameterError naming ``delay``."""
    if not isinstance(delay, Delay):
        raise ParameterError("delay", f"expected a Delay from parse_delay (got {type(delay).__name__})")
    return delay


def parse_delay(spec: str) -> Delay:
    """Read a spec string such as ``pareto(xm=1, alpha=2.5)`` (DESIGN §2).

    Raises :class:`ParameterError` naming the bad part: an unknown family, a missing,
    repeated or unknown parameter, a value outside its domain, or malformed text.
    """
    if isinstance(spec, Delay):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise ParameterError("delay", f"expected a spec such as 'exp(rate=1)' (got {spec!r})")
    if len(spec) > limits.SPEC_MAX_CHARS:
        raise ParameterError("delay", f"spec is longer than {limits.SPEC_MAX_CHARS} characters")
    m = _SPEC_RE.match(spec)
    if not m or spec.count("(") != spec.count(")"):
        raise ParameterError("delay", f"malformed spec {spec.strip()[:80]!r}: expected name(key=value, ...)")
    raw_name, body = m.group(1).lower(), m.group(2)
    name = _ALIASES.get(raw_name, raw_name)
    if name not in _FAMILIES:
        raise ParameterError("delay", f"unknown distribution {raw_name!r}; choose one of {', '.join(DELAY_NAMES)}")
    cls = _FAMILIES[name]
    keys = _spec_keys(cls)
    args: dict[str, str] = {}
    if body and body.strip():
        for part in body.split(","):
            if "=" not in part:
                raise ParameterError("delay", f"malformed argument {part.strip()!r} in {name}(...): expected key=value")
            k, v = (s.strip() for s in part.split("=", 1))
            k = k.lower()
            if k not in keys:
                allowed = ", ".join(keys)
                raise ParameterError(k or "delay", f"not a parameter of {name}; expected {allowed}")
            if k in args:
                raise ParameterError(k, f"given twice in {name}(...)")
            if not v:
                raise ParameterError(k, f"has no value in {name}(...)")
            args[k] = v
    if name == "empirical":
        if "file" not in args:
            raise ParameterError("file", "missing: empirical(file=path) needs a file of measured times")
        shift = SHIFT.check(args.get("shift", 0.0), "shift")
        return Empirical.from_file(args["file"], shift=shift)
    required = [k for k in keys if k not in ("shift", "file")]
    if name == "shifted-exp":
        required.append("shift")
    for k in required:
        if k not in args:
            raise ParameterError(k, f"missing: {name} needs {', '.join(required)}")
    values: dict[str, Any] = {}
    domains = {d.name: d for d in cls.PARAMS + (SHIFT,)}
    for k, v in args.items():
        values[keys[k]] = domains[k].check(v, k)
    try:
        return cls(**values)
    except ParameterError:
        raise
    except (TypeError, ValueError) as exc:  # pragma: no cover - defensive
        raise ParameterError("delay", str(exc)) from None

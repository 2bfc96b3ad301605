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
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from scipy import special, stats

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
    "DELAY_NAMES",
    "SHIFT",
    "EMPIRICAL_MAX_VALUES",
]

SHIFT = Domain("shift", 0.0, 1e6, symbol="Δ", doc="constant part of every delay (Δ + Y)")
EMPIRICAL_MAX_VALUES = 1_000_000
EMPIRICAL_MAX_BYTES = 64 * 2**20


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

    def sample(self, rng: np.random.Generator, size: Any = None) -> np.ndarray:
        """``size`` i.i.d. draws of X (vectorised)."""
        x = np.asarray(self._sample_base(rng, size), dtype=float)
        return x + self.shift if self.shift else x

    def cdf(self, x: Any) -> np.ndarray:
        return self._dist.cdf(np.asarray(x, dtype=float) - self.shift)

    def sf(self, x: Any) -> np.ndarray:
        return self._dist.sf(np.asarray(x, dtype=float) - self.shift)

    def pdf(self, x: Any) -> np.ndarray:
        return self._dist.pdf(np.asarray(x, dtype=float) - self.shift)

    def ppf(self, q: Any) -> np.ndarray:
        return self._dist.ppf(q) + self.shift

    def isf(self, q: Any) -> np.ndarray:
        """Inverse survival function: the x with P(X > x) = q (precise for tiny q)."""
        return self._dist.isf(q) + self.shift

    @property
    def mean(self) -> float:
        return float(self._dist.mean()) + self.shift

    @property
    def var(self) -> float:
        return float(self._dist.var())

    @property
    def std(self) -> float:
        return math.sqrt(self.var)

    @property
    def support(self) -> tuple[float, float]:
        lo, hi = self._dist.support()
        return float(lo) + self.shift, float(hi) + self.shift

    @property
    def is_nlu(self) -> bool:
        """New-longer-than-used: P(X > s+t | X > t) ≤ P(X > s) for all s, t ≥ 0.

        A shift keeps the property (for s or t < Δ the inequality is monotonicity of sf).
        """
        return self._nlu()

    @abstractmethod
    def _nlu(self) -> bool: ...

    @property
    def label(self) -> str:
        """Short human label, e.g. ``Δ + Exp(λ=2)`` with numbers filled in."""
        base = self._label()
        return f"{_fmt(self.shift)} + {base}" if self.shift else base

    @abstractmethod
    def _label(self) -> str: ...

    @property
    def latex(self) -> str:
        """The density of X in LaTeX (for st.latex)."""
        body = self._latex()
        if self.shift:
            body = body.replace("x", "(x-\\Delta)")
            return f"f(x) = {body},\\quad \\Delta = {_fmt(self.shift)}"
        return f"f(x) = {body}"

    @abstractmethod
    def _latex(self) -> str: ...

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
        Domain("rate", 0.0, 1e9, low_open=True, symbol="λ", doc="rate of the exponential part"),
    )

    def _scipy(self) -> Any:
        return stats.expon(scale=1.0 / self.rate)

    def _sample_base(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        return rng.exponential(1.0 / self.rate, size)

    def ppf(self, q: Any) -> np.ndarray:
        return -np.log1p(-np.asarray(q, dtype=float)) / self.rate + self.shift

    def isf(self, q: Any) -> np.ndarray:
        return -np.log(q) / self.rate + self.shift

    def _nlu(self) -> bool:
        return True

    def _label(self) -> str:
        return f"Exp(λ={_fmt(self.rate)})"

    def _latex(self) -> str:
        return f"\\lambda e^{{-\\lambda x}},\\ x \\ge 0,\\quad \\lambda = {_fmt(self.rate)}"

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
        Domain("xm", 0.0, 1e6, low_open=True, symbol="x_m", doc="scale (minimum) of the Pareto"),
        Domain("alpha", 0.0, 1e3, low_open=True, symbol="α", doc="tail index; smaller is heavier"),
    )

    def _scipy(self) -> Any:
        return stats.pareto(b=self.alpha, scale=self.xm)

    def _sample_base(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        # numpy's pareto is Lomax (Pareto II); 1 + Lomax is Pareto I with x_m = 1.
        return self.xm * (1.0 + rng.pareto(self.alpha, size))

    def ppf(self, q: Any) -> np.ndarray:
        return self.xm * (1.0 - np.asarray(q, dtype=float)) ** (-1.0 / self.alpha) + self.shift

    def isf(self, q: Any) -> np.ndarray:
        return self.xm * np.asarray(q, dtype=float) ** (-1.0 / self.alpha) + self.shift

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

    def _nlu(self) -> bool:
        return False

    def _label(self) -> str:
        return f"Pareto(x_m={_fmt(self.xm)}, α={_fmt(self.alpha)})"

    def _latex(self) -> str:
        return (f"\\frac{{\\alpha x_m^\\alpha}}{{x^{{\\alpha+1}}}},\\ x \\ge x_m,"
                f"\\quad x_m = {_fmt(self.xm)},\\ \\alpha = {_fmt(self.alpha)}")


@dataclass(frozen=True, kw_only=True)
class LogNormal(Delay):
    """log Y ~ Normal(μ, σ²); E[Y] = exp(μ + σ²/2).  Neither NLU nor NWU in general."""

    mu: float
    sigma: float
    name: ClassVar[str] = "lognormal"
    PARAMS: ClassVar[tuple[Domain, ...]] = (
        Domain("mu", -50.0, 50.0, symbol="μ", doc="mean of log X"),
        Domain("sigma", 0.0, 10.0, low_open=True, symbol="σ", doc="standard deviation of log X"),
    )

    def _scipy(self) -> Any:
        return stats.lognorm(s=self.sigma, scale=math.exp(self.mu))

    def _sample_base(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        return rng.lognormal(self.mu, self.sigma, size)

    def _nlu(self) -> bool:
        return False

    def _label(self) -> str:
        return f"LogNormal(μ={_fmt(self.mu)}, σ={_fmt(self.sigma)})"

    def _latex(self) -> str:
        return (f"\\frac{{1}}{{x\\sigma\\sqrt{{2\\pi}}}} e^{{-(\\ln x-\\mu)^2/(2\\sigma^2)}},"
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
        Domain("mean", -1e6, 1e6, symbol="μ", doc="mean of the untruncated normal"),
        Domain("std", 0.0, 1e6, low_open=True, symbol="σ", doc="std of the untruncated normal"),
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

    def sf(self, x: Any) -> np.ndarray:
        y = np.asarray(x, dtype=float) - self.shift
        return np.where(y <= 0, 1.0, special.ndtr((self.mean_ - y) / self.std_) / self._p0)

    def cdf(self, x: Any) -> np.ndarray:
        if self.mean_ < 0:  # the difference form below would cancel: both terms are near 1
            return 1.0 - self.sf(x)
        y = np.asarray(x, dtype=float) - self.shift
        num = special.ndtr(y / self.std_ - self.mean_ / self.std_) - special.ndtr(-self.mean_ / self.std_)
        return np.where(y <= 0, 0.0, num / self._p0)

    def pdf(self, x: Any) -> np.ndarray:
        y = np.asarray(x, dtype=float) - self.shift
        dens = np.exp(-0.5 * ((y - self.mean_) / self.std_) ** 2) / (self.std_ * math.sqrt(2 * math.pi))
        return np.where(y < 0, 0.0, dens / self._p0)

    def isf(self, q: Any) -> np.ndarray:
        q = np.asarray(q, dtype=float)
        return np.maximum(self.mean_ - self.std_ * special.ndtri(q * self._p0), 0.0) + self.shift

    def ppf(self, q: Any) -> np.ndarray:
        q = np.asarray(q, dtype=float)
        if self.mean_ < 0:
            return self.isf(1.0 - q)
        lo = special.ndtr(-self.mean_ / self.std_)  # P(N ≤ 0) before conditioning
        return np.maximum(self.mean_ + self.std_ * special.ndtri(lo + q * self._p0), 0.0) + self.shift

    def _sample_base(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        # inverse survival function of a uniform in (0, 1]: exact, and never +inf
        return self.isf(1.0 - rng.random(size)) - self.shift

    def _nlu(self) -> bool:
        return True

    def _label(self) -> str:
        return f"N⁺(μ={_fmt(self.mean_)}, σ={_fmt(self.std_)})"

    def _latex(self) -> str:
        return (f"\\frac{{\\varphi((x-\\mu)/\\sigma)}}{{\\sigma\\,\\Phi(\\mu/\\sigma)}},\\ x \\ge 0,"
                f"\\quad \\mu = {_fmt(self.mean_)},\\ \\sigma = {_fmt(self.std_)}")


@dataclass(frozen=True, kw_only=True)
class Weibull(Delay):
    """P(Y > y) = exp(−(y/s)^k).  NLU iff k ≥ 1 (k < 1 has a decreasing failure rate)."""

    shape: float
    scale: float
    name: ClassVar[str] = "weibull"
    PARAMS: ClassVar[tuple[Domain, ...]] = (
        Domain("shape", 0.0, 1e3, low_open=True, symbol="k", doc="shape; k < 1 is heavy-ish tailed"),
        Domain("scale", 0.0, 1e6, low_open=True, symbol="s", doc="scale"),
    )

    def _scipy(self) -> Any:
        return stats.weibull_min(c=self.shape, scale=self.scale)

    def _sample_base(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        return self.scale * rng.weibull(self.shape, size)

    def isf(self, q: Any) -> np.ndarray:
        return self.scale * (-np.log(q)) ** (1.0 / self.shape) + self.shift

    def _nlu(self) -> bool:
        return self.shape >= 1

    def _label(self) -> str:
        return f"Weibull(k={_fmt(self.shape)}, s={_fmt(self.scale)})"

    def _latex(self) -> str:
        return (f"\\frac{{k}}{{s}}\\left(\\frac{{x}}{{s}}\\right)^{{k-1}} e^{{-(x/s)^k}},"
                f"\\quad k = {_fmt(self.shape)},\\ s = {_fmt(self.scale)}")


@dataclass(frozen=True, kw_only=True)
class Uniform(Delay):
    """Uniform on [a, b], 0 ≤ a < b.  NLU."""

    low: float
    high: float
    name: ClassVar[str] = "uniform"
    PARAMS: ClassVar[tuple[Domain, ...]] = (
        Domain("low", 0.0, 1e6, symbol="a", doc="lower end"),
        Domain("high", 0.0, 1e6, low_open=True, symbol="b", doc="upper end"),
    )

    def _check_joint(self) -> None:
        if not self.low < self.high:
            raise ParameterError("high", f"must be greater than low={_fmt(self.low)} (got {_fmt(self.high)})")

    def _scipy(self) -> Any:
        return stats.uniform(loc=self.low, scale=self.high - self.low)

    def _sample_base(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        return rng.uniform(self.low, self.high, size)

    def isf(self, q: Any) -> np.ndarray:
        return self.high - (self.high - self.low) * np.asarray(q, dtype=float) + self.shift

    def _nlu(self) -> bool:
        return True

    def _label(self) -> str:
        return f"U({_fmt(self.low)}, {_fmt(self.high)})"

    def _latex(self) -> str:
        return (f"\\frac{{1}}{{b-a}},\\ a \\le x \\le b,"
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
    the dashboard builds one from an upload with :meth:`from_values`).
    """

    values: np.ndarray = field(repr=False)
    file: str = "<data>"
    name: ClassVar[str] = "empirical"
    PARAMS: ClassVar[tuple[Domain, ...]] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        v = np.array(self.values, dtype=float).ravel()
        if v.size < 2:
            raise ParameterError("file", f"a trace needs at least 2 values (got {v.size})")
        if v.size > EMPIRICAL_MAX_VALUES:
            raise ParameterError("file", f"a trace may hold at most {EMPIRICAL_MAX_VALUES} values (got {v.size})")
        if not np.all(np.isfinite(v)) or np.any(v <= 0):
            raise ParameterError("file", "every time in a trace must be a finite number > 0")
        v.setflags(write=False)
        object.__setattr__(self, "values", v)

    @classmethod
    def from_values(cls, values: Any, name: str = "<data>", shift: float = 0.0) -> "Empirical":
        return cls(values=np.asarray(values, dtype=float), file=name, shift=shift)

    @classmethod
    def from_text(cls, text: str, name: str = "<data>", shift: float = 0.0) -> "Empirical":
        return cls.from_values(_parse_trace(text), name=name, shift=shift)

    @classmethod
    def from_file(cls, path: str, shift: float = 0.0) -> "Empirical":
        try:
            size = os.path.getsize(path)
        except OSError as exc:
            raise ParameterError("file", f"cannot read {path!r}: {exc.strerror or exc}") from None
        if size > EMPIRICAL_MAX_BYTES:
            raise ParameterError("file", f"{path!r} is larger than {EMPIRICAL_MAX_BYTES // 2**20} MiB")
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError as exc:
            raise ParameterError("file", f"cannot read {path!r}: {exc.strerror or exc}") from None
        return cls.from_text(text, name=path, shift=shift)

    @cached_property
    def _digest(self) -> str:
        return hashlib.sha1(self.values.tobytes()).hexdigest()

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

    def parameters(self) -> dict[str, float]:
        return {}

    def spec_items(self) -> list[tuple[str, float | str]]:
        items: list[tuple[str, float | str]] = [("file", self.file)]
        if self.shift:
            items.append(("shift", self.shift))
        return items

    def _nlu(self) -> bool:
        # Check sf(s + t) ≤ sf(s)·sf(t) on the observed values (sf is a step function, so the
        # worst cases sit at its jumps); for long traces on 2 000 quantiles.
        x = self._dist.x
        pts = np.unique(x) if np.unique(x).size <= 2000 else np.quantile(x, np.linspace(0, 1, 2000))
        pts = np.concatenate([[0.0], pts])
        sf = self._dist.sf
        lhs = sf(pts[:, None] + pts[None, :])
        rhs = sf(pts)[:, None] * sf(pts)[None, :]
        return bool(np.all(lhs <= rhs + 1e-12))

    def _label(self) -> str:
        return f"trace {os.path.basename(self.file)} (n={self.values.size})"

    def _latex(self) -> str:
        return f"\\tfrac{{1}}{{n}}\\textstyle\\sum_i \\delta(x - x_i),\\quad n = {self.values.size}"


def _parse_trace(text: str) -> np.ndarray:
    """First column of a text/CSV file: numbers, one per line; a header line and # comments allowed."""
    out: list[float] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        first = re.split(r"[,;\s]+", line)[0]
        try:
            out.append(float(first))
        except ValueError:
            if out:  # only the first data line may be a header
                raise ParameterError("file", f"line {lineno}: {first[:40]!r} is not a number") from None
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


def parse_delay(spec: str) -> Delay:
    """Read a spec string such as ``pareto(xm=1, alpha=2.5)`` (DESIGN §2).

    Raises :class:`ParameterError` naming the bad part: an unknown family, a missing,
    repeated or unknown parameter, a value outside its domain, or malformed text.
    """
    if isinstance(spec, Delay):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise ParameterError("delay", f"expected a spec such as 'exp(rate=1)' (got {spec!r})")
    if len(spec) > 4096:
        raise ParameterError("delay", "spec is longer than 4096 characters")
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

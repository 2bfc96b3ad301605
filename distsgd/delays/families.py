"""The parametric delay families (DESIGN §2): exponential, Pareto, lognormal, truncated normal,
Weibull, uniform.  Each declares its parameters' domains in ``PARAMS`` and overrides what it
knows in closed form (moments, quantiles, order statistics, the law of a sum), as scipy.stats
families override ``_pdf``/``_cdf``/``_munp``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, ClassVar

import numpy as np
from scipy import special, stats

from .. import limits
from ..estimate import Estimate, infinite
from ..params import Domain, ParameterError
from ..params import shortest as _fmt
from ..reasons import Text
from .base import _T_MAX, _T_MIN, Delay, ParamView

__all__ = ["Exponential", "Pareto", "LogNormal", "TruncatedNormal", "Weibull", "Uniform"]


def _harmonic_diff(n: int, k: int, power: int = 1) -> float:
    """Σ_{i=n−k+1}^{n} i^{−power}, summed term by term (pairwise; no digamma cancellation)."""
    i = np.arange(n - k + 1, n + 1, dtype=float)
    return float(np.sum(i ** -power))


@dataclass(frozen=True, kw_only=True)
class Exponential(Delay):
    """X = Δ + Exp(λ): memoryless; E[X] = Δ + 1/λ.  Spec ``exp(rate=λ)`` or ``shifted-exp(rate=λ, shift=Δ)``."""

    rate: float
    name: ClassVar[str] = "exp"
    SCALING: ClassVar[dict[str, str]] = {"rate": "rate"}
    TITLES: ClassVar[dict[str, str]] = {"exp": "exponential", "shifted-exp": "shifted exponential Δ + Exp(λ)"}
    UNSHIFTED: ClassVar[tuple[str, ...]] = ("exp",)
    VIEWS: ClassVar[dict[str, ParamView]] = {"rate": ParamView("lam", "rate λ", 1.0)}
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

    @property
    def memoryless(self) -> bool:
        return self.shift == 0

    @property
    def mgf_radius(self) -> float:
        return self.rate

    def _log_mgf(self, theta: float) -> float:
        """E[e^{θY}] = λ/(λ − θ) for θ < λ."""
        return -math.log1p(-theta / self.rate)

    def order_statistic(self, k: int, n: int) -> Estimate:
        """Rényi: X_{k:n} − Δ = Σ_{i=n−k+1}^{n} Z_i/(λi), Z_i i.i.d. Exp(1), so
        E = Δ + (H_n − H_{n−k})/λ and Var = λ⁻² Σ_{i=n−k+1}^{n} i⁻².

        >>> Exponential(rate=1.0).order_statistic(2, 2).value   # E[max of 2] = 1 + 1/2
        1.5
        """
        mean = self.shift + _harmonic_diff(n, k) / self.rate
        std = math.sqrt(_harmonic_diff(n, k, 2)) / self.rate
        return Estimate(mean, "exact", Text.of("method_exp_os"), std=std)

    def sum_law(self, count: int) -> tuple[Any, float]:
        """A sum of ``count`` copies is count·Δ + Gamma(count, λ)."""
        return _gamma(count, 1.0 / self.rate), count * self.shift

    def _label(self) -> str:
        return f"Exp(λ={_fmt(self.rate)})"

    def _latex(self, v: str) -> str:
        return f"\\lambda e^{{-\\lambda {v}}},\\ {v} \\ge 0,\\quad \\lambda = {_fmt(self.rate)}"

    def __str__(self) -> str:
        if self.shift:
            return f"shifted-exp(rate={_fmt(self.rate)}, shift={_fmt(self.shift)})"
        return f"exp(rate={_fmt(self.rate)})"


@lru_cache(maxsize=256)
def _gamma(shape: int, scale: float) -> Any:
    """A frozen Gamma law, built once per (shape, scale): scipy builds a docstring for every
    frozen law (≈ 0.7 ms), which the dashboard's charts would pay per point."""
    return stats.gamma(shape, scale=scale)


@dataclass(frozen=True, kw_only=True)
class Pareto(Delay):
    """Pareto I on [x_m, ∞): P(Y > y) = (x_m / y)^α.  Mean infinite for α ≤ 1, variance for α ≤ 2."""

    xm: float
    alpha: float
    name: ClassVar[str] = "pareto"
    SCALING: ClassVar[dict[str, str]] = {"xm": "time"}
    TITLES: ClassVar[dict[str, str]] = {"pareto": "Pareto (heavy tail)"}
    VIEWS: ClassVar[dict[str, ParamView]] = {
        "xm": ParamView("xm", "Pareto scale x_m", 1.0),
        "alpha": ParamView("alpha", "Pareto tail α", 2.5, 0.05, "smaller is heavier; mean infinite for α ≤ 1"),
    }
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

    def order_statistic(self, k: int, n: int) -> Estimate:
        """E[X_{k:n}] = Δ + x_m Γ(n+1)Γ(n−k+1−1/α)/(Γ(n−k+1)Γ(n+1−1/α)), finite iff α(n−k+1) > 1.

        X_{k:n} = x_m Π_{i=n−k+1}^{n} exp(Z_i/(αi)), so E = x_m Π αi/(αi−1): the product form
        avoids the cancellation of log-gammas.

        >>> Pareto(xm=1.0, alpha=2.0).order_statistic(1, 1).value   # E[X] = α x_m/(α − 1)
        2.0
        """
        a = self.alpha
        if a * (n - k + 1) <= 1.0:
            return infinite(Text.of("method_pareto_os_infinite", x=a * (n - k + 1)))
        i = np.arange(n - k + 1, n + 1, dtype=float)
        mean_y = self.xm * math.exp(float(np.sum(-np.log1p(-1.0 / (a * i)))))
        if a * (n - k + 1) > 2.0:
            ratio = float(np.sum(np.log1p(1.0 / (a * i * (a * i - 2.0)))))  # log E[Y²]/E[Y]²
            std = mean_y * math.sqrt(math.expm1(ratio))
        else:
            std = math.inf
        return Estimate(mean_y + self.shift, "exact", Text.of("method_pareto_os"), std=std)

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
    SCALING: ClassVar[dict[str, str]] = {"mu": "log"}
    TITLES: ClassVar[dict[str, str]] = {"lognormal": "lognormal"}
    VIEWS: ClassVar[dict[str, ParamView]] = {"mu": ParamView("ln_mu", "lognormal μ", 0.0, 0.05),
                                             "sigma": ParamView("ln_sigma", "lognormal σ", 1.0, 0.05)}
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

    @property
    def mgf_radius(self) -> float:
        return 0.0  # E[e^{θY}] = ∞ for every θ > 0: the tail exp(−(ln y)²/2σ²) is subexponential

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
    SCALING: ClassVar[dict[str, str]] = {"mean_": "time", "std_": "time"}
    TITLES: ClassVar[dict[str, str]] = {"normal": "normal, truncated at 0"}
    VIEWS: ClassVar[dict[str, ParamView]] = {"mean": ParamView("n_mean", "normal mean μ", 1.0, 0.05),
                                             "std": ParamView("n_std", "normal std σ", 0.5, 0.01)}
    PARAMS: ClassVar[tuple[Domain, ...]] = (
        Domain("mean", -_T_MAX, _T_MAX, symbol="μ", doc="mean of the untruncated normal"),
        Domain("std", _T_MIN, _T_MAX, symbol="σ", doc="std of the untruncated normal"),
    )
    FIELDS: ClassVar[dict[str, str]] = {"mean": "mean_", "std": "std_"}
    #: mean/std ≥ this, so that P(N(μ, σ²) ≥ 0) does not underflow (below it the conditioned law
    #: is numerically meaningless)
    MIN_MEAN_STDS: ClassVar[float] = -30.0

    def _check_joint(self) -> None:
        if self.mean_ / self.std_ < self.MIN_MEAN_STDS:
            raise ParameterError("mean", "mean_std_ratio", low=_fmt(self.MIN_MEAN_STDS),
                                         value=_fmt(self.mean_ / self.std_))

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

    def _log_mgf(self, theta: float) -> float:
        """E[e^{θY}] = exp(μθ + σ²θ²/2) Φ(μ/σ + σθ)/Φ(μ/σ) (the normal's, conditioned on Y ≥ 0)."""
        mu, sd = self.mean_, self.std_
        return float(mu * theta + 0.5 * (sd * theta) ** 2 + special.log_ndtr(mu / sd + sd * theta)
                     - special.log_ndtr(mu / sd))

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
    SCALING: ClassVar[dict[str, str]] = {"scale": "time"}
    TITLES: ClassVar[dict[str, str]] = {"weibull": "Weibull"}
    VIEWS: ClassVar[dict[str, ParamView]] = {"shape": ParamView("w_shape", "Weibull shape k", 1.5, 0.05),
                                             "scale": ParamView("w_scale", "Weibull scale s", 1.0, 0.01)}
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

    @property
    def mgf_radius(self) -> float:
        """inf for k > 1, 1/s for k = 1 (the exponential), 0 for k < 1 (a subexponential tail)."""
        return math.inf if self.shape > 1 else 1.0 / self.scale if self.shape == 1 else 0.0

    def _log_mgf(self, theta: float) -> float | None:
        """k = 1: the exponential's −ln(1 − θs); k > 1: the generic quadrature."""
        return -math.log1p(-theta * self.scale) if self.shape == 1 else None

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
    SCALING: ClassVar[dict[str, str]] = {"low": "time", "high": "time"}
    TITLES: ClassVar[dict[str, str]] = {"uniform": "uniform"}
    VIEWS: ClassVar[dict[str, ParamView]] = {"low": ParamView("u_low", "uniform low a", 0.5, 0.05),
                                             "high": ParamView("u_high", "uniform high b", 1.5, 0.05)}
    PARAMS: ClassVar[tuple[Domain, ...]] = (
        Domain("low", 0.0, _T_MAX, symbol="a", doc="lower end"),
        Domain("high", _T_MIN, _T_MAX, symbol="b", doc="upper end"),
    )

    def _check_joint(self) -> None:
        if not self.low < self.high:
            raise ParameterError("high", "high_above_low", low=_fmt(self.low), high=_fmt(self.high))
        # the width b − a is the time scale of the law
        if self.high - self.low < _T_MIN * max(1.0, self.high):
            raise ParameterError("high", "uniform_width", low=_fmt(_T_MIN), width=self.high - self.low)

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

    def _log_mgf(self, theta: float) -> float:
        """E[e^{θY}] = (e^{θb} − e^{θa})/(θ(b − a)), as θb + ln(1 − e^{−θ(b−a)}) − ln(θ(b − a))."""
        u = theta * (self.high - self.low)
        return theta * self.high + math.log(-math.expm1(-u)) - math.log(u)

    def _nlu(self) -> bool:
        return True

    def order_statistic(self, k: int, n: int) -> Estimate:
        """E[X_{k:n}] = Δ + a + (b − a)k/(n+1), Var = (b − a)² k(n−k+1)/((n+1)²(n+2)).

        >>> Uniform(low=0.0, high=1.0).order_statistic(1, 3).value
        0.25
        """
        w = self.high - self.low
        mean = self.shift + self.low + w * k / (n + 1)
        std = w * math.sqrt(k * (n - k + 1) / ((n + 1) ** 2 * (n + 2.0)))
        return Estimate(mean, "exact", Text.of("method_uniform_os"), std=std)

    @property
    def jump_spacing(self) -> float:
        return self.high - self.low

    def _label(self) -> str:
        return f"U({_fmt(self.low)}, {_fmt(self.high)})"

    def _latex(self, v: str) -> str:
        return (f"\\frac{{1}}{{b-a}},\\ a \\le {v} \\le b,"
                f"\\quad a = {_fmt(self.low)},\\ b = {_fmt(self.high)}")

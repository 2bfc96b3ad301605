"""Analytic expected runtime per iteration, E[T] (DESIGN §2 "Analytic runtime per iteration").

Every result is an :class:`Estimate` whose ``kind`` says how far to trust it:

* ``exact`` — a closed form evaluated in floating point (exponential, Pareto, uniform and
  empirical order statistics; the renewal-theory rates of the asynchronous schemes);
* ``numerical`` — quadrature or a lattice computation whose estimated relative error is
  at most 1e-6 (``error`` holds the estimated absolute error);
* ``approximation`` — the same computations when the error estimate exceeds 1e-6;
* ``upper_bound`` / ``lower_bound`` — a bound, not the value (k-async with NLU delays);
* ``infinite`` — the expectation diverges (heavy Pareto tails); ``value`` is None;
* ``unavailable`` — no formula or bound is known; ``value`` is None.

Order statistics (Dutta et al., AISTATS 2018, arXiv 1803.01113, §4 and App. B):
``P(X_{k:n} > x) = P(Bin(n, F(x)) < k) = I_{1-F(x)}(n-k+1, k)``, so
``E[X_{k:n}] = x_lo + ∫ I_{sf(x)}(n-k+1, k) dx``.  The quadrature splits the line at
quantiles of X_{k:n} (geometric in both tail probabilities, down to 1e-300 in the upper tail),
so it adapts to n, k and to heavy tails without tuning.

K-batch-sync (all m workers restart on the same parameters until K gradients arrived) is the
K-th point of m superposed renewal processes started at 0: ``E[T] = ∫ P(N(t) < K) dt`` with
``P(N_i(t) ≥ j) = F^{*j}(t)``.  It is computed on lattices of step h: each job time is put on
the lattice with its cell's mass split between the two ends so that the cell's mean is kept
(local moment matching: the first-order rounding error cancels, the rest is O(h²)); the
j-fold convolutions come from FFTs, the m-fold superposition of the count pmfs from truncated
FFT powers, and the lattice sums at h, h/2, h/4, … are Richardson-extrapolated.  Rounding
every job time down (up) instead gives a process whose K-th point is pathwise ≤ (≥) T, a
rigorous bracket the extrapolated value is checked against.  Local SGD uses the same
lattices for the maximum of m sums of H delays (Wang & Joshi, Cooperative SGD, JMLR 2021:
runtime per local step ``(E[max_i S_i] + D)/H``).  The asynchronous schemes use the
elementary renewal theorem (E[T] = K·E[X]/m).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable

import numpy as np
from scipy import fft as sfft
from scipy import special, stats

from . import limits
from .delays import Delay, Empirical, Exponential, Pareto, Uniform, _array, check_delay
from .params import Domain, ParameterError
from .schemes import (Async, KAsync, KBatchAsync, KBatchSync, KSync, LocalSGD, Scheme, Sync, check_order_statistic,
                      check_scheme)

__all__ = [
    "KINDS",
    "VALUE_KINDS",
    "Estimate",
    "expected_runtime",
    "order_statistic_mean",
    "order_statistic_std",
    "order_statistic_moments",
    "order_statistic_pdf",
    "order_statistic_cdf",
    "REL_TOL",
]

KINDS = ("exact", "numerical", "upper_bound", "lower_bound", "approximation", "infinite", "unavailable")
#: the kinds whose value *is* E[T] (to the stated accuracy), not a bound or an approximation
VALUE_KINDS = ("exact", "numerical")

#: relative error below which a computed value is reported as ``numerical`` (DESIGN §2)
REL_TOL = 1e-6


@dataclass(frozen=True)
class Estimate:
    """An analytic value with its kind (one of :data:`KINDS`) and how it was obtained.

    ``value`` is None exactly when ``kind`` is ``infinite`` or ``unavailable``.  ``std`` is the
    standard deviation of the per-iteration runtime where it is cheap (order-statistic
    schemes), else None; ``error`` is the estimated absolute error of numerical results.
    """

    value: float | None
    kind: str
    method: str
    std: float | None = None
    error: float | None = None

    def __post_init__(self) -> None:
        for name in ("value", "std", "error"):  # plain floats (JSON-friendly), not numpy scalars
            v = getattr(self, name)
            if v is not None:
                object.__setattr__(self, name, float(v))
        if self.kind not in KINDS:
            raise ParameterError("kind", f"must be one of {', '.join(KINDS)} (got {self.kind!r})")
        if (self.value is None) != (self.kind in ("infinite", "unavailable")):
            raise ParameterError("value", f"must be None exactly for infinite/unavailable (kind {self.kind!r})")

    @property
    def finite(self) -> bool:
        """True when there is a number to draw."""
        return self.value is not None

    def scaled(self, factor: float, offset: float = 0.0, method: str | None = None) -> "Estimate":
        """``factor·value + offset`` with std and error scaled alike (for per-step runtimes)."""
        if self.value is None:
            return Estimate(None, self.kind, method or self.method)
        return Estimate(self.value * factor + offset, self.kind, method or self.method,
                        None if self.std is None else self.std * abs(factor),
                        None if self.error is None else self.error * abs(factor))


def _infinite(method: str) -> Estimate:
    return Estimate(None, "infinite", method)


def _unavailable(method: str) -> Estimate:
    return Estimate(None, "unavailable", method)


def _numeric_kind(value: float, error: float) -> str:
    return "numerical" if error <= REL_TOL * abs(value) else "approximation"


# ----------------------------------------------------------------------------------------
# A distribution seen through cdf/sf/ppf/isf with a finite lower end (Delay or scipy + shift)
# ----------------------------------------------------------------------------------------

class _Law:
    """The few functions the quadrature needs, for a Delay or a frozen scipy law plus a shift."""

    def __init__(self, dist: Any, shift: float = 0.0) -> None:
        self._d = dist
        self._shift = float(shift)
        if isinstance(dist, Delay):
            lo, hi = dist.support
            self.lower, self.upper = float(lo), float(hi)
        else:
            lo, hi = dist.support()
            self.lower, self.upper = float(lo) + self._shift, float(hi) + self._shift

    # a Delay's unvalidated _cdf … _isf: the quadrature's own nodes need no checking
    def cdf(self, x: np.ndarray) -> np.ndarray:
        d = self._d
        x = np.asarray(x, float) - self._shift
        return np.asarray(d._cdf(x) if isinstance(d, Delay) else d.cdf(x), float)

    def sf(self, x: np.ndarray) -> np.ndarray:
        d = self._d
        x = np.asarray(x, float) - self._shift
        return np.asarray(d._sf(x) if isinstance(d, Delay) else d.sf(x), float)

    def ppf(self, p: np.ndarray) -> np.ndarray:
        d = self._d
        p = np.asarray(p, float)
        return np.asarray(d._ppf(p) if isinstance(d, Delay) else d.ppf(p), float) + self._shift

    def isf(self, q: np.ndarray) -> np.ndarray:
        d = self._d
        q = np.asarray(q, float)
        return np.asarray(d._isf(q) if isinstance(d, Delay) else d.isf(q), float) + self._shift


# Gauss–Legendre rules on [-1, 1]: the main rule and a coarser one for the error estimate.
_GL_HI = np.polynomial.legendre.leggauss(20)
_GL_LO = np.polynomial.legendre.leggauss(10)

# Breakpoints of the quadrature, as tail probabilities of X_{k:n}: 2^-1 … 2^-66 (≈1e-20) on
# the lower side; on the upper side the same, then every 2^-4 down to ≈1e-300 (heavy tails).
_P_LOW = 2.0 ** -np.arange(1, 67)
_Q_UP = np.concatenate([2.0 ** -np.arange(1, 67), 2.0 ** -np.arange(70, 997, 4)])


def _os_breakpoints(law: _Law, k: int, n: int) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """Quantiles of X_{k:n}: (lower breakpoints ascending, median, upper breakpoints, their q)."""
    # P(X_{k:n} ≤ x) = I_{F(x)}(k, n-k+1)  →  x_p = F⁻¹(B⁻¹(p; k, n-k+1))
    # P(X_{k:n} > x) = I_{S(x)}(n-k+1, k)  →  x^q = S⁻¹(B⁻¹(q; n-k+1, k))  (precise for tiny q)
    med = float(law.isf(stats.beta.ppf(0.5, n - k + 1, k)))
    lo = law.ppf(stats.beta.ppf(_P_LOW, k, n - k + 1))[::-1]
    up = law.isf(stats.beta.ppf(_Q_UP, n - k + 1, k))
    lo = np.concatenate([[law.lower], lo])
    lo = np.where(np.isfinite(lo), lo, law.lower)
    lo = np.clip(lo, law.lower, med)
    ok = np.isfinite(up)
    up, q = up[ok], _Q_UP[ok]
    up = np.clip(up, med, law.upper)
    return lo, med, up, q


def _gl_pieces(edges: np.ndarray, rule: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of a composite Gauss–Legendre rule on consecutive [edges[i], edges[i+1]]."""
    a, b = edges[:-1, None], edges[1:, None]
    xi, wi = rule
    x = 0.5 * (a + b) + 0.5 * (b - a) * xi[None, :]
    w = 0.5 * (b - a) * wi[None, :]
    return x, w


@dataclass(frozen=True)
class _OSQuad:
    mean: float
    var: float
    error: float


def _os_quadrature(law: _Law, k: int, n: int) -> _OSQuad:
    """E[X_{k:n}] and Var by quadrature around the median c of X_{k:n}.

    ``E = c − ∫_{lo}^{c} F_{k:n} + ∫_c^∞ S_{k:n}``,  ``E[(X−c)²] = ∫_{lo}^{c} 2(c−x)F_{k:n} +
    ∫_c^∞ 2(x−c)S_{k:n}``, with ``F_{k:n}(x) = I_{F(x)}(k, n−k+1)`` and
    ``S_{k:n}(x) = I_{S(x)}(n−k+1, k)`` each taken on the side where it is small (no
    cancellation).  Beyond the last breakpoint (tail probability ≈ 1e-300, or the support
    end) a power-law tail is extrapolated and counted in the error.
    """
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lo, c, up, q = _os_breakpoints(law, k, n)
        lo = np.maximum.accumulate(lo)
        up = np.concatenate([[c], np.maximum.accumulate(up)])
        lo = np.concatenate([lo, [c]])

        def integrals(rule: tuple[np.ndarray, np.ndarray]) -> tuple[float, float, float, float]:
            xl, wl = _gl_pieces(lo, rule)
            fl = special.betainc(k, n - k + 1, np.clip(law.cdf(xl), 0.0, 1.0))
            xu, wu = _gl_pieces(up, rule)
            su = special.betainc(n - k + 1, k, np.clip(law.sf(xu), 0.0, 1.0))
            i_f = float(np.sum(wl * fl))
            i_s = float(np.sum(wu * su))
            j_f = float(np.sum(wl * 2.0 * (c - xl) * fl))
            j_s = float(np.sum(wu * 2.0 * (xu - c) * su))
            return i_f, i_s, j_f, j_s

        i_f, i_s, j_f, j_s = integrals(_GL_HI)
        i_f2, i_s2, j_f2, j_s2 = integrals(_GL_LO)

        # power-law extrapolation of the upper tail beyond the last breakpoint
        tail1 = tail2 = 0.0
        if up.size >= 3 and up[-1] < law.upper and up[-1] > up[-2] > 0 and q.size >= 2:
            beta = math.log(q[-2] / q[-1]) / math.log(up[-1] / up[-2])
            x_top, q_top = float(up[-1]), float(q[-1])
            tail1 = x_top * q_top / (beta - 1.0) if beta > 1.0 else math.inf
            tail2 = 2.0 * x_top * x_top * q_top / (beta - 2.0) if beta > 2.0 else math.inf
        mean = c - i_f + i_s + tail1
        e2 = j_f + j_s + tail2
        err = abs((i_s - i_f) - (i_s2 - i_f2)) + abs(tail1) + 4e-16 * (abs(c) + abs(i_f) + abs(i_s))
        var = e2 - (mean - c) ** 2 if math.isfinite(e2) else math.inf
        return _OSQuad(mean, max(var, 0.0) if math.isfinite(var) else math.inf, err)


def _order_statistic_mean_quad(delay: Delay | _Law, k: int, n: int) -> Estimate:
    """E[X_{k:n}] by quadrature of ``I_{1−F(x)}(n−k+1, k)`` for any continuous law (forced path)."""
    k, n = check_order_statistic(k, n)
    law = delay if isinstance(delay, _Law) else _Law(delay)
    r = _os_quadrature(law, k, n)
    if not math.isfinite(r.mean):
        return _infinite("quadrature of I_{1-F}(n-k+1,k): the tail integral diverges")
    return Estimate(r.mean, _numeric_kind(r.mean, r.error), "quadrature of I_{1-F}(n-k+1,k)",
                    std=math.sqrt(r.var), error=r.error)


def _harmonic_diff(n: int, k: int, power: int = 1) -> float:
    """Σ_{i=n−k+1}^{n} i^{−power}, summed term by term (pairwise; no digamma cancellation)."""
    i = np.arange(n - k + 1, n + 1, dtype=float)
    return float(np.sum(i ** -power))


def _empirical_os(delay: Empirical, k: int, n: int) -> tuple[float, float]:
    """Exact mean and variance of X_{k:n} for the resampling law of a trace.

    With distinct sorted values x_1 < … < x_d: ``E = x_1 + Σ_j (x_{j+1} − x_j) P(X_{k:n} > x_j)``,
    ``P(X_{k:n} > x_j) = I_{S(x_j)}(n−k+1, k)``.
    """
    x, counts = np.unique(np.asarray(delay.values, float), return_counts=True)
    total = counts.sum()
    sf = (total - np.cumsum(counts)) / total  # P(X > x_j), exact rationals
    s = special.betainc(n - k + 1, k, sf)
    mean = x[0] + float(np.sum(np.diff(x) * s[:-1]))
    pmf = np.concatenate([[1.0], s[:-1]]) - s
    var = float(np.sum(pmf * (x - mean) ** 2))
    return mean + delay.shift, var


def order_statistic_moments(delay: Delay, k: int, n: int) -> tuple[Estimate, float | None]:
    """E[X_{k:n}] (as an Estimate) and the standard deviation of X_{k:n} (inf if infinite)."""
    check_delay(delay)
    k, n = check_order_statistic(k, n)
    if isinstance(delay, Exponential):
        # Rényi: X_{k:n} − Δ = Σ_{i=n−k+1}^{n} Z_i / (λ i), Z_i i.i.d. Exp(1)
        mean = delay.shift + _harmonic_diff(n, k) / delay.rate
        std = math.sqrt(_harmonic_diff(n, k, 2)) / delay.rate
        return Estimate(mean, "exact", "exponential order statistic Δ + (H_n − H_{n−k})/λ", std=std), std
    if isinstance(delay, Pareto):
        a = delay.alpha
        if a * (n - k + 1) <= 1.0:
            return _infinite(f"Pareto order statistic: infinite since α(n−k+1) = {a * (n - k + 1):g} ≤ 1"), math.inf
        # X_{k:n} = x_m Π_{i=n−k+1}^{n} exp(Z_i/(α i)):  E = x_m Π αi/(αi−1)
        # = x_m Γ(n+1)Γ(n−k+1−1/α) / (Γ(n−k+1)Γ(n+1−1/α)); the product form avoids gammaln cancellation.
        i = np.arange(n - k + 1, n + 1, dtype=float)
        log_m1 = float(np.sum(-np.log1p(-1.0 / (a * i))))
        mean_y = delay.xm * math.exp(log_m1)
        if a * (n - k + 1) > 2.0:
            ratio = float(np.sum(np.log1p(1.0 / (a * i * (a * i - 2.0)))))  # log E[Y²]/E[Y]²
            std = mean_y * math.sqrt(math.expm1(ratio))
        else:
            std = math.inf
        return Estimate(mean_y + delay.shift, "exact", "Pareto order statistic x_m Γ(n+1)Γ(n−k+1−1/α)/"
                        "(Γ(n−k+1)Γ(n+1−1/α))", std=std), std
    if isinstance(delay, Uniform):
        w = delay.high - delay.low
        mean = delay.shift + delay.low + w * k / (n + 1)
        std = w * math.sqrt(k * (n - k + 1) / ((n + 1) ** 2 * (n + 2.0)))
        return Estimate(mean, "exact", "uniform order statistic a + (b − a)k/(n+1)", std=std), std
    if isinstance(delay, Empirical):
        mean, var = _empirical_os(delay, k, n)
        std = math.sqrt(max(var, 0.0))
        return Estimate(mean, "exact", "empirical order statistic (finite sum over the trace)", std=std), std
    est = _order_statistic_mean_quad(delay, k, n)
    return est, est.std


def order_statistic_mean(delay: Delay, k: int, n: int) -> Estimate:
    """E[X_{k:n}], the k-th smallest of n i.i.d. delays.

    Closed forms (exact): exponential ``Δ + (H_n − H_{n−k})/λ``; Pareto
    ``Δ + x_m Γ(n+1)Γ(n−k+1−1/α)/(Γ(n−k+1)Γ(n+1−1/α))`` (``infinite`` unless α(n−k+1) > 1);
    uniform ``Δ + a + (b−a)k/(n+1)``; an empirical trace by a finite sum.  Other families by
    quadrature of ``I_{1−F(x)}(n−k+1, k)`` (``numerical``, relative error ≤ 1e-6).
    """
    return order_statistic_moments(delay, k, n)[0]


def order_statistic_std(delay: Delay, k: int, n: int) -> float | None:
    """Standard deviation of X_{k:n} (``inf`` when the variance diverges)."""
    return order_statistic_moments(delay, k, n)[1]


def order_statistic_cdf(delay: Delay, k: int, n: int, x: Any) -> np.ndarray:
    """``P(X_{k:n} ≤ x) = I_{F(x)}(k, n−k+1)`` (evaluated as ``1 − I_{S(x)}(n−k+1, k)`` in the upper tail)."""
    check_delay(delay)
    k, n = check_order_statistic(k, n)
    x = _array(x, "x")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        F = np.clip(np.asarray(delay.cdf(x), float), 0.0, 1.0)
        S = np.clip(np.asarray(delay.sf(x), float), 0.0, 1.0)
        lower = special.betainc(k, n - k + 1, F)
        upper = special.betaincc(n - k + 1, k, S)
        return np.where(F < 0.5, lower, upper)


def _beta_pdf(x: np.ndarray, a: float, b: float) -> np.ndarray:
    """The Beta(a, b) density in log space: scipy's beta.pdf raises OverflowError (Boost) for
    some tiny x with large a, b; this underflows to 0 instead."""
    logp = special.xlogy(a - 1, x) + special.xlog1py(b - 1, -x) - special.betaln(a, b)
    return np.exp(logp)


def order_statistic_pdf(delay: Delay, k: int, n: int, x: Any) -> np.ndarray:
    """Density of X_{k:n}: ``f(x)·n!/((k−1)!(n−k)!)·F^{k−1}S^{n−k} = f(x)·beta_pdf(F(x); k, n−k+1)``.

    For an :class:`~distsgd.delays.Empirical` trace (no density) this returns the pmf
    ``P(X_{k:n} = x)`` at the trace values and 0 elsewhere.
    """
    check_delay(delay)
    k, n = check_order_statistic(k, n)
    x = _array(x, "x")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if isinstance(delay, Empirical):
            below = np.asarray(delay.cdf(np.nextafter(x, -np.inf)), float)  # P(X < x)
            at = np.asarray(delay.cdf(x), float)
            pmf = special.betainc(k, n - k + 1, at) - special.betainc(k, n - k + 1, below)
            return np.where(at > below, pmf, 0.0)
        F = np.clip(np.asarray(delay.cdf(x), float), 0.0, 1.0)
        S = np.clip(np.asarray(delay.sf(x), float), 0.0, 1.0)
        f = np.asarray(delay.pdf(x), float)
        b = np.where(F < 0.5, _beta_pdf(F, k, n - k + 1), _beta_pdf(S, n - k + 1, k))
        out = f * b
        return np.where(np.isfinite(out), out, 0.0)


# ----------------------------------------------------------------------------------------
# Lattice machinery shared by k-batch-sync (renewal superposition) and local SGD (max of sums)
# ----------------------------------------------------------------------------------------

#: cap on the elements of any one float64 work array (8e6 → 64 MB)
_MAX_ELEMENTS = limits.ANALYTIC_MAX_ELEMENTS


class _OverBudget(Exception):
    """Raised when a lattice computation would exceed its work budget."""


class _Budget:
    """Counts work in units of one complex FFT butterfly (n·log2 n per transform of size n)."""

    def __init__(self, units: float) -> None:
        self.left = float(units)

    def spend(self, units: float) -> None:
        self.left -= units
        if self.left < 0:
            raise _OverBudget


_NO_BUDGET = _Budget(math.inf)

#: budget units charged per evaluation of a scipy cdf/sf (≈ 100 ns against ≈ 2 ns per unit)
_EVAL_COST = 50


_GL_CELL = np.polynomial.legendre.leggauss(4)


def _lattice_masses(delay: Delay, lower: float, h: float, n: int, mode: str,
                    budget: _Budget = _NO_BUDGET) -> np.ndarray:
    """Masses of Y = X − lower ≥ 0 put on the lattice {0, h, …, (n−1)h}.

    ``"down"``: Y ↦ h⌊Y/h⌋ (so X_down ≤ X pathwise); ``"up"``: Y ↦ h⌈Y/h⌉ (X_up ≥ X);
    ``"mm"``: each cell's mass split between its two ends so that its mean is kept (local
    moment matching; first-order rounding errors cancel cell by cell, also where the density
    is singular).  Mass beyond the last lattice point is dropped (callers look inside only).
    """
    budget.spend(n * (_EVAL_COST * (6 if mode == "mm" else 2)))
    if isinstance(delay, Empirical):
        y = np.asarray(delay.values, float) + delay.shift - lower
        w = np.full(y.size, 1.0 / y.size)
        if mode == "mm":
            i = np.floor(y / h)
            frac = np.clip(y / h - i, 0.0, 1.0)
            idx = np.concatenate([i, i + 1]).astype(np.int64)
            w = np.concatenate([w * (1 - frac), w * frac])
        else:
            idx = (np.floor(y / h) if mode == "down" else np.ceil(y / h)).astype(np.int64)
        idx = np.maximum(idx, 0)
        keep = idx < n
        return np.bincount(idx[keep], weights=w[keep], minlength=n)[:n]
    x = lower + h * np.arange(n + 1, dtype=float)
    F = np.clip(np.asarray(delay.cdf(x), float), 0.0, 1.0)
    S = np.clip(np.asarray(delay.sf(x), float), 0.0, 1.0)
    # P(x_i < X ≤ x_{i+1}) from whichever of cdf/sf is small there (no cancellation)
    d = np.maximum(np.where(F[1:] < 0.5, F[1:] - F[:-1], S[:-1] - S[1:]), 0.0)
    if mode == "down":
        return d[:n]
    if mode == "up":
        return np.concatenate([[F[0]], d[: n - 1]])
    # E[(X − x_i); cell i] = ∫_cell (S(x) − S(x_{i+1})) dx, by Gauss–Legendre on each cell,
    # written with F where F is small and with S elsewhere
    xi, wi = _GL_CELL
    low = F[1:] < 0.5
    r = np.zeros(n)
    for lower_part in (True, False):
        idx = np.nonzero(low if lower_part else ~low)[0]
        if idx.size == 0:
            continue
        nodes = x[idx, None] + 0.5 * h * (1.0 + xi[None, :])
        if lower_part:
            diff = F[idx + 1, None] - np.clip(np.asarray(delay.cdf(nodes), float), 0.0, 1.0)
        else:
            diff = np.clip(np.asarray(delay.sf(nodes), float), 0.0, 1.0) - S[idx + 1, None]
        r[idx] = 0.5 * np.sum(wi[None, :] * np.maximum(diff, 0.0), axis=1)  # = moment / h
    r = np.clip(r, 0.0, d)
    out = np.zeros(n + 1)
    out[:-1] += d - r
    out[1:] += r
    out[0] += F[0]
    return out[:n]


def _conv_trunc(a: np.ndarray, b: np.ndarray, length: int, budget: _Budget = _NO_BUDGET) -> np.ndarray:
    """Linear convolution of the rows of ``a`` and ``b`` (last axis), first ``length`` entries."""
    la, lb = a.shape[-1], b.shape[-1]
    full = la + lb - 1
    nf = sfft.next_fast_len(full, real=True)
    rows = a.size // la
    budget.spend((2 if b is a else 3) * rows * nf * math.log2(nf + 1) / 2)
    fa = sfft.rfft(a, nf, axis=-1)
    fb = fa if b is a else sfft.rfft(b, nf, axis=-1)
    out = sfft.irfft(fa * fb, nf, axis=-1)[..., : min(full, length)]
    return np.maximum(out, 0.0)


def _power_head(q: np.ndarray, m: int, K: int, budget: _Budget = _NO_BUDGET) -> np.ndarray:
    """``Σ_{k<K} (q^{*m})_k`` for each row of ``q`` (pmfs of one worker's count, truncated).

    Repeated squaring with FFT convolutions truncated to K entries after every product —
    exact for the head because all coefficients are non-negative.
    """
    return np.minimum(_conv_power(q[:, :K], m, K, budget).sum(axis=1), 1.0)


def _conv_power(base: np.ndarray, e: int, length: int, budget: _Budget = _NO_BUDGET) -> np.ndarray:
    """Each row of ``base`` convolved with itself e times (repeated squaring), every product
    truncated to ``length`` entries — exact there, because all coefficients are non-negative."""
    result: np.ndarray | None = None
    while True:
        if e & 1:
            result = base if result is None else _conv_trunc(result, base, length, budget)
        e >>= 1
        if not e:
            break
        base = _conv_trunc(base, base, length, budget)
    assert result is not None
    return result


def _sum_power(pmf: np.ndarray, H: int, budget: _Budget = _NO_BUDGET) -> np.ndarray:
    """The H-fold convolution power of a lattice pmf, truncated to its length (exact there)."""
    return _conv_power(pmf[None, :], H, pmf.size, budget)[0]


def _renewal_head(pmf: np.ndarray, nL: int, m: int, K: int, i_lo: int, i_hi: int,
                  budget: _Budget = _NO_BUDGET) -> np.ndarray | None:
    """``P(N(ih) < K)`` for i in [i_lo, i_hi): m superposed renewal processes on a lattice.

    Job times are ``L + Y`` with ``L = nL·h`` and Y the lattice law ``pmf`` on {0, h, …}.
    ``P(N_1(t) ≥ j) = P(jL + Y_1+…+Y_j ≤ t) = G_j(t − jL)``; the pmf of N_1(t) truncated to
    0…K−1 (exact for ``P(N(t) < K)`` because counts are non-negative) is raised to the m-th
    power by truncated FFT convolutions, batched over t.  Returns None over the memory budget
    (raises :class:`_OverBudget` over the work budget).
    """
    n_y = i_hi - nL  # u = t − L ranges over 0 … i_hi − 1 − nL
    y = np.zeros(n_y)
    k = min(pmf.size, n_y)
    y[:k] = pmf[:k]
    nf = sfft.next_fast_len(2 * n_y - 1, real=True)
    fy = sfft.rfft(y, nf)
    G: list[np.ndarray] = []
    conv = y
    for j in range(1, K + 1):
        last = i_hi - 1 - j * nL
        if last < 0:
            break
        if j > 1:
            budget.spend(nf * math.log2(nf))
            conv = np.maximum(sfft.irfft(sfft.rfft(conv, nf) * fy, nf)[:n_y], 0.0)
        g = np.minimum(np.cumsum(conv), 1.0)
        if g[min(last, n_y - 1)] < 1e-19:
            break
        G.append(g)
        if (len(G) + 1) * n_y > _MAX_ELEMENTS:
            return None
    J = len(G)
    ncol = min(J + 1, K)  # counts 0 … ncol−1
    Gm = np.stack(G) if J else np.zeros((0, n_y))
    out = np.empty(i_hi - i_lo)
    chunk = max(1, min(i_hi - i_lo, 500_000 // max(ncol, 16), _MAX_ELEMENTS // (J + 2)))
    jn = np.arange(1, J + 1) * nL
    for s in range(i_lo, i_hi, chunk):
        i = np.arange(s, min(s + chunk, i_hi))
        # cumulative P(N_1(t) ≥ j) for j = 0 … J+1
        cum = np.zeros((i.size, J + 2))
        cum[:, 0] = 1.0
        if J:
            u = i[:, None] - jn[None, :]  # lattice index of t − jL
            ok = u >= 0
            vals = Gm[np.arange(J)[None, :], np.clip(u, 0, n_y - 1)]
            cum[:, 1 : J + 1] = np.where(ok, vals, 0.0)
        q = np.maximum(cum[:, :-1] - cum[:, 1:], 0.0)[:, :ncol]
        out[s - i_lo : s - i_lo + i.size] = _power_head(q, m, K, budget)
    return out


def _power_tail(t: np.ndarray, p: np.ndarray) -> float:
    """∫_{t[-1]}^∞ of a survival function extrapolated as a power law through its last values."""
    if p.size < 4 or p[-1] <= 1e-12:  # below that it is round-off, and the tail negligible
        return 0.0
    j = p.size // 2
    t1, t2, p1, p2 = float(t[j]), float(t[-1]), float(p[j]), float(p[-1])
    if p1 <= p2 or t1 <= 0 or p2 <= 1e-300:
        return 0.0 if p2 <= 1e-300 else math.inf
    beta = math.log(p1 / p2) / math.log(t2 / t1)
    return t2 * p2 / (beta - 1.0) if beta > 1.0 else math.inf


def _trace_unit(delay: Empirical) -> float | None:
    """The largest decimal grid g (g = gcd·10^{-d}) holding the lower end and all trace values,
    if there is one with d ≤ 9: lattices with a step dividing g represent the trace exactly."""
    x = np.unique(np.asarray(delay.values, float)) + delay.shift
    pts = np.concatenate([[x[0]], x[1:] - x[0]])
    for d in range(10):
        z = pts * 10.0**d
        r = np.round(z)
        if np.all(np.abs(z - r) <= 1e-9 * np.maximum(1.0, np.abs(z))) and np.all(r < 2**62):
            ints = r.astype(np.int64)
            ints = ints[ints > 0]
            if ints.size == 0:
                return None
            return float(np.gcd.reduce(ints)) / 10.0**d
    return None


def _grid_unit(delay: Delay, lower: float, span: float | None = None, max_points: int = 4096) -> float | None:
    """A length the lattice step should divide: the lower end L (so that the shifted lattice
    t − jL stays on the grid); for the uniform also its width when commensurate with L (density
    jumps on lattice points keep the error expansion regular); for a trace the decimal grid
    of its values when there is one and it is not finer than span/max_points (then the
    lattice law *is* the trace)."""
    if isinstance(delay, Empirical):
        g = _trace_unit(delay)
        if g is not None and (span is None or span / g <= max_points):
            return g
        return lower if lower > 0 else None
    width = (delay.high - delay.low) if isinstance(delay, Uniform) else None
    if lower <= 0:
        return width
    if width is None:
        return lower
    fr = Fraction(width / lower).limit_denominator(64)
    if abs(fr.numerator / fr.denominator - width / lower) <= 1e-12 * width / lower:
        return lower / fr.denominator
    return lower


def _npts(width: float, h: float) -> int:
    """Lattice points ⌈width/h⌉ + 1 on [0, width], saturated (a step far below the width — a
    trace spanning 1e-300 to 1e9 — gives a count the callers refuse, not an overflow)."""
    v = width / h
    return math.ceil(v) + 1 if v < 4.0 * _MAX_ELEMENTS else 4 * _MAX_ELEMENTS


def _coarse_step(h0: float, unit: float | None) -> float:
    """The largest step ≤ h0 that divides ``unit`` (h0 itself if there is no unit).

    A step that is not positive (a window lost in rounding next to a large lower end) raises
    :class:`_OverBudget`: the callers fall back to their bounds."""
    if not (h0 > 0 and math.isfinite(h0)):
        raise _OverBudget
    if unit is None or unit <= 0 or not unit / h0 < 2.0**52:  # (no divisor of unit is that fine)
        return h0
    return unit / math.ceil(unit / h0 * (1 - 1e-12))


def _trace_on_lattice(delay: Delay, lower: float, h: float) -> bool:
    """True when every trace value lies on the lattice lower + h·ℤ (the lattice law is exact)."""
    if not isinstance(delay, Empirical):
        return False
    z = (np.asarray(delay.values, float) + delay.shift - lower) / h
    return bool(np.all(np.abs(z - np.round(z)) <= 1e-9 * np.maximum(1.0, np.abs(z))))


@dataclass
class _Extrapolated:
    value: float
    error: float
    values: list[float]


def _extrapolate(value_at: Callable[[int], float | None], max_levels: int, smooth: bool = True) -> _Extrapolated | None:
    """Richardson extrapolation over steps h, h/2, h/4, … (level ℓ has step h/2^ℓ).

    The moment-matched lattice values V_ℓ are O(h²) accurate; ``R_ℓ = (4V_ℓ − V_{ℓ−1})/3``.
    Levels are added until ``|R_ℓ − R_{ℓ−1}|`` (an estimate of R_{ℓ−1}'s error, hence
    conservative for R_ℓ) is ≤ REL_TOL·|R_ℓ| or the budget (``max_levels`` or ``value_at``
    returning None) is spent.  With ``smooth=False`` (atoms off the lattice: no regular
    expansion in h) the error is at least the last unextrapolated change |V_ℓ − V_{ℓ−1}|.
    """
    vals: list[float] = []

    def result() -> _Extrapolated | None:
        if len(vals) < 2:
            return None
        if len(vals) == 2:
            return _Extrapolated(vals[1], abs(vals[1] - vals[0]) + 1e-14 * abs(vals[1]), vals)
        r = [(4 * vals[i + 1] - vals[i]) / 3 for i in range(len(vals) - 1)]
        err = abs(r[-1] - r[-2]) + 1e-14 * abs(r[-1])
        if not smooth:
            err = max(err, abs(vals[-1] - vals[-2]))
        return _Extrapolated(r[-1], err, vals)

    for level in range(max_levels):
        v = value_at(level)
        if v is None:
            break
        vals.append(v)
        res = result()
        if len(vals) >= 3 and res is not None and res.error <= REL_TOL * abs(res.value):
            return res
    return result()


#: work budget of one lattice computation (units of FFT butterflies; ≈ 1–2 s of numpy FFT)
_WORK_BUDGET = limits.ANALYTIC_WORK
_WORK = Domain("work", 0.0, math.inf, low_open=True, doc="work budget of the lattice computations")


def _wald_bound(delay: Delay, m: int, K: int) -> float:
    """E[T] ≤ (K + m)·E[X]/m for k-batch-sync: by T the m workers started exactly K + m jobs
    (K done, m running) and were busy all of [0, T]; Wald's identity gives m·E[T] ≤ (K+m)E[X]."""
    return (K + m) * delay.mean / m


def _spread(delay: Delay, lower: float) -> float:
    """A length on which the law of X − lower changes (its interquartile range, or wider)."""
    s = float(delay.isf(0.25)) - float(delay.ppf(0.25))
    if not s > 0:
        s = float(delay.isf(1e-3)) - lower
    if not s > 0:
        s = max(abs(lower), 1.0)
    return s


def _kbatch_sync_numerical(delay: Delay, m: int, K: int, n_coarse: int = 128, max_levels: int = 8,
                           work: float = _WORK_BUDGET) -> Estimate:
    """E[T] = ∫ P(N(t) < K) dt for m superposed renewal processes, on lattices (module doc).

    Range: P(T > t) = 1 below c·L (c = ⌈K/m⌉ jobs of length ≥ L are needed).  A pilot run of
    the rounded-down/up lattices (step ≤ a quarter of the interquartile range of X) finds where
    P(T > t) leaves 1 and where it drops below 1e-13; its window starts from the pathwise bound
    T ≤ X_{K:m} (K ≤ m) or a normal-range guess for max_i S_{i,⌈K/m⌉} (K > m) and doubles,
    up to 64 times the Wald scale, until it does.  Then moment-matched lattices with steps h,
    h/2, h/4, … (128, 256, … points over the window) are Richardson-extrapolated until the error
    estimate is ≤ 1e-6 relative, and checked against the rigorous bracket of the rounded
    lattices at the coarse step.  A power-law tail beyond the window (heavy tails only) is
    added and counted in the error.

    Cost per level: about K FFT convolutions of the grid plus, per grid point, a truncated m-th
    power of a length-K vector (≈ n·K·log K·log m).  Measured: 0.1 s at m = K = 100, about 1 s
    at m = K = 1000.  Beyond the work budget (K·m in the millions, or K/m in the hundreds)
    it returns the upper bound min(E[X_{K:m}], (K+m)E[X]/m).
    """
    L = float(delay.support[0])
    c = -(-K // m)
    t_lo = c * L
    mu = delay.mean
    budget = _Budget(work)
    named = [(_wald_bound(delay, m, K), "(K+m)E[X]/m (Wald)")] if math.isfinite(mu) else []
    # pathwise: T ≤ X_{K:m} for K ≤ m; for K > m, T ≤ max_i (sum of c jobs of worker i), whose
    # mean is at most c·E[X_{m:m}] (a maximum of sums is at most the sum of maxima)
    os_ = order_statistic_mean(delay, K, m) if K <= m else order_statistic_mean(delay, m, m)
    if os_.value is not None:
        named.append((os_.value, "E[X_{K:m}] (pathwise)") if K <= m
                     else (c * os_.value, "⌈K/m⌉·E[X_{m:m}] (pathwise)"))
    ubs = [v for v, _ in named]

    def fallback(why: str) -> Estimate:
        if not ubs:
            return _unavailable(f"k-batch-sync: {why}, and no finite bound is known")
        value, bound = min(named)
        return Estimate(value, "upper_bound", f"k-batch-sync: upper bound {bound}; {why}")

    # c·L ≤ T ≤ the upper bounds: when they agree to 1e-9 (the variable part of X is lost in
    # rounding next to its lower end) that bracket is the answer
    if ubs and t_lo > 0 and min(ubs) - t_lo <= 1e-9 * t_lo:
        ub = min(ubs)
        return Estimate((t_lo + ub) / 2, "numerical", "k-batch-sync: the bracket ⌈K/m⌉·L ≤ E[T] ≤ "
                        f"{min(named)[1]} is tighter than 1e-9 relative", error=(ub - t_lo) / 2)
    try:
        return _kbatch_sync_lattice(delay, m, K, n_coarse, max_levels, budget, L, c, t_lo, mu, ubs, fallback)
    except _OverBudget:
        return fallback("the lattice step underflows next to the lower end of X")


def _kbatch_sync_lattice(delay: Delay, m: int, K: int, n_coarse: int, max_levels: int, budget: "_Budget",
                         L: float, c: int, t_lo: float, mu: float, ubs: list[float],
                         fallback: Callable[[str], Estimate]) -> Estimate:
    method = "renewal superposition ∫P(N(t)<K)dt (lattice FFT convolution, Richardson)"
    work = budget.left

    # the least work that can give an answer: ~1200 grid points (pilot, three levels, bracket),
    # each with a truncated m-th power of a length-K vector
    if 1200 * 5.0 * K * math.log2(2 * K) * math.log2(m + 1) > work:
        return fallback(f"the renewal computation for m = {m}, K = {K} exceeds the work budget")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sY = _spread(delay, L)
        if K <= m:
            t_B = float(delay.isf(stats.beta.ppf(1e-18, m - K + 1, K)))
            guess = t_B
        else:
            t_B = c * float(delay.isf(1e-18 / (m * c)))
            sd = math.sqrt(delay.var) if math.isfinite(delay.var) else sY
            guess = c * mu + 10.0 * math.sqrt(c) * sd * math.sqrt(1.0 + math.log(m)) + 8.0 * sY
        scale = (min(ubs) - t_lo) if ubs else 0.0
        if not scale > 0:
            scale = c * sY
        cap = t_lo + 64.0 * scale
        if math.isfinite(t_B):
            cap = min(cap, t_B)
        t_hi0 = min(guess, cap) if math.isfinite(guess) else cap

        def run(h: float, mode: str, t_from: float, t_to: float) -> tuple[np.ndarray, int, int] | None:
            if _npts(t_to, h) * 2 > _MAX_ELEMENTS:  # (a step far below the window: no lattice)
                return None
            nL = round(L / h) if L > 0 else 0
            i_lo = c * nL
            i_a = max(i_lo, int(math.floor(t_from / h * (1 + 1e-12))))
            i_hi = max(i_a + 2, _npts(t_to, h))
            if (i_hi - nL) * 2 > _MAX_ELEMENTS:
                return None
            try:
                p = _renewal_head(_lattice_masses(delay, L, h, i_hi - nL, mode, budget), nL, m, K, i_a, i_hi,
                                  budget)
            except _OverBudget:
                return None
            return None if p is None else (p, i_a, i_hi)

        # -- pilot: where P(T > t) leaves 1 (rounded down: P_down ≤ P) and drops below 1e-13
        #    (rounded up: P_up ≥ P; FFT round-off sits near 1e-16)
        t_a, t_hi, heavy = t_lo, t_hi0, True
        for _ in range(8):
            h = _coarse_step(min((t_hi - t_lo) / 256, sY / 4), _grid_unit(delay, L, t_hi - t_lo, 4096))
            up = run(h, "up", t_lo, t_hi)
            if up is None:
                return fallback("the renewal computation exceeds the work budget")
            small = np.nonzero(up[0] < 1e-13)[0]
            if small.size:
                heavy = False
                t_hi = (up[1] + small[0] + 2) * h
                break
            if t_hi >= cap:
                break
            t_hi = min(cap, t_lo + 2 * (t_hi - t_lo))
        dn = run(h, "down", t_lo, t_hi)
        if dn is None:
            return fallback("the renewal computation exceeds the work budget")
        one = np.nonzero(dn[0] < 1.0 - 1e-16)[0]
        if one.size and one[0] > 0:
            t_a = (dn[1] + one[0] - 1) * h

        h_c = _coarse_step(min((t_hi - t_a) / n_coarse, sY / 4), _grid_unit(delay, L, t_hi - t_a, 8 * n_coarse))
        tails: list[float] = []

        def value_at(level: int) -> float | None:
            hh = h_c / 2**level
            r = run(hh, "mm", t_a, t_hi)
            if r is None:
                return None
            p, i_a, i_hi = r
            tail = _power_tail(hh * np.arange(i_a, i_hi), p) if heavy else 0.0
            tails.append(tail)
            return hh * (i_a + float(np.sum(p))) + (tail if math.isfinite(tail) else 0.0)

        exact_lattice = _trace_on_lattice(delay, L, h_c)
        br: list[tuple[np.ndarray, int, int] | None] = [None, None]
        if exact_lattice:  # the lattice law is the trace: one level is exact (up to round-off)
            v0 = value_at(0)
            res = None if v0 is None else _Extrapolated(v0, 1e-13 * abs(v0), [v0])
        else:
            br = [run(h_c, mode, t_a, t_hi) for mode in ("down", "up")]
            res = _extrapolate(value_at, max_levels, smooth=not isinstance(delay, Empirical))
        if res is None:
            return fallback("the renewal computation exceeds the work budget")
        value, err = res.value, res.error
        tail_err = max(abs(x) for x in tails)
        method_t = method + ("; power-law tail extrapolated beyond the grid" if heavy else "")
        if exact_lattice:
            method_t += "; the trace lies on the lattice"
        if not math.isfinite(tail_err):
            return Estimate(value, "approximation", method + f"; the tail beyond t = {t_hi:.3g} is too "
                            "heavy to extrapolate and is left out", error=math.inf)
        err += tail_err
        # rigorous bracket at the coarse step (rounded-down / rounded-up job times)
        if br[0] is not None and br[1] is not None:
            lo, hi = (h_c * (b[1] + float(np.sum(b[0]))) for b in br)
            hi += tail_err
            slack = 1e-12 * abs(value)
            if not lo - slack <= value <= hi + slack:
                value, err = (lo + hi) / 2, (hi - lo) / 2 + tail_err
                method_t += "; extrapolation failed, midpoint of the lattice bracket"
        return Estimate(value, _numeric_kind(value, err), method_t, error=err)


# ----------------------------------------------------------------------------------------
# Local SGD: E[max_i S_i], S_i the sum of H i.i.d. delays
# ----------------------------------------------------------------------------------------

def _tail_integral(S: Callable[[np.ndarray], np.ndarray], x_of_q: Callable[[np.ndarray], np.ndarray],
                   x0: float, m: int) -> float:
    """``∫_{x0}^∞ (1 − (1 − S(x))^m) dx`` for a decreasing tail S, split at x = x_of_q(S(x0)·2^{-j/2})."""
    s0 = float(S(np.array([x0]))[0])
    if not s0 > 0:
        return 0.0
    q = s0 * 2.0 ** (-0.5 * np.arange(1, 2001))
    q = q[q > 1e-300]
    xs = np.asarray(x_of_q(q), float)
    ok = np.isfinite(xs)
    xs, q = xs[ok], q[ok]
    edges = np.maximum.accumulate(np.concatenate([[x0], np.maximum(xs, x0)]))
    x, w = _gl_pieces(edges, _GL_LO)
    s = np.clip(S(x), 0.0, 1.0)
    g = -np.expm1(m * np.log1p(-np.minimum(s, 1.0 - 1e-16)))
    total = float(np.sum(w * g))
    if xs.size >= 2 and xs[-1] > xs[-2] > 0:
        beta = math.log(q[-2] / q[-1]) / math.log(xs[-1] / xs[-2])
        total += m * xs[-1] * q[-1] / (beta - 1.0) if beta > 1.0 else math.inf
    return total


def _local_sgd_numerical(delay: Delay, m: int, H: int, n_coarse: int = 512, max_levels: int = 12,
                         work: float = _WORK_BUDGET) -> Estimate:
    """E[max_i S_i] (S_i = X_i1 + … + X_iH, m workers) = HL + ∫_0^∞ (1 − F_{ΣY}(x)^m) dx.

    Y = X − L is put on moment-matched lattices (steps h, h/2, …); its H-fold convolution
    power comes from FFT repeated squaring (truncation to the window is exact there); the
    lattice sum of 1 − F^m is Richardson-extrapolated and checked against the bracket from
    rounding every Y down/up.  The window [0, W] comes from a pilot run (rounded-up lattice:
    where P(max > x) falls to round-off, capped at 256 times the location of the maximum and
    8192 interquartile ranges beyond the mean).  The coarse step is ≤ IQR/8.  Beyond W the
    subexponential asymptote P(ΣY > x) ≈ H·P(Y > x − (H−1)E[Y]) is integrated (negligible for
    light tails); its error is taken as its largest relative mismatch with the lattice on
    [0.9W, W] times the tail integral (the asymptote improves further out).
    """
    L = float(delay.support[0])
    # H·L ≤ E[max_i S_i] ≤ H·E[X_{m:m}] (a maximum of sums is at most the sum of maxima): when
    # these agree to 1e-9 (the variable part of X lost in rounding next to L), that is the answer
    top = order_statistic_mean(delay, m, m).value
    if top is not None and L > 0 and H * (top - L) <= 1e-9 * H * L:
        return Estimate(H * (L + top) / 2, "numerical", "max of m sums of H delays: the bracket "
                        "H·L ≤ E[max S] ≤ H·E[X_{m:m}] is tighter than 1e-9 relative",
                        error=H * (top - L) / 2)
    try:
        return _local_sgd_lattice(delay, m, H, n_coarse, max_levels, work, L)
    except _OverBudget:
        return _unavailable("max of m sums of H delays: the lattice step underflows next to the lower end of X")


def _local_sgd_lattice(delay: Delay, m: int, H: int, n_coarse: int, max_levels: int, work: float,
                       L: float) -> Estimate:
    method = "max of m sums of H delays: FFT convolution power on lattices, Richardson"
    muY = delay.mean - L
    budget = _Budget(work)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sY = _spread(delay, L)
        W_B = H * (float(delay.isf(1e-18 / (m * H))) - L)
        loc = H * muY + float(delay.isf(1.0 / (m * H))) - L  # where the maximum sits, roughly
        sd = math.sqrt(delay.var) if math.isfinite(delay.var) else sY
        guess = H * muY + 10.0 * math.sqrt(H) * sd * math.sqrt(1.0 + math.log(m)) + 8.0 * sY
        # window cap: the union bound, 256 times the location of the maximum, and at most
        # 8192·IQR beyond the mean (grid size); heavier tails go to the asymptote beyond it
        cap = min(W_B, 256.0 * loc, H * muY + 8192.0 * sY)
        cap = max(cap, min(guess, W_B)) if math.isfinite(cap) else guess
        W = min(guess, cap)
        trace_unit = isinstance(delay, Empirical)

        def run(h: float, mode: str, n: int) -> np.ndarray | None:
            if 2 * n > _MAX_ELEMENTS:
                return None
            try:
                pH = _sum_power(_lattice_masses(delay, L, h, n, mode, budget), H, budget)
            except _OverBudget:
                return None
            F = np.clip(np.cumsum(pH), 0.0, 1.0)
            return -np.expm1(m * np.log(F))  # P(max > x_i); 1 where F = 0

        # -- pilot: the window where P(max > x) ≥ 1e-13 (rounded up, so conservative)
        floor = 1e-13 + m * 2e-13  # FFT and summation round-off of 1 − F (≈1e-14), times m
        for _ in range(10):
            unit = _grid_unit(delay, L, W, 4096) if trace_unit else _grid_unit(delay, 0.0)
            h = _coarse_step(min(W / 512, sY / 4), unit)
            p = run(h, "up", _npts(W, h))
            if p is None:
                break
            small = np.nonzero(p < floor)[0]
            if small.size:
                W = (small[0] + 2) * h
                break
            if W >= cap:
                break
            W = min(cap, 2 * W)

        unit = _grid_unit(delay, L, W, 4 * n_coarse) if trace_unit else _grid_unit(delay, 0.0)
        h_c = _coarse_step(min(W / n_coarse, sY / 8), unit)
        exact_lattice = _trace_on_lattice(delay, L, h_c)

        def asym(x: np.ndarray, off: float) -> np.ndarray:
            return H * np.asarray(delay.sf(L + np.maximum(np.asarray(x, float) - off, 0.0)), float)

        def tail_from(x0: float) -> float:
            off = (H - 1) * muY
            return _tail_integral(lambda x: asym(x, off),
                                  lambda q: np.asarray(delay.isf(q / H), float) - L + off, x0, m)

        ends: list[tuple[float, float]] = []  # (x_end, relative mismatch lattice/asymptote)

        def value_at(level: int) -> float | None:
            hh = h_c / 2**level
            n = _npts(W, hh)
            p = run(hh, "mm", n)
            if p is None:
                return None
            x_end = n * hh
            idx = np.unique(np.round(np.linspace(0.9 * (n - 1), n - 1, 5)).astype(int))
            pa = -np.expm1(m * np.log1p(-np.minimum(asym(idx * hh, (H - 1) * muY), 1 - 1e-16)))
            with np.errstate(all="ignore"):
                mis = np.where(pa > 0, np.abs(p[idx] / pa - 1.0), 1.0)
            ends.append((x_end, float(np.max(np.minimum(mis, 1.0)))))
            return hh * float(np.sum(p)) + tail_from(x_end)

        if exact_lattice:  # the lattice law is the trace: one level is exact (up to round-off)
            v0 = value_at(0)
            res = None if v0 is None else _Extrapolated(v0, 1e-13 * abs(v0), [v0])
        else:
            res = _extrapolate(value_at, max_levels, smooth=not isinstance(delay, Empirical))
        if res is None:
            return _unavailable(f"local SGD with m = {m}, H = {H}: the convolution exceeds the work budget")
        value, err = res.value, res.error
        method_t = method
        x_end, mismatch = ends[-1]
        ta = tail_from(x_end)
        if not math.isfinite(ta):
            return Estimate(H * L + value, "approximation", method + "; the tail is too heavy to integrate",
                            error=math.inf)
        err += mismatch * abs(ta)
        if abs(ta) > 1e-12 * abs(value):
            method_t += (f"; beyond x = {x_end + H * L:.4g} the subexponential asymptote "
                         "P(S > x) ≈ H·P(X > x − (H−1)E[X]) is used")
        if exact_lattice:
            method_t += "; the trace lies on the lattice"
        else:
            n = _npts(W, h_c)
            br = [run(h_c, mode, n) for mode in ("down", "up")]
            if br[0] is not None and br[1] is not None:
                t_end = tail_from(n * h_c)
                lo, hi = (h_c * float(np.sum(b)) + t_end for b in br)
                slack = 1e-12 * abs(value) + 2 * mismatch * abs(t_end)
                if not lo - slack <= value <= hi + slack:
                    value, err = (lo + hi) / 2, (hi - lo) / 2 + mismatch * abs(ta)
                    method_t += "; extrapolation failed, midpoint of the lattice bracket"
        total = H * L + value
        return Estimate(total, _numeric_kind(total, err), method_t, error=err)


# ----------------------------------------------------------------------------------------
# Dispatch
# ----------------------------------------------------------------------------------------

def _degenerate(delay: Delay) -> float | None:
    """The constant value of a trace whose values are all equal, else None."""
    if isinstance(delay, Empirical):
        v = np.asarray(delay.values, float)
        if np.all(v == v[0]):
            return float(v[0]) + delay.shift
    return None


def _renewal_rate(delay: Delay, m: int, K: int, name: str) -> Estimate:
    """Long-run time per update K·E[X]/m (elementary renewal theorem: m workers that never wait
    complete m/E[X] gradients per unit time; an update takes K of them)."""
    mu = delay.mean
    what = "E[X]/m" if K == 1 else "K·E[X]/m"
    if not math.isfinite(mu):
        return _infinite(f"{name}: {what} with E[X] = ∞")
    return Estimate(K * mu / m, "exact", f"elementary renewal theorem {what}")


def _kbatch_sync(delay: Delay, m: int, K: int, work: float = _WORK_BUDGET) -> Estimate:
    if isinstance(delay, Exponential) and delay.shift == 0:
        # m superposed Poisson(λ) processes are Poisson(mλ): T ~ Gamma(K, mλ)
        return Estimate(K / (m * delay.rate), "exact", "Poisson superposition K/(mλ)",
                        std=math.sqrt(K) / (m * delay.rate))
    if K == 1:
        return order_statistic_mean(delay, 1, m)
    x = _degenerate(delay)
    if x is not None:
        c = -(-K // m)
        return Estimate(c * x, "exact", "constant delay: ⌈K/m⌉·x", std=0.0)
    if m == 1:
        if not math.isfinite(delay.mean):
            return _infinite("k-batch-sync with m = 1: K·E[X] with E[X] = ∞")
        return Estimate(K * delay.mean, "exact", "one worker: sum of K delays K·E[X]",
                        std=math.sqrt(K * delay.var) if math.isfinite(delay.var) else math.inf)
    if isinstance(delay, Pareto) and m * delay.alpha <= 1.0:
        return _infinite(f"k-batch-sync: infinite since m·α = {m * delay.alpha:g} ≤ 1 (all m workers "
                         "can be stuck on long jobs)")
    return _kbatch_sync_numerical(delay, m, K, work=work)


def _kasync(delay: Delay, m: int, K: int) -> Estimate:
    if K == 1:
        est = _renewal_rate(delay, m, 1, "k-async with K = 1 (async)")
        return Estimate(est.value, est.kind, est.method + " (K = 1 is async)") if est.value is not None else est
    if K == m:
        est = order_statistic_mean(delay, m, m)
        return Estimate(est.value, est.kind, est.method + " (K = m: everyone waits, as sync)",
                        est.std, est.error) if est.value is not None else est
    if isinstance(delay, Exponential) and delay.shift == 0:
        est = order_statistic_mean(delay, K, m)
        return Estimate(est.value, "exact", "memoryless: (H_m − H_{m−K})/λ (Dutta et al. 2018)", est.std)
    if delay.is_nlu:
        est = order_statistic_mean(delay, K, m)
        if est.value is None:
            return est
        return Estimate(est.value, "upper_bound", f"E[X_{{K:m}}] bounds k-async for new-longer-than-used "
                        f"delays (Dutta et al. 2018); {est.method}", error=est.error)
    return _unavailable("k-async: no closed form, and E[X_{K:m}] is an upper bound only for "
                        "new-longer-than-used delays, which this one is not")


def _local_sgd(delay: Delay, m: int, H: int, D: float, work: float = _WORK_BUDGET) -> Estimate:
    per_step = f"(E[max_i S_i] + D)/H, S_i a sum of H = {H} delays"
    if H == 1:
        est = order_statistic_mean(delay, m, m)
        return est.scaled(1.0, D, est.method + " + D (H = 1)" if D else est.method)
    if isinstance(delay, Pareto) and delay.alpha <= 1.0:
        return _infinite(f"local SGD: E[S] = ∞ since α = {delay.alpha:g} ≤ 1")
    x = _degenerate(delay)
    if x is not None:
        return Estimate((H * x + D) / H, "exact", "constant delay: (H·x + D)/H", std=0.0)
    if m == 1:
        std = math.sqrt(H * delay.var) / H if math.isfinite(delay.var) else math.inf
        return Estimate((H * delay.mean + D) / H, "exact", "one worker: (H·E[X] + D)/H", std=std)
    if isinstance(delay, Exponential):
        # S = HΔ + Gamma(H, λ): E[max] = HΔ + quadrature of 1 − G(x)^m
        law = _Law(stats.gamma(H, scale=1.0 / delay.rate), shift=H * delay.shift)
        r = _os_quadrature(law, m, m)
        kind = _numeric_kind(r.mean, r.error)
        est = Estimate(r.mean, kind, "HΔ + E[max of m Gamma(H, λ)] by quadrature of 1 − G(x)^m; " + per_step,
                       std=math.sqrt(r.var), error=r.error)
        return est.scaled(1.0 / H, D / H)
    est = _local_sgd_numerical(delay, m, H, work=work)
    if est.value is None:
        # max_i Σ_h X_ih ≤ Σ_h max_i X_ih, and ≥ (the worker with the slowest first step) X_{m:m} + (H−1)E[X]
        top = order_statistic_mean(delay, m, m)
        if top.value is None:
            return est
        lower = (top.value + (H - 1) * delay.mean + D) / H
        return Estimate(top.value + D / H, "upper_bound",
                        f"local SGD: E[X_{{m:m}}] + D/H bounds the runtime per step (max of sums ≤ sum of "
                        f"maxima; lower bound {lower:.6g}); {est.method}")
    return est.scaled(1.0 / H, D / H, est.method + "; " + per_step)


def _dispatch(scheme: Scheme, delay: Delay, work: float) -> Estimate:
    m = scheme.m
    if isinstance(scheme, Sync):
        return order_statistic_mean(delay, m, m)
    if isinstance(scheme, KSync):
        return order_statistic_mean(delay, scheme.K, m)
    if isinstance(scheme, Async):
        return _renewal_rate(delay, m, 1, "async")
    if isinstance(scheme, KBatchAsync):
        return _renewal_rate(delay, m, scheme.K, "k-batch-async")
    if isinstance(scheme, KAsync):
        return _kasync(delay, m, scheme.K)
    if isinstance(scheme, KBatchSync):
        return _kbatch_sync(delay, m, scheme.K, work)
    if isinstance(scheme, LocalSGD):
        return _local_sgd(delay, m, scheme.H, scheme.comm_delay, work)
    raise ParameterError("scheme", f"unknown scheme {type(scheme).__name__}")  # pragma: no cover


def expected_runtime(scheme: Scheme, delay: Delay, work: float | None = None) -> Estimate:
    """Expected runtime per iteration E[T] of ``scheme`` under i.i.d. delays ``delay`` (DESIGN §2).

    * sync / k-sync: ``E[X_{m:m}]`` / ``E[X_{K:m}]`` (order statistics; Dutta et al. 2018).
    * async / k-batch-async: ``E[X]/m`` / ``K·E[X]/m`` (elementary renewal theorem), exact.
    * k-async: K = 1 is async, K = m is sync; exponential without shift
      ``(H_m − H_{m−K})/λ`` (memoryless); otherwise ``E[X_{K:m}]`` as an ``upper_bound`` for
      new-longer-than-used delays, else ``unavailable``.
    * k-batch-sync: exponential without shift ``K/(mλ)``; K = 1 is ``E[X_{1:m}]``; otherwise
      ``∫ P(N(t) < K) dt`` for m superposed renewal processes, computed on lattices.
    * local-sgd: per local step ``(E[max_i S_i] + D)/H`` (Wang & Joshi, Cooperative SGD).

    Never raises for a valid (scheme, delay) pair, and swallows no exception: a bad argument
    is a :class:`ParameterError` naming it.  ``work`` caps the lattice computations
    (k-batch-sync, local SGD) in FFT-butterfly units (default ``limits.ANALYTIC_WORK`` ≈ 1e9,
    about 1–2 s); beyond it the result falls back to a bound or ``unavailable`` (with the
    reason in ``method``).
    """
    check_scheme(scheme)
    check_delay(delay)
    budget = _WORK_BUDGET if work is None else _WORK.check(work, "work")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _dispatch(scheme, delay, budget)

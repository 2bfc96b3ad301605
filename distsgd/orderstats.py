"""Order statistics X_{k:n} of n i.i.d. delays: mean, standard deviation, cdf, pdf, exact draws.

``P(X_{k:n} > x) = P(Bin(n, F(x)) < k) = I_{1−F(x)}(n−k+1, k)``, so
``E[X_{k:n}] = x_lo + ∫ I_{sf(x)}(n−k+1, k) dx`` (Dutta et al., AISTATS 2018, §4 and App. B).
A family that knows E[X_{k:n}] in closed form says so by overriding
:meth:`Delay.order_statistic <distsgd.delays.Delay.order_statistic>` (exponential, Pareto,
uniform, a trace); every other law goes through one quadrature here, which splits the line at
quantiles of X_{k:n} (geometric in both tail probabilities, down to 1e-300 in the upper tail),
so it adapts to n, k and to heavy tails without tuning.

Draws are exact and O(1) per draw whatever n: ``X_{k:n} = F⁻¹(U_{k:n})`` with
``U_{k:n} ~ Beta(k, n−k+1)``.

>>> from distsgd.delays import parse_delay
>>> order_statistic_mean(parse_delay("exp(rate=1)"), 2, 2).value   # H_2 = 1.5
1.5
>>> est = order_statistic_mean(parse_delay("weibull(shape=1, scale=1)"), 2, 2)   # the same law
>>> est.kind, round(est.value, 9)
('numerical', 1.5)
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special, stats

from . import limits
from .delays import Delay, check_delay
from .delays.base import _array, _size
from .estimate import Estimate, infinite, numeric_kind
from .numerics.quadrature import GL_HI, GL_LO, gl_pieces, power_tail
from .params import Domain
from .random import Seed, generator
from .reasons import Text

__all__ = [
    "Law", "order_statistic_mean", "order_statistic_std", "order_statistic_moments",
    "order_statistic_cdf", "order_statistic_pdf", "order_statistic_quadrature", "quadrature_moments",
    "sample_order_statistic", "check_order_statistic", "breakpoints", "affine_quadrature_moments",
]


#: n of an order statistic X_{k:n}: a number of workers (limits.MAX_WORKERS)
N = Domain("n", 1, limits.MAX_WORKERS, integer=True, doc="how many i.i.d. copies")


def check_order_statistic(k: int, n: int) -> tuple[int, int]:
    """(k, n) of an order statistic X_{k:n}: 1 ≤ k ≤ n ≤ limits.MAX_WORKERS (ParameterError naming k or n)."""
    n = N.check(n, "n")
    return Domain("k", 1, n, integer=True).check(k, "k"), n


class Law:
    """The few functions the quadrature needs, for a Delay or a frozen scipy law plus a shift
    (e.g. the Gamma law of a sum of exponentials)."""

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


# Breakpoints of the quadrature, as tail probabilities of X_{k:n}: 2^-1 … 2^-66 (≈1e-20) on
# the lower side; on the upper side the same, then every 2^-4 down to ≈1e-300 (heavy tails).
_P_LOW = 2.0 ** -np.arange(1, 67)
_Q_UP = np.concatenate([2.0 ** -np.arange(1, 67), 2.0 ** -np.arange(70, 997, 4)])


def kth_median(law: Law, k: int, n: int) -> float:
    """The median of X_{k:n}: S⁻¹(B⁻¹(1/2; n-k+1, k)), as P(X_{k:n} > x) = I_{S(x)}(n-k+1, k)."""
    return float(law.isf(stats.beta.ppf(0.5, n - k + 1, k)))


def breakpoints(law: Law, k: int, n: int) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """Quantiles of X_{k:n}: (lower breakpoints ascending, median, upper breakpoints, their q)."""
    # P(X_{k:n} ≤ x) = I_{F(x)}(k, n-k+1)  →  x_p = F⁻¹(B⁻¹(p; k, n-k+1))
    # P(X_{k:n} > x) = I_{S(x)}(n-k+1, k)  →  x^q = S⁻¹(B⁻¹(q; n-k+1, k))  (precise for tiny q)
    med = kth_median(law, k, n)
    lo = law.ppf(stats.beta.ppf(_P_LOW, k, n - k + 1))[::-1]
    up = law.isf(stats.beta.ppf(_Q_UP, n - k + 1, k))
    lo = np.concatenate([[law.lower], lo])
    lo = np.where(np.isfinite(lo), lo, law.lower)
    lo = np.clip(lo, law.lower, med)
    ok = np.isfinite(up)
    up, q = up[ok], _Q_UP[ok]
    up = np.clip(up, med, law.upper)
    return lo, med, up, q




@dataclass(frozen=True)
class QuadratureMoments:
    mean: float
    var: float
    error: float


def quadrature_moments(law: Law, k: int, n: int) -> QuadratureMoments:
    """E[X_{k:n}] and Var by quadrature around the median c of X_{k:n}.

    ``E = c − ∫_{lo}^{c} F_{k:n} + ∫_c^∞ S_{k:n}``,  ``E[(X−c)²] = ∫_{lo}^{c} 2(c−x)F_{k:n} +
    ∫_c^∞ 2(x−c)S_{k:n}``, with ``F_{k:n}(x) = I_{F(x)}(k, n−k+1)`` and
    ``S_{k:n}(x) = I_{S(x)}(n−k+1, k)`` each taken on the side where it is small (no
    cancellation).  Beyond the last breakpoint (tail probability ≈ 1e-300, or the support
    end) a power-law tail is extrapolated and counted in the error.
    """
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lo, c, up, q = breakpoints(law, k, n)
        lo = np.maximum.accumulate(lo)
        up = np.concatenate([[c], np.maximum.accumulate(up)])
        lo = np.concatenate([lo, [c]])

        def integrals(rule: tuple[np.ndarray, np.ndarray]) -> tuple[float, float, float, float]:
            xl, wl = gl_pieces(lo, rule)
            fl = special.betainc(k, n - k + 1, np.clip(law.cdf(xl), 0.0, 1.0))
            xu, wu = gl_pieces(up, rule)
            su = special.betainc(n - k + 1, k, np.clip(law.sf(xu), 0.0, 1.0))
            i_f = float(np.sum(wl * fl))
            i_s = float(np.sum(wu * su))
            j_f = float(np.sum(wl * 2.0 * (c - xl) * fl))
            j_s = float(np.sum(wu * 2.0 * (xu - c) * su))
            return i_f, i_s, j_f, j_s

        i_f, i_s, j_f, j_s = integrals(GL_HI)
        i_f2, i_s2, j_f2, j_s2 = integrals(GL_LO)

        # power-law extrapolation of the upper tail beyond the last breakpoint
        tail1 = tail2 = 0.0
        if up.size >= 3 and up[-1] < law.upper and up[-1] > up[-2] > 0 and q.size >= 2:
            ends = float(up[-2]), float(q[-2]), float(up[-1]), float(q[-1])
            tail1, tail2 = power_tail(*ends), power_tail(*ends, power=2)
        mean = c - i_f + i_s + tail1
        e2 = j_f + j_s + tail2
        err = abs((i_s - i_f) - (i_s2 - i_f2)) + abs(tail1) + 4e-16 * (abs(c) + abs(i_f) + abs(i_s))
        var = e2 - (mean - c) ** 2 if math.isfinite(e2) else math.inf
        return QuadratureMoments(mean, max(var, 0.0) if math.isfinite(var) else math.inf, err)


def affine_quadrature_moments(dist: Any, shift: float, k: int, n: int) -> QuadratureMoments:
    """:func:`quadrature_moments` of X_{k:n} for X = ``shift`` + ``dist`` (a frozen scipy law with
    ``loc`` and ``scale``): X = a + s·Y with Y the law's standard form, and an order statistic moves
    with an increasing affine map, so E = a + s·E[Y_{k:n}], Var = s²·Var[Y_{k:n}], the error s times
    Y's.  Y's quadrature is kept per (family, shape parameters, k, n): a chart over λ, Δ or m asks
    the same few (a local-SGD point's Gamma(H) costs ≈ 3 ms)."""
    loc, scale = float(dist.kwds.get("loc", 0.0)), float(dist.kwds.get("scale", 1.0))
    if len(dist.args) != dist.dist.numargs or not (math.isfinite(scale) and scale > 0):
        return quadrature_moments(Law(dist, shift=shift), k, n)  # loc or scale given by position
    unit = _standard_moments(dist.dist.name, tuple(float(a) for a in dist.args), k, n)
    return QuadratureMoments(shift + loc + scale * unit.mean, scale * scale * unit.var, scale * unit.error)


@functools.lru_cache(maxsize=1024)
def _standard_moments(family: str, shapes: tuple[float, ...], k: int, n: int) -> QuadratureMoments:
    return quadrature_moments(Law(getattr(stats, family)(*shapes)), k, n)




def order_statistic_quadrature(delay: Delay | Law, k: int, n: int) -> Estimate:
    """E[X_{k:n}] by quadrature of ``I_{1−F(x)}(n−k+1, k)`` for any continuous law (even where a
    closed form exists: the tests check one against the other)."""
    k, n = check_order_statistic(k, n)
    law = delay if isinstance(delay, Law) else Law(delay)
    r = quadrature_moments(law, k, n)
    if not math.isfinite(r.mean):
        return infinite(Text.of("method_quadrature_os_infinite"))
    return Estimate(r.mean, numeric_kind(r.mean, r.error), Text.of("method_quadrature_os"),
                    std=math.sqrt(r.var), error=r.error)


def order_statistic_moments(delay: Delay, k: int, n: int) -> tuple[Estimate, float | None]:
    """E[X_{k:n}] (as an Estimate) and the standard deviation of X_{k:n} (inf if infinite):
    the family's closed form where it has one, else the quadrature."""
    check_delay(delay)
    k, n = check_order_statistic(k, n)
    est = delay.order_statistic(k, n) or order_statistic_quadrature(delay, k, n)
    return est, (math.inf if est.kind == "infinite" else est.std)


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
        if delay.atoms is not None:  # a discrete law: the pmf at its atoms
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


def sample_order_statistic(delay: Delay, k: int, n: int, rng: Seed,
                           size: int | tuple[int, ...]) -> np.ndarray:
    """Exact draws of X_{k:n}: F⁻¹(U_{k:n}) with U_{k:n} ~ Beta(k, n−k+1).

    The upper half uses ``isf`` of 1 − U_{k:n} ~ Beta(n−k+1, k), so the maximum of many
    workers keeps its precision in the tail.  ``rng`` is a Generator or a seed.

    >>> from distsgd.delays import parse_delay
    >>> x = sample_order_statistic(parse_delay("uniform(low=0, high=1)"), 3, 3, 1, 10_000)
    >>> round(float(x.mean()), 2)   # E[max of 3 uniforms] = 3/4
    0.75
    """
    check_delay(delay)
    k, n = check_order_statistic(k, n)
    gen = generator(rng)
    size = _size(size)
    if k <= n - k + 1:
        return np.asarray(delay.ppf(gen.beta(k, n - k + 1, size)), dtype=float)
    return np.asarray(delay.isf(gen.beta(n - k + 1, k, size)), dtype=float)

"""E[max_i S_i] for local SGD: the slowest of m workers, each a sum S_i of H i.i.d. delays
(Wang & Joshi, Cooperative SGD, JMLR 2021: runtime per local step ``(E[max_i S_i] + D)/H``).

Y = X − L (L the lower end of X) is put on lattices (:mod:`distsgd.numerics.lattice`), its
H-fold convolution power comes from FFT repeated squaring, and the lattice sums of
``1 − F_{ΣY}^m`` at h, h/2, … are Richardson-extrapolated and checked against the bracket of
rounding every Y down and up; beyond the window, the subexponential asymptote.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np

from .. import limits
from ..delays import Delay
from ..estimate import Estimate, numeric_kind, unavailable
from ..orderstats import order_statistic_mean
from ..reasons import Text
from .lattice import (
    MAX_ELEMENTS,
    Budget,
    OverBudget,
    coarse_step,
    grid_unit,
    lattice_masses,
    npts,
    on_lattice,
    richardson,
    search_window,
    spread,
    sum_power,
    within_bracket,
)
from .quadrature import GL_LO, gl_pieces, power_tail

__all__ = ["max_of_sums_mean"]


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
    x, w = gl_pieces(edges, GL_LO)
    s = np.clip(S(x), 0.0, 1.0)
    g = -np.expm1(m * np.log1p(-np.minimum(s, 1.0 - 1e-16)))
    total = float(np.sum(w * g))
    if xs.size >= 2 and xs[-1] > xs[-2] > 0:
        total += m * power_tail(float(xs[-2]), float(q[-2]), float(xs[-1]), float(q[-1]))
    return total


def max_of_sums_mean(delay: Delay, m: int, H: int, n_coarse: int = 512, max_levels: int = 12,
                         work: float = limits.ANALYTIC_WORK) -> Estimate:
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
        return Estimate(H * (L + top) / 2, "numerical", Text.of("method_maxsum_bracket"),
                        error=H * (top - L) / 2)
    try:
        return _lattice(delay, m, H, n_coarse, max_levels, work, L)
    except OverBudget:
        return unavailable(Text.of("method_maxsum_underflow"))


def _window(delay: Delay, m: int, H: int, L: float, sY: float) -> tuple[float, float]:
    """The pilot's first window end and its cap: the union bound, 256 times the location of the
    maximum, and at most 8192·IQR beyond the mean (grid size); heavier tails go to the asymptote."""
    muY = delay.mean - L
    W_B = H * (float(delay.isf(1e-18 / (m * H))) - L)
    loc = H * muY + float(delay.isf(1.0 / (m * H))) - L  # where the maximum sits, roughly
    sd = math.sqrt(delay.var) if math.isfinite(delay.var) else sY
    guess = H * muY + 10.0 * math.sqrt(H) * sd * math.sqrt(1.0 + math.log(m)) + 8.0 * sY
    cap = min(W_B, 256.0 * loc, H * muY + 8192.0 * sY)
    cap = max(cap, min(guess, W_B)) if math.isfinite(cap) else guess
    return min(guess, cap), cap


class _Sums:
    """The lattice model of max_i S_i: P(max > x_i) on [0, n·h) from the H-fold convolution power
    of Y = X − L on h·ℤ (rounded down, up or moment-matched), and the asymptote beyond."""

    def __init__(self, delay: Delay, m: int, H: int, L: float, budget: Budget) -> None:
        self.delay, self.m, self.H, self.L, self.budget = delay, m, H, L, budget
        self.off = (H - 1) * (delay.mean - L)

    def __call__(self, h: float, mode: str, n: int) -> np.ndarray | None:
        if 2 * n > MAX_ELEMENTS:
            return None
        try:
            pH = sum_power(lattice_masses(self.delay, self.L, h, n, mode, self.budget), self.H, self.budget)
        except OverBudget:
            return None
        F = np.clip(np.cumsum(pH), 0.0, 1.0)
        return -np.expm1(self.m * np.log(F))  # P(max > x_i); 1 where F = 0

    def unit(self, W: float, points: int) -> float | None:
        """The lattice unit a trace imposes (none for a continuous law)."""
        return grid_unit(self.delay, self.L, W, points) if self.delay.atoms is not None else grid_unit(self.delay, 0.0)

    def asym(self, x: np.ndarray) -> np.ndarray:
        """P(ΣY > x) ≈ H·P(Y > x − (H−1)E[Y]) (subexponential asymptote)."""
        return self.H * np.asarray(self.delay.sf(self.L + np.maximum(np.asarray(x, float) - self.off, 0.0)), float)

    def tail_from(self, x0: float) -> float:
        return _tail_integral(self.asym, lambda q: np.asarray(self.delay.isf(q / self.H), float) - self.L + self.off,
                              x0, self.m)

    def mismatch(self, p: np.ndarray, h: float) -> float:
        """The largest relative mismatch of the lattice and the asymptote on [0.9W, W]."""
        n = p.size
        idx = np.unique(np.round(np.linspace(0.9 * (n - 1), n - 1, 5)).astype(int))
        pa = -np.expm1(self.m * np.log1p(-np.minimum(self.asym(idx * h), 1 - 1e-16)))
        with np.errstate(all="ignore"):
            mis = np.where(pa > 0, np.abs(p[idx] / pa - 1.0), 1.0)
        return float(np.max(np.minimum(mis, 1.0)))


def _lattice(delay: Delay, m: int, H: int, n_coarse: int, max_levels: int, work: float, L: float) -> Estimate:
    method = Text.of("method_maxsum_lattice")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sY = spread(delay, L)
        W0, cap = _window(delay, m, H, L, sY)
        run = _Sums(delay, m, H, L, Budget(work))

        def probe(h: float, end: float) -> tuple[np.ndarray, int] | None:
            p = run(h, "up", npts(end, h))
            return None if p is None else (p, 0)

        # -- pilot: the window where P(max > x) ≥ the FFT and summation round-off of 1 − F
        #    (≈1e-14) times m (rounded up, so conservative)
        W = search_window(probe, 0.0, W0, cap, lambda end: coarse_step(min(end / 512, sY / 4), run.unit(end, 4096)),
                          1e-13 + m * 2e-13, 10).end
        h_c = coarse_step(min(W / n_coarse, sY / 8), run.unit(W, 4 * n_coarse))
        exact_lattice = on_lattice(delay, L, h_c)
        ends: list[tuple[float, float]] = []  # (x_end, relative mismatch lattice/asymptote)

        def value_at(level: int) -> float | None:
            hh = h_c / 2**level
            n = npts(W, hh)
            p = run(hh, "mm", n)
            if p is None:
                return None
            ends.append((n * hh, run.mismatch(p, hh)))
            return hh * float(np.sum(p)) + run.tail_from(n * hh)

        res = richardson(value_at, max_levels, exact_lattice, smooth=delay.atoms is None)
        if res is None:
            return unavailable(Text.of("method_maxsum_budget", m=m, H=H))
        x_end, mismatch = ends[-1]
        ta = run.tail_from(x_end)
        if not math.isfinite(ta):
            return Estimate(H * L + res.value, "approximation", method.then("method_tail_too_heavy"),
                            error=math.inf)
        value, err = res.value, res.error + mismatch * abs(ta)
        if abs(ta) > 1e-12 * abs(value):
            method = method.then("method_maxsum_asymptote", x=x_end + H * L)
        if exact_lattice:
            method = method.then("method_on_lattice")
        else:
            value, err, method = _bracketed(run, h_c, npts(W, h_c), value, err, method, mismatch, ta)
        total = H * L + value
        return Estimate(total, numeric_kind(total, err), method, error=err)


def _bracketed(run: _Sums, h_c: float, n: int, value: float, err: float, method: Text, mismatch: float,
               ta: float) -> tuple[float, float, Text]:
    """The value checked against the rigorous bracket of the rounded-down and rounded-up lattices
    at the coarse step; their midpoint when the extrapolation falls outside."""
    down, up = (run(h_c, mode, n) for mode in ("down", "up"))
    if down is None or up is None:
        return value, err, method
    t_end = run.tail_from(n * h_c)
    lo, hi = (h_c * float(np.sum(b)) + t_end for b in (down, up))
    if within_bracket(value, lo, hi, 1e-12 * abs(value) + 2 * mismatch * abs(t_end)):
        return value, err, method
    return (lo + hi) / 2, (hi - lo) / 2 + mismatch * abs(ta), method.then("method_midpoint")

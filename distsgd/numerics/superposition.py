"""E[T] of k-batch-sync: the K-th point of m superposed renewal processes started at 0.

All m workers restart on the same parameters until K gradients arrived, so
``E[T] = ∫ P(N(t) < K) dt`` with ``N(t) = Σ_i N_i(t)`` and ``P(N_i(t) ≥ j) = F^{*j}(t)``.  It is
computed on lattices (:mod:`distsgd.numerics.lattice`): the j-fold convolutions from FFTs,
the m-fold superposition of the count pmfs from truncated FFT powers, the lattice sums at h,
h/2, h/4, … Richardson-extrapolated and checked against the rigorous bracket of rounding
every job time down (a process whose K-th point is pathwise ≤ T) and up (≥ T).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
from scipy import stats

from .. import limits
from ..delays import Delay
from ..estimate import Estimate, numeric_kind, unavailable
from ..orderstats import order_statistic_mean
from ..params import ceil_div
from ..reasons import Phrase, Text
from .lattice import (
    MAX_ELEMENTS,
    Budget,
    OverBudget,
    coarse_step,
    grid_unit,
    lattice_masses,
    npts,
    on_lattice,
    renewal_head,
    richardson,
    search_window,
    spread,
    within_bracket,
)
from .quadrature import power_tail

__all__ = ["kbatch_sync_runtime", "wald_bound"]


def _power_tail(t: np.ndarray, p: np.ndarray) -> float:
    """∫_{t[-1]}^∞ of a survival function extrapolated as a power law through its last values."""
    if p.size < 4 or p[-1] <= 1e-12:  # below that it is round-off, and the tail negligible
        return 0.0
    j = p.size // 2
    t1, t2, p1, p2 = float(t[j]), float(t[-1]), float(p[j]), float(p[-1])
    if p1 <= p2 or t1 <= 0 or p2 <= 1e-300:
        return 0.0 if p2 <= 1e-300 else math.inf
    return power_tail(t1, p1, t2, p2)


def wald_bound(delay: Delay, m: int, K: int) -> float:
    """E[T] ≤ (K + m)·E[X]/m for k-batch-sync: by T the m workers started exactly K + m jobs
    (K done, m running) and were busy all of [0, T]; Wald's identity gives m·E[T] ≤ (K+m)E[X]."""
    return (K + m) * delay.mean / m


def kbatch_sync_runtime(delay: Delay, m: int, K: int, n_coarse: int = 128, max_levels: int = 8,
                           work: float = limits.ANALYTIC_WORK) -> Estimate:
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
    lower = float(delay.support[0])
    c = ceil_div(K, m)  # jobs the busiest worker needs at least
    t_lo = c * lower
    mu = delay.mean
    budget = Budget(work)
    named = [(wald_bound(delay, m, K), Phrase("method_wald"))] if math.isfinite(mu) else []
    # pathwise: T ≤ X_{K:m} for K ≤ m; for K > m, T ≤ max_i (sum of c jobs of worker i), whose
    # mean is at most c·E[X_{m:m}] (a maximum of sums is at most the sum of maxima)
    kth = order_statistic_mean(delay, K, m) if K <= m else order_statistic_mean(delay, m, m)
    if kth.value is not None:
        named.append((kth.value, Phrase("method_kth_pathwise")) if K <= m
                     else (c * kth.value, Phrase("method_cmax_pathwise")))
    bounds = [v for v, _ in named]

    def fallback(why: Phrase) -> Estimate:
        if not bounds:
            return unavailable(Text.of("method_kbatch_no_bound", why=why))
        value, bound = min(named, key=lambda b: b[0])
        return Estimate(value, "upper_bound", Text.of("method_kbatch_upper", bound=bound, why=why))

    # c·L ≤ T ≤ the upper bounds: when they agree to 1e-9 (the variable part of X is lost in
    # rounding next to its lower end) that bracket is the answer
    if bounds and t_lo > 0 and min(bounds) - t_lo <= 1e-9 * t_lo:
        ub = min(bounds)
        bound = min(named, key=lambda b: b[0])[1]
        return Estimate((t_lo + ub) / 2, "numerical", Text.of("method_kbatch_bracket", bound=bound),
                        error=(ub - t_lo) / 2)
    try:
        return _lattice(delay, m, K, n_coarse, max_levels, budget, lower, c, t_lo, mu, bounds, fallback)
    except OverBudget:
        return fallback(Phrase("method_underflow"))


def _window(delay: Delay, m: int, K: int, c: int, mu: float, sY: float, t_lo: float,
            bounds: list[float]) -> tuple[float, float]:
    """The pilot's first window end and its cap: from the pathwise bound T ≤ X_{K:m} (K ≤ m) or
    a normal-range guess for max_i S_{i,c} (K > m), capped by 64 Wald scales and the 1e-18
    quantile of the pathwise bound."""
    if K <= m:
        t_B = float(delay.isf(stats.beta.ppf(1e-18, m - K + 1, K)))
        guess = t_B
    else:
        t_B = c * float(delay.isf(1e-18 / (m * c)))
        sd = math.sqrt(delay.var) if math.isfinite(delay.var) else sY
        guess = c * mu + 10.0 * math.sqrt(c) * sd * math.sqrt(1.0 + math.log(m)) + 8.0 * sY
    scale = (min(bounds) - t_lo) if bounds else 0.0
    if not scale > 0:
        scale = c * sY
    cap = t_lo + 64.0 * scale
    if math.isfinite(t_B):
        cap = min(cap, t_B)
    return (min(guess, cap) if math.isfinite(guess) else cap), cap


class _Lattice:
    """P(T > t) = P(N(t) < K) on the lattice h·ℤ from index ⌊t_from/h⌋ to ⌈t_to/h⌉, job times
    rounded down, up or moment-matched ("down", "up", "mm"); None over the budget."""

    def __init__(self, delay: Delay, m: int, K: int, c: int, lower: float, budget: Budget) -> None:
        self.delay, self.m, self.K, self.c, self.lower, self.budget = delay, m, K, c, lower, budget

    def __call__(self, h: float, mode: str, t_from: float, t_to: float) -> tuple[np.ndarray, int, int] | None:
        if npts(t_to, h) * 2 > MAX_ELEMENTS:  # (a step far below the window: no lattice)
            return None
        nL = round(self.lower / h) if self.lower > 0 else 0
        i_a = max(self.c * nL, int(math.floor(t_from / h * (1 + 1e-12))))
        i_hi = max(i_a + 2, npts(t_to, h))
        if (i_hi - nL) * 2 > MAX_ELEMENTS:
            return None
        try:
            masses = lattice_masses(self.delay, self.lower, h, i_hi - nL, mode, self.budget)
            p = renewal_head(masses, nL, self.m, self.K, i_a, i_hi, self.budget)
        except OverBudget:
            return None
        return None if p is None else (p, i_a, i_hi)


def _lattice(delay: Delay, m: int, K: int, n_coarse: int, max_levels: int, budget: Budget,
             L: float, c: int, t_lo: float, mu: float, bounds: list[float],
             fallback: Callable[[Phrase], Estimate]) -> Estimate:
    # the least work that can give an answer: ~1200 grid points (pilot, three levels, bracket),
    # each with a truncated m-th power of a length-K vector
    if 1200 * 5.0 * K * math.log2(2 * K) * math.log2(m + 1) > budget.left:
        return fallback(Phrase("method_renewal_budget_mk", m=m, K=K))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sY = spread(delay, L)
        t_hi0, cap = _window(delay, m, K, c, mu, sY, t_lo, bounds)
        run = _Lattice(delay, m, K, c, L, budget)

        def probe(h: float, end: float) -> tuple[np.ndarray, int] | None:
            r = run(h, "up", t_lo, end)
            return None if r is None else (r[0], r[1])

        # -- pilot: where P(T > t) drops below 1e-13 (rounded up: P_up ≥ P; FFT round-off sits
        #    near 1e-16), then where it leaves 1 (rounded down: P_down ≤ P)
        pilot = search_window(probe, t_lo, t_hi0, cap, lambda end: coarse_step(
            min((end - t_lo) / 256, sY / 4), grid_unit(delay, L, end - t_lo, 4096)), 1e-13, 8)
        if pilot.failed:
            return fallback(Phrase("method_renewal_budget"))
        t_hi, h = pilot.end, pilot.step
        dn = run(h, "down", t_lo, t_hi)
        if dn is None:
            return fallback(Phrase("method_renewal_budget"))
        one = np.nonzero(dn[0] < 1.0 - 1e-16)[0]
        t_a = (dn[1] + one[0] - 1) * h if one.size and one[0] > 0 else t_lo
        return _levels(delay, run, t_a, t_hi, not pilot.light, n_coarse, max_levels, L, sY, fallback)


def _levels(delay: Delay, run: _Lattice, t_a: float, t_hi: float, heavy_tail: bool, n_coarse: int,
            max_levels: int, L: float, sY: float, fallback: Callable[[Phrase], Estimate]) -> Estimate:
    """The moment-matched levels on [t_a, t_hi], Richardson-extrapolated, checked against the
    rounded lattices' bracket; with a power-law tail beyond t_hi when the pilot found a heavy one."""
    method = Text.of("method_superposition_lattice")
    h_c = coarse_step(min((t_hi - t_a) / n_coarse, sY / 4), grid_unit(delay, L, t_hi - t_a, 8 * n_coarse))
    tails: list[float] = []

    def value_at(level: int) -> float | None:
        hh = h_c / 2**level
        r = run(hh, "mm", t_a, t_hi)
        if r is None:
            return None
        p, i_a, i_hi = r
        tail = _power_tail(hh * np.arange(i_a, i_hi), p) if heavy_tail else 0.0
        tails.append(tail)
        return hh * (i_a + float(np.sum(p))) + (tail if math.isfinite(tail) else 0.0)

    exact_lattice = on_lattice(delay, L, h_c)
    # the rigorous bracket at the coarse step (rounded-down / rounded-up job times)
    down, up = (None, None) if exact_lattice else (run(h_c, mode, t_a, t_hi) for mode in ("down", "up"))
    res = richardson(value_at, max_levels, exact_lattice, smooth=delay.atoms is None)
    if res is None:
        return fallback(Phrase("method_renewal_budget"))
    value, err = res.value, res.error
    tail_err = max(abs(x) for x in tails)
    method_t = method.then("method_power_tail") if heavy_tail else method
    if exact_lattice:
        method_t = method_t.then("method_on_lattice")
    if not math.isfinite(tail_err):
        return Estimate(value, "approximation", method.then("method_tail_left_out", t=t_hi), error=math.inf)
    err += tail_err
    if down is not None and up is not None:
        lo, hi = (h_c * (b[1] + float(np.sum(b[0]))) for b in (down, up))
        hi += tail_err
        if not within_bracket(value, lo, hi, 1e-12 * abs(value)):
            value, err = (lo + hi) / 2, (hi - lo) / 2 + tail_err
            method_t = method_t.then("method_midpoint")
    return Estimate(value, numeric_kind(value, err), method_t, error=err)

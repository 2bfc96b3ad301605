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
        return Estimate(H * (L + top) / 2, "numerical", "max of m sums of H delays: the bracket "
                        "H·L ≤ E[max S] ≤ H·E[X_{m:m}] is tighter than 1e-9 relative",
                        error=H * (top - L) / 2)
    try:
        return _lattice(delay, m, H, n_coarse, max_levels, work, L)
    except OverBudget:
        return unavailable("max of m sums of H delays: the lattice step underflows next to the lower end of X")


# one numerical algorithm whose steps share its state (pilot, levels, bracket): C901 accepted,
# see docs/DESIGN.md "what is still to change"
def _lattice(delay: Delay, m: int, H: int, n_coarse: int, max_levels: int, work: float, L: float) -> Estimate:  # noqa: C901
    method = "max of m sums of H delays: FFT convolution power on lattices, Richardson"
    muY = delay.mean - L
    budget = Budget(work)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sY = spread(delay, L)
        W_B = H * (float(delay.isf(1e-18 / (m * H))) - L)
        loc = H * muY + float(delay.isf(1.0 / (m * H))) - L  # where the maximum sits, roughly
        sd = math.sqrt(delay.var) if math.isfinite(delay.var) else sY
        guess = H * muY + 10.0 * math.sqrt(H) * sd * math.sqrt(1.0 + math.log(m)) + 8.0 * sY
        # window cap: the union bound, 256 times the location of the maximum, and at most
        # 8192·IQR beyond the mean (grid size); heavier tails go to the asymptote beyond it
        cap = min(W_B, 256.0 * loc, H * muY + 8192.0 * sY)
        cap = max(cap, min(guess, W_B)) if math.isfinite(cap) else guess
        W = min(guess, cap)
        trace_unit = delay.atoms is not None

        def run(h: float, mode: str, n: int) -> np.ndarray | None:
            if 2 * n > MAX_ELEMENTS:
                return None
            try:
                pH = sum_power(lattice_masses(delay, L, h, n, mode, budget), H, budget)
            except OverBudget:
                return None
            F = np.clip(np.cumsum(pH), 0.0, 1.0)
            return -np.expm1(m * np.log(F))  # P(max > x_i); 1 where F = 0

        # -- pilot: the window where P(max > x) ≥ 1e-13 (rounded up, so conservative)
        floor = 1e-13 + m * 2e-13  # FFT and summation round-off of 1 − F (≈1e-14), times m
        for _ in range(10):
            unit = grid_unit(delay, L, W, 4096) if trace_unit else grid_unit(delay, 0.0)
            h = coarse_step(min(W / 512, sY / 4), unit)
            p = run(h, "up", npts(W, h))
            if p is None:
                break
            small = np.nonzero(p < floor)[0]
            if small.size:
                W = (small[0] + 2) * h
                break
            if W >= cap:
                break
            W = min(cap, 2 * W)

        unit = grid_unit(delay, L, W, 4 * n_coarse) if trace_unit else grid_unit(delay, 0.0)
        h_c = coarse_step(min(W / n_coarse, sY / 8), unit)
        exact_lattice = on_lattice(delay, L, h_c)

        def asym(x: np.ndarray, off: float) -> np.ndarray:
            return H * np.asarray(delay.sf(L + np.maximum(np.asarray(x, float) - off, 0.0)), float)

        def tail_from(x0: float) -> float:
            off = (H - 1) * muY
            return _tail_integral(lambda x: asym(x, off),
                                  lambda q: np.asarray(delay.isf(q / H), float) - L + off, x0, m)

        ends: list[tuple[float, float]] = []  # (x_end, relative mismatch lattice/asymptote)

        def value_at(level: int) -> float | None:
            hh = h_c / 2**level
            n = npts(W, hh)
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

        res = richardson(value_at, max_levels, exact_lattice, smooth=delay.atoms is None)
        if res is None:
            return unavailable(f"local SGD with m = {m}, H = {H}: the convolution exceeds the work budget")
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
            n = npts(W, h_c)
            down, up = (run(h_c, mode, n) for mode in ("down", "up"))
            if down is not None and up is not None:
                t_end = tail_from(n * h_c)
                lo, hi = (h_c * float(np.sum(b)) + t_end for b in (down, up))
                if not within_bracket(value, lo, hi, 1e-12 * abs(value) + 2 * mismatch * abs(t_end)):
                    value, err = (lo + hi) / 2, (hi - lo) / 2 + mismatch * abs(ta)
                    method_t += "; extrapolation failed, midpoint of the lattice bracket"
        total = H * L + value
        return Estimate(total, numeric_kind(total, err), method_t, error=err)

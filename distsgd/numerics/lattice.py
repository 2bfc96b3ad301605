"""Laws on lattices and the numerics shared by the lattice computations of the analytic core.

A delay is put on the lattice ``{lower, lower + h, …}`` (:func:`lattice_masses`): rounded down
(``X_down ≤ X`` pathwise), up (``X_up ≥ X``), or with each cell's mass split between its two ends
so that the cell's mean is kept (local moment matching: the first-order rounding error cancels,
the rest is O(h²)).  Sums of delays are FFT convolution powers (:func:`conv_power`, truncation
exact because all coefficients are non-negative), superposed renewal counts come from
:func:`renewal_head`.  The lattice values at steps h, h/2, h/4, … are Richardson-extrapolated
(:func:`extrapolate`) and checked against the rigorous bracket of the rounded-down and
rounded-up lattices (:func:`within_bracket`) — the "pilot → Richardson → bracket" skeleton that
:mod:`~distsgd.numerics.superposition` and :mod:`~distsgd.numerics.maxsum` share.

Work is counted in units of one complex FFT butterfly (:class:`Budget`); a computation over its
budget raises :class:`OverBudget` and its caller falls back to a bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import fft as sfft

from .. import limits
from ..delays import Delay
from ..estimate import REL_TOL
from .quadrature import GL_CELL

__all__ = [
    "MAX_ELEMENTS", "OverBudget", "Budget", "NO_BUDGET", "lattice_masses", "conv_power", "sum_power",
    "renewal_head", "grid_unit", "npts", "coarse_step", "on_lattice", "Extrapolated", "extrapolate",
    "within_bracket", "richardson", "spread", "Pilot", "search_window",
]

#: cap on the elements of any one float64 work array (limits.ANALYTIC_MAX_ELEMENTS)
MAX_ELEMENTS = limits.ANALYTIC_MAX_ELEMENTS


class OverBudget(Exception):
    """Raised when a lattice computation would exceed its work budget."""


class Budget:
    """Counts work in units of one complex FFT butterfly (n·log2 n per transform of size n)."""

    def __init__(self, units: float) -> None:
        self.left = float(units)

    def spend(self, units: float) -> None:
        self.left -= units
        if self.left < 0:
            raise OverBudget


NO_BUDGET = Budget(math.inf)

#: budget units charged per evaluation of a scipy cdf/sf (≈ 100 ns against ≈ 2 ns per unit)
EVAL_COST = 50


def lattice_masses(delay: Delay, lower: float, h: float, n: int, mode: str,
                    budget: Budget = NO_BUDGET) -> np.ndarray:
    """Masses of Y = X − lower ≥ 0 put on the lattice {0, h, …, (n−1)h}.

    ``"down"``: Y ↦ h⌊Y/h⌋ (so X_down ≤ X pathwise); ``"up"``: Y ↦ h⌈Y/h⌉ (X_up ≥ X);
    ``"mm"``: each cell's mass split between its two ends so that its mean is kept (local
    moment matching; first-order rounding errors cancel cell by cell, also where the density
    is singular).  Mass beyond the last lattice point is dropped (callers look inside only).
    """
    budget.spend(n * (EVAL_COST * (6 if mode == "mm" else 2)))
    atoms = delay.atoms
    if atoms is not None:
        y = atoms - lower
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
    xi, wi = GL_CELL
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


def _conv_trunc(a: np.ndarray, b: np.ndarray, length: int, budget: Budget = NO_BUDGET) -> np.ndarray:
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


def _power_head(q: np.ndarray, m: int, K: int, budget: Budget = NO_BUDGET) -> np.ndarray:
    """``Σ_{k<K} (q^{*m})_k`` for each row of ``q`` (pmfs of one worker's count, truncated).

    Repeated squaring with FFT convolutions truncated to K entries after every product —
    exact for the head because all coefficients are non-negative.
    """
    return np.minimum(conv_power(q[:, :K], m, K, budget).sum(axis=1), 1.0)


def conv_power(base: np.ndarray, e: int, length: int, budget: Budget = NO_BUDGET) -> np.ndarray:
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


def sum_power(pmf: np.ndarray, H: int, budget: Budget = NO_BUDGET) -> np.ndarray:
    """The H-fold convolution power of a lattice pmf, truncated to its length (exact there)."""
    return conv_power(pmf[None, :], H, pmf.size, budget)[0]


def renewal_head(pmf: np.ndarray, nL: int, m: int, K: int, i_lo: int, i_hi: int,
                  budget: Budget = NO_BUDGET) -> np.ndarray | None:
    """``P(N(ih) < K)`` for i in [i_lo, i_hi): m superposed renewal processes on a lattice.

    Job times are ``L + Y`` with ``L = nL·h`` and Y the lattice law ``pmf`` on {0, h, …}.
    ``P(N_1(t) ≥ j) = P(jL + Y_1+…+Y_j ≤ t) = G_j(t − jL)``; the pmf of N_1(t) truncated to
    0…K−1 (exact for ``P(N(t) < K)`` because counts are non-negative) is raised to the m-th
    power by truncated FFT convolutions, batched over t.  Returns None over the memory budget
    (raises :class:`OverBudget` over the work budget).
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
        if (len(G) + 1) * n_y > MAX_ELEMENTS:
            return None
    J = len(G)
    ncol = min(J + 1, K)  # counts 0 … ncol−1
    Gm = np.stack(G) if J else np.zeros((0, n_y))
    out = np.empty(i_hi - i_lo)
    chunk = max(1, min(i_hi - i_lo, 500_000 // max(ncol, 16), MAX_ELEMENTS // (J + 2)))
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


def _trace_unit(atoms: np.ndarray) -> float | None:
    """The largest decimal grid g (g = gcd·10^{-d}) holding the lower end and all trace values,
    if there is one with d ≤ 9: lattices with a step dividing g represent the trace exactly."""
    x = np.unique(atoms)
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


def grid_unit(delay: Delay, lower: float, span: float | None = None, max_points: int = 4096) -> float | None:
    """A length the lattice step should divide: the lower end L (so that the shifted lattice
    t − jL stays on the grid); for the uniform also its width when commensurate with L (density
    jumps on lattice points keep the error expansion regular); for a trace the decimal grid
    of its values when there is one and it is not finer than span/max_points (then the
    lattice law *is* the trace)."""
    if delay.atoms is not None:
        g = _trace_unit(delay.atoms)
        if g is not None and (span is None or span / g <= max_points):
            return g
        return lower if lower > 0 else None
    width = delay.jump_spacing
    if lower <= 0:
        return width
    if width is None:
        return lower
    fr = Fraction(width / lower).limit_denominator(64)
    if abs(fr.numerator / fr.denominator - width / lower) <= 1e-12 * width / lower:
        return lower / fr.denominator
    return lower


def npts(width: float, h: float) -> int:
    """Lattice points ⌈width/h⌉ + 1 on [0, width], saturated (a step far below the width — a
    trace spanning 1e-300 to 1e9 — gives a count the callers refuse, not an overflow)."""
    v = width / h
    return math.ceil(v) + 1 if v < 4.0 * MAX_ELEMENTS else 4 * MAX_ELEMENTS


def coarse_step(h0: float, unit: float | None) -> float:
    """The largest step ≤ h0 that divides ``unit`` (h0 itself if there is no unit).

    A step that is not positive (a window lost in rounding next to a large lower end) raises
    :class:`OverBudget`: the callers fall back to their bounds."""
    if not (h0 > 0 and math.isfinite(h0)):
        raise OverBudget
    if unit is None or unit <= 0 or not unit / h0 < 2.0**52:  # (no divisor of unit is that fine)
        return h0
    return unit / math.ceil(unit / h0 * (1 - 1e-12))


def on_lattice(delay: Delay, lower: float, h: float) -> bool:
    """True when every trace value lies on the lattice lower + h·ℤ (the lattice law is exact)."""
    if delay.atoms is None:
        return False
    z = (delay.atoms - lower) / h
    return bool(np.all(np.abs(z - np.round(z)) <= 1e-9 * np.maximum(1.0, np.abs(z))))


@dataclass
class Extrapolated:
    value: float
    error: float
    values: list[float]


def extrapolate(value_at: Callable[[int], float | None], max_levels: int, smooth: bool = True) -> Extrapolated | None:
    """Richardson extrapolation over steps h, h/2, h/4, … (level ℓ has step h/2^ℓ).

    The moment-matched lattice values V_ℓ are O(h²) accurate; ``R_ℓ = (4V_ℓ − V_{ℓ−1})/3``.
    Levels are added until ``|R_ℓ − R_{ℓ−1}|`` (an estimate of R_{ℓ−1}'s error, hence
    conservative for R_ℓ) is ≤ REL_TOL·|R_ℓ| or the budget (``max_levels`` or ``value_at``
    returning None) is spent.  With ``smooth=False`` (atoms off the lattice: no regular
    expansion in h) the error is at least the last unextrapolated change |V_ℓ − V_{ℓ−1}|.
    """
    vals: list[float] = []

    def result() -> Extrapolated | None:
        if len(vals) < 2:
            return None
        if len(vals) == 2:
            return Extrapolated(vals[1], abs(vals[1] - vals[0]) + 1e-14 * abs(vals[1]), vals)
        r = [(4 * vals[i + 1] - vals[i]) / 3 for i in range(len(vals) - 1)]
        err = abs(r[-1] - r[-2]) + 1e-14 * abs(r[-1])
        if not smooth:
            err = max(err, abs(vals[-1] - vals[-2]))
        return Extrapolated(r[-1], err, vals)

    for level in range(max_levels):
        v = value_at(level)
        if v is None:
            break
        vals.append(v)
        res = result()
        if len(vals) >= 3 and res is not None and res.error <= REL_TOL * abs(res.value):
            return res
    return result()


def spread(delay: Delay, lower: float) -> float:
    """A length on which the law of X − lower changes (its interquartile range, or wider)."""
    s = float(delay.isf(0.25)) - float(delay.ppf(0.25))
    if not s > 0:
        s = float(delay.isf(1e-3)) - lower
    if not s > 0:
        s = max(abs(lower), 1.0)
    return s


@dataclass
class Pilot:
    """Where a lattice algorithm's window ends, from :func:`search_window`."""

    end: float  # where the probe fell below the floor (plus two steps), else the last end tried
    step: float  # the lattice step of the last probe
    light: bool  # the probe fell below the floor inside the window (False: a heavy tail, or the cap)
    failed: bool  # a probe exceeded the work budget


def search_window(probe: Callable[[float, float], tuple[np.ndarray, int] | None], start: float, end: float,
                  cap: float, step_for: Callable[[float], float], floor: float, tries: int) -> Pilot:
    """The pilot of the lattice algorithms: find where a survival function falls to round-off.

    ``probe(h, end)`` gives a conservative (rounded-up) survival function on the lattice h·ℤ over
    [start, end] and the lattice index of its first value (or None over the budget).  Where it
    falls below ``floor`` the window ends two steps later; otherwise the window [start, end]
    doubles, up to ``cap``, at most ``tries`` times.  The step of each probe is ``step_for(end)``.
    """
    h = math.nan
    for _ in range(tries):
        h = step_for(end)
        r = probe(h, end)
        if r is None:
            return Pilot(end, h, light=False, failed=True)
        p, first = r
        small = np.nonzero(p < floor)[0]
        if small.size:
            return Pilot((first + int(small[0]) + 2) * h, h, light=True, failed=False)
        if end >= cap:
            break
        end = min(cap, start + 2 * (end - start))
    return Pilot(end, h, light=False, failed=False)


def within_bracket(value: float, lo: float, hi: float, slack: float) -> bool:
    """True when the extrapolated ``value`` lies in the rigorous bracket [lo, hi] of the
    rounded-down and rounded-up lattices (to ``slack``); otherwise the callers report the
    bracket's midpoint, with half its width as the error."""
    return lo - slack <= value <= hi + slack


def richardson(value_at: Callable[[int], float | None], max_levels: int, exact: bool,
               smooth: bool) -> Extrapolated | None:
    """The lattice value to report: one level when the law lies on the lattice (``exact``: the
    lattice law *is* the law, up to round-off), else :func:`extrapolate` over the levels."""
    if exact:
        v0 = value_at(0)
        return None if v0 is None else Extrapolated(v0, 1e-13 * abs(v0), [v0])
    return extrapolate(value_at, max_levels, smooth=smooth)

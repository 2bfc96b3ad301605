"""E[T] on independent, non-identical workers by lattice computations, one law per group
(DESIGN §7): k-batch-sync (the K-th point of superposed renewal processes) and local SGD (the
largest of the workers' sums of H times).

K-batch-sync.
``E[T] = ∫ P(N(t) < K) dt`` with ``N(t) = Σ_g Σ_{i ∈ g} N_i(t)`` and, for a worker of group g,
``P(N_i(t) ≥ j) = F_g^{*j}(t)``.  On the lattice h·ℤ (job times put on it by local moment
matching, :func:`~distsgd.numerics.lattice.lattice_masses`, from 0 so that every group's shift
is inside its masses): the j-fold convolutions of each group's law by FFT give one worker's
count pmf at every t (truncated to 0 … K − 1, exact for P(N < K) since counts are
non-negative); its n_g-th power (repeated squaring, truncated) is the group's; the groups'
pmfs convolved give N's.  The window ends where a rounded-up lattice puts P(N(t) < K) below
1e-13; the steps h, h/2, h/4, … are Richardson-extrapolated (as for i.i.d. workers,
:mod:`distsgd.numerics.superposition`) until the error estimate is ≤ 1e-6 relative.

Local SGD.  ``E[max_i S_i] = ∫ P(max_i S_i > x) dx`` with ``P(max ≤ x) = Π_g G_g(x)^{n_g}``, G_g
the law of a sum of H of group g's times: its lattice pmf is the H-th convolution power of
the group's masses (:func:`~distsgd.numerics.lattice.sum_power`); ``1 − Π_g G_g^{n_g}`` is
taken as ``−expm1(Σ_g n_g log1p(−S_g))`` from the survival sums S_g (no cancellation in the
tail); the same window search and Richardson levels.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import fft as sfft

from ..estimate import Estimate, numeric_kind, unavailable
from ..numerics.lattice import (
    MAX_ELEMENTS,
    Budget,
    OverBudget,
    conv_power,
    extrapolate,
    lattice_masses,
    npts,
    search_window,
    sum_power,
)
from ..reasons import Phrase, Text
from .base import Group

__all__ = ["kbatch_sync_of_groups", "local_sgd_of_groups"]

#: lattice points of the coarsest level, and the most levels tried
N_COARSE, MAX_LEVELS = 128, 7


def _one_worker_counts(masses: np.ndarray, K: int, n: int, budget: Budget) -> np.ndarray:
    """(n, K): P(N_1(ih) = k) for k < K of one worker whose job times have the lattice pmf
    ``masses`` (from 0), at i = 0 … n − 1."""
    nf = sfft.next_fast_len(2 * n - 1, real=True)
    fy = sfft.rfft(masses[:n], nf)
    cum = np.zeros((n, K + 1))
    cum[:, 0] = 1.0  # P(N ≥ 0)
    conv = masses[:n]
    for j in range(1, K + 1):
        if j > 1:
            budget.spend(nf * math.log2(nf))
            conv = np.maximum(sfft.irfft(sfft.rfft(conv, nf) * fy, nf)[:n], 0.0)
        g = np.minimum(np.cumsum(conv), 1.0)  # P(N ≥ j) = P(S_j ≤ t)
        cum[:, j] = g
        if g[-1] < 1e-19:
            break
    return np.maximum(cum[:, :-1] - cum[:, 1:], 0.0)


def _below(groups: tuple[Group, ...], K: int, h: float, n: int, mode: str, budget: Budget) -> np.ndarray | None:
    """P(N(ih) < K) for i = 0 … n − 1 on the lattice of step h (None over the memory cap)."""
    if n * (K + 1) * 3 > MAX_ELEMENTS:
        return None
    acc: np.ndarray | None = None
    for g in groups:
        q = _one_worker_counts(lattice_masses(g.delay, 0.0, h, n, mode, budget), K, n, budget)
        pg = conv_power(q, g.count, K, budget)
        acc = pg if acc is None else _trunc(acc, pg, K, budget)
    assert acc is not None
    return np.minimum(acc[:, :K].sum(axis=1), 1.0)


def _trunc(a: np.ndarray, b: np.ndarray, K: int, budget: Budget) -> np.ndarray:
    """Row-wise convolution of two count pmfs, truncated to K entries."""
    full = a.shape[1] + b.shape[1] - 1
    nf = sfft.next_fast_len(full, real=True)
    budget.spend(3 * a.shape[0] * nf * math.log2(nf + 1) / 2)
    out = sfft.irfft(sfft.rfft(a, nf, axis=1) * sfft.rfft(b, nf, axis=1), nf, axis=1)[:, :K]
    return np.maximum(out, 0.0)


def kbatch_sync_of_groups(groups: tuple[Group, ...], K: int, work: float) -> Estimate:
    """E[T] of k-batch-sync on independent groups of i.i.d. workers (module docstring);
    ``unavailable`` over the work budget or for a tail too heavy for the window."""
    method = Phrase("method_groups_superposition")
    if any(not math.isfinite(g.delay.mean) for g in groups):
        return unavailable(Text.of("method_groups_kbatch_infinite"))
    rate = sum(g.count / g.delay.mean for g in groups)
    # about (K + m) jobs' worth of time at the total rate, plus the largest lower end per job
    m = sum(g.count for g in groups)
    guess = 2.0 * (K + m) / rate + max(float(g.delay.support[0]) for g in groups) * math.ceil(K / m)
    return _integrate(lambda h, n, mode, budget: _below(groups, K, h, n, mode, budget), groups, guess, 256,
                      N_COARSE, work, Phrase("method_kbatch_groups"), method, Phrase("method_groups_kbatch_heavy"))


def _integrate(survival: Callable[[float, int, str, Budget], np.ndarray | None], groups: tuple[Group, ...],
               guess: float, probe_points: int, coarse_points: int, work: float, what: Phrase, method: Phrase,
               heavy: Phrase) -> Estimate:
    """∫_0^∞ of a survival function known on lattices (``survival(h, n, mode, budget)`` at ih for
    i < n, job times rounded ``"up"`` or moment-matched ``"mm"``): the window from a rounded-up
    pilot (where it falls below 1e-13, from ``guess``, doubling up to 64 times), then steps
    window/``coarse_points``, halved and Richardson-extrapolated.  ``unavailable`` (saying
    ``what``) over the work budget or when the pilot finds no end (``heavy``)."""
    budget = Budget(work)
    try:
        def probe(h: float, end: float) -> tuple[np.ndarray, int] | None:
            p = survival(h, npts(end, h), "up", budget)
            return None if p is None else (p, 0)

        pilot = search_window(probe, 0.0, guess, 64.0 * guess, lambda end: end / probe_points, 1e-13, 8)
        if pilot.failed:
            return unavailable(Text.of("method_over_budget", what=what, method=method))
        if not pilot.light:
            return unavailable(Text.of("method_what_heavy", what=what, heavy=heavy))
        t_hi = pilot.end
        h_c = t_hi / coarse_points

        def value_at(level: int) -> float | None:
            h = h_c / 2**level
            p = survival(h, npts(t_hi, h), "mm", budget)
            return None if p is None else h * float(np.sum(p))

        # laws with atoms (a trace's times) off the lattice have no regular expansion in h
        res = extrapolate(value_at, MAX_LEVELS, smooth=all(g.delay.atoms is None for g in groups))
    except OverBudget:
        return unavailable(Text.of("method_over_budget", what=what, method=method))
    if res is None:
        return unavailable(Text.of("method_over_budget", what=what, method=method))
    return Estimate(res.value, numeric_kind(res.value, res.error), Text(method), error=res.error)


def _max_of_sums_above(groups: tuple[Group, ...], H: int, h: float, n: int, mode: str,
                       budget: Budget) -> np.ndarray | None:
    """P(max_i S_i > ih) for i = 0 … n − 1, S_i the sum of H times of worker i's group."""
    if n * 4 > MAX_ELEMENTS:
        return None
    log_below = np.zeros(n)
    for g in groups:
        pmf = sum_power(lattice_masses(g.delay, 0.0, h, n, mode, budget), H, budget)
        tail_mass = max(0.0, 1.0 - float(pmf.sum()))  # beyond the lattice window
        surv = np.clip(np.cumsum(pmf[::-1])[::-1] - pmf + tail_mass, 0.0, 1.0)  # P(S > ih), summed from the tail
        with np.errstate(divide="ignore"):  # log 0 below the support: P(max ≤ x) = 0 there
            log_below += g.count * np.log1p(-surv)
    return -np.expm1(log_below)


def local_sgd_of_groups(groups: tuple[Group, ...], H: int, work: float) -> Estimate:
    """E[max_i S_i] of local SGD's round on independent groups (module docstring); add D and
    divide by H for the time per local step.  ``unavailable`` over the work budget or for a
    heavy tail."""
    method = Phrase("method_groups_maxsum", H=H)
    if any(not math.isfinite(g.delay.mean) for g in groups):
        return unavailable(Text.of("method_groups_local_infinite"))
    if all(math.isfinite(g.delay.var) for g in groups):
        top = max(H * g.delay.mean + 10.0 * math.sqrt(H * g.delay.var) for g in groups)
    else:
        top = 4.0 * H * max(g.delay.mean for g in groups)
    return _integrate(lambda h, n, mode, budget: _max_of_sums_above(groups, H, h, n, mode, budget), groups, top,
                      512, 2 * N_COARSE, work, Phrase("method_local_groups"), method,
                      Phrase("method_groups_local_heavy"))

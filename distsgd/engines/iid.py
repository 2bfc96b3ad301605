"""Monte Carlo engines for the schemes whose iterations are independent (no state carries over).

* order statistics (sync, k-sync, k-batch-sync with K = 1, local SGD with H = 1) are drawn by
  :func:`distsgd.orderstats.sample_order_statistic` — O(1) per iteration whatever m is;
* :func:`kbatch_sync_times` — the K-th completion overall, every worker restarting on the
  current parameters: compiled, in event order (:func:`.kernels.kbatch_sync_kth`); the numpy
  path draws every worker's path and *extends*, never redraws, those that might have finished
  more often than drawn, so the law is exact either way;
* :func:`local_sgd_times` — the slowest of m sums of H delays per round.

Costs (≈ ns on one core of the development machine, measured within a factor of about 2) are
next to each engine: the cost model of :mod:`distsgd.montecarlo` adds them up.
"""

from __future__ import annotations

import numpy as np

from .. import jit, limits
from ..delays import Delay
from ..orderstats import sample_order_statistic
from ..params import ceil_div
from . import runtime_kernels as kernels

__all__ = ["kbatch_sync_times", "local_sgd_times", "ORDER_STATISTIC_COST", "kbatch_sync_cost", "local_sgd_cost",
           "sum_law_cost"]

#: one exact order-statistic draw F⁻¹(Beta(k, n−k+1)) (cost units ≈ ns)
ORDER_STATISTIC_COST = 200.0


def kbatch_sync_cost(m: int, K: int) -> float:
    """One k-batch-sync iteration.  Compiled (event order): ≈ 12 ns per draw, m + K of them, and
    ≈ 25 ns per heap step, K of them (measured 4.6, 15, 13.5, 2.1 µs at (m, K) = (100, 100),
    (100, 400), (1000, 10), (100, 25)).  numpy paths: ≈ 120 ns per drawn completion,
    m·(⌈K/m⌉ + 1) of them."""
    if jit.ENABLED:
        return 12.0 * (m + K) + 25.0 * K
    return 120.0 * m * (ceil_div(K, m) + 1)


def sum_law_cost(H: int) -> float:
    """One local-SGD round as an exact order statistic of a known sum law (exponential: the
    maximum of m Gamma(H, λ) by G⁻¹(Beta(m, 1))): the inverse Gamma survival function costs
    ≈ 270 + 7·H ns per value (measured 283, 289, 394, 706 ns at H = 2, 4, 16, 64)."""
    return 270.0 + 7.0 * H


def local_sgd_cost(m: int, H: int) -> float:
    """One local-SGD round drawn delay by delay: ≈ 36 ns per delay, m·H of them."""
    return 36.0 * m * H


def _kbatch_sync_depth(delay: Delay, m: int, K: int, rng: np.random.Generator) -> int:
    """Completions per worker to draw so that path extension is rarely needed: the most any
    worker completed before the K-th point in a small pilot, plus a margin."""
    c = 2 * (ceil_div(K, m) + 2)
    pilot = max(1, min(64, limits.CHUNK // (m * c)))
    S = np.cumsum(delay.sample(rng, (pilot, m, c)), axis=2)
    T = np.partition(S.reshape(pilot, -1), K - 1, axis=1)[:, K - 1]
    done = (S <= T[:, None, None]).sum(axis=2).max()
    return int(done) + 2


def _kbatch_sync_extend(delay: Delay, S: np.ndarray, K: int, rng: np.random.Generator) -> float:
    """The K-th point of one iteration whose drawn paths ``S`` (m, c) may end too early.

    Only the workers whose last drawn completion lies before the current K-th point T are
    extended (the same processes, further in time), by as many completions again as they
    have; values above T are dropped (T only decreases as points are added).  Needy workers
    have all their completions below T, fewer than K in all, so memory stays O(K + m·c), and
    T is exact: no worker can complete again before it."""
    last = S[:, -1].copy()
    times = S.ravel()
    length = S.shape[1]
    T = float(np.partition(times, K - 1)[K - 1])
    while True:
        need = np.flatnonzero(last < T)
        if need.size == 0:
            return T
        times = times[times <= T]
        ext = last[need, None] + np.cumsum(delay.sample(rng, (need.size, length)), axis=1)
        last[need] = ext[:, -1]
        times = np.concatenate([times, ext.ravel()])
        length *= 2
        T = float(np.partition(times, K - 1)[K - 1])


def kbatch_sync_times(delay: Delay, m: int, K: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """K-th point of m superposed renewal processes started at 0, for n independent iterations:
    in event order by the compiled kernel (m + K − 1 draws an iteration), else by whole paths."""
    out = np.empty(n)
    if jit.ENABLED:
        rows = max(1, limits.CHUNK // (m + K - 1))  # m + K − 1 ≤ MAX_WORKERS + K_BATCH_MAX < CHUNK
        for s in range(0, n, rows):
            b = min(rows, n - s)
            kernels.kbatch_sync_kth(delay.sample(rng, (b, m + K - 1)), m, K, out[s:s + b])
        return out
    c = _kbatch_sync_depth(delay, m, K, rng)
    rows = max(1, limits.CHUNK // (m * c))
    for s in range(0, n, rows):
        b = min(rows, n - s)
        S = np.cumsum(delay.sample(rng, (b, m, c)), axis=2)
        T = np.partition(S.reshape(b, -1), K - 1, axis=1)[:, K - 1]
        # some worker could have finished again before T: extend those paths (not redraw)
        for i in np.flatnonzero(T > S[:, :, -1].min(axis=1)):
            T[i] = _kbatch_sync_extend(delay, S[i], K, rng)
        out[s:s + b] = T
    return out


def local_sgd_times(delay: Delay, m: int, H: int, D: float, n: int,
                     rng: np.random.Generator) -> np.ndarray:
    """Per-local-step runtime of n rounds: (max_i Σ_h X_ih + D) / H."""
    if H == 1:
        slowest = sample_order_statistic(delay, m, m, rng, n)
    elif (law := delay.sum_law(H)) is not None:
        # the family knows the law of Σ_h X_ih (exponential: HΔ + Gamma(H, λ)): the maximum of m
        # is an exact order statistic of it
        dist, offset = law
        slowest = offset + dist.isf(rng.beta(1, m, n))
    elif m * H <= limits.CHUNK:
        slowest = np.empty(n)
        rows = max(1, limits.CHUNK // (m * H))
        for s in range(0, n, rows):
            b = min(rows, n - s)
            slowest[s:s + b] = delay.sample(rng, (b, m, H)).sum(axis=2).max(axis=1)
    else:
        # one round is more than a chunk: take the maximum over blocks of workers
        slowest = np.full(n, -np.inf)
        block = max(1, limits.CHUNK // H)
        for i in range(n):
            for w0 in range(0, m, block):
                b = min(block, m - w0)
                slowest[i] = max(slowest[i], float(delay.sample(rng, (b, H)).sum(axis=1).max()))
    return (slowest + D) / H

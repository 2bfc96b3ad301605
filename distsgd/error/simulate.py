"""Simulated SGD on the model problem, driven by the same timing process as the runtime Monte
Carlo (:func:`distsgd.montecarlo.simulate_updates`): each gradient is computed on the
parameters its worker read, so staleness comes out of the process.

The update loops run in the compiled kernels of :mod:`distsgd.error.sgd_kernels` when
:data:`distsgd.jit.ENABLED`; the numpy loops vectorised over replicas (``_run_sgd_numpy``) are
the reference they are tested against and run when ``DISTSGD_JIT=0``.  Both draw the same
Gaussian noise in the same order, so they give the same numbers for the same seed.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from .. import jit, limits
from ..clusters import Cluster
from ..delays import Delay
from ..estimate import Estimate
from ..montecarlo import UpdateTrace, iteration_cost
from ..params import ParameterError
from ..random import Seed, generator
from ..schedules import Schedule
from ..schemes import GraphScheme, Scheme
from . import sgd_kernels as kernels
from .exact import geom
from .graph_run import GRAPH_METRICS, simulate_graph
from .problem import (
    MAX_UPDATES,
    MAX_WORK,
    POINTS,
    REPLICAS,
    TIME,
    LearningRate,
    Problem,
    band,
)
from .result import ErrorSimulation
from .scheduled import scheduled_scheme, simulate_scheduled
from .timing import counts_at, covering_trace, updates_needed

__all__ = ["ErrorSimulation", "simulate_error", "plan_run", "band", "StaleStats"]

#: bytes of Gaussian noise drawn at once for the kernels (a block of updates, into one reused
#: buffer: 4 MiB stays in cache and was the fastest of 0.25–16 MiB)
NOISE_BLOCK_BYTES = limits.SGD_GROUP_BYTES // 16


def simulate_error(scheme: Scheme, delay: Delay | Cluster, problem: Problem, time: float, points: int = 101,
                   replicas: int = 200, seed: Seed = None,
                   lr: LearningRate | None = None, keep_errors: bool = False,
                   max_work: float = MAX_WORK, max_updates: int = MAX_UPDATES,
                   max_timing_cost: float = math.inf, budget: float | None = None,
                   runtime: Estimate | None = None, schedule: Schedule | str | None = None) -> ErrorSimulation:
    """Simulated SGD error on the grid ``linspace(0, time, points)``, mean and 95% band.

    The timing comes from :func:`simulate_updates` (the runtime Monte Carlo's process); for
    the asynchronous schemes every gradient is ∇f at the parameters its worker read plus
    noise, and workers read as the process says (after the update for k-async; at once, or
    after the update for the K-th push, for k-batch-async).  Local SGD steps every worker on
    its own noise for H steps and averages; the sum of H linear Gaussian steps is sampled
    exactly (one Gaussian per coordinate per round, with the variance of the m-worker mean).

    The timing runs within the library's time bound (``limits.TIME_BUDGET``, cost units ≈ ns)
    unless ``budget`` says otherwise (a benchmark of a known, long workload).  ``runtime`` (E[T],
    e.g. the one a bound beside this curve uses) sizes the run; by default it is computed.

    ``schedule`` (DESIGN §13: ``adasync(K0=…, period=…)`` on k-sync or k-async,
    ``adacomm(H0=…, period=…)`` on local SGD, ``steps(…)``) changes K or H during the run
    (:mod:`distsgd.error.scheduled`); the scheme's own K or H is replaced by the schedule's first
    value.
    """
    sched, scheme = scheduled_scheme(scheme, schedule)
    grid, replicas, n = plan_run(scheme, delay, time, points, replicas, seed, runtime, max_updates, max_timing_cost)
    lr = lr or LearningRate()
    rng = generator(seed)
    if sched is not None:
        return simulate_scheduled(scheme, sched, delay, problem.gradient_problem(), problem.eta, problem.b, 0.0,
                                  grid, replicas, rng, max_updates, max_work, keep_errors, lr)
    if isinstance(scheme, GraphScheme):
        return _graph_error(scheme, delay, problem, grid, replicas, n, rng, keep_errors, max_work, max_updates)
    K = 1 if scheme.averages_models else scheme.grads_per_update  # local SGD: one noise draw per step
    work = float(replicas) * n * K * problem.dim
    if work > max_work:
        raise ParameterError("replicas", "sgd_work_cap", work=work, cap=max_work)
    group = _replica_group(scheme, n, problem.dim, replicas)
    errors = np.empty((replicas, points))
    stats = StaleStats()
    n_used = n
    for g0 in range(0, replicas, group):
        r = min(group, replicas - g0)
        tr = covering_trace(scheme, delay, n, r, time, rng, budget)
        n_used = max(n_used, tr.updates)
        path = _run_sgd(scheme, problem, tr, lr, rng, stats)
        errors[g0:g0 + r] = np.take_along_axis(path, counts_at(tr.times, grid), axis=1)
    mean, low, high = band(errors)
    out = ErrorSimulation(grid, mean, low, high, replicas, n_used, errors=errors if keep_errors else None)
    if not scheme.fresh:
        out.staleness_mean = stats.total / stats.count
        out.fresh_fraction = stats.fresh / stats.count
        out.gamma_measured = stats.gdiff / stats.gnow if stats.gnow > 0 else None
        out.staleness_counts = stats.hist
    return out


def _graph_error(scheme: GraphScheme, delay: Delay | Cluster, problem: Problem, grid: np.ndarray, R: int, n: int,
                 rng: np.random.Generator, keep: bool, max_work: float, max_updates: int) -> ErrorSimulation:
    """d-psgd and ad-psgd (DESIGN §12.4): the error of the average model, with the mean node
    error and the consensus distance as ``metrics`` (:data:`~distsgd.error.graph_run.GRAPH_METRICS`)."""
    sim, stale = simulate_graph(scheme, delay, problem, grid, R, n, rng, keep, max_work, max_updates)
    avg = sim.average
    out = ErrorSimulation(grid, avg.mean, avg.ci95_low, avg.ci95_high, sim.replicas, sim.steps, errors=avg.values,
                          metrics={name: (b.mean, b.ci95_low, b.ci95_high)
                                   for name, b in zip(GRAPH_METRICS, (sim.nodes, sim.consensus), strict=True)})
    if stale is not None:
        out.staleness_mean = float(stale.mean())
        out.fresh_fraction = float(np.count_nonzero(stale == 0) / stale.size)
        out.staleness_counts = np.bincount(stale.ravel())
    return out


def plan_run(scheme: Scheme, delay: Delay | Cluster, time: float, points: int, replicas: int, seed: Seed,
             runtime: Estimate | None, max_updates: int, max_timing_cost: float) -> tuple[np.ndarray, int, int]:
    """The checked grid ``linspace(0, time, points)``, replicas and the updates n that reach the
    horizon (:func:`~distsgd.error.timing.updates_needed`), refused over ``max_updates`` or when
    the timing of the replicas would cost more than ``max_timing_cost``."""
    time = TIME.check(time, "time")
    points = POINTS.check(points, "points")
    replicas = REPLICAS.check(replicas, "replicas")
    n = updates_needed(scheme, delay, time, seed if seed is not None else 0, runtime)
    if n > max_updates:
        raise ParameterError("time", "too_many_updates", scheme=scheme.label, updates=n, time=time, cap=max_updates)
    timing = float(replicas) * n * iteration_cost(scheme, delay)
    if timing > max_timing_cost:
        raise ParameterError("replicas", "timing_too_costly", replicas=replicas, scheme=scheme.label, time=time,
                             seconds=timing / 1e9)
    return np.linspace(0.0, time, points), replicas, n


def _replica_group(scheme: Scheme, n: int, dim: int, replicas: int) -> int:
    """Replicas simulated together: as many as keep the trace and the SGD state of one group
    within limits.SGD_GROUP_BYTES (fresh schemes keep only update times; asynchronous ones also each
    gradient's worker and staleness, and every worker's read parameters)."""
    if scheme.fresh:
        per = 8 * (n + 1) * 2 + 8 * dim * 4
    else:
        K = scheme.grads_per_update
        # bytes per gradient of the timing engine's working arrays: the k-async stepper keeps
        # staleness and workers (~24 B); the merged-renewal engine sorts all pushes (~72 B)
        per_grad = 24 if scheme.lockstep else 72
        per = 8 * (n + 1) * 2 + per_grad * n * K + 8 * scheme.m * dim + 8 * K * dim * 4
    return int(max(1, min(replicas, limits.SGD_GROUP_BYTES // per)))


class StaleStats:
    """Staleness of every gradient used (sum, fresh count, count, histogram) and the sums of the
    measured staleness factor γ."""

    def __init__(self) -> None:
        self.total = 0.0
        self.fresh = 0.0
        self.count = 0
        self.gdiff = 0.0
        self.gnow = 0.0
        self.hist = np.zeros(1, dtype=np.int64)

    def add(self, st: np.ndarray) -> None:
        self.total += float(st.sum())
        self.fresh += float((st == 0).sum())
        self.count += st.size
        c = np.bincount(st.ravel())
        if c.size > self.hist.size:
            c[: self.hist.size] += self.hist
            self.hist = c
        else:
            self.hist[: c.size] += c


def _run_sgd(scheme: Scheme, problem: Problem, tr: UpdateTrace, lr: LearningRate,
             rng: np.random.Generator, stats: StaleStats) -> np.ndarray:
    """Error after each update (column 0 is f(w₀)), shape (R, n + 1): the compiled kernels when
    enabled, else the numpy reference."""
    run = _run_sgd_kernel if jit.ENABLED else _run_sgd_numpy
    return run(scheme, problem, tr, lr, rng, stats)


def _fresh_round(scheme: Scheme, problem: Problem) -> tuple[np.ndarray | float, np.ndarray | float]:
    """(shrink, sd_round) of one update of a fresh scheme: ``w ← shrink ⊙ w + sd_round ⊙ z``."""
    h, eta, sd = problem.h, problem.eta, problem.noise_sd
    if scheme.averages_models:
        a = 1 - eta * h
        H = scheme.steps_per_update
        return a**H, eta * sd * np.sqrt(geom(a**2, H) / scheme.m)
    return 1 - eta * h, eta * sd / math.sqrt(scheme.grads_per_update)


def _start(problem: Problem, R: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """w₀ in every replica, and the error array with column 0 = f(w₀)."""
    w = np.broadcast_to(problem.w0, (R, problem.dim)).copy()
    err = np.empty((R, n + 1))
    err[:, 0] = problem.f0
    return w, err


def _noise_blocks(rng: np.random.Generator, n: int, R: int, d: int) -> Iterator[tuple[int, np.ndarray]]:
    """(j0, z) with z (B, R, d): the noise of updates j0 … j0 + B − 1, in blocks of at most
    NOISE_BLOCK_BYTES (one buffer, refilled: each z is valid until the next).  One draw of
    (B, R, d) is the same stream as B successive (R, d) draws."""
    B = int(max(1, min(n, NOISE_BLOCK_BYTES // (8 * R * d))))
    buf = np.empty((B, R, d))
    for j0 in range(0, n, B):
        yield j0, rng.standard_normal(out=buf[: min(B, n - j0)])


def _run_sgd_kernel(scheme: Scheme, problem: Problem, tr: UpdateTrace, lr: LearningRate,
                    rng: np.random.Generator, stats: StaleStats) -> np.ndarray:
    """:func:`_run_sgd_numpy` by the compiled kernels, block of noise by block."""
    R, n = tr.times.shape
    d = problem.dim
    w, err = _start(problem, R, n)
    h = np.ascontiguousarray(problem.h, dtype=np.float64)
    if scheme.fresh:
        shrink, sd_round = (np.ascontiguousarray(np.broadcast_to(x, (d,)), dtype=np.float64)
                            for x in _fresh_round(scheme, problem))
        for j0, z in _noise_blocks(rng, n, R, d):
            kernels.fresh_sgd(w, shrink, sd_round, h, z, err, j0)
        return err
    assert tr.workers is not None and tr.staleness is not None and tr.reads_after_update is not None
    workers = np.ascontiguousarray(tr.workers, dtype=np.int32)
    staleness = np.ascontiguousarray(tr.staleness, dtype=np.int32)
    after = np.ascontiguousarray(tr.reads_after_update, dtype=np.bool_)
    read = np.broadcast_to(w[:, None, :], (R, scheme.m, d)).copy()
    eta_max = lr.eta_max if lr.eta_max is not None else problem.eta
    coef = np.array([problem.eta, problem.noise_sd, lr.C, eta_max], dtype=np.float64)
    acc = np.zeros((R, 2))
    stats.add(tr.staleness)
    for j0, z in _noise_blocks(rng, n, R, d):
        kernels.async_sgd(w, read, workers, staleness, after, z, err, j0, h, coef, kernels.RULES[lr.rule], acc)
    stats.gdiff += float(acc[:, 0].sum()) / workers.shape[2]
    stats.gnow += float(acc[:, 1].sum())
    return err


def _run_sgd_numpy(scheme: Scheme, problem: Problem, tr: UpdateTrace, lr: LearningRate,
                   rng: np.random.Generator, stats: StaleStats) -> np.ndarray:
    """The reference loops, vectorised over replicas: error after each update (column 0 is
    f(w₀)), shape (R, n + 1)."""
    R, n = tr.times.shape
    h = problem.h
    w, err = _start(problem, R, n)
    if scheme.fresh:
        shrink, sd_round = _fresh_round(scheme, problem)
        for j in range(n):
            w = shrink * w + sd_round * rng.standard_normal((R, problem.dim))
            err[:, j + 1] = 0.5 * (h * w * w).sum(axis=1)
        return err
    return _run_async_sgd_numpy(scheme, problem, tr, lr, rng, stats, w, err)


def _run_async_sgd_numpy(scheme: Scheme, problem: Problem, tr: UpdateTrace, lr: LearningRate,
                         rng: np.random.Generator, stats: StaleStats, w: np.ndarray,
                         err: np.ndarray) -> np.ndarray:
    """Update j averages the K gradients h ⊙ w_τ(k) + ξ_k, each at the parameters w_τ(k) its
    worker read.  With per-gradient rates λ_k the noise part (1/K) Σ λ_k ξ_k is one Gaussian
    with variance (σ²/(b d)) Σ λ_k² / K² per coordinate, drawn as such (exact in law)."""
    R, n = tr.times.shape
    h, eta, sd, d = problem.h, problem.eta, problem.noise_sd, problem.dim
    h2 = h * h
    eta_max = lr.eta_max if lr.eta_max is not None else eta
    assert tr.workers is not None and tr.staleness is not None and tr.reads_after_update is not None
    K = tr.workers.shape[2]
    m = scheme.m
    w_read = np.broadcast_to(w[:, None, :], (R, m, d)).reshape(R * m, d).copy()
    base = (np.arange(R) * m)[:, None]
    after, mid = tr.reads_after_update, ~tr.reads_after_update
    ones = np.ones(R)
    sd_mean = sd / math.sqrt(K)  # noise of the mean of K gradients
    stats.add(tr.staleness)
    rows_flat = tr.workers + base[:, :, None]  # (R, n, K) rows of w_read
    gdiff = gnow = 0.0
    for j in range(n):
        flat = rows_flat[:, j]
        used = w_read[flat]  # (R, K, d): the parameters each gradient was computed on
        if mid.any():
            # a k-batch-async worker pushing twice in one window computed its second gradient
            # on the current w, which it read mid-window (written back after the window)
            used = np.where((tr.staleness[:, j] == 0)[..., None], w[:, None, :], used)
        diff = w[:, None, :] - used  # (R, K, d)
        gap2 = diff * diff
        gdiff += float((gap2 @ h2).sum())
        gnow += float((w * w) @ h2 @ ones)
        if lr.rule == "staleness":
            lam = eta / np.maximum(tr.staleness[:, j], 1)  # (R, K)
            drift = np.einsum("rk,rkd->rd", lam, used) / K
            noise_sd = sd * np.sqrt((lam * lam).sum(axis=1)) / K  # (R,)
            step = h * drift + noise_sd[:, None] * rng.standard_normal((R, d))
        else:
            grad = h * (used[:, 0] if K == 1 else used.sum(axis=1) * (1.0 / K)) \
                + sd_mean * rng.standard_normal((R, d))
            if lr.rule == "constant":
                step = eta * grad
            else:
                dist2 = gap2.sum(axis=2).mean(axis=1)
                with np.errstate(divide="ignore"):
                    eta_j = np.where(dist2 > 0, np.minimum(lr.C / dist2, eta_max), eta_max)
                step = eta_j[:, None] * grad
        if mid.any():
            w_read[flat[:, mid]] = w[:, None, :]  # read now, before the update
        w = w - step
        w_read[flat[:, after]] = w[:, None, :]
        err[:, j + 1] = 0.5 * (w * w) @ h
    stats.gdiff += gdiff / K
    stats.gnow += gnow
    return err

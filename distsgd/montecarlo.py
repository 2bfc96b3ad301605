"""Vectorised Monte Carlo of the seven schemes' timing processes (DESIGN §2).

Three engines, each the cheapest *exact* method for what is asked:

* **order statistics** (sync, k-sync, local SGD with H = 1): ``X_{k:n} = F⁻¹(U_{k:n})`` with
  ``U_{k:n} ~ Beta(k, n−k+1)`` — O(1) per iteration whatever m is.
* **per-iteration superposition** (k-batch-sync; local SGD): every worker's completion
  times on the current parameters, the K-th point overall; paths are *extended*, never
  redrawn, when a worker might have finished more often than drawn, so the law is exact.
* **long runs of the renewal processes** (async, k-async, k-batch-async), R independent
  replicas in lockstep.  k-batch-async (and async) have workers that never wait, so each
  worker is an independent renewal process and the whole run is a merge of m cumulative
  sums; k-async steps update by update, restarting the K pushers (argpartition over m).

The renewal engines return an :class:`UpdateTrace` — update times, the workers whose
gradients form each update, and each gradient's staleness — which both
:func:`simulate_runtime` and the SGD simulation (``sgd.py``) consume, so the scheme
logic lives here once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy import stats

from .delays import Delay, Exponential
from .params import Domain, ParameterError
from .schemes import (Async, KAsync, KBatchAsync, KBatchSync, KSync, LocalSGD, Scheme, Sync)

__all__ = [
    "RuntimeSample", "UpdateTrace", "Timeline", "simulate_runtime", "simulate_updates",
    "simulate_timeline", "sample_order_statistic", "iteration_cost", "ITERATIONS", "SEED",
    "MAX_ITERATIONS",
]

MAX_ITERATIONS = 10_000_000
ITERATIONS = Domain("iterations", 1, MAX_ITERATIONS, integer=True, doc="Monte Carlo iterations")
SEED = Domain("seed", 0, 2**63 - 1, integer=True, doc="random seed")
TIMELINE_MAX_M = 200
TIMELINE_MAX_ITERATIONS = 200

#: floats in one working array; chunks are sized to this (16 MiB)
_CHUNK = 2**21


def _rng(seed: int | None | np.random.Generator) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None:
        seed = SEED.check(seed, "seed")
    return np.random.default_rng(seed)


# ---------------------------------------------------------------------------------------
# results


@dataclass(frozen=True, eq=False)
class RuntimeSample:
    """Monte Carlo estimate of the mean runtime per iteration (time between updates).

    ``ci95`` is a 95% confidence interval for the mean: the i.i.d. t-interval for schemes
    whose iterations are independent, batch means over independent replicas (post warm-up)
    for the renewal schemes.  ``times`` holds the per-iteration runtimes that were used.
    """

    mean: float
    ci95: tuple[float, float]
    iterations: int
    seed: int | None
    method: str
    times: np.ndarray | None = field(default=None, repr=False)
    std: float | None = None
    staleness_mean: float | None = None
    fresh_fraction: float | None = None
    note: str = ""

    @property
    def half_width(self) -> float:
        return (self.ci95[1] - self.ci95[0]) / 2

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"mean": self.mean, "ci95": list(self.ci95),
                                  "iterations": self.iterations, "seed": self.seed}
        if self.staleness_mean is not None:
            out["staleness_mean"] = self.staleness_mean
            out["fresh_fraction"] = self.fresh_fraction
        if self.note:
            out["note"] = self.note
        return out


@dataclass(eq=False)
class UpdateTrace:
    """``updates`` consecutive updates in each of R independent replicas, in lockstep.

    times      (R, n)      wall-clock time of each update, from the start of the run
    workers    (R, n, K)   worker ids whose gradients form each update, in push order
                           (None for schemes whose gradients are all fresh)
    staleness  (R, n, K)   update index − version the gradient was computed on
    reads_after_update (K,) True where that push's worker next reads the parameters
                           *after* the update (k-async, and the K-th push of k-batch-async);
                           False where it reads at once, before the update (k-batch-async).
    """

    times: np.ndarray
    workers: np.ndarray | None = None
    staleness: np.ndarray | None = None
    reads_after_update: np.ndarray | None = None

    @property
    def replicas(self) -> int:
        return self.times.shape[0]

    @property
    def updates(self) -> int:
        return self.times.shape[1]


# ---------------------------------------------------------------------------------------
# order statistics


def sample_order_statistic(delay: Delay, k: int, n: int, rng: np.random.Generator,
                           size: int | tuple[int, ...]) -> np.ndarray:
    """Exact draws of X_{k:n}: F⁻¹(U_{k:n}) with U_{k:n} ~ Beta(k, n−k+1).

    The upper half uses ``isf`` of 1 − U_{k:n} ~ Beta(n−k+1, k), so the maximum of many
    workers keeps its precision in the tail.
    """
    if not 1 <= k <= n:
        raise ParameterError("k", f"must be in [1, n={n}] (got {k})")
    if k <= n - k + 1:
        return np.asarray(delay.ppf(rng.beta(k, n - k + 1, size)), dtype=float)
    return np.asarray(delay.isf(rng.beta(n - k + 1, k, size)), dtype=float)


def _kbatch_sync_times(delay: Delay, m: int, K: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """K-th point of m superposed renewal processes started at 0, for n independent iterations."""
    out = np.empty(n)
    c = -(-K // m) + 1
    rows = max(1, _CHUNK // (m * c))
    for s in range(0, n, rows):
        b = min(rows, n - s)
        S = np.cumsum(delay.sample(rng, (b, m, c)), axis=2)
        T = np.partition(S.reshape(b, -1), K - 1, axis=1)[:, K - 1]
        bad = T >= S[:, :, -1].min(axis=1)
        if bad.any():
            # Some worker could have finished again before T: extend those paths (not redraw).
            idx = np.flatnonzero(bad)
            Sb = S[idx]
            while idx.size:
                extra = Sb[:, :, -1:] + np.cumsum(delay.sample(rng, (idx.size, m, Sb.shape[2])), axis=2)
                Sb = np.concatenate([Sb, extra], axis=2)
                Tb = np.partition(Sb.reshape(idx.size, -1), K - 1, axis=1)[:, K - 1]
                ok = Tb < Sb[:, :, -1].min(axis=1)
                T[idx[ok]] = Tb[ok]
                idx, Sb = idx[~ok], Sb[~ok]
        out[s:s + b] = T
    return out


def _local_sgd_times(delay: Delay, m: int, H: int, D: float, n: int,
                     rng: np.random.Generator) -> np.ndarray:
    """Per-local-step runtime of n rounds: (max_i Σ_h X_ih + D) / H."""
    if H == 1:
        slowest = sample_order_statistic(delay, m, m, rng, n)
    elif isinstance(delay, Exponential):
        # Σ_h X_ih = HΔ + Gamma(H, λ): the maximum of m is an exact order statistic of the Gamma.
        g = stats.gamma(a=H, scale=1.0 / delay.rate)
        slowest = H * delay.shift + g.isf(rng.beta(1, m, n))
    else:
        slowest = np.empty(n)
        rows = max(1, _CHUNK // (m * H))
        for s in range(0, n, rows):
            b = min(rows, n - s)
            slowest[s:s + b] = delay.sample(rng, (b, m, H)).sum(axis=2).max(axis=1)
    return (slowest + D) / H


# ---------------------------------------------------------------------------------------
# renewal schemes: long runs in lockstep


def _kasync_trace(delay: Delay, m: int, K: int, R: int, n: int, rng: np.random.Generator,
                  record: bool) -> tuple[UpdateTrace, np.ndarray]:
    """k-async: the K workers with the earliest finish times push, wait for the update at
    the K-th push, then restart on the new parameters; the others are not interrupted.

    Returns the trace and a (R, n) per-update sum of staleness (for summaries).
    """
    finish = delay.sample(rng, (R, m))
    read = np.zeros((R, m), dtype=np.int64)
    rows = np.arange(R)[:, None]
    times = np.empty((R, n))
    stale_sum = np.empty((R, n))
    fresh = np.empty((R, n))
    workers = np.empty((R, n, K), dtype=np.int32) if record else None
    staleness = np.empty((R, n, K), dtype=np.int32) if record else None
    everyone = np.broadcast_to(np.arange(m), (R, m))
    for j in range(n):
        idx = everyone if K == m else np.argpartition(finish, K - 1, axis=1)[:, :K]
        f = finish[rows, idx]
        if record:
            order = np.argsort(f, axis=1)
            idx = np.take_along_axis(idx, order, axis=1)
            f = np.take_along_axis(f, order, axis=1)
            t = f[:, -1]
        else:
            t = f.max(axis=1)
        st = j - read[rows, idx]
        times[:, j] = t
        stale_sum[:, j] = st.sum(axis=1)
        fresh[:, j] = (st == 0).sum(axis=1)
        if record:
            workers[:, j] = idx
            staleness[:, j] = st
        read[rows, idx] = j + 1
        finish[rows, idx] = t[:, None] + delay.sample(rng, (R, K))
    trace = UpdateTrace(times, workers, staleness, np.ones(K, dtype=bool))
    return trace, np.stack([stale_sum, fresh])


def _kbatch_async_trace(delay: Delay, m: int, K: int, R: int, n: int, rng: np.random.Generator,
                        record: bool) -> tuple[UpdateTrace, np.ndarray]:
    """k-batch-async (and async, K = 1): nobody waits, so worker i's completions are the
    cumulative sums of its own i.i.d. delays; the pushes are their merge in time order and
    every K-th push is an update.  A gradient pushed as push r was computed on the version
    read just after the worker's previous push r' (⌊(r'+1)/K⌋ updates done), and is used in
    update ⌊r/K⌋, so its staleness is ⌊r/K⌋ − ⌊(r'+1)/K⌋.
    """
    P = n * K
    c = int(math.ceil(P / m * 1.05)) + 2
    S = np.cumsum(delay.sample(rng, (R, m, c)), axis=2)
    while True:
        horizon = S[:, :, -1].min(axis=1)
        known = (S <= horizon[:, None, None]).sum(axis=(1, 2))
        if known.min() >= P:
            break
        # extend every worker's path: the same processes, further in time
        more = max(2, int(math.ceil(c * 0.5)))
        S = np.concatenate([S, S[:, :, -1:] + np.cumsum(delay.sample(rng, (R, m, more)), axis=2)], axis=2)
        c += more
    flat = S.reshape(R, m * c)
    order = np.argsort(flat, axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(m * c), (R, m * c)), axis=1)
    used = order[:, :P]
    push_time = np.take_along_axis(flat, used, axis=1)
    seq = used % c
    prev_rank = np.take_along_axis(rank, np.maximum(used - 1, 0), axis=1)
    read_version = np.where(seq > 0, (prev_rank + 1) // K, 0)
    update_of_push = np.arange(P) // K
    st = (update_of_push[None, :] - read_version).reshape(R, n, K)
    times = push_time[:, K - 1::K]
    summary = np.stack([st.sum(axis=2), (st == 0).sum(axis=2)]).astype(float)
    trace = UpdateTrace(times)
    if record:
        trace.workers = (used // c).astype(np.int32).reshape(R, n, K)
        trace.staleness = st.astype(np.int32)
        ra = np.zeros(K, dtype=bool)
        ra[-1] = True
        trace.reads_after_update = ra
    return trace, summary


def _renewal_engine(scheme: Scheme) -> Callable[..., tuple[UpdateTrace, np.ndarray]]:
    if isinstance(scheme, KAsync) and scheme.K > 1:
        return _kasync_trace
    return _kbatch_async_trace  # async, k-async with K = 1 (the same process), k-batch-async


def simulate_updates(scheme: Scheme, delay: Delay, updates: int, replicas: int,
                     seed: int | None | np.random.Generator = None) -> UpdateTrace:
    """``updates`` updates of ``replicas`` independent runs of the scheme, from time 0.

    For the fresh-gradient schemes the updates of one run are independent and the trace
    holds only their times (cumulative sums of per-iteration runtimes); for local SGD an
    "update" is one averaging round (H local steps).  For the renewal schemes it also
    holds the workers and staleness of every gradient (see :class:`UpdateTrace`).
    """
    rng = _rng(seed)
    n = int(updates)
    R = int(replicas)
    if isinstance(scheme, (Async, KAsync, KBatchAsync)):
        engine = _renewal_engine(scheme)
        trace, _ = engine(delay, scheme.m, scheme.grads_per_update, R, n, rng, True)
        return trace
    per = _iid_times(scheme, delay, R * n, rng)
    if isinstance(scheme, LocalSGD):
        per = per * scheme.H  # round length, not per-step
    return UpdateTrace(np.cumsum(per.reshape(R, n), axis=1))


def _iid_times(scheme: Scheme, delay: Delay, n: int, rng: np.random.Generator) -> np.ndarray:
    if isinstance(scheme, KSync):
        return sample_order_statistic(delay, scheme.K, scheme.m, rng, n)
    if isinstance(scheme, Sync):
        return sample_order_statistic(delay, scheme.m, scheme.m, rng, n)
    if isinstance(scheme, KBatchSync):
        if scheme.K == 1:
            return sample_order_statistic(delay, 1, scheme.m, rng, n)
        return _kbatch_sync_times(delay, scheme.m, scheme.K, n, rng)
    if isinstance(scheme, LocalSGD):
        return _local_sgd_times(delay, scheme.m, scheme.H, scheme.comm_delay, n, rng)
    raise TypeError(f"not an i.i.d.-iteration scheme: {scheme!r}")  # pragma: no cover


# ---------------------------------------------------------------------------------------
# runtime per iteration


def _t95(dof: int) -> float:
    return float(stats.t.ppf(0.975, max(dof, 1)))


def _layout(scheme: Scheme, iterations: int) -> tuple[int, int, int, int]:
    """Replicas R, warm-up w and measured updates n per replica, batches per replica B.

    Warm-up lets every worker restart several times (5·⌈m/K⌉ updates, at least 10% of the
    run); R·B ≥ 32 batch means give the confidence interval.
    """
    m, K = scheme.m, scheme.grads_per_update
    R_cap = max(4, min(256, 2**16 // m))
    R = int(min(R_cap, max(4, iterations // 200)))
    B = max(1, -(-32 // R))
    n = max(B * 4, -(-iterations // R))
    n = -(-n // B) * B
    w = max(5 * -(-m // K), n // 10, 10)
    return R, w, n, B


def _heavy_note(delay: Delay) -> str:
    if math.isinf(delay.mean):
        return "E[X] is infinite: the simulated mean does not converge and the interval is meaningless"
    if math.isinf(delay.var):
        return "Var[X] is infinite: the confidence interval is unreliable (heavy tail)"
    return ""


def iteration_cost(scheme: Scheme) -> float:
    """Rough cost of one simulated iteration in array-element operations (for work caps)."""
    m, K = scheme.m, scheme.grads_per_update
    if isinstance(scheme, (Sync, KSync)):
        return 8.0
    if isinstance(scheme, KBatchSync):
        return 8.0 if K == 1 else 4.0 * m * (-(-K // m) + 1)
    if isinstance(scheme, LocalSGD):
        return 8.0 if scheme.H == 1 else 2.0 * m * scheme.H
    if isinstance(scheme, KAsync) and K > 1:
        return 12.0 * m + 40.0 * K
    return 60.0 * K * max(1.0, math.log2(m * 2))


def simulate_runtime(scheme: Scheme, delay: Delay, iterations: int = 100_000,
                     seed: int | None = None, keep_times: bool = True) -> RuntimeSample:
    """Monte Carlo mean runtime per iteration with a 95% confidence interval.

    sync/k-sync/k-batch-sync/local-sgd: ``iterations`` independent iterations, t-interval.
    async/k-async/k-batch-async: R replicas of a long run, warm-up dropped, batch means;
    the reported ``iterations`` (measured updates, R·n) is at least the number asked.
    """
    iterations = ITERATIONS.check(iterations, "iterations")
    if not isinstance(scheme, Scheme):
        raise ParameterError("scheme", f"expected a Scheme (got {type(scheme).__name__})")
    if not isinstance(delay, Delay):
        raise ParameterError("delay", f"expected a Delay (got {type(delay).__name__})")
    rng = _rng(seed)
    note = _heavy_note(delay)
    if isinstance(scheme, (Async, KAsync, KBatchAsync)):
        return _simulate_renewal(scheme, delay, iterations, seed, rng, keep_times, note)
    times = _iid_times(scheme, delay, iterations, rng)
    mean = float(times.mean())
    std = float(times.std(ddof=1)) if iterations > 1 else math.nan
    hw = _t95(iterations - 1) * std / math.sqrt(iterations) if iterations > 1 else math.inf
    if isinstance(scheme, (Sync, KSync)) or (isinstance(scheme, KBatchSync) and scheme.K == 1) \
            or (isinstance(scheme, LocalSGD) and scheme.H == 1):
        method = "exact order-statistic sampling F⁻¹(Beta(k, n−k+1))"
    elif isinstance(scheme, LocalSGD):
        method = ("max of m Gamma(H, λ) sums by order-statistic sampling" if isinstance(delay, Exponential)
                  else "per-round sums of H delays, max over m workers")
    else:
        method = "per-iteration superposition of m renewal processes (K-th completion)"
    return RuntimeSample(mean=mean, ci95=(mean - hw, mean + hw), iterations=iterations, seed=seed,
                         method=method, times=times if keep_times else None, std=std,
                         staleness_mean=None, fresh_fraction=None, note=note)


def _simulate_renewal(scheme: Scheme, delay: Delay, iterations: int, seed: int | None,
                      rng: np.random.Generator, keep_times: bool, note: str) -> RuntimeSample:
    R, w, n, B = _layout(scheme, iterations)
    engine = _renewal_engine(scheme)
    K = scheme.grads_per_update
    # replicas in groups, so no array exceeds ~_CHUNK elements per K
    per_replica = (w + n) * max(K, 1) * (1 if engine is _kasync_trace else 3)
    group = max(1, min(R, _CHUNK // max(per_replica, 1)))
    intervals, stale_sum, fresh, count = [], 0.0, 0.0, 0
    for g0 in range(0, R, group):
        r = min(group, R - g0)
        trace, summary = engine(delay, scheme.m, K, r, w + n, rng, False)
        t = trace.times[:, w - 1:]
        intervals.append(np.diff(t, axis=1))
        stale_sum += float(summary[0][:, w:].sum())
        fresh += float(summary[1][:, w:].sum())
        count += r * n * K
    x = np.concatenate(intervals)  # (R, n)
    batch_means = x.reshape(R * B, n // B).mean(axis=1)
    mean = float(batch_means.mean())
    nb = batch_means.size
    hw = _t95(nb - 1) * float(batch_means.std(ddof=1)) / math.sqrt(nb)
    what = ("merged renewal processes (workers never wait)" if engine is _kbatch_async_trace
            else "update-by-update run, K pushers restart")
    method = (f"{what}; {R} replicas × {n} updates after {w} warm-up, "
              f"95% CI from {nb} batch means")
    return RuntimeSample(mean=mean, ci95=(mean - hw, mean + hw), iterations=R * n, seed=seed,
                         method=method, times=x.ravel() if keep_times else None,
                         std=float(x.std(ddof=1)), staleness_mean=stale_sum / count,
                         fresh_fraction=fresh / count, note=note)


# ---------------------------------------------------------------------------------------
# timeline: per-worker detail for a few iterations (the Gantt chart)

OUTCOMES = ("used", "stale", "cancelled", "waiting", "communicating", "in flight")


@dataclass(eq=False)
class Timeline:
    """Per-worker intervals of the first few iterations of one run.

    Each interval is (worker, start, end, outcome, staleness); outcome is one of
    ``OUTCOMES``: a gradient that was used fresh or stale, work cancelled at an update,
    a worker waiting idle, the local-SGD averaging round, or work still running when the
    window ends.  ``update_times`` are the times of the updates.
    """

    scheme: Scheme
    delay: Delay
    worker: np.ndarray
    start: np.ndarray
    end: np.ndarray
    outcome: np.ndarray
    staleness: np.ndarray
    update_times: np.ndarray

    def rows(self) -> list[dict[str, object]]:
        return [{"worker": int(w), "start": float(s), "end": float(e), "outcome": str(o),
                 "staleness": int(st)}
                for w, s, e, o, st in zip(self.worker, self.start, self.end, self.outcome,
                                          self.staleness)]


class _Intervals:
    def __init__(self) -> None:
        self.rows: list[tuple[int, float, float, str, int]] = []

    def add(self, w: int, s: float, e: float, outcome: str, staleness: int = 0) -> None:
        if e > s or outcome in ("used", "stale"):
            self.rows.append((int(w), float(s), float(e), outcome, int(staleness)))


def simulate_timeline(scheme: Scheme, delay: Delay, iterations: int = 5,
                      seed: int | None = None) -> Timeline:
    """Event-by-event run of ``iterations`` updates with every worker's intervals recorded.

    m ≤ 200 and iterations ≤ 200 (it is for drawing, not for estimating).
    """
    iterations = Domain("iterations", 1, TIMELINE_MAX_ITERATIONS, integer=True).check(iterations)
    if scheme.m > TIMELINE_MAX_M:
        raise ParameterError("m", f"the timeline draws at most {TIMELINE_MAX_M} workers (got {scheme.m})")
    rng = _rng(seed)
    out = _Intervals()
    m = scheme.m
    updates: list[float] = []
    if isinstance(scheme, (Sync, KSync, KBatchSync)):
        K = scheme.grads_per_update
        t0 = 0.0
        for _ in range(iterations):
            if isinstance(scheme, KBatchSync):
                t0 = _timeline_kbatch_sync(delay, m, K, t0, rng, out)
            else:
                x = t0 + delay.sample(rng, m)
                tK = np.sort(x)[K - 1]
                for i in range(m):
                    if x[i] <= tK:
                        out.add(i, t0, x[i], "used")
                        out.add(i, x[i], tK, "waiting")
                    else:
                        out.add(i, t0, tK, "cancelled")
                t0 = tK
            updates.append(t0)
    elif isinstance(scheme, LocalSGD):
        t0 = 0.0
        for _ in range(iterations):
            steps = delay.sample(rng, (m, scheme.H))
            ends = t0 + np.cumsum(steps, axis=1)
            slowest = ends[:, -1].max()
            for i in range(m):
                starts = np.concatenate([[t0], ends[i, :-1]])
                for s, e in zip(starts, ends[i]):
                    out.add(i, s, e, "used")
                out.add(i, ends[i, -1], slowest, "waiting")
                out.add(i, slowest, slowest + scheme.comm_delay, "communicating")
            t0 = slowest + scheme.comm_delay
            updates.append(t0)
    else:
        updates = _timeline_async(scheme, delay, iterations, rng, out)
    rows = out.rows
    return Timeline(scheme=scheme, delay=delay,
                    worker=np.array([r[0] for r in rows], dtype=int),
                    start=np.array([r[1] for r in rows]), end=np.array([r[2] for r in rows]),
                    outcome=np.array([r[3] for r in rows], dtype=object),
                    staleness=np.array([r[4] for r in rows], dtype=int),
                    update_times=np.array(updates))


def _timeline_kbatch_sync(delay: Delay, m: int, K: int, t0: float, rng: np.random.Generator,
                          out: _Intervals) -> float:
    # each worker computes back to back on the same parameters until K gradients exist
    starts = np.full(m, t0)
    ends = t0 + delay.sample(rng, m)
    done: list[tuple[float, int, float]] = []
    while len(done) < K:
        i = int(np.argmin(ends))
        done.append((ends[i], i, starts[i]))
        starts[i] = ends[i]
        ends[i] = starts[i] + delay.sample(rng)
    T = done[-1][0]
    for e, i, s in done:
        out.add(i, s, e, "used")
    for i in range(m):
        out.add(i, starts[i], T, "cancelled")
    return T


def _timeline_async(scheme: Scheme, delay: Delay, iterations: int, rng: np.random.Generator,
                    out: _Intervals) -> list[float]:
    m, K = scheme.m, scheme.grads_per_update
    waits = isinstance(scheme, KAsync)  # k-async and its K = 1 case behave the same
    start = np.zeros(m)
    finish = delay.sample(rng, m)
    read = np.zeros(m, dtype=int)
    version = 0
    pushed: list[tuple[int, float]] = []  # (worker, push time) since the last update
    updates: list[float] = []
    while version < iterations:
        busy = np.where(np.isinf(start), np.inf, finish)
        i = int(np.argmin(busy))
        t = float(finish[i])
        st = version - read[i]
        out.add(i, start[i], t, "used" if st == 0 else "stale", st)
        pushed.append((i, t))
        if waits:
            start[i] = np.inf  # waiting for the update
        else:
            read[i] = version + (1 if len(pushed) == K else 0)
            start[i] = t
            finish[i] = t + delay.sample(rng)
        if len(pushed) == K:
            version += 1
            updates.append(t)
            if waits:
                for w, tp in pushed:
                    out.add(w, tp, t, "waiting")
                    read[w] = version
                    start[w] = t
                    finish[w] = t + delay.sample(rng)
            pushed = []
    t_end = updates[-1]
    for i in range(m):
        if np.isfinite(start[i]) and start[i] < t_end:
            out.add(i, start[i], t_end, "in flight")
    return updates

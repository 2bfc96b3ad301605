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
from typing import Callable, Iterator

import numpy as np
from scipy import stats

from .delays import Delay, Exponential
from .params import Domain, ParameterError
from .schemes import (Async, KAsync, KBatchAsync, KBatchSync, KSync, LocalSGD, Scheme, Sync)

__all__ = [
    "RuntimeSample", "UpdateTrace", "Timeline", "simulate_runtime", "simulate_updates",
    "simulate_timeline", "sample_order_statistic", "iteration_cost", "simulation_cost", "ITERATIONS", "SEED",
    "MAX_ITERATIONS",
]

MAX_ITERATIONS = 10_000_000
ITERATIONS = Domain("iterations", 1, MAX_ITERATIONS, integer=True, doc="Monte Carlo iterations")
SEED = Domain("seed", 0, 2**63 - 1, integer=True, doc="random seed")
TIMELINE_MAX_M = 200
TIMELINE_MAX_ITERATIONS = 200

#: floats in one working array; chunks are sized to this (16 MiB)
_CHUNK = 2**21
#: pushes simulated in one renewal replica (its working arrays are a few times this)
_MAX_PUSHES_PER_REPLICA = 2**19
#: per-iteration times kept in a RuntimeSample (the first ones; the mean uses all)
MAX_KEPT_TIMES = 1_000_000


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


def _kbatch_sync_depth(delay: Delay, m: int, K: int, rng: np.random.Generator) -> int:
    """Completions per worker to draw so that path extension is rarely needed: the most any
    worker completed before the K-th point in a small pilot, plus a margin."""
    c = 2 * (-(-K // m) + 2)
    pilot = max(8, min(64, _CHUNK // (m * c)))
    S = np.cumsum(delay.sample(rng, (pilot, m, c)), axis=2)
    T = np.partition(S.reshape(pilot, -1), K - 1, axis=1)[:, K - 1]
    done = (S <= T[:, None, None]).sum(axis=2).max()
    return int(done) + 2


def _kbatch_sync_times(delay: Delay, m: int, K: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """K-th point of m superposed renewal processes started at 0, for n independent iterations."""
    out = np.empty(n)
    c = _kbatch_sync_depth(delay, m, K, rng)
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


def _kasync_blocks(delay: Delay, m: int, K: int, R: int, rng: np.random.Generator,
                   record: bool, total: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
    """k-async, R replicas in lockstep, yielded in blocks of updates for as long as asked.

    The K workers with the earliest finish times push, wait for the update at the K-th
    push, then restart on the new parameters; the others are not interrupted.  Each block is
    (times (R, b), staleness (R, b, K), workers (R, b, K) in push order or None); the blocks
    add up to ``total`` updates.
    """
    finish = delay.sample(rng, (R, m)).ravel()  # flat: worker i of replica r at r·m + i
    read = np.zeros(R * m, dtype=np.int64)
    base = (np.arange(R) * m)[:, None]
    fin2 = finish.reshape(R, m)
    everyone = np.broadcast_to(np.arange(m), (R, m))
    block = int(max(16, min(4096, _CHUNK // (R * (K + 2)))))
    j = 0
    while j < total:
        b = min(block, total - j)
        draws = delay.sample(rng, (b, R, K))  # one fresh job per pusher per update
        times = np.empty((R, b))
        stale = np.empty((b, R, K), dtype=np.int64)
        workers = np.empty((b, R, K), dtype=np.int32) if record else None
        for jj in range(b):
            idx = everyone if K == m else np.argpartition(fin2, K - 1, axis=1)[:, :K]
            flat = (idx + base).ravel()
            f = finish[flat].reshape(R, K)
            if record:
                order = np.argsort(f, axis=1)
                idx = np.take_along_axis(idx, order, axis=1)
                f = np.take_along_axis(f, order, axis=1)
                flat = (idx + base).ravel()
                workers[jj] = idx
            t = f.max(axis=1)
            times[:, jj] = t
            stale[jj] = j - read[flat].reshape(R, K)
            read[flat] = j + 1
            finish[flat] = (t[:, None] + draws[jj]).ravel()
            j += 1
        yield times, stale.transpose(1, 0, 2), (workers.transpose(1, 0, 2) if record else None)


def _kasync_trace(delay: Delay, m: int, K: int, R: int, n: int, rng: np.random.Generator,
                  record: bool) -> UpdateTrace:
    """The first n updates of :func:`_kasync_blocks` as one trace."""
    ts, ss, ws = [], [], []
    got = 0
    for times, stale, workers in _kasync_blocks(delay, m, K, R, rng, record, n):
        take = min(times.shape[1], n - got)
        ts.append(times[:, :take])
        ss.append(stale[:, :take])
        if record:
            ws.append(workers[:, :take])
        got += take
        if got >= n:
            break
    trace = UpdateTrace(np.concatenate(ts, axis=1))
    trace.staleness = np.concatenate(ss, axis=1).astype(np.int32)
    if record:
        trace.workers = np.concatenate(ws, axis=1)
        trace.reads_after_update = np.ones(K, dtype=bool)
    return trace


def _kbatch_async_trace(delay: Delay, m: int, K: int, R: int, n: int, rng: np.random.Generator,
                        record: bool) -> UpdateTrace:
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
    order = np.argsort(flat, axis=1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(m * c), (R, m * c)), axis=1)
    used = order[:, :P]
    push_time = np.take_along_axis(flat, used, axis=1)
    seq = used % c
    prev_rank = np.take_along_axis(rank, np.maximum(used - 1, 0), axis=1)
    read_version = np.where(seq > 0, (prev_rank + 1) // K, 0)
    update_of_push = np.arange(P) // K
    st = (update_of_push[None, :] - read_version).reshape(R, n, K)
    trace = UpdateTrace(push_time[:, K - 1::K], staleness=st.astype(np.int32))
    if record:
        trace.workers = (used // c).astype(np.int32).reshape(R, n, K)
        ra = np.zeros(K, dtype=bool)
        ra[-1] = True
        trace.reads_after_update = ra
    return trace


def _renewal_engine(scheme: Scheme) -> Callable[..., UpdateTrace]:
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
        return _renewal_engine(scheme)(delay, scheme.m, scheme.grads_per_update, R, n, rng, True)
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

    Every worker starts a fresh job at time 0, and with a decreasing hazard fresh jobs are
    shorter than stationary in-flight ones; the in-flight ages (and so the staleness) take
    about 20 pushes per worker to settle.  The warm-up is 40 pushes per worker (40·⌈m/K⌉
    updates, at least 10% of the run); each replica then measures at least as many updates
    again, and R·B ≥ 32 batch means give the confidence interval.
    """
    m, K = scheme.m, scheme.grads_per_update
    cycle = -(-m // K)
    # 40 pushes per worker, but at most _MAX_PUSHES_PER_REPLICA/2 pushes (≥ 10 per worker)
    w = max(10 * cycle, min(40 * cycle, _MAX_PUSHES_PER_REPLICA // (2 * K)))
    if _renewal_engine(scheme) is _kasync_trace:
        # stepped update by update: many replicas in lockstep amortise the per-step overhead
        R_cap = max(4, min(256, 2**16 // m))
        R = int(min(R_cap, max(4, iterations // max(w, 200))))
    else:
        # fully vectorised: every replica pays its warm-up, so few long replicas are cheapest
        R = int(min(8, max(4, iterations // (10 * w))))
    while True:
        B = max(1, -(-32 // R))
        n = max(B * 4, -(-iterations // R))
        n = -(-n // B) * B
        w = max(w, n // 10)
        # bound one replica's run: split very long runs over more replicas
        if (w + n) * K <= _MAX_PUSHES_PER_REPLICA or n <= w:
            return R, w, n, B
        R *= 2


def _heavy_note(delay: Delay) -> str:
    if math.isinf(delay.mean):
        return "E[X] is infinite: the simulated mean does not converge and the interval is meaningless"
    if math.isinf(delay.var):
        return "Var[X] is infinite: the confidence interval is unreliable (heavy tail)"
    return ""


def iteration_cost(scheme: Scheme) -> float:
    """Cost of one simulated iteration, calibrated to about a nanosecond per unit on a 2-core
    development machine (benchmarks: order statistics ~200 ns per iteration, superposition
    ~300 ns per simulated completion, k-async ~1.5 ns per worker and update)."""
    m, K = scheme.m, scheme.grads_per_update
    if isinstance(scheme, (Sync, KSync)):
        return 200.0
    if isinstance(scheme, KBatchSync):
        return 200.0 if K == 1 else 300.0 * m * (-(-K // m) + 1)
    if isinstance(scheme, LocalSGD):
        return 200.0 if scheme.H == 1 else 36.0 * m * scheme.H
    if isinstance(scheme, KAsync) and K > 1:
        return 18.0 * m + 60.0 * K
    return 30.0 * K * max(1.0, math.log2(m * 2))


def simulation_cost(scheme: Scheme, iterations: int) -> float:
    """Array-element operations of :func:`simulate_runtime` for ``iterations``, warm-up included
    (the renewal schemes run every replica through 10–40 pushes per worker first)."""
    if isinstance(scheme, (Async, KAsync, KBatchAsync)):
        R, w, n, _ = _layout(scheme, iterations)
        return iteration_cost(scheme) * R * (w + n)
    return iteration_cost(scheme) * iterations


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
    kept: list[np.ndarray] = []
    total = total2 = 0.0
    shift = None
    for s0 in range(0, iterations, _CHUNK):
        x = _iid_times(scheme, delay, min(_CHUNK, iterations - s0), rng)
        if shift is None:
            shift = float(x[0])  # centre the sums for a stable variance
        total += float((x - shift).sum())
        total2 += float(((x - shift) ** 2).sum())
        if keep_times and s0 < MAX_KEPT_TIMES:
            kept.append(x[: MAX_KEPT_TIMES - s0])
    times = np.concatenate(kept) if kept else None
    mean = shift + total / iterations
    var = (total2 - total**2 / iterations) / (iterations - 1) if iterations > 1 else math.nan
    std = math.sqrt(max(var, 0.0)) if iterations > 1 else math.nan
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
                         method=method, times=times, std=std,
                         staleness_mean=None, fresh_fraction=None, note=note)


class _BatchMeans:
    """Streams update times, block by block, into batch sums of the post-warm-up intervals
    (B batches of n/B updates per replica), staleness totals and the first kept intervals."""

    def __init__(self, R: int, w: int, n: int, B: int, keep: bool) -> None:
        self.R, self.w, self.n, self.B, self.L = R, w, n, B, n // B
        self.sums = np.zeros((R, B))
        self.prev = np.zeros(R)
        self.j = 0
        self.total = self.total2 = self.stale = self.fresh = 0.0
        self.kept: list[np.ndarray] = []
        self.n_kept = 0 if keep else MAX_KEPT_TIMES

    def add(self, times: np.ndarray, stale: np.ndarray) -> bool:
        """Take a block (R, b) of update times and (R, b, K) staleness; True when done."""
        b = times.shape[1]
        x = np.diff(np.concatenate([self.prev[:, None], times], axis=1), axis=1)
        self.prev = times[:, -1].copy()
        j = np.arange(self.j, self.j + b)
        self.j += b
        sel = (j >= self.w) & (j < self.w + self.n)
        if sel.any():
            xs, js = x[:, sel], j[sel] - self.w
            ids = (js // self.L)[None, :] + (np.arange(self.R) * self.B)[:, None]
            self.sums += np.bincount(ids.ravel(), xs.ravel(), self.R * self.B).reshape(self.R, self.B)
            self.total += float(xs.sum())
            self.total2 += float((xs * xs).sum())
            st = stale[:, sel]
            self.stale += float(st.sum())
            self.fresh += float((st == 0).sum())
            if self.n_kept < MAX_KEPT_TIMES:
                self.kept.append(xs.ravel()[: MAX_KEPT_TIMES - self.n_kept])
                self.n_kept += self.kept[-1].size
        return self.j >= self.w + self.n


def _simulate_renewal(scheme: Scheme, delay: Delay, iterations: int, seed: int | None,
                      rng: np.random.Generator, keep_times: bool, note: str) -> RuntimeSample:
    R, w, n, B = _layout(scheme, iterations)
    K = scheme.grads_per_update
    acc: list[_BatchMeans] = []
    if _renewal_engine(scheme) is _kasync_trace:
        # all replicas in lockstep, streamed in blocks of updates: memory does not grow with n
        bm = _BatchMeans(R, w, n, B, keep_times)
        for times, stale, _ in _kasync_blocks(delay, scheme.m, K, R, rng, False, w + n):
            if bm.add(times, stale):
                break
        acc.append(bm)
        what = "update-by-update run, K pushers restart"
    else:
        per_replica = scheme.m * (int(math.ceil((w + n) * K / scheme.m * 1.05)) + 2)
        group = max(1, min(R, _CHUNK // max(per_replica, 1)))
        for g0 in range(0, R, group):
            r = min(group, R - g0)
            tr = _kbatch_async_trace(delay, scheme.m, K, r, w + n, rng, False)
            bm = _BatchMeans(r, w, n, B, keep_times and g0 == 0)
            bm.add(tr.times, tr.staleness)
            acc.append(bm)
        what = "merged renewal processes (workers never wait)"
    means = np.concatenate([a.sums.ravel() for a in acc]) / (n // B)
    mean = float(means.mean())
    nb = means.size
    hw = _t95(nb - 1) * float(means.std(ddof=1)) / math.sqrt(nb)
    N = R * n
    total, total2 = sum(a.total for a in acc), sum(a.total2 for a in acc)
    std = math.sqrt(max(total2 - total**2 / N, 0.0) / max(N - 1, 1))
    kept = [k for a in acc for k in a.kept]
    method = (f"{what}; {R} replicas × {n} updates after {w} warm-up, "
              f"95% CI from {nb} batch means")
    return RuntimeSample(mean=mean, ci95=(mean - hw, mean + hw), iterations=N, seed=seed,
                         method=method, times=np.concatenate(kept)[:MAX_KEPT_TIMES] if kept else None,
                         std=std, staleness_mean=sum(a.stale for a in acc) / (N * K),
                         fresh_fraction=sum(a.fresh for a in acc) / (N * K), note=note)


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

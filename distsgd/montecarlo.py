"""Vectorised Monte Carlo of the seven schemes' timing processes (DESIGN §2).

Three engines, each the cheapest *exact* method for what is asked:

* **order statistics** (sync, k-sync, local SGD with H = 1): ``X_{k:n} = F⁻¹(U_{k:n})`` with
  ``U_{k:n} ~ Beta(k, n−k+1)`` — O(1) per iteration whatever m is.
* **per-iteration superposition** (k-batch-sync; local SGD): every worker's completion
  times on the current parameters, the K-th point overall; paths are *extended*, never
  redrawn, when a worker might have finished more often than drawn, so the law is exact.
* **long runs of the renewal processes** (async, k-async, k-batch-async), R independent
  replicas.  k-batch-async (and async) have workers that never wait, so each worker is an
  independent renewal process and the run is a merge of m cumulative sums, streamed in
  windows of time (memory does not grow with the run); k-async steps update by update,
  restarting the K pushers (argpartition over m), R replicas in lockstep.

The renewal engines return an :class:`UpdateTrace` — update times, the workers whose
gradients form each update, and each gradient's staleness — which both
:func:`simulate_runtime` and the SGD simulation (``sgd.py``) consume, so the scheme
logic lives here once.

Bounds (DESIGN §6, distsgd/limits.py): every call works in chunks of bounded size, so its
memory stays well under ``limits.MEMORY_BYTES`` whatever it is asked; and a call whose
predicted cost (:func:`simulation_cost`, ≈ ns) exceeds its budget (default
``limits.TIME_BUDGET``, ≈ 60 s) is refused with a :class:`ParameterError` naming
``iterations`` (and how many would fit) or, when even the smallest run does not fit, the
scheme parameter that makes it too big.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np
from scipy import stats

from . import limits
from . import random as _random
from .delays import Delay, Exponential, _size, check_delay
from .params import Domain, ParameterError
from .schemes import KAsync, KBatchSync, KSync, LocalSGD, Scheme, Sync, check_order_statistic, check_scheme

__all__ = [
    "RuntimeSample", "UpdateTrace", "Timeline", "simulate_runtime", "simulate_updates",
    "simulate_timeline", "timeline_max_iterations", "sample_order_statistic", "iteration_cost", "simulation_cost", "ITERATIONS", "SEED",
    "MAX_ITERATIONS",
]

MAX_ITERATIONS = limits.MAX_ITERATIONS
ITERATIONS = Domain("iterations", limits.MIN_ITERATIONS, MAX_ITERATIONS, integer=True,
                    doc="Monte Carlo iterations (≥ 2: the confidence interval needs a variance)")
SEED = _random.SEED
TIMELINE_MAX_M = limits.TIMELINE_MAX_M
TIMELINE_MAX_ITERATIONS = limits.TIMELINE_MAX_ITERATIONS
#: replicas and updates of simulate_updates
REPLICAS = Domain("replicas", 1, limits.MAX_TRACE_VALUES, integer=True, doc="independent runs")
UPDATES = Domain("updates", 1, limits.MAX_TRACE_VALUES, integer=True, doc="updates per run")
#: a cost budget (cost units ≈ ns); the default is limits.TIME_BUDGET
BUDGET = Domain("budget", 0.0, math.inf, low_open=True, doc="cost budget of one call (≈ ns)")

#: floats in one working array; chunks are sized to this (16 MiB)
_CHUNK = limits.CHUNK
#: per-iteration times kept in a RuntimeSample (the first ones; the mean uses all)
MAX_KEPT_TIMES = limits.MAX_KEPT_TIMES


def _rng(seed: _random.Seed) -> np.random.Generator:
    """A Generator from a seed (int, SeedSequence, Generator or None): :func:`distsgd.random.generator`."""
    return _random.generator(seed)


def _check_model(scheme: object, delay: object) -> None:
    check_scheme(scheme)
    check_delay(delay)


def _check_seed(seed: object) -> None:
    if not isinstance(seed, (np.random.Generator, np.random.SeedSequence)) and seed is not None:
        SEED.check(seed, "seed")


# ---------------------------------------------------------------------------------------
# results


@dataclass(frozen=True, eq=False)
class RuntimeSample:
    """Monte Carlo estimate of the mean runtime per iteration (time between updates).

    ``ci95`` is a 95% confidence interval for the mean: the i.i.d. t-interval for schemes
    whose iterations are independent, batch means over independent replicas (post warm-up)
    for the renewal schemes; its lower end is clipped at 0 (a runtime is never negative).
    ``times`` holds the per-iteration runtimes that were used.  ``note`` warns when the
    simulated statistic's mean or variance is infinite (heavy tails).
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


def sample_order_statistic(delay: Delay, k: int, n: int, rng: Any,
                           size: int | tuple[int, ...]) -> np.ndarray:
    """Exact draws of X_{k:n}: F⁻¹(U_{k:n}) with U_{k:n} ~ Beta(k, n−k+1).

    The upper half uses ``isf`` of 1 − U_{k:n} ~ Beta(n−k+1, k), so the maximum of many
    workers keeps its precision in the tail.  ``rng`` is a Generator or a seed.
    """
    check_delay(delay)
    k, n = check_order_statistic(k, n)
    rng = _rng(rng)
    size = _size(size)
    if k <= n - k + 1:
        return np.asarray(delay.ppf(rng.beta(k, n - k + 1, size)), dtype=float)
    return np.asarray(delay.isf(rng.beta(n - k + 1, k, size)), dtype=float)


def _kbatch_sync_depth(delay: Delay, m: int, K: int, rng: np.random.Generator) -> int:
    """Completions per worker to draw so that path extension is rarely needed: the most any
    worker completed before the K-th point in a small pilot, plus a margin."""
    c = 2 * (-(-K // m) + 2)
    pilot = max(1, min(64, _CHUNK // (m * c)))
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


def _kbatch_sync_times(delay: Delay, m: int, K: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """K-th point of m superposed renewal processes started at 0, for n independent iterations."""
    out = np.empty(n)
    c = _kbatch_sync_depth(delay, m, K, rng)
    rows = max(1, _CHUNK // (m * c))
    for s in range(0, n, rows):
        b = min(rows, n - s)
        S = np.cumsum(delay.sample(rng, (b, m, c)), axis=2)
        T = np.partition(S.reshape(b, -1), K - 1, axis=1)[:, K - 1]
        # some worker could have finished again before T: extend those paths (not redraw)
        for i in np.flatnonzero(T > S[:, :, -1].min(axis=1)):
            T[i] = _kbatch_sync_extend(delay, S[i], K, rng)
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
    elif m * H <= _CHUNK:
        slowest = np.empty(n)
        rows = max(1, _CHUNK // (m * H))
        for s in range(0, n, rows):
            b = min(rows, n - s)
            slowest[s:s + b] = delay.sample(rng, (b, m, H)).sum(axis=2).max(axis=1)
    else:
        # one round is more than a chunk: take the maximum over blocks of workers
        slowest = np.full(n, -np.inf)
        block = max(1, _CHUNK // H)
        for i in range(n):
            for w0 in range(0, m, block):
                b = min(block, m - w0)
                slowest[i] = max(slowest[i], float(delay.sample(rng, (b, H)).sum(axis=1).max()))
    return (slowest + D) / H


# ---------------------------------------------------------------------------------------
# renewal schemes: long runs


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
                order = np.argsort(f, axis=1, kind="stable")
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
    times = np.empty((R, n))
    staleness = np.empty((R, n, K), dtype=np.int32)
    workers = np.empty((R, n, K), dtype=np.int32) if record else None
    got = 0
    for t, stale, w in _kasync_blocks(delay, m, K, R, rng, record, n):
        b = t.shape[1]
        times[:, got:got + b] = t
        staleness[:, got:got + b] = stale
        if workers is not None:
            workers[:, got:got + b] = w
        got += b
    trace = UpdateTrace(times, staleness=staleness)
    if record:
        trace.workers = workers
        trace.reads_after_update = np.ones(K, dtype=bool)
    return trace


def _kbatch_async_stream(delay: Delay, m: int, K: int, pushes: int, rng: np.random.Generator,
                         window: int = limits.RENEWAL_WINDOW,
                         ) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """One run of k-batch-async (async: K = 1): its first ``pushes`` pushes in time order, in
    blocks ``(g0, t, w, prev)``: push g0 + i happens at t[i], by worker w[i], whose previous
    push was push prev[i] (−1 for its first).

    Nobody waits, so worker i's completions are the cumulative sums of its own i.i.d. delays.
    The run is merged window by window in time: each window has a goal time (the last one
    plus a step learned so that about ``window`` pushes fall in it); every worker whose drawn
    path ends before the goal draws more completions (doubling) until none does; then every
    completion up to the goal is known and emitted in time order, and the rest is carried
    over.  A worker whose time no longer moves (draws lost in rounding next to a large time)
    lowers the goal to its time, and too much drawn lowers it to the earliest path end, so the
    loop always ends and memory stays O(window + m).

    A push's previous push (hence its staleness) is read off the merged stream itself, by a
    stable sort by worker: where one worker's completion times tie (a zero draw, or one lost
    in rounding next to a large time) its pushes may merge in either order, but the stream
    stays consistent.  The old engine took the previous push from the draw order while a
    non-stable sort had merged tied pushes the other way round: negative staleness
    (Weibull k = 0.2).
    """
    last = np.zeros(m)                           # each worker's last drawn completion
    last_push = np.full(m, -1, dtype=np.int64)   # each worker's last emitted push
    wdtype = np.int16 if m < 2**15 else np.int32  # small ints: numpy sorts them by radix
    carry_t = np.empty(0)
    carry_w = np.empty(0, dtype=wdtype)
    ids = np.arange(m, dtype=wdtype)
    g0 = 0
    done_to = 0.0          # every push up to this time has been emitted
    rate = -1.0            # pushes per unit time, learned from the windows so far
    while g0 < pushes:
        want = min(window, pushes - g0)
        parts_t, parts_w = [carry_t], [carry_w]
        size = carry_t.size
        k = max(2, -(-want // m))
        if rate < 0:
            # first window: everyone draws k; the goal is the earliest path end
            new = np.cumsum(delay.sample(rng, (m, k)), axis=1)
            last = new[:, -1].copy()
            parts_t.append(new.ravel())
            parts_w.append(np.repeat(ids, k))
            size += m * k
            goal = float(last.min())
        else:
            goal = done_to + want / rate
            while True:
                need = np.flatnonzero(last < goal)
                if need.size == 0:
                    break
                if size > 4 * (window + m):
                    goal = float(last.min())  # enough drawn: emit what is known
                    continue
                kk = max(2, min(k, -(-(window + m) // need.size)))
                before = last[need]
                new = before[:, None] + np.cumsum(delay.sample(rng, (need.size, kk)), axis=1)
                last[need] = new[:, -1]
                parts_t.append(new.ravel())
                parts_w.append(np.repeat(ids[need], kk))
                size += new.size
                stuck = last[need] == before
                if stuck.any():
                    goal = min(goal, float(last[need][stuck].min()))
                k *= 2
        all_t = np.concatenate(parts_t)
        all_w = np.concatenate(parts_w)
        known = all_t <= goal
        t, w = all_t[known], all_w[known]
        carry_t, carry_w = all_t[~known], all_w[~known]
        order = np.argsort(t)  # ties between pushes may fall either way: see by_w below
        t, w = t[order], w[order]
        emitted = t.size
        elapsed = goal - done_to
        if elapsed > 0:
            rate = emitted / elapsed if emitted else (rate / 4 if rate > 0 else 1.0 / elapsed)
        elif rate < 0:
            rate = math.inf  # nothing learned yet (all at time 0): the next goal is the path ends
        if not math.isfinite(rate) or rate <= 0:
            rate = m / max(goal, 1e-300) if goal > 0 else 1e300
        done_to = goal
        if t.size > pushes - g0:
            t, w = t[:pushes - g0], w[:pushes - g0]
        E = t.size
        if E == 0:
            continue
        g = np.arange(g0, g0 + E, dtype=np.int64)
        # each worker's pushes in the order they have in the merged stream: a *stable* sort by
        # worker (radix for int16; unique keys otherwise), so prev is the worker's previous push
        # in the stream even where its times tie
        if w.dtype == np.int16:
            by_w = np.argsort(w, kind="stable")
        else:
            by_w = np.argsort(w.astype(np.int64) * E + np.arange(E))
        ws, gs = w[by_w], g[by_w]
        first = np.ones(E, dtype=bool)
        first[1:] = ws[1:] != ws[:-1]
        prev_s = np.empty(E, dtype=np.int64)
        prev_s[1:] = gs[:-1]
        prev_s[first] = last_push[ws[first]]
        prev = np.empty(E, dtype=np.int64)
        prev[by_w] = prev_s
        final = np.ones(E, dtype=bool)
        final[:-1] = first[1:]
        last_push[ws[final]] = gs[final]
        yield g0, t, w, prev
        g0 += E


def _push_staleness(g: np.ndarray, prev: np.ndarray, K: int) -> np.ndarray:
    """Push g is used in update ⌊g/K⌋ and was computed on the version read just after its
    worker's previous push g' (⌊(g'+1)/K⌋ updates done; 0 for a first push, g' = −1)."""
    return g // K - (prev + 1) // K


def _kbatch_async_trace(delay: Delay, m: int, K: int, R: int, n: int, rng: np.random.Generator,
                        record: bool) -> UpdateTrace:
    """k-batch-async (and async, K = 1): n updates of R independent runs (see
    :func:`_kbatch_async_stream`); every K-th push is an update."""
    P = n * K
    times = np.empty((R, n))
    staleness = np.empty((R, P), dtype=np.int32)
    workers = np.empty((R, P), dtype=np.int32) if record else None
    for r in range(R):
        for g0, t, w, prev in _kbatch_async_stream(delay, m, K, P, rng):
            g = np.arange(g0, g0 + t.size, dtype=np.int64)
            staleness[r, g0:g0 + t.size] = _push_staleness(g, prev, K)
            if workers is not None:
                workers[r, g0:g0 + t.size] = w
            ends = g % K == K - 1
            times[r, g[ends] // K] = t[ends]
    trace = UpdateTrace(times, staleness=staleness.reshape(R, n, K))
    if workers is not None:
        trace.workers = workers.reshape(R, n, K)
        ra = np.zeros(K, dtype=bool)
        ra[-1] = True
        trace.reads_after_update = ra
    return trace


def _renewal_engine(scheme: Scheme) -> Callable[..., UpdateTrace]:
    if isinstance(scheme, KAsync) and scheme.K > 1:
        return _kasync_trace
    return _kbatch_async_trace  # async, k-async with K = 1 (the same process), k-batch-async


def simulate_updates(scheme: Scheme, delay: Delay, updates: int, replicas: int,
                     seed: _random.Seed = None, *, budget: float | None = None) -> UpdateTrace:
    """``updates`` updates of ``replicas`` independent runs of the scheme, from time 0.

    For the fresh-gradient schemes the updates of one run are independent and the trace
    holds only their times (cumulative sums of per-iteration runtimes); for local SGD an
    "update" is one averaging round (H local steps).  For the renewal schemes it also
    holds the workers and staleness of every gradient (see :class:`UpdateTrace`).

    The trace holds at most ``limits.MAX_TRACE_VALUES`` values (replicas × updates × K) and
    its predicted cost must fit ``budget`` (default ``limits.TIME_BUDGET``); otherwise a
    ParameterError names ``updates`` or ``replicas`` and says how many would fit.
    """
    _check_model(scheme, delay)
    n = UPDATES.check(updates, "updates")
    R = REPLICAS.check(replicas, "replicas")
    _check_seed(seed)
    budget = limits.TIME_BUDGET if budget is None else BUDGET.check(budget, "budget")
    per_update = scheme.grads_per_update if scheme.renewal else 1
    cap = limits.MAX_TRACE_VALUES
    if R * n * per_update > cap:
        if n * per_update > cap:
            raise ParameterError("updates", f"a trace of {scheme.label} holds at most {cap} gradients "
                                 f"(replicas × updates × K); at most {max(1, cap // per_update)} updates "
                                 "fit in one run (shorten the run)")
        raise ParameterError("replicas", f"a trace of {scheme.label} holds at most {cap} gradients "
                             f"(replicas × updates × K); with {n} updates at most {cap // (n * per_update)} "
                             "replicas fit")
    unit = iteration_cost(scheme, delay, replicas=R)
    cost = unit * R * n
    if cost > budget:
        if unit * n > budget:
            fit = int(budget // unit)
            if fit < 1:
                raise ParameterError(_costly_parameter(scheme), f"one update of {scheme.label} costs about "
                                     f"{unit / 1e9:.3g} s, over the {budget / 1e9:.3g} s bound")
            raise ParameterError("updates", f"{n} updates of {scheme.label} would take about "
                                 f"{unit * n / 1e9:.3g} s per run, over the {budget / 1e9:.3g} s bound; "
                                 f"at most {fit} fit")
        raise ParameterError("replicas", f"{R} runs of {n} updates of {scheme.label} would take about "
                             f"{cost / 1e9:.3g} s, over the {budget / 1e9:.3g} s bound; at most "
                             f"{int(budget // (unit * n))} replicas fit")
    rng = _rng(seed)
    if scheme.renewal:
        return _renewal_engine(scheme)(delay, scheme.m, scheme.grads_per_update, R, n, rng, True)
    per = _iid_times(scheme, delay, R * n, rng)
    if isinstance(scheme, LocalSGD):
        per *= scheme.H  # round length, not per-step
    return UpdateTrace(np.cumsum(per.reshape(R, n), axis=1))


def _iid_times_chunk(scheme: Scheme, delay: Delay, n: int, rng: np.random.Generator) -> np.ndarray:
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
    raise ParameterError("scheme", f"not an i.i.d.-iteration scheme: {scheme.label}")  # pragma: no cover


def _iid_times(scheme: Scheme, delay: Delay, n: int, rng: np.random.Generator) -> np.ndarray:
    """n independent per-iteration runtimes of a fresh-gradient scheme, drawn in chunks."""
    if n <= _CHUNK:
        return _iid_times_chunk(scheme, delay, n, rng)
    out = np.empty(n)
    for s in range(0, n, _CHUNK):
        out[s:s + _CHUNK] = _iid_times_chunk(scheme, delay, min(_CHUNK, n - s), rng)
    return out


# ---------------------------------------------------------------------------------------
# runtime per iteration


def _t95(dof: int) -> float:
    return float(stats.t.ppf(0.975, max(dof, 1)))


def _cv2(delay: Delay) -> float:
    """Var[X]/E[X]², the squared coefficient of variation (inf if either moment is)."""
    mean, var = delay.mean, delay.var
    if not (math.isfinite(mean) and math.isfinite(var)):
        return math.inf
    if mean <= 0:
        return 0.0
    r = math.sqrt(var) / mean  # not var/mean²: mean² underflows for tiny times
    return r * r


def _warmup(delay: Delay | None) -> tuple[int, bool]:
    """Warm-up pushes per worker for ``delay``, and whether that is short of what the law needs.

    Every worker starts a fresh job at time 0; the in-flight ages (so the update rate and the
    staleness) settle after about 20·(1 + CV²) pushes per worker, at least 40, capped at
    ``limits.WARMUP_MAX_PUSHES_PER_WORKER`` (see limits.py for the measurements)."""
    if delay is None:
        return limits.WARMUP_PUSHES_PER_WORKER, False
    cv2 = _cv2(delay)
    if not math.isfinite(cv2):
        return limits.WARMUP_MAX_PUSHES_PER_WORKER, True
    need = limits.WARMUP_PUSHES_PER_CV2 * (1.0 + cv2)
    w = max(limits.WARMUP_PUSHES_PER_WORKER, math.ceil(min(need, 1e18)))
    return min(w, limits.WARMUP_MAX_PUSHES_PER_WORKER), need > limits.WARMUP_MAX_PUSHES_PER_WORKER


def _layout(scheme: Scheme, iterations: int, delay: Delay | None = None) -> tuple[int, int, int, int]:
    """Replicas R, warm-up w and measured updates n per replica, batches per replica B.

    Every worker starts a fresh job at time 0, and with a decreasing hazard fresh jobs are
    shorter than stationary in-flight ones; the in-flight ages (and so the update rate and
    the staleness) settle after a number of pushes per worker that grows with the law's
    variability (:func:`_warmup`: 40 for the usual laws, 20·(1 + CV²) for very variable
    ones).  The warm-up is counted in pushes per worker, W of them, ⌈W·m/K⌉ updates (whether
    K is below or above m: one update of K ≥ 40·m pushes is already 40 per worker); each
    replica then measures ⌈iterations/R⌉ updates (at least 4 per batch), and R·B ≥ 32 batch
    means give the confidence interval.  Memory does not depend on the layout (the engines
    stream), only the cost does.
    """
    m, K = scheme.m, scheme.grads_per_update
    w = -(-_warmup(delay)[0] * m // K)
    if _renewal_engine(scheme) is _kasync_trace:
        # stepped update by update: many replicas in lockstep amortise the per-step overhead
        R_cap = max(4, min(256, 2**16 // m))
        R = int(min(R_cap, max(4, iterations // max(w, 200))))
    else:
        # streamed replica by replica: every replica pays its warm-up, so few long replicas
        R = int(min(8, max(4, iterations // (10 * w))))
    B = -(-32 // R)
    n = max(B * 4, -(-iterations // R))
    n = -(-n // B) * B
    return R, w, n, B


def _heavy_note(scheme: Scheme, delay: Delay) -> str:
    """A warning when the simulated statistic's mean or variance is infinite.

    With a tail P(X > x) ~ x^{-α}, the statistic's p-th moment is finite iff
    ``scheme.tail_jobs · α > p`` (see :attr:`Scheme.tail_jobs`): e.g. Pareto(α = 0.8) has an
    infinite mean, but k-sync with m = 10, K = 8 waits for the 8th of 10 jobs, and
    E[X_{8:10}] is finite (3·0.8 > 2: so is its variance)."""
    alpha = delay.tail_index
    short = ""
    if scheme.renewal and _warmup(delay)[1]:
        short = (f"; the run starts with every worker on a fresh job, and a law this variable needs more "
                 f"than the {limits.WARMUP_MAX_PUSHES_PER_WORKER} warm-up pushes per worker to forget it, so "
                 "the simulated runtime and staleness may be biased (the long-run mean staleness is "
                 + ("(m − K)/K" if isinstance(scheme, KAsync) and scheme.K > 1 else "(m − 1)/K") + ")")
    if not math.isfinite(alpha):
        if short:
            return f"the delay law is very variable (Var[X]/E[X]² = {_cv2(delay):.3g})" + short
        return ""
    j = scheme.tail_jobs
    power = f"tail index α = {alpha:g}" + (f", {j} jobs must all be long: {j}·α = {j * alpha:g}" if j > 1 else "")
    if j * alpha <= 1:
        what = "E[X] is infinite, and so is the long-run time per update" if scheme.renewal \
            else "E[T] is infinite"
        return (f"{what} ({power} ≤ 1): the simulated mean does not converge and the interval is "
                "meaningless")
    if j * alpha <= 2:
        law = "Var[X]" if scheme.renewal else "Var[T]"
        return (f"{law} is infinite ({power} ≤ 2): the simulated mean converges slowly and the "
                "confidence interval is unreliable (heavy tail)" + short)
    if short:
        return f"the delay law is very variable (Var[X]/E[X]² = {_cv2(delay):.3g})" + short
    return ""


#: k-async, stepped update by update with R replicas in lockstep: the Python and numpy-call
#: overhead of one step (ns), and per replica: per step, per worker, per pusher
#: (measured on an idle 2-core machine, one core: 12 µs per step at R = 4, m = 16; 46 µs at
#: R = 150, m = 16; 271 µs at R = 150, m = 100; 45 µs at R = 4, m = 1000, K = 250 — the model
#: is within ×0.6–2.7 of these, erring high)
_KASYNC_STEP, _KASYNC_REPLICA, _KASYNC_WORKER, _KASYNC_PUSHER = 15_000.0, 100.0, 10.0, 20.0


def iteration_cost(scheme: Scheme, delay: Delay | None = None, replicas: int = 4) -> float:
    """Cost of one simulated iteration (of one replica), calibrated to about a nanosecond per
    unit on one core of the 2-core development machine: order statistics ~200 ns per
    iteration, superposition ~120 ns per drawn completion, local-SGD sums ~36 ns per delay,
    the merged renewal processes ~200–400 ns per push, k-async ~15 µs per lockstep step shared
    by its ``replicas`` plus ~0.1 µs per replica, 10 ns per worker and 20 ns per pusher.
    Measured within a factor of about 2 either way (a shared machine is noisy).  ``delay``
    refines it where the engine depends on the law (local SGD with exponential delays samples
    a Gamma order statistic)."""
    m, K = scheme.m, scheme.grads_per_update
    if isinstance(scheme, (Sync, KSync)):
        return 200.0
    if isinstance(scheme, KBatchSync):
        return 200.0 if K == 1 else 120.0 * m * (-(-K // m) + 1)
    if isinstance(scheme, LocalSGD):
        if scheme.H == 1 or isinstance(delay, Exponential):
            return 200.0
        return 36.0 * m * scheme.H
    if isinstance(scheme, KAsync) and K > 1:
        return (_KASYNC_STEP / max(1, replicas) + _KASYNC_REPLICA + _KASYNC_WORKER * m
                + _KASYNC_PUSHER * K)
    # merged renewal processes: per push (random access into per-worker state grows with m),
    # plus the bookkeeping of one update
    return (200.0 + 0.002 * m) * K + 100.0


def simulation_cost(scheme: Scheme, iterations: int, delay: Delay | None = None) -> float:
    """Cost (≈ ns) of :func:`simulate_runtime` for ``iterations``, warm-up included (the
    renewal schemes run every replica through a warm-up of 40 or more pushes per worker
    first; pass ``delay``: very variable laws need a longer one)."""
    if scheme.renewal:
        R, w, n, _ = _layout(scheme, iterations, delay)
        return iteration_cost(scheme, delay, replicas=R) * R * (w + n)
    return iteration_cost(scheme, delay) * iterations


def _costly_parameter(scheme: Scheme) -> str:
    """The scheme parameter that makes even the smallest run too costly."""
    m, K = scheme.m, scheme.grads_per_update
    if isinstance(scheme, LocalSGD):
        return "H" if scheme.H > 1 else "m"
    if isinstance(scheme, KBatchSync):
        return "K" if K >= m else "m"
    if isinstance(scheme, KAsync) and K > 1:
        return "m"  # the warm-up is 40·m/K updates of cost ∝ m: m²/K
    if scheme.renewal:
        # the smallest run: 40·m warm-up pushes against ~128 updates of K pushes
        return "K" if 128 * K >= 4 * limits.WARMUP_PUSHES_PER_WORKER * m and K > 1 else "m"
    return "m"


def _advice(scheme: Scheme, parameter: str) -> str:
    if isinstance(scheme, LocalSGD):
        return f"m·H = {scheme.m * scheme.H} delays per round: use a smaller H or fewer workers m"
    if isinstance(scheme, KAsync):
        return "its warm-up is 40 pushes per worker, 40·m/K updates that each cost ∝ m: use fewer workers m or a larger K"
    if parameter == "K":
        return "every update needs K pushes: use a smaller K"
    return "use fewer workers m"


def _check_cost(scheme: Scheme, iterations: int, delay: Delay, budget: float) -> None:
    """Refuse a simulate_runtime call whose predicted cost exceeds ``budget``."""
    cost = simulation_cost(scheme, iterations, delay)
    if cost <= budget:
        return
    lo = limits.MIN_ITERATIONS
    floor = simulation_cost(scheme, lo, delay)
    if floor > budget:
        param = _costly_parameter(scheme)
        raise ParameterError(param, f"{scheme.label} is too big to simulate: even {lo} iterations would "
                             f"take about {floor / 1e9:.3g} s, over the {budget / 1e9:.3g} s bound "
                             f"({_advice(scheme, param)})")
    hi = iterations  # cost(lo) ≤ budget < cost(hi): the most iterations that fit
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if simulation_cost(scheme, mid, delay) <= budget:
            lo = mid
        else:
            hi = mid
    raise ParameterError("iterations", f"{iterations} iterations of {scheme.label} would take about "
                         f"{cost / 1e9:.3g} s, over the {budget / 1e9:.3g} s bound; at most {lo} fit")


def simulate_runtime(scheme: Scheme, delay: Delay, iterations: int = 100_000,
                     seed: _random.Seed = None, keep_times: bool = True, *,
                     budget: float | None = None) -> RuntimeSample:
    """Monte Carlo mean runtime per iteration with a 95% confidence interval.

    sync/k-sync/k-batch-sync/local-sgd: ``iterations`` independent iterations, t-interval.
    async/k-async/k-batch-async: R replicas of a long run, warm-up dropped, batch means;
    the reported ``iterations`` (measured updates, R·n) is at least the number asked.

    ``iterations`` is in [2, 10⁷]; ``seed`` an int (reported as is), a SeedSequence or a
    Generator (then ``seed`` is None in the result), or None.  A run whose predicted cost
    exceeds ``budget`` (default ``limits.TIME_BUDGET`` ≈ 60 s) is refused (ParameterError
    naming ``iterations`` with how many fit, or the scheme parameter that is too big).
    """
    _check_model(scheme, delay)
    iterations = ITERATIONS.check(iterations, "iterations")
    budget = limits.TIME_BUDGET if budget is None else BUDGET.check(budget, "budget")
    seed_out = _random.seed_int(seed) if not isinstance(seed, (np.random.SeedSequence, np.random.Generator)) \
        else None
    _check_cost(scheme, iterations, delay, budget)
    rng = _rng(seed)
    note = _heavy_note(scheme, delay)
    if scheme.renewal:
        return _simulate_renewal(scheme, delay, iterations, seed_out, rng, keep_times, note)
    kept: list[np.ndarray] = []
    total = total2 = 0.0
    shift = None
    for s0 in range(0, iterations, _CHUNK):
        x = _iid_times(scheme, delay, min(_CHUNK, iterations - s0), rng)
        if shift is None:
            shift = float(x[0])  # centre the sums for a stable variance
        d = x - shift
        total += float(d.sum())
        total2 += float((d * d).sum())
        if keep_times and s0 < MAX_KEPT_TIMES:
            kept.append(x[: MAX_KEPT_TIMES - s0])
    assert shift is not None
    times = np.concatenate(kept) if kept else None
    mean = shift + total / iterations
    var = max(total2 - total * (total / iterations), 0.0) / (iterations - 1)
    std = math.sqrt(var)
    hw = _t95(iterations - 1) * std / math.sqrt(iterations)
    if isinstance(scheme, (Sync, KSync)) or (isinstance(scheme, KBatchSync) and scheme.K == 1) \
            or (isinstance(scheme, LocalSGD) and scheme.H == 1):
        method = "exact order-statistic sampling F⁻¹(Beta(k, n−k+1))"
    elif isinstance(scheme, LocalSGD):
        method = ("max of m Gamma(H, λ) sums by order-statistic sampling" if isinstance(delay, Exponential)
                  else "per-round sums of H delays, max over m workers")
    else:
        method = "per-iteration superposition of m renewal processes (K-th completion)"
    return RuntimeSample(mean=mean, ci95=(max(mean - hw, 0.0), mean + hw), iterations=iterations,
                         seed=seed_out, method=method, times=times, std=std,
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

    def add_times(self, times: np.ndarray) -> bool:
        """Take the next block (R, b) of consecutive update times; True when done."""
        b = times.shape[1]
        if b == 0:
            return self.j >= self.w + self.n
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
            if self.n_kept < MAX_KEPT_TIMES:
                self.kept.append(xs.ravel()[: MAX_KEPT_TIMES - self.n_kept])
                self.n_kept += self.kept[-1].size
        return self.j >= self.w + self.n

    def add_staleness(self, update: np.ndarray, stale: np.ndarray) -> None:
        """Staleness of gradients used in the given updates (``update`` broadcasts to ``stale``)."""
        sel = np.broadcast_to((update >= self.w) & (update < self.w + self.n), stale.shape)
        st = stale[sel]
        self.stale += float(st.sum())
        self.fresh += float(np.count_nonzero(st == 0))


def _simulate_renewal(scheme: Scheme, delay: Delay, iterations: int, seed: int | None,
                      rng: np.random.Generator, keep_times: bool, note: str) -> RuntimeSample:
    R, w, n, B = _layout(scheme, iterations, delay)
    K = scheme.grads_per_update
    acc: list[_BatchMeans] = []
    if _renewal_engine(scheme) is _kasync_trace:
        # all replicas in lockstep, streamed in blocks of updates: memory does not grow with n
        bm = _BatchMeans(R, w, n, B, keep_times)
        j0 = 0
        for times, stale, _ in _kasync_blocks(delay, scheme.m, K, R, rng, False, w + n):
            b = times.shape[1]
            bm.add_staleness(np.arange(j0, j0 + b)[None, :, None], stale)
            j0 += b
            if bm.add_times(times):
                break
        acc.append(bm)
        what = "update-by-update run, K pushers restart"
    else:
        # replica by replica, each streamed window by window
        for r in range(R):
            bm = _BatchMeans(1, w, n, B, keep_times and r == 0)
            for g0, t, _, prev in _kbatch_async_stream(delay, scheme.m, K, (w + n) * K, rng):
                g = np.arange(g0, g0 + t.size, dtype=np.int64)
                bm.add_staleness(g // K, _push_staleness(g, prev, K))
                ends = g % K == K - 1
                bm.add_times(t[ends][None, :])
            acc.append(bm)
        what = "merged renewal processes (workers never wait)"
    means = np.concatenate([a.sums.ravel() for a in acc]) / (n // B)
    mean = float(means.mean())
    nb = means.size
    hw = _t95(nb - 1) * float(means.std(ddof=1)) / math.sqrt(nb)
    N = R * n
    total, total2 = sum(a.total for a in acc), sum(a.total2 for a in acc)
    std = math.sqrt(max(total2 - total * (total / N), 0.0) / max(N - 1, 1))
    kept = [k for a in acc for k in a.kept]
    method = (f"{what}; {R} replicas × {n} updates after {w} warm-up, "
              f"95% CI from {nb} batch means")
    return RuntimeSample(mean=mean, ci95=(max(mean - hw, 0.0), mean + hw), iterations=N, seed=seed,
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
    """The timeline's intervals, column by column (empty waits and cancellations dropped)."""

    def __init__(self) -> None:
        self.worker: list[int] = []
        self.start: list[float] = []
        self.end: list[float] = []
        self.outcome: list[str] = []
        self.staleness: list[int] = []

    def add(self, w: int, s: float, e: float, outcome: str, staleness: int = 0) -> None:
        if e > s or outcome in ("used", "stale"):
            self.worker.append(int(w))
            self.start.append(float(s))
            self.end.append(float(e))
            self.outcome.append(outcome)
            self.staleness.append(int(staleness))

    def add_block(self, w: np.ndarray, s: np.ndarray, e: np.ndarray, outcome: np.ndarray) -> None:
        """Many intervals at once (vectorised; staleness 0), in the order given."""
        keep = (e > s) | (outcome == "used") | (outcome == "stale")
        self.worker.extend(w[keep].tolist())
        self.start.extend(s[keep].tolist())
        self.end.extend(e[keep].tolist())
        self.outcome.extend(outcome[keep].tolist())
        self.staleness.extend([0] * int(keep.sum()))


def _timeline_jobs(scheme: Scheme, iterations: int) -> int:
    """Jobs (bars) a timeline of ``iterations`` updates simulates, about."""
    m, K = scheme.m, scheme.grads_per_update
    if isinstance(scheme, LocalSGD):
        return iterations * m * scheme.H
    if isinstance(scheme, KBatchSync):
        return iterations * (K + m)
    if scheme.renewal:
        return iterations * K + m
    return iterations * m


def _timeline_cap(scheme: Scheme) -> int:
    return limits.TIMELINE_MAX_JOBS_VECTORISED if isinstance(scheme, LocalSGD) else limits.TIMELINE_MAX_JOBS


def timeline_max_iterations(scheme: Scheme) -> int:
    """The most iterations :func:`simulate_timeline` draws for ``scheme`` (≤ 200; 0 when even
    one iteration exceeds the job cap)."""
    cap, one = _timeline_cap(scheme), _timeline_jobs(scheme, 1)
    if one > cap:
        return 0
    fit = max(1, (cap - scheme.m) // max(1, one - scheme.m)) if scheme.renewal else cap // one
    return int(min(fit, TIMELINE_MAX_ITERATIONS))


def simulate_timeline(scheme: Scheme, delay: Delay, iterations: int = 5,
                      seed: _random.Seed = None) -> Timeline:
    """Event-by-event run of ``iterations`` updates with every worker's intervals recorded.

    m ≤ 200, iterations ≤ 200 and at most ``limits.TIMELINE_MAX_JOBS`` jobs (200 000 for the
    vectorised local SGD; it is for drawing, not for estimating); beyond, a ParameterError
    names the parameter.
    """
    _check_model(scheme, delay)
    iterations = Domain("iterations", 1, TIMELINE_MAX_ITERATIONS, integer=True).check(iterations)
    if scheme.m > TIMELINE_MAX_M:
        raise ParameterError("m", f"the timeline draws at most {TIMELINE_MAX_M} workers (got {scheme.m})")
    _check_seed(seed)
    jobs = _timeline_jobs(scheme, iterations)
    if jobs > _timeline_cap(scheme):
        cap, fit = _timeline_cap(scheme), timeline_max_iterations(scheme)
        if fit < 1:
            param = "H" if isinstance(scheme, LocalSGD) else "K"
            raise ParameterError(param, f"the timeline draws at most {cap} jobs; one iteration of "
                                 f"{scheme.label} already needs about {_timeline_jobs(scheme, 1)}")
        raise ParameterError("iterations", f"the timeline draws at most {cap} jobs; {iterations} iterations "
                             f"of {scheme.label} need about {jobs}: at most {fit} iterations fit")
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
        H = scheme.H
        kinds = np.array(["used"] * H + ["waiting", "communicating"], dtype=object)
        for _ in range(iterations):
            # per worker: H local steps, the wait for the slowest, the averaging round
            steps = delay.sample(rng, (m, H))
            ends = t0 + np.cumsum(steps, axis=1)
            slowest = ends[:, -1].max()
            s_blk = np.concatenate([np.full((m, 1), t0), ends, np.full((m, 1), slowest)], axis=1)
            e_blk = np.concatenate([ends, np.full((m, 1), slowest), np.full((m, 1), slowest + scheme.comm_delay)],
                                   axis=1)
            out.add_block(np.repeat(np.arange(m), H + 2), s_blk.ravel(), e_blk.ravel(), np.tile(kinds, m))
            t0 = slowest + scheme.comm_delay
            updates.append(t0)
    else:
        updates = _timeline_async(scheme, delay, iterations, rng, out)
    return Timeline(scheme=scheme, delay=delay,
                    worker=np.array(out.worker, dtype=int),
                    start=np.array(out.start, dtype=float), end=np.array(out.end, dtype=float),
                    outcome=np.array(out.outcome, dtype=object),
                    staleness=np.array(out.staleness, dtype=int),
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

"""The update-count process behind every error curve: E[T] for the time axis, how many updates
reach a horizon, timing traces that cover it, and the number of updates by each time."""

from __future__ import annotations

import math

import numpy as np

from .. import limits
from ..analytic import expected_runtime
from ..clusters import Cluster
from ..delays import Delay
from ..estimate import VALUE_KINDS, Estimate
from ..memo import Memo
from ..montecarlo import UpdateTrace, iteration_cost, simulate_runtime, simulate_updates
from ..params import ParameterError
from ..random import Seed
from ..schemes import Scheme

__all__ = ["runtime_for_time_axis", "per_update_runtime", "updates_needed", "covering_trace", "counts_at"]


#: E[T] for the time axis, memoised by value (scheme, the law's key, seed): the bound, the
#: exact curve and the simulation of one scheme all ask for it.  Keys are short strings and
#: values small Estimates, so the memo never holds a trace; at most _AXIS_MEMO entries.
_AXIS_MEMO = 512
_axis_memo: Memo[tuple[object, ...], Estimate] = Memo(_AXIS_MEMO)


def _seed_key(seed: Seed) -> object:
    if isinstance(seed, np.random.SeedSequence):
        return ("ss", seed.entropy, tuple(seed.spawn_key))
    if isinstance(seed, np.random.Generator):
        return None  # a Generator's stream moves on: never memoised
    return seed


def runtime_for_time_axis(scheme: Scheme, delay: Delay | Cluster, seed: Seed,
                          cost: float = limits.AXIS_MC_COST) -> Estimate:
    """E[T] from the analytic core when exact or numerical, else from a Monte Carlo run of about
    ``cost`` (iteration_cost units; 500 to 20 000 iterations), and the result says so."""
    sk = _seed_key(seed)
    if sk is None:
        return _axis_runtime(scheme, delay, seed, cost)
    return _axis_memo.cached((scheme, delay.key, sk, cost), lambda: _axis_runtime(scheme, delay, seed, cost))


def _axis_runtime(scheme: Scheme, delay: Delay | Cluster, seed: Seed, cost: float) -> Estimate:
    est = expected_runtime(scheme, delay, work=limits.AXIS_ANALYTIC_WORK)
    if not ((est.kind in VALUE_KINDS and est.value is not None) or est.kind == "infinite"):
        # bounded like everything else: at most 20 000 iterations, about 0.1 s of simulation
        iterations = int(min(20_000, max(500, cost / iteration_cost(scheme, delay))))
        mc = simulate_runtime(scheme, delay, iterations, seed=seed, keep_times=False)
        why = f"analytic E[T] is {est.kind.replace('_', ' ')}"
        est = Estimate(mc.mean, "approximation", f"Monte Carlo mean ({why}), 95% CI ±{mc.half_width:.3g}",
                       notes=mc.note_parts)
    return est


def per_update_runtime(scheme: Scheme, est: Estimate) -> float:
    """Time per update from E[T] per iteration (local SGD reports it per local step; one
    update, an average, is H steps)."""
    assert est.value is not None
    return est.value * scheme.steps_per_update


def counts_at(times: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Number of updates with time ≤ t, per replica row (vectorised searchsorted)."""
    R, n = times.shape
    # Offsetting each row by a multiple of a span larger than all times makes one sorted array.
    span = float(max(times[:, -1].max(), t.max())) * 2 + 1.0
    off = np.arange(R)[:, None] * span
    flat = (times + off).ravel()
    q = (t[None, :] + off).ravel()
    return (np.searchsorted(flat, q, side="right") - np.arange(R).repeat(t.size) * n).reshape(R, t.size)


def updates_needed(scheme: Scheme, delay: Delay | Cluster, horizon: float, seed: Seed,
                   runtime: Estimate | None = None) -> int:
    """Updates that reach ``horizon`` in all but rare runs (E[T] from ``runtime`` when given,
    else :func:`runtime_for_time_axis`; a run that falls short is extended by :func:`covering_trace`)."""
    est = runtime or runtime_for_time_axis(scheme, delay, seed)
    if est.value is None or not math.isfinite(est.value):
        raise ParameterError("delay", "infinite_runtime")
    per = per_update_runtime(scheme, est)
    mean_n = horizon / per
    n = int(math.ceil(mean_n * 1.2 + 6 * math.sqrt(mean_n) + 10))
    if n > limits.MAX_UPDATES:
        raise ParameterError("time", "horizon_updates", updates=int(mean_n), cap=limits.MAX_UPDATES)
    return n


def covering_trace(scheme: Scheme, delay: Delay | Cluster, n: int, replicas: int, horizon: float,
                    rng: np.random.Generator, budget: float | None = None) -> UpdateTrace:
    """A trace whose every replica reaches the horizon (rarely needs a second, longer try)."""
    while True:
        tr = simulate_updates(scheme, delay, n, replicas, rng, budget=budget)
        if tr.times[:, -1].min() >= horizon:
            return tr
        if n >= limits.MAX_UPDATES:
            raise ParameterError("time", "runs_too_long", cap=limits.MAX_UPDATES)
        n = min(limits.MAX_UPDATES, 2 * n)



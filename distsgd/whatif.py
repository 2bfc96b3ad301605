"""What each scheme would have done on a measured trace (issue 11, DESIGN §7).

For every scheme asked, E[T] per iteration under five readings of one trace, theory and Monte
Carlo side by side:

* ``replay`` — every worker's own times in the trace's order (the closest to what happened);
* ``per-worker laws`` — each worker draws from its own times (who is slow kept, order forgotten);
* ``i.i.d. fit`` — every worker draws from one law fitted to all the times (the textbook model:
  who was slow forgotten), or the pooled times themselves when no fit is given;
* ``stragglers dropped`` — the replay of the trace without its stragglers (m − s workers);
* ``backup workers`` — the replay with the stragglers kept as backups: sync becomes K-sync
  waiting for the first m − s (the other schemes would be the replay itself, not repeated).

Each row says which reading it is, the scheme and its parameters, the analytic value and kind
and the Monte Carlo mean with its 95% interval; a reading that does not apply (no straggler,
fewer than two workers left) is left out with the reason in ``skipped``.  With a ``problem`` and
a target ``eps``, each row also has the time the error bound of §3 takes to reach ε,
t* = J(ε) · E[T] per update (:func:`distsgd.error.bound_time_to_target`): J(ε) depends on the
scheme and the problem only, so the readings differ by their E[T] (and, for the asynchronous
schemes, by the measured fraction of fresh gradients p₀).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .analytic import expected_runtime
from .clusters import Cluster, make_cluster
from .delays import Delay
from .error import Problem, bound_time_to_target
from .estimate import VALUE_KINDS, Estimate
from .montecarlo import simulate_runtime, simulation_cost
from .params import ParameterError
from .random import keyed
from .schemes import Scheme, make_scheme, scheme_parameters
from .traces import Trace, trace_from_times

__all__ = ["READINGS", "what_if"]

READINGS = ("replay", "per-worker laws", "i.i.d. fit", "stragglers dropped", "backup workers")


def _scheme(name: str, m: int, K: int, H: int) -> Scheme:
    takes = scheme_parameters(name)
    kw: dict[str, Any] = {}
    if "K" in takes:
        kw["K"] = min(K, m) if name in ("k-sync", "k-async") else K
    if "H" in takes:
        kw["H"] = H
    return make_scheme(name, m, **kw)


def _sources(trace: Trace, stragglers: Sequence[str], fit: Delay | None
             ) -> list[tuple[str, Delay | Cluster | None, int, str]]:
    """(reading, what the workers draw from or None, m, why skipped)."""
    m = trace.m
    out: list[tuple[str, Delay | Cluster | None, int, str]] = [
        ("replay", make_cluster(trace=trace, trace_mode="replay"), m, ""),
        ("per-worker laws", make_cluster(trace=trace, trace_mode="per-worker"), m, ""),
        ("i.i.d. fit", fit if fit is not None else make_cluster(trace=trace, trace_mode="pooled"), m, ""),
    ]
    slow = [i for i, w in enumerate(trace.workers) if w in set(stragglers)]
    keep = [i for i in range(m) if i not in set(slow)]
    if not slow:
        out += [(r, None, m, "no straggler in this trace") for r in READINGS[3:]]
    elif len(keep) < 1:
        out += [(r, None, m, "every worker is a straggler") for r in READINGS[3:]]
    else:
        sub = trace_from_times(trace.times[keep], name=f"{trace.name} without {len(slow)} straggler(s)")
        out.append(("stragglers dropped", make_cluster(trace=sub, trace_mode="replay"), len(keep), ""))
        out.append(("backup workers", out[0][1], m, ""))
    return out


def what_if(trace: Trace, schemes: Sequence[str], K: int, H: int, *, stragglers: Sequence[str] = (),
            fit: Delay | None = None, budget: float = 3e8, seed: int = 0, iterations: int = 20_000,
            analytic_work: float = 3e7, problem: Problem | None = None, eps: float | None = None,
            gamma: float = 0.5) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Rows (reading × scheme: analytic and Monte Carlo E[T], and with ``problem`` and ``eps``
    the bound's time to ε) and the skipped readings.

    ``stragglers`` are worker ids of the trace (its summary's); ``fit`` the law of the i.i.d.
    reading (e.g. the best fit of :func:`distsgd.fit.fit_laws`).  Each point's Monte Carlo run
    is at most ``iterations`` and its predicted cost at most ``budget`` / points (cost units
    ≈ ns); a point beyond it has its analytic value only.  The time to ε uses the analytic E[T]
    when it is exact or numerical, else the Monte Carlo mean; ``gamma`` is the staleness factor
    of the asynchronous bound, p₀ the run's fraction of fresh gradients."""
    if trace.layout == "column" or trace.times.shape[1] == 0:
        raise ParameterError("trace", "what-if needs per-worker times at complete steps (a worker column)")
    plan: list[tuple[str, Scheme, Delay | Cluster]] = []
    skipped: list[dict[str, str]] = []
    for reading, src, m, why in _sources(trace, stragglers, fit):
        if src is None:
            skipped.append({"reading": reading, "why": why})
            continue
        if reading == "backup workers":
            if "sync" in schemes:
                plan.append((reading, make_scheme("k-sync", m, K=m - len(stragglers)), src))
            continue
        plan += [(reading, _scheme(name, m, K, H), src) for name in schemes]
    runs = _iterations(plan, budget, iterations)
    rows = []
    for (reading, s, src), n in zip(plan, runs, strict=True):
        est = expected_runtime(s, src, work=analytic_work)
        row: dict[str, Any] = {"reading": reading, "scheme": s.name, "label": s.label, "m": s.m,
                               "K": getattr(s, "K", None), "H": getattr(s, "H", None),
                               "analytic": est.value, "kind": est.kind, "method": est.method}
        mc = None
        if n:
            mc = simulate_runtime(s, src, n, seed=keyed(seed, "what-if", reading, s.label), keep_times=False)
            row.update(mc_mean=mc.mean, mc_low=mc.ci95[0], mc_high=mc.ci95[1], mc_iterations=mc.iterations)
        else:
            row["mc_skipped"] = "over this table's Monte Carlo budget"
        if problem is not None and eps is not None:
            row.update(_target(s, src, est, mc, problem, eps, gamma))
        rows.append(row)
    return rows, skipped


def _iterations(plan: Sequence[tuple[str, Scheme, Delay | Cluster]], budget: float, most: int) -> list[int]:
    """Each point's run length (0: not simulated).  Cheapest first, each point gets the budget
    left over divided by the points left, and runs the longest it can within that (halving from
    ``most`` down to 300 iterations; a replay's length is fixed by its trace), so what a cheap
    point does not use goes to the dearer ones and the total stays within ``budget``."""
    def fit(i: int, share: float) -> tuple[int, float]:
        s, src = plan[i][1], plan[i][2]
        n = most
        while n > 300 and simulation_cost(s, n, src) > share:
            n //= 2
        cost = simulation_cost(s, n, src)
        return (n, cost) if cost <= share else (0, 0.0)

    floor = [simulation_cost(s, 300, src) for _, s, src in plan]
    runs, left = [0] * len(plan), budget
    for k, i in enumerate(sorted(range(len(plan)), key=floor.__getitem__)):
        runs[i], cost = fit(i, left / (len(plan) - k))
        left -= cost
    return runs


def _target(s: Scheme, src: Delay | Cluster, est: Estimate, mc: Any, problem: Problem, eps: float,
            gamma: float) -> dict[str, Any]:
    """The bound's time to ε on E[T] (analytic when it is the value, else the Monte Carlo mean)."""
    if est.kind in VALUE_KINDS or est.kind == "infinite":
        runtime = est
    elif mc is not None:
        runtime = Estimate(mc.mean, "approximation", "Monte Carlo mean")
    else:
        return {"target_time": None, "target_source": "E[T] unknown (not simulated)"}
    p0 = None if s.fresh or mc is None else mc.fresh_fraction
    if not s.fresh and p0 is None:
        return {"target_time": None, "target_source": "p₀ unknown (not simulated)"}
    t = bound_time_to_target(s, src, problem, eps, gamma, p0, runtime=runtime)
    return {"target_time": t.value, "target_source": t.source, "target_p0": p0}


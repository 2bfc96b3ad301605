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

from .clusters import Cluster, make_cluster
from .delays import Delay
from .error import Problem, TargetTime, bound_time_to_target
from .estimate import VALUE_KINDS, Estimate
from .params import ParameterError
from .random import keyed
from .records import RuntimePoint, runtime_point, share_budget, target_columns
from .schemes import Scheme, make_scheme, scheme_for
from .traces import Trace, trace_from_times

__all__ = ["READINGS", "what_if"]

#: why a what-if point has no Monte Carlo value
SKIPPED = "over this table's Monte Carlo budget"

READINGS = ("replay", "per-worker laws", "i.i.d. fit", "stragglers dropped", "backup workers")


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
        raise ParameterError("trace", "whatif_needs_workers")
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
        plan += [(reading, scheme_for(name, m, K, H), src) for name in schemes]
    runs = share_budget([(s, src) for _, s, src in plan], budget, iterations)
    rows = []
    for (reading, s, src), n in zip(plan, runs, strict=True):
        point = runtime_point(s, src, n or None, keyed(seed, "what-if", reading, s.label), analytic_work=analytic_work,
                              skipped=SKIPPED)
        row = {"reading": reading, **point.as_row()}
        if problem is not None and eps is not None:
            row.update(_target(s, src, point, problem, eps, gamma))
        rows.append(row)
    return rows, skipped


def _target(s: Scheme, src: Delay | Cluster, point: RuntimePoint, problem: Problem, eps: float,
            gamma: float) -> dict[str, Any]:
    """The bound's time to ε on E[T] (analytic when it is the value, else the Monte Carlo mean),
    as :func:`~distsgd.records.target_columns`, and the p₀ it used (the run's fresh fraction)."""
    est, mc = point.analytic, point.monte_carlo
    if est.kind in VALUE_KINDS or est.kind == "infinite":
        runtime = est
    elif mc is not None:
        runtime = Estimate(mc.mean, "approximation", "Monte Carlo mean")
    else:
        return target_columns(TargetTime(None, "E[T] unknown (not simulated)"))
    p0 = None if s.fresh or mc is None else mc.fresh_fraction
    if not s.fresh and p0 is None:
        return target_columns(TargetTime(None, "p₀ unknown (not simulated)"))
    t = bound_time_to_target(s, src, problem, eps, gamma, p0, runtime=runtime)
    return {**target_columns(t), "p0": p0}

"""Sweeps over K, m and H that the dashboard pages draw and export, as plain rows.

Each function returns a list of dicts (one per point), so the same data feeds a plotly figure
(:mod:`distsgd.plots`), a table and a CSV download.  Monte Carlo work per call is bounded by
``budget`` (array-element operations, see :func:`distsgd.montecarlo.iteration_cost`).

``delay`` is what the workers draw from: a law (i.i.d. workers), a cluster of the schemes' m,
or a :class:`~distsgd.clusters.Stragglers` recipe, built into the cluster at each point's m.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from . import limits
from .analytic import expected_runtime
from .clusters import Cluster, Stragglers, at_m
from .delays import Delay, Empirical
from .error import (
    LearningRate,
    Problem,
    TargetTime,
    bound_time_to_target,
    simulate_error,
    simulated_time_to_target,
)
from .error.general import RealProblem, problem_work, simulate_problem
from .error.scheduled import scheduled_scheme
from .error.timing import runtime_for_time_axis, updates_needed
from .estimate import VALUE_KINDS, Estimate
from .montecarlo import simulate_runtime
from .orderstats import order_statistic_cdf, order_statistic_mean, order_statistic_pdf, sample_order_statistic
from .params import ParameterError
from .random import keyed
from .reasons import Phrase
from .records import (
    MIN_ITERATIONS,
    ErrorCurve,
    accuracy_columns,
    bound_problem,
    error_curve,
    problem_error_curve,
    runtime_point,
    share_budget,
    target_columns,
)
from .schemes import GraphScheme, Scheme, make_scheme, scheme_class, scheme_for, scheme_parameters
from .topology import graph_fits

#: what the sweeps' workers draw from (see the module's docstring)
Workers = Delay | Cluster | Stragglers

__all__ = ["needs_graph", "graph_runtime_vs_m", "build", "runtime_rows", "runtime_vs_K", "runtime_vs_m",
           "runtime_vs_H", "fanout_rows", "order_statistic_sample", "error_rows", "target_rows",
           "schedule_run", "skipped", "k_grid", "m_grid", "to_csv", "DEFAULT_BUDGET"]

#: Monte Carlo budget of one chart, in iteration_cost units (≈ ns on the development machine)
DEFAULT_BUDGET = 6e7
#: why a chart's point has no Monte Carlo value
SKIPPED = "its shortest run exceeds this chart's Monte Carlo budget"


#: a scheme from the controls, with only the parameters it takes (:func:`~distsgd.schemes.scheme_for`)
build = scheme_for


def needs_graph(name: str) -> bool:
    """True for the schemes on a graph (d-psgd, ad-psgd): they exist only at the m their graph fits."""
    return issubclass(scheme_class(name), GraphScheme)


def order_statistic_sample(delay: Delay, k: int, n: int, seed: int, samples: int, span: tuple[float, float],
                           bins: int, points: int) -> dict[str, Any]:
    """``samples`` draws of X_{k:n} (exact: F⁻¹(Beta(k, n−k+1))), their mean's estimate, and the
    theory to overlay on their histogram of ``bins`` bins between the sample's ``span`` quantiles:
    the density on ``points`` grid points for a continuous law; for a measured trace (a discrete
    law, no density) the exact probability of each bin divided by its width,
    ``(P(X_{k:n} ≤ b) − P(X_{k:n} ≤ a)) / (b − a)``, which is what the histogram estimates."""
    x_s = sample_order_statistic(delay, k, n, np.random.default_rng(seed), samples)
    lo, hi = (float(v) for v in np.quantile(x_s, span))
    if hi <= lo:  # a point mass (e.g. a trace with one value): one bin around it
        lo, hi = lo - 0.5 * max(abs(lo), 1e-9), hi + 0.5 * max(abs(hi), 1e-9)
    edges = np.linspace(lo, hi, bins + 1)
    if isinstance(delay, Empirical):
        cdf = order_statistic_cdf(delay, k, n, edges)
        theory = {"kind": "bins", "edges": edges, "density": np.diff(cdf) / np.diff(edges)}
    else:
        grid = np.linspace(lo, hi, points)
        theory = {"kind": "pdf", "x": grid, "density": order_statistic_pdf(delay, k, n, grid)}
    est = order_statistic_mean(delay, k, n)
    return {"samples": x_s, "edges": edges, "theory": theory, "mean": est.value, "kind": est.kind}


def fanout_rows(delay: Delay, ms: Sequence[int], iterations: int, seed: int) -> list[dict[str, Any]]:
    """The slowest of m against m: E[X_{m:m}] from the analytic core and the mean of
    ``iterations`` sync iterations (point m seeded by ``keyed(seed, "fan-out", m)``), one row per m."""
    rows: list[dict[str, Any]] = []
    for m in ms:
        est = order_statistic_mean(delay, m, m)
        mc = simulate_runtime(make_scheme("sync", m), delay, iterations, seed=keyed(seed, "fan-out", m),
                              keep_times=False)
        rows.append({"m": m, "analytic": est.value, "kind": est.kind, "mc_mean": mc.mean,
                     "mc_low": mc.ci95[0], "mc_high": mc.ci95[1]})
    return rows


def k_grid(m: int, n: int = 16) -> list[int]:
    """About n values of K in [1, m], denser at both ends (where the curves bend)."""
    if m <= n:
        return list(range(1, m + 1))
    u = (1 - np.cos(np.linspace(0, np.pi, n))) / 2
    return sorted({int(round(1 + (m - 1) * x)) for x in u})


def m_grid(m_max: int, n: int = 12) -> list[int]:
    """About n values of m in [1, m_max], log-spaced."""
    return sorted({int(round(x)) for x in np.geomspace(1, max(m_max, 1), n)})


def runtime_rows(schemes: Iterable[Scheme], delay: Workers, budget: float = DEFAULT_BUDGET,
                 seed: int = 0, simulate: bool = True, *, analytic_work: float = limits.ANALYTIC_WORK,
                 max_iterations: int = limits.MAX_ITERATIONS) -> list[dict[str, Any]]:
    """Analytic and Monte Carlo E[T] per iteration for each scheme.

    ``budget`` bounds the Monte Carlo work of the whole call, ``max_iterations`` each point's
    run and ``analytic_work`` each lattice computation (beyond it a bound).  The budget is shared
    by :func:`~distsgd.records.share_budget`; a point whose shortest run exceeds its share is
    reported without a Monte Carlo value (``mc_skipped``).  Each row is
    :meth:`RuntimePoint.as_row <distsgd.records.RuntimePoint.as_row>`.
    """
    schemes = list(schemes)
    sources = [at_m(delay, s.m) for s in schemes]
    runs = (share_budget(list(zip(schemes, sources, strict=True)), budget, max_iterations, MIN_ITERATIONS)
            if simulate else [0] * len(schemes))
    # each point's own stream: the same point gets the same numbers in every chart
    return [runtime_point(s, src, n or None, keyed(seed, "runtime", s.label), analytic_work=analytic_work,
                          skipped=SKIPPED if simulate else None).as_row()
            for s, src, n in zip(schemes, sources, runs, strict=True)]


def runtime_vs_K(names: Sequence[str], m: int, delay: Workers, Ks: Sequence[int], H: int = 1,
                 comm_delay: float = 0.0, budget: float = DEFAULT_BUDGET, seed: int = 0, *, graph: str = "ring",
                 **caps: Any) -> list[dict[str, Any]]:
    """E[T] against K for each scheme; schemes without K give one point per K (a flat line).
    ``graph``: the decentralised schemes' graph (DESIGN §12).
    ``caps``: :func:`runtime_rows`' ``analytic_work`` and ``max_iterations``."""
    schemes = []
    for name in names:
        takes = scheme_parameters(name)
        for K in Ks:
            if "K" in takes and scheme_class(name).k_le_m and K > m:
                continue
            schemes.append(build(name, m, K, H, comm_delay, graph))
    rows = runtime_rows(_unique(schemes), delay, budget, seed, **caps)
    by = {(r["scheme"], r.get("K")): r for r in rows}
    out = []
    for name in names:
        for K in Ks:
            key = (name, K if "K" in scheme_parameters(name) else None)
            if key in by:
                out.append({**by[key], "x_K": K})
    return out


def runtime_vs_m(names: Sequence[str], ms: Sequence[int], delay: Workers, K: int, H: int = 1,
                 comm_delay: float = 0.0, budget: float = DEFAULT_BUDGET, seed: int = 0, *, graph: str = "ring",
                 **caps: Any) -> list[dict[str, Any]]:
    """E[T] against m (K clamped to m for the k-of-m schemes); the decentralised schemes on
    ``graph`` at each m it can be built on (a hypercube: the powers of 2); ``caps`` as
    :func:`runtime_vs_K`."""
    schemes = [build(name, m, K, H, comm_delay, graph) for name in names for m in ms
               if not needs_graph(name) or graph_fits(graph, m)]
    rows = runtime_rows(schemes, delay, budget, seed, **caps)
    for r in rows:
        # samples processed per unit time relative to one (average) worker: K_used · E[X] / E[T],
        # from the analytic E[T] (an upper bound on E[T] gives a lower bound on the speed-up) and
        # from the Monte Carlo mean, each kept apart
        used = r["grads_per_update"]
        mean_x = mean_time(at_m(delay, r["m"]))
        ok = math.isfinite(mean_x)
        a, mc = r["analytic"], r.get("mc_mean")
        r["speedup_analytic"] = used * mean_x / a if (ok and a and r["kind"] in VALUE_KINDS) else None
        r["speedup_lower_bound"] = used * mean_x / a if (ok and a and r["kind"] == "upper_bound") else None
        r["speedup_mc"] = used * mean_x / mc if (ok and mc and mc > 0) else None
    return rows


def graph_runtime_vs_m(graphs: Sequence[str], ms: Sequence[int], delay: Workers, budget: float = DEFAULT_BUDGET,
                       seed: int = 0, **caps: Any) -> list[dict[str, Any]]:
    """E[T] of d-psgd against m on each graph (at the m it can be built on), beside sync and async
    (DESIGN §12.3): rows of :func:`runtime_rows` with ``graph`` (None for sync and async) and
    d-psgd's ``lower`` bound and its kind; ``caps`` as :func:`runtime_vs_K`."""
    work = caps.get("analytic_work", limits.ANALYTIC_WORK)
    schemes: list[Scheme] = [build("d-psgd", m, graph=g) for g in graphs for m in ms if graph_fits(g, m)]
    tags: list[str | None] = [g for g in graphs for m in ms if graph_fits(g, m)]
    for name in ("sync", "async"):
        schemes += [build(name, m) for m in ms]
        tags += [None] * len(ms)
    rows = runtime_rows(schemes, delay, budget, seed, **caps)
    for r, s, g in zip(rows, schemes, tags, strict=True):
        r["graph"] = g
        if g is not None:
            assert isinstance(s, GraphScheme)
            low = s.runtime_bounds(at_m(delay, s.m), work)[0]
            r["lower"], r["lower_kind"] = low.value, low.kind
    return rows


def runtime_vs_H(m: int, Hs: Sequence[int], delay: Workers, comm_delay: float,
                 budget: float = DEFAULT_BUDGET, seed: int = 0, **caps: Any) -> list[dict[str, Any]]:
    """E[T] of local SGD against H; ``caps`` as :func:`runtime_vs_K`."""
    return runtime_rows([build("local-sgd", m, None, H, comm_delay) for H in Hs], delay, budget, seed, **caps)


def mean_time(src: Delay | Cluster) -> float:
    """The long-run mean time of one mini-batch of an average worker: E[X], or mean_i E[X_i]."""
    return src.mean if isinstance(src, Delay) else float(np.mean(src.worker_means()))


def async_speedup(m: int, delay: Workers) -> dict[str, Any]:
    """Speed-up of async over sync per iteration: E[T_sync]/E[T_async] = m·E[X_{m:m}]/E[X]
    (on a cluster, E[T_sync]·Σ_i 1/E[X_i], both from the analytic core)."""
    src = at_m(delay, m)
    if isinstance(src, Cluster):
        sync_c, async_c = (expected_runtime(make_scheme(n, m), src) for n in ("sync", "async"))
        if sync_c.value is None or async_c.value is None or not async_c.value:
            return {"value": None, "kind": sync_c.kind if sync_c.value is None else async_c.kind}
        return {"value": sync_c.value / async_c.value, "kind": sync_c.kind}
    delay = src
    sync = order_statistic_mean(delay, m, m)
    if sync.value is None or not math.isfinite(delay.mean):
        return {"value": None, "kind": sync.kind if sync.value is None else "infinite"}
    return {"value": m * sync.value / delay.mean, "kind": sync.kind}


def error_rows(schemes: Sequence[Scheme], delay: Workers, problem: Problem | RealProblem, time: float, points: int,
               replicas: int, seed: int = 0, gamma: float | None = None, p0: float | None = None,
               lr: LearningRate | None = None, *, max_updates: int = limits.MAX_UPDATES,
               max_work: float = limits.MAX_SGD_WORK, max_timing_cost: float = limits.TIME_BUDGET,
               axis_cost: float = limits.AXIS_MC_COST) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Long-format rows (scheme, time, bound, exact, simulated mean and band; a real problem's
    metrics as ``<metric>_mean/_low/_high``, and no exact curve) and a summary per
    scheme (bound kind and note, measured staleness, γ and p0 used; or ``skipped`` with the
    reason when that scheme's run exceeds the caps, in English and as ``skipped_reason``: the
    refusal's :meth:`~distsgd.params.ParameterError.as_dict`, which the dashboard translates).
    The caps are for the whole chart, shared equally by the schemes (updates: at least 200 each),
    and so is ``axis_cost``: the Monte Carlo of E[T] where the analytic core has no value
    (:func:`~distsgd.error.timing.runtime_for_time_axis`; at least 500 iterations a scheme)."""
    rows: list[dict[str, Any]] = []
    summary: list[dict[str, Any]] = []
    caps = _chart_caps(len(schemes), max_updates, max_work, max_timing_cost)
    axis_share = axis_cost / max(len(schemes), 1)
    for s in schemes:
        src = at_m(delay, s.m)
        try:
            axis = runtime_for_time_axis(s, src, seed, axis_share)  # one E[T]: bound, model and sizing
            curve = _scheme_curve(s, src, problem, time, points, replicas, seed, lr, gamma, p0, axis, caps)
        except ParameterError as exc:  # this scheme only: the others are still drawn
            summary.append({"scheme": s.label, **skipped(exc)})
            continue
        rows += curve.as_rows()
        summary.append(curve.summary())
    return rows, summary


def _chart_caps(schemes: int, max_updates: int, max_work: float, max_timing_cost: float) -> dict[str, Any]:
    """One chart's SGD caps shared equally by its schemes (updates: at least 200 each)."""
    n = max(schemes, 1)
    return {"max_work": max_work / n, "max_updates": max(200, max_updates // n), "max_timing_cost": max_timing_cost / n}


def _scheme_curve(s: Scheme, src: Delay | Cluster, problem: Problem | RealProblem, time: float, points: int,
                  replicas: int, seed: int, lr: LearningRate | None, gamma: float | None, p0: float | None,
                  axis: Estimate, caps: dict[str, Any], *, eps: float | None = None,
                  target_accuracy: float | None = None, chart: bool = True) -> ErrorCurve:
    """One scheme's error curve on a chart's problem (SGD stream ``keyed(seed, "sgd", label)``):
    a real problem with the replicas that fit its share of the work cap; the quadratic with the
    bound and the exact model curve when ``chart`` (the error chart), else the simulation alone."""
    if isinstance(problem, RealProblem):
        fit, points = _real_run_size(s, src, problem, time, points, replicas, caps["max_work"], seed, axis)
        # on a graph: no mean node error (m training losses per grid point, 40× the SGD's work on
        # breast cancer); the average model's error, the consensus and the test metrics stay
        extra: dict[str, Any] = {"graph_node_error": False} if needs_graph(s.name) else {}
        return problem_error_curve(s, src, problem.problem, problem.eta, problem.b, time, points, fit,
                                   keyed(seed, "sgd", s.label), lr, gamma, p0, runtime=axis, eps=eps,
                                   target_accuracy=target_accuracy, **caps, **extra)
    drawn: dict[str, Any] = ({"model_paths": 200, "model_seed": keyed(seed, "timing", s.label)} if chart
                             else {"bound": False, "model_paths": None})
    return error_curve(s, src, problem, time, points, replicas, seed, lr, gamma, p0,
                       sim_seed=keyed(seed, "sgd", s.label), runtime=axis, eps=eps, **drawn, **caps)


def _real_run_size(s: Scheme, src: Delay | Cluster, problem: RealProblem, time: float, points: int,
                   replicas: int, max_work: float, seed: int, axis: Estimate) -> tuple[int, int]:
    """(replicas, grid points) of a real problem's run within ``max_work`` (its SGD and the
    evaluation of each recorded model, :func:`~distsgd.error.general.problem_work`): all asked for
    if they fit; else fewer replicas, down to MIN_REAL_REPLICAS; then fewer grid points, down to
    MIN_REAL_POINTS (a run that still does not fit is refused by the simulation, naming the cap).
    On digits a model's evaluation reads 1 797 rows, a gradient b: the grid is most of the work."""
    n = updates_needed(s, src, time, seed, axis)

    def work(r: int, p: int) -> float:
        return problem_work(s, problem.problem, problem.b, r, n, p)

    if work(replicas, points) <= max_work:
        return replicas, points
    fewest = min(replicas, MIN_REAL_REPLICAS)
    fit = max(fewest, min(replicas, int(max_work // max(work(1, points), 1.0))))
    if work(fit, points) <= max_work:
        return fit, points
    # over the cap with ``points`` means fewer than n + 1 evaluations, where work is linear in them
    per_point = work(fit, 1) - work(fit, 0)
    return fit, max(min(points, MIN_REAL_POINTS), int((max_work - work(fit, 0)) // per_point))


#: the fewest replicas a real problem's chart runs when the work cap asks for fewer (a 95% band
#: from fewer is too wide to read)
MIN_REAL_REPLICAS = 10
#: the fewest grid points of a real problem's chart when the work cap asks for fewer (one every
#: 5 % of the horizon)
MIN_REAL_POINTS = 21


def target_rows(schemes: Sequence[Scheme], delay: Workers, problem: Problem | RealProblem, eps: float,
                time: float | None = None, points: int = 201, replicas: int = 0, seed: int = 0,
                gamma: float = 0.5, p0: float | None = None, x_name: str = "K",
                *, target_accuracy: float | None = None, max_updates: int = limits.MAX_UPDATES,
                max_work: float = limits.MAX_SGD_WORK, max_timing_cost: float = limits.TIME_BUDGET,
                axis_cost: float = limits.AXIS_MC_COST, keep_curve: bool = False) -> list[dict[str, Any]]:
    """Time to reach ε for each scheme: from the bound and, with replicas > 0, from simulation
    (caps and ``axis_cost`` shared by the schemes as in :func:`error_rows`).  On a real problem the bound takes the
    problem's constants (:func:`~distsgd.records.bound_problem`) and, with ``target_accuracy``,
    the rows also have the simulated time to that test accuracy (``time_to_accuracy``).
    ``keep_curve``: a simulated row also holds its error curve (``curve``: the long rows of
    :func:`error_rows`, without bound and model), for a chart of the curves themselves."""
    out = []
    caps = _chart_caps(len(schemes), max_updates, max_work, max_timing_cost)
    axis_share = axis_cost / max(len(schemes), 1)
    for s in schemes:
        src = at_m(delay, s.m)
        axis = runtime_for_time_axis(s, src, seed, axis_share)  # one E[T] for the bound and the sizing
        row = {**s.as_dict(), "label": s.label, "x": getattr(s, x_name, None) if x_name != "m" else s.m,
               **_axis_note(axis)}
        curve, skipped = None, None
        if replicas and time:
            try:
                curve = _scheme_curve(s, src, problem, time, points, replicas, seed, None, gamma, p0, axis, caps,
                                      eps=eps, target_accuracy=target_accuracy, chart=False)
            except ParameterError as exc:  # too long a run for this request: the bound alone is shown
                skipped = exc
        if curve is not None:
            row.update(**target_columns(curve.bound_target, curve.simulated_target),
                       **accuracy_columns(curve.accuracy_target), staleness_mean=curve.simulated.staleness_mean)
            if keep_curve:
                row["curve"] = curve.as_rows()
        else:
            proxy = bound_problem(problem.problem, problem.eta, problem.b) if isinstance(problem, RealProblem) \
                else problem
            row.update(target_columns(
                bound_time_to_target(s, src, proxy, eps, gamma, p0, runtime=axis, seed=seed) if proxy is not None
                else TargetTime.unavailable(Phrase("bound_no_constants"))))
        if skipped is not None:  # why, in English and as its reason code and fields (translated by the UI)
            row.update(simulated_skipped=str(skipped), simulated_skipped_reason=skipped.as_dict())
        out.append(row)
    return out


def skipped(exc: ParameterError) -> dict[str, Any]:
    """What a chart's row says of a run refused by a cap: ``skipped`` (the English) and
    ``skipped_reason`` (the refusal as data, for the dashboard to translate)."""
    return {"skipped": str(exc), "skipped_reason": exc.as_dict()}


def schedule_run(scheme: Scheme, spec: str, delay: Workers, problem: Problem | RealProblem, time: float,
                 points: int, replicas: int, seed: int = 0, eps: float | None = None, *, shares: int = 1,
                 max_updates: int = limits.MAX_UPDATES, max_work: float = limits.MAX_SGD_WORK,
                 max_timing_cost: float = limits.TIME_BUDGET, axis_cost: float = limits.AXIS_MC_COST
                 ) -> dict[str, Any]:
    """``scheme`` run with the schedule ``spec`` (DESIGN §13; its K or H replaced by the schedule's
    first value) on a chart's grid, within one of ``shares`` equal shares of the caps and of ``axis_cost`` (as one
    scheme of :func:`error_rows`; stream ``keyed(seed, "sgd", label)``): ``label`` (the scheme's
    name and the spec), ``parameter`` ("K" or "H"), the error ``rows`` (:func:`error_rows`' long
    rows, without bound and model), the value in force on the grid (``value_rows``: time, mean,
    low, high over replicas), the ``checkpoints`` with the mean ``value`` in force after each and
    the mean ``loss_ratio`` F(w_t)/F(w₀) at each, the ``replicas``, and with ``eps`` the simulated
    time to ε and its band (``time_to_target``, ``_low``, ``_high``, as :func:`target_rows`').
    A run over the caps gives ``skipped`` and ``skipped_reason`` instead, as :func:`error_rows`.
    A bad spec is refused (:class:`~distsgd.params.ParameterError` naming ``schedule``)."""
    sched, from_start = scheduled_scheme(scheme, spec)
    assert sched is not None
    label = f"{scheme.name}, {sched.spec}"
    caps = _chart_caps(shares, max_updates, max_work, max_timing_cost)
    src = at_m(delay, scheme.m)
    try:
        axis = runtime_for_time_axis(from_start, src, seed, axis_cost / max(shares, 1))
        if isinstance(problem, RealProblem):
            fit, points = _real_run_size(from_start, src, problem, time, points, replicas, caps["max_work"], seed,
                                         axis)
            sim = simulate_problem(from_start, src, problem.problem, problem.eta, problem.b, time, points, fit,
                                   keyed(seed, "sgd", label), runtime=axis, schedule=spec, **caps)
        else:
            sim = simulate_error(from_start, src, problem, time, points, replicas, keyed(seed, "sgd", label),
                                 runtime=axis, schedule=spec, **caps)
    except ParameterError as exc:
        if exc.parameter == "schedule":  # the spec itself: not a cap of this chart
            raise
        return {"label": label, **skipped(exc)}
    run = sim.schedule
    assert run is not None
    mean, low, high = run.grid_value
    out: dict[str, Any] = {
        "label": label, "spec": run.schedule.spec, "parameter": run.schedule.parameter, "replicas": sim.replicas,
        "rows": [{**r, "scheme": label} for r in ErrorCurve(from_start, sim, None, None, None, None).as_rows()],
        "value_rows": [{"time": float(t), "value_mean": float(a), "value_low": float(b), "value_high": float(c)}
                       for t, a, b, c in zip(sim.time, mean, low, high, strict=True)],
        "checkpoints": run.checkpoints.tolist(), "value": run.value.tolist(), "loss_ratio": run.loss_ratio.tolist()}
    if eps is not None:
        out.update(target_columns(None, simulated_time_to_target(sim, eps)))
    return out


def _axis_note(axis: Estimate) -> dict[str, Any]:
    """The warnings of the Monte Carlo run the time axis's E[T] came from, as a chart row's
    ``mc_note``/``mc_note_parts`` (none when E[T] is analytic)."""
    return {"mc_note": "".join(map(str, axis.notes)), "mc_note_parts": axis.notes} if axis.notes else {}


def best_index(rows: Sequence[dict[str, Any]], column: str) -> int | None:
    """Index of the smallest finite value of a column, None if there is none."""
    vals = [(r.get(column), i) for i, r in enumerate(rows)]
    finite = [(v, i) for v, i in vals if v is not None and math.isfinite(v)]
    return min(finite)[1] if finite else None


def to_csv(rows: Sequence[dict[str, Any]]) -> str:
    """CSV text of a list of dicts (union of the keys with scalar values, first-seen order)."""
    if not rows:
        return ""
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    # scalar columns only: a note's structured parts stay out (its text is a column of its own)
    keys = [k for k in keys if all(isinstance(r.get(k), (str, int, float, type(None))) for r in rows)]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=keys, extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in keys})
    return buf.getvalue()


def _unique(schemes: Iterable[Scheme]) -> list[Scheme]:
    seen, out = set(), []
    for s in schemes:
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out

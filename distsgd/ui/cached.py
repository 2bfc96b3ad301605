"""Every expensive call the pages make, cached per argument set with bounded size.

A page calls into the library only through here (or for something trivially cheap: building a
scheme, a grid of K or m values), so a rerun with the same inputs does no core work at all;
``tests/test_ui_units.py`` checks that by counting the core's entry points on a second run.
Arguments are the frozen parameter objects (Delay, Scheme, Problem, …), so equal inputs hit
the cache across sessions.  A delay law is hashed by its ``key`` (the spec string, or a
measured trace's digest: :data:`~distsgd.ui.cache_calls.HASH`): never by its values, which for
an uploaded trace are megabytes.
Each entry is small (rows of numbers, a figure, at most a few 10⁴ samples), ``max_entries``
bounds the count and ``ttl`` lets idle entries go, so the whole cache stays within a few tens
of MB (sizes and counts: :mod:`distsgd.ui.rerun_caps`).  Nothing here is mutable module state.

Two kinds of cache, both process-wide (one entry serves every session of the class), each called
by keyword (:mod:`distsgd.ui.cache_calls`: Streamlit's positional path re-reads the signature):

* ``st.cache_data`` for rows of numbers: a hit returns an unpickled copy (≈ 0.1 ms for a chart's rows);
* ``st.cache_resource`` for the *views* (a chart's rows with its figure, built once): unpickling a
  figure re-validates every trace (≈ 10 ms on every rerun); a resource hit returns the object itself.
  Views are shared by every session, so the pages only read them, and ``i18n.shown`` only adds, once,
  each trace's English name (its ``meta``) and the translated copies.

What a person reads is in their language (DESIGN §10), so no text made for display is cached: a
figure is built in English and translated at display, once a language (:func:`distsgd.ui.i18n.shown`
keeps the copy on the figure), and a view's sentence, table or skip reason is made on each run by
an uncached wrapper around the cached part (``whatif_view``, ``error_view``, ``persistence_view``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import curves, plots
from ..clusters import Stragglers, at_m, make_cluster
from ..comm import CommModel
from ..delays import Delay, Empirical, parse_delay
from ..error import LearningRate, Problem
from ..error.general import RealProblem
from ..fit import fit_laws
from ..limits import AXIS_MC_COST
from ..montecarlo import simulate_timeline
from ..params import ParameterError
from ..schemes import DPSGD, Scheme, make_scheme, scheme_parameters
from ..timeline_export import perfetto_trace
from ..topology import topology
from ..traces import Trace
from ..whatif import READINGS, what_if
from . import claims, local_figures, views, workers
from . import graph_figures as graph_plots
from . import trace_figures as trace_plots
from .cache_calls import HASH, cache_data, cache_resource
from .rerun_caps import (
    CACHE_MAX_ENTRIES,
    CACHE_TTL_S,
    CHART_ANALYTIC_WORK,
    CHART_MAX_ITERATIONS,
    ERROR_POINTS,
    FIGURE_CACHE_ENTRIES,
    GRAPH_DRAWN_NODES,
    LOCAL_SGD_FREE_D,
    ORDER_STAT_BINS,
    ORDER_STAT_GRID,
    ORDER_STAT_RANGE,
    QUANTILE_HIGH,
    QUANTILE_LEVELS,
    QUANTILE_LOW,
    SAMPLES,
    TARGET_POINTS,
    TIMELINE_CACHE_ENTRIES,
    UI_MAX_PROBLEM_WORK,
    UI_MAX_TIMING_COST,
    UI_MAX_UPDATES,
    UI_MAX_WORK,
)

#: what the workers draw from (the runtime, error and timeline charts): a law or a Stragglers recipe
Workers = Delay | Stragglers
_CACHE: dict[str, Any] = {"max_entries": CACHE_MAX_ENTRIES, "ttl": CACHE_TTL_S, "show_spinner": False,
                          "hash_funcs": HASH}
#: the views (rows and a figure, shared objects: see the module's docstring)
_VIEW: dict[str, Any] = {**_CACHE, "max_entries": FIGURE_CACHE_ENTRIES}
#: the UI's caps on one chart's simulated SGD (the library's defaults are larger)
_SGD_CAPS: dict[str, Any] = {"max_updates": UI_MAX_UPDATES, "max_work": UI_MAX_WORK,
                             "max_timing_cost": UI_MAX_TIMING_COST}
#: the UI's caps on one runtime chart's points (the library's defaults are larger)
_RUNTIME_CAPS: dict[str, Any] = {"analytic_work": CHART_ANALYTIC_WORK, "max_iterations": CHART_MAX_ITERATIONS}
_QUANTILES = np.linspace(QUANTILE_LOW, QUANTILE_HIGH, QUANTILE_LEVELS)


def _sgd_caps(problem: Problem | RealProblem) -> dict[str, Any]:
    """The caps of a chart's simulated SGD: on a data set its evaluations count (UI_MAX_PROBLEM_WORK)."""
    return {**_SGD_CAPS, "max_work": UI_MAX_PROBLEM_WORK} if isinstance(problem, RealProblem) else _SGD_CAPS


def _reasons(summary: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An error chart's summary with each skipped scheme's reason in the reader's language (a
    copy of the rows that have one: the cached summary is shared by every session)."""
    return [{**s, "skipped": views.skipped_why(s)} if "skipped" in s else s for s in summary]


@cache_data(**_CACHE)
def runtime_vs_K(names: tuple[str, ...], m: int, delay: Workers, Ks: tuple[int, ...], H: int,
                 budget: float, seed: int, graph: str = "ring", simulate: bool = True) -> list[dict[str, Any]]:
    return _runner(simulate)(curves.runtime_vs_K, names, m, delay, Ks, H, LOCAL_SGD_FREE_D, budget, seed,
                             graph=graph, simulate=simulate, **_RUNTIME_CAPS)


@cache_data(**_CACHE)
def runtime_vs_m(names: tuple[str, ...], ms: tuple[int, ...], delay: Workers, K: int, H: int, comm_delay: float,
                 budget: float, seed: int, graph: str = "ring", simulate: bool = True) -> list[dict[str, Any]]:
    return _runner(simulate)(curves.runtime_vs_m, names, ms, delay, K, H, comm_delay, budget, seed, graph=graph,
                             simulate=simulate, **_RUNTIME_CAPS)


def _runner(simulate: bool) -> Callable[..., Any]:
    """:func:`workers.call` for a runtime chart that simulates; for its analytic rows alone the function itself,
    here: what the runtime page draws while the kernels compile (:mod:`distsgd.ui.warmup`), never waiting for them."""
    return workers.call if simulate else _here


def _here(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return fn(*args, **kwargs)


@cache_data(**_CACHE)
def runtime_vs_H(m: int, Hs: tuple[int, ...], delay: Workers, comm_delay: float, budget: float,
                 seed: int) -> list[dict[str, Any]]:
    return workers.call(curves.runtime_vs_H, m, Hs, delay, comm_delay, budget, seed, **_RUNTIME_CAPS)


@cache_data(**_CACHE)
def runtime_points(schemes: tuple[Scheme, ...], delay: Workers, budget: float, seed: int) -> list[dict[str, Any]]:
    return workers.call(curves.runtime_rows, schemes, delay, budget, seed, **_RUNTIME_CAPS)


@cache_data(**_CACHE)
def async_speedup(m: int, delay: Workers) -> dict[str, Any]:
    return workers.call(curves.async_speedup, m, delay)


@cache_data(**_CACHE)
def error_rows(schemes: tuple[Scheme, ...], delay: Workers, problem: Problem, time: float, points: int,
               replicas: int, seed: int, gamma: float | None, p0: float | None,
               lr: LearningRate, budget: float = AXIS_MC_COST) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The error chart's rows; ``budget`` bounds the Monte Carlo of E[T] for the time axis where
    the analytic core has no value (k-async): the chart's Monte Carlo budget."""
    return workers.call(curves.error_rows, schemes, delay, problem, time, points, replicas, seed, gamma, p0, lr,
                        **_sgd_caps(problem), axis_cost=budget)


@cache_data(**_CACHE)
def target_rows(schemes: tuple[Scheme, ...], delay: Workers, problem: Problem | RealProblem, eps: float,
                time: float, replicas: int, seed: int, gamma: float, p0: float | None,
                x_name: str, budget: float = AXIS_MC_COST, *, target_accuracy: float | None = None
                ) -> list[dict[str, Any]]:
    """The trade-offs chart's rows (``budget`` as :func:`error_rows`'), each simulated one with
    its error curve (a schedule is compared with them: turning it on simulates nothing again)."""
    return workers.call(curves.target_rows, schemes, delay, problem, eps, time, TARGET_POINTS, replicas, seed, gamma,
                        p0, x_name, **_sgd_caps(problem), axis_cost=budget, target_accuracy=target_accuracy,
                        keep_curve=True)


@cache_data(**_CACHE)
def _schedule_run(scheme: Scheme, spec: str, delay: Workers, problem: Problem | RealProblem, time: float,
                  points: int, replicas: int, seed: int, eps: float | None, shares: int, budget: float
                  ) -> dict[str, Any]:
    return workers.call(curves.schedule_run, scheme, spec, delay, problem, time, points, replicas, seed, eps,
                        shares=shares, **_sgd_caps(problem), axis_cost=budget)


def schedule_run(scheme: Scheme, spec: str, delay: Workers, problem: Problem | RealProblem, time: float,
                 points: int, replicas: int, seed: int, eps: float | None, shares: int, budget: float
                 ) -> dict[str, Any]:
    """``scheme`` with the schedule ``spec`` on a chart's grid (:func:`curves.schedule_run`, one
    of ``shares`` of the chart's caps); a refusal of the schedule itself (too many checkpoints for
    the horizon) as a skipped run, like a run over the caps (``skipped_reason``)."""
    try:
        return _schedule_run(scheme, spec, delay, problem, time, points, replicas, seed, eps, shares, budget)
    except ParameterError as exc:
        return {"label": f"{scheme.name}, {spec}", **curves.skipped(exc)}


@cache_data(**_CACHE)
def delay_summary(delay: Delay) -> dict[str, Any]:
    """The delay page's numbers: the median and a quantile table (level, x, F(x))."""
    x = np.asarray(delay.ppf(_QUANTILES), dtype=float)
    cdf = np.asarray(delay.cdf(x), dtype=float)
    return {"median": float(delay.ppf(0.5)),
            "quantiles": [{"quantile": float(a), "x": float(b), "cdf": float(c)}
                          for a, b, c in zip(_QUANTILES, x, cdf, strict=True)]}


@cache_resource(**_VIEW)
def delay_chart(delay: Delay, seed: int) -> Any:
    """The pdf/cdf figure of X with the histogram of a sample (of the trace itself for a trace)."""
    sample = None if isinstance(delay, Empirical) else delay.sample(np.random.default_rng(seed), SAMPLES)
    return plots.delay_figure(delay, sample)


@cache_resource(**_VIEW)
def order_statistic_chart(delay: Delay, k: int, n: int, seed: int) -> dict[str, Any]:
    """The K-th-of-m figure, the quantiles of its sample, and the kind of its theory line
    (``"pdf"``, or ``"bins"`` for a trace) — not the samples themselves."""
    o = workers.call(curves.order_statistic_sample, delay, k, n, seed, SAMPLES, ORDER_STAT_RANGE, ORDER_STAT_BINS,
                     ORDER_STAT_GRID)
    return {"figure": plots.order_statistic_figure(o["samples"], o["edges"], o["theory"], k, n, o["mean"]),
            "quantiles": [{"quantile": float(a), "x": float(b)}
                          for a, b in zip(_QUANTILES, np.quantile(o["samples"], _QUANTILES), strict=True)],
            "theory_kind": o["theory"]["kind"]}


@cache_resource(**_VIEW)
def fanout(delay: Delay, ms: tuple[int, ...], iterations: int, seed: int) -> dict[str, Any]:
    """E[max of m] against m, analytic and simulated: the rows and their figure."""
    rows = workers.call(curves.fanout_rows, delay, ms, iterations, seed)
    figure = plots.fanout_figure([r["m"] for r in rows], [r["analytic"] for r in rows], [r["mc_mean"] for r in rows],
                                 [r["mc_low"] for r in rows], [r["mc_high"] for r in rows], delay.mean)
    return {"rows": rows, "figure": figure}


@cache_resource(**{**_VIEW, "max_entries": TIMELINE_CACHE_ENTRIES})
def timeline(scheme: Scheme, delay: Workers, iterations: int, seed: int) -> dict[str, Any]:
    """One run's timeline, its Gantt figure, and each outcome's share of the worker-time up to
    the last update."""
    tl = workers.call(simulate_timeline, scheme, at_m(delay, scheme.m), iterations, seed)
    total = float(tl.update_times[-1]) * scheme.m
    dur = tl.end - tl.start
    shares = {o: float(dur[tl.outcome == o].sum()) / total for o in plots.OUTCOME_COLORS}
    return {"timeline": tl, "figure": plots.timeline_figure(tl), "shares": shares}


@cache_resource(**_VIEW)
def graph_view(graph: str, m: int, slow: tuple[int, ...], delay: Workers, budget: float, seed: int) -> dict[str, Any]:
    """The graph on m nodes (seed 0, as the charts build it): its JSON facts (DESIGN §12), the
    drawing with the slow nodes marked (only up to :data:`GRAPH_DRAWN_NODES`), and d-psgd's bounds
    and E[T] of d-psgd, sync, async and ad-psgd at this m (analytic and Monte Carlo)."""
    topo = topology(graph, m, seed=0)
    figure = graph_plots.graph_figure(topo.spec, m, topo.edges, slow) if m <= GRAPH_DRAWN_NODES else None
    rows = runtime_points(tuple(curves.build(n, m, graph=graph) for n in ("d-psgd", "sync", "async", "ad-psgd")),
                          delay, budget, seed)
    src = at_m(delay, m)
    dpsgd = DPSGD(m, topo)
    lower, upper = workers.call(dpsgd.runtime_bounds, src, CHART_ANALYTIC_WORK)
    return {"facts": topo.as_dict(), "label": topo.label, "figure": figure, "rows": rows, "edges": topo.edges,
            "lower": lower, "upper": upper}


@cache_resource(**_VIEW)
def graph_runtime_view(graphs: tuple[str, ...], ms: tuple[int, ...], delay: Workers, budget: float,
                       seed: int, title: str) -> dict[str, Any]:
    """E[T] against m on each graph beside sync and async (:func:`curves.graph_runtime_vs_m`)."""
    rows = workers.call(curves.graph_runtime_vs_m, graphs, ms, delay, budget, seed, **_RUNTIME_CAPS)
    return {"rows": rows, "figure": graph_plots.graph_runtime_figure(rows, title)}


@cache_resource(**_VIEW)
def network(topology: str, params_m: float, gbps: float, latency_ms: float, m: int,
            ms: tuple[int, ...]) -> dict[str, Any]:
    """The communication model in the page's units (10⁶ parameters, Gbit/s, ms): D, the time of
    one averaging round with ``m`` workers on ``topology``, and both topologies' times over ``ms``."""
    ps, ring = (CommModel(params=params_m * 1e6, bandwidth=gbps * 1.25e8, latency=latency_ms * 1e-3, topology=t)
                for t in ("parameter-server", "ring-allreduce"))
    rows = [{"m": k, "parameter_server": ps.time(k), "ring_allreduce": ring.time(k)} for k in ms]
    return {"D": (ps if topology == "parameter-server" else ring).time(m), "rows": rows,
            "figure": local_figures.comm_figure(ms, [r["parameter_server"] for r in rows],
                                                [r["ring_allreduce"] for r in rows])}


# -- views: a chart's rows and its figure, built once for everyone ---------------------------


def _read(names: tuple[str, ...], K: int, H: int, graph: str = "ring") -> tuple[int, int, str]:
    """K, H and the graph as the schemes ``names`` read them (``scheme_parameters``): one that no
    scheme reads is set to a fixed value, so that moving it — a class moves K and H on every
    page — finds the cached chart instead of computing the same numbers again."""
    used = {p for name in names for p in scheme_parameters(name)}
    return K if "K" in used else 1, H if "H" in used else 1, graph if "topology" in used else "ring"


def runtime_vs_K_view(names: tuple[str, ...], m: int, delay: Workers, Ks: tuple[int, ...], H: int, budget: float,
                      seed: int, x_title: str, title: str, graph: str = "ring",
                      simulate: bool = True) -> dict[str, Any]:
    """The chart of E[T] against K; ``simulate=False``: its analytic curves alone (:func:`_runner`)."""
    _, H, graph = _read(names, 1, H, graph)
    return _runtime_vs_K_view(names, m, delay, Ks, H, budget, seed, x_title, title, graph, simulate)


@cache_resource(**_VIEW)
def _runtime_vs_K_view(names: tuple[str, ...], m: int, delay: Workers, Ks: tuple[int, ...], H: int, budget: float,
                       seed: int, x_title: str, title: str, graph: str, simulate: bool) -> dict[str, Any]:
    rows = runtime_vs_K(names, m, delay, Ks, H, budget, seed, graph, simulate)
    return {"rows": rows, "figure": plots.runtime_figure(rows, "x_K", x_title, title)}


def runtime_vs_m_view(names: tuple[str, ...], ms: tuple[int, ...], delay: Workers, K: int, H: int, comm_delay: float,
                      budget: float, seed: int, x_title: str, title: str, graph: str = "ring",
                      simulate: bool = True) -> dict[str, Any]:
    """The chart of E[T] against m; ``simulate=False``: its analytic curves alone (:func:`_runner`)."""
    K, H, graph = _read(names, K, H, graph)
    return _runtime_vs_m_view(names, ms, delay, K, H, comm_delay, budget, seed, x_title, title, graph, simulate)


@cache_resource(**_VIEW)
def _runtime_vs_m_view(names: tuple[str, ...], ms: tuple[int, ...], delay: Workers, K: int, H: int, comm_delay: float,
                       budget: float, seed: int, x_title: str, title: str, graph: str,
                       simulate: bool) -> dict[str, Any]:
    rows = runtime_vs_m(names, ms, delay, K, H, comm_delay, budget, seed, graph, simulate)
    return {"rows": rows, "figure": plots.runtime_figure(rows, "m", x_title, title, log_x=True)}


@cache_resource(**_VIEW)
def runtime_vs_H_view(m: int, Hs: tuple[int, ...], delay: Workers, comm_delay: float, budget: float, seed: int,
                      title: str, y_title: str) -> dict[str, Any]:
    rows = runtime_vs_H(m, Hs, delay, comm_delay, budget, seed)
    return {"rows": rows, "figure": plots.runtime_figure(rows, "H", "local steps H", title, y_title=y_title)}


def speedup_view(names: tuple[str, ...], ms: tuple[int, ...], delay: Workers, K: int, H: int, comm_delay: float,
                 budget: float, seed: int, graph: str = "ring") -> dict[str, Any]:
    K, H, graph = _read(names, K, H, graph)
    return _speedup_view(names, ms, delay, K, H, comm_delay, budget, seed, graph)


@cache_resource(**_VIEW)
def _speedup_view(names: tuple[str, ...], ms: tuple[int, ...], delay: Workers, K: int, H: int, comm_delay: float,
                  budget: float, seed: int, graph: str) -> dict[str, Any]:
    rows = runtime_vs_m(names, ms, delay, K, H, comm_delay, budget, seed, graph)
    return {"rows": rows, "figure": local_figures.speedup_figure(rows)}


def error_view(schemes: tuple[Scheme, ...], delay: Workers, problem: Problem, time: float, points: int,
               replicas: int, seed: int, gamma: float | None, p0: float | None, lr: LearningRate,
               eps: float | None, budget: float = AXIS_MC_COST,
               schedule: tuple[Scheme, str] | None = None) -> dict[str, Any]:
    """The error chart: its rows, the summary of every scheme (skipped ones included, with the
    reason in the reader's language), and with a target ε the first time each simulated
    scheme's mean reaches it (``budget`` as :func:`error_rows`').  With ``schedule`` (a scheme and
    a spec) that scheduled run is one more curve (drawn thicker; no bound), its record is
    ``schedule`` and its K or H in force against time ``value_figure``."""
    view = _error_view(schemes, delay, problem, time, points, replicas, seed, gamma, p0, lr, eps, budget, schedule)
    return view if not any("skipped" in s for s in view["summary"]) else {**view, "summary": _reasons(view["summary"])}


@cache_resource(**_VIEW)
def _error_view(schemes: tuple[Scheme, ...], delay: Workers, problem: Problem, time: float, points: int,
                replicas: int, seed: int, gamma: float | None, p0: float | None, lr: LearningRate,
                eps: float | None, budget: float, schedule: tuple[Scheme, str] | None = None) -> dict[str, Any]:
    rows, summary = error_rows(schemes, delay, problem, time, points, replicas, seed, gamma, p0, lr, budget)
    run: dict[str, Any] | None = None
    if schedule is not None:
        run = schedule_run(*schedule, delay, problem, time, points, replicas, seed, eps, max(len(schemes), 1), budget)
        rows = rows + run.get("rows", [])
        summary = [*summary, views.schedule_summary(run)]
    targets = (None if eps is None else
               views.times_to_target(rows, [s["scheme"] for s in summary if "skipped" not in s], eps))
    view = {"rows": rows, "summary": summary, "targets": targets,
            "figure": plots.error_figure(rows, eps, targets, bold=None if run is None else run["label"])}
    if run is not None:
        view["schedule"] = run
        if "skipped" not in run:
            view["value_figure"] = plots.schedule_value_figure(run["value_rows"], run["parameter"], run["label"])
    if any("test_accuracy_mean" in r for r in rows):
        view["accuracy_figure"] = plots.metric_figure(rows, "test_accuracy")
    if any("consensus_mean" in r for r in rows):
        view["consensus_figure"] = plots.metric_figure(rows, "consensus")
    return view


@cache_data(**_CACHE)
def problem_facts(problem: RealProblem) -> dict[str, Any]:
    """A data set's constants, sizes and best test accuracy (:meth:`RealProblem.facts`)."""
    return workers.call(RealProblem.facts, problem)


def persistence_view(workers: Stragglers, m: int, problem: Problem, time: float, replicas: int, seed: int,
                     lr: LearningRate) -> dict[str, Any]:
    """Async with the chosen slow spells against the same spells without persistence (ρ = 0):
    the staleness tail of each, and the error rows of both (the mean runtime is the same); or
    why it was not simulated, in the reader's language."""
    view = _persistence_view(workers, m, problem, time, replicas, seed, lr)
    return {"skipped": views.skipped_why(view)} if "skipped" in view else view


@cache_resource(**_VIEW)
def _persistence_view(workers: Stragglers, m: int, problem: Problem, time: float, replicas: int, seed: int,
                      lr: LearningRate) -> dict[str, Any]:
    scheme = (curves.build("async", m),)
    runs: dict[str, dict[str, Any]] = {}
    all_rows: list[dict[str, Any]] = []
    for w in (workers, dataclasses.replace(workers, persistence=0.0)):
        label = f"ρ = {w.persistence:g}"
        rows, summary = error_rows(scheme, w, problem, time, ERROR_POINTS, replicas, seed, None, None, lr)
        done = [x for x in summary if "skipped" not in x]
        if not done:
            return {"skipped": summary[0]["skipped"], "skipped_reason": summary[0]["skipped_reason"]}
        last = rows[-1]
        runs[label] = {"counts": done[0]["staleness_counts"], "staleness_mean": done[0]["staleness_mean"],
                       "final": (last["simulated_mean"], last["simulated_low"], last["simulated_high"])}
        all_rows += [{**r, "scheme": f"{r['scheme']}, {label}", "bound": None, "model": None} for r in rows]
    return {"runs": runs, "rows": all_rows,
            "tail": plots.staleness_tail_figure({k: v["counts"] for k, v in runs.items()}, m),
            "error": plots.error_figure(all_rows)}


@cache_resource(**_VIEW)
def target_view(schemes: tuple[Scheme, ...], refs: tuple[Scheme, ...], delay: Workers, problem: Problem | RealProblem,
                eps: float, time: float, replicas: int, seed: int, gamma: float, x_name: str,
                budget: float = AXIS_MC_COST, target_accuracy: float | None = None,
                schedule: str | None = None) -> dict[str, Any]:
    """The trade-offs chart: time to ε of each swept scheme and of the references (sync and
    async at the sidebar's settings), the best points by the bound and by simulation
    (``budget`` as :func:`error_rows`'); on a real problem also the time to ``target_accuracy``.
    With a ``schedule`` spec (of the swept K or H) also ``schedule``: the scheduled run of the swept
    scheme beside every fixed value (:func:`_comparison`)."""
    rows = target_rows(schemes, delay, problem, eps, time, replicas, seed, gamma, None, x_name, budget,
                       target_accuracy=target_accuracy)
    ref = target_rows(refs, delay, problem, eps, time, replicas, seed, gamma, None, "K", budget,
                      target_accuracy=target_accuracy)
    best = (curves.best_index(rows, "bound_time_to_target"), curves.best_index(rows, "time_to_target"))
    view = {"rows": rows, "ref": ref, "best": best,
            "figure": plots.target_figure(rows, x_name, best[0], best[1], eps, ref)}
    if schedule is not None and schemes:
        run = schedule_run(schemes[0], schedule, delay, problem, time, TARGET_POINTS, replicas, seed, eps,
                           len(schemes), budget)
        view["schedule"] = _comparison(rows, best[1], run, eps)
    return view


def _comparison(rows: list[dict[str, Any]], best: int | None, run: dict[str, Any], eps: float) -> dict[str, Any]:
    """A scheduled ``run`` beside the fixed values' simulated ``rows`` (the best one by the simulated
    mean, ``best``, marked ★): the curves' long rows and their figure (the schedule drawn thicker),
    and the value in force with the best fixed value dotted; only ``run`` when it was skipped."""
    if "skipped" in run:
        return {"run": run}
    fixed = [(r["label"] + (" ★" if i == best else ""), r) for i, r in enumerate(rows) if "curve" in r]
    curve_rows = [{**c, "scheme": label} for label, r in fixed for c in r["curve"]] + run["rows"]
    targets = {label: r["time_to_target"] for label, r in fixed} | {run["label"]: run["time_to_target"]}
    return {"run": run, "rows": curve_rows,
            "figure": plots.error_figure(curve_rows, eps, targets, bold=run["label"]),
            "value_figure": plots.schedule_value_figure(run["value_rows"], run["parameter"], run["label"],
                                                        None if best is None else rows[best]["x"])}



# -- a measured trace (the "Your cluster" page), keyed by its digest ---------------------------


@cache_resource(**_VIEW)
def trace_view(trace: Trace, threshold: float) -> dict[str, Any]:
    """The per-worker summary, the stragglers, the heatmap and the box plots of a trace."""
    summary = trace.summary(threshold)
    stragglers = [r["worker"] for r in summary if r["straggler"]]
    order = sorted((r["worker"] for r in summary), key=lambda w: w not in stragglers)
    return {"summary": summary, "stragglers": stragglers, "heatmap": trace_plots.heatmap_figure(trace),
            "boxes": trace_plots.worker_box_figure(trace, order)}


@cache_resource(**_VIEW)
def fits_view(trace: Trace, shown: int = 3) -> dict[str, Any]:
    """Maximum-likelihood fits of every family to the pooled times, best first, with the Q–Q plot
    and the histogram of the ``shown`` best."""
    fits = workers.call(fit_laws, trace.pooled)
    top = fits[:shown]
    return {"rows": [{"family": f.family, "spec": f.spec, "aic": f.aic, "ks": f.ks, "fixed": f.fixed,
                      "fixed_parts": f.fixed_parts} for f in fits],
            "best": fits[0].spec if fits else None,
            "qq": trace_plots.qq_figure(trace.pooled, top), "hist": trace_plots.fit_histogram_figure(trace.pooled, top)}


@cache_resource(**_VIEW)
def _whatif(trace: Trace, schemes: tuple[str, ...], K: int, H: int, stragglers: tuple[str, ...],
            fit: str | None, budget: float, seed: int, problem: Problem, eps: float, gamma: float) -> dict[str, Any]:
    rows, skipped = workers.call(what_if, trace, schemes, K, H, stragglers=stragglers,
                                 fit=None if fit is None else parse_delay(fit), budget=budget, seed=seed,
                                 analytic_work=CHART_ANALYTIC_WORK, problem=problem, eps=eps, gamma=gamma)
    return {"rows": rows, "skipped": skipped, "figure": trace_plots.whatif_figure(rows, READINGS)}


def whatif_view(trace: Trace, schemes: tuple[str, ...], K: int, H: int, stragglers: tuple[str, ...],
                fit: str | None, budget: float, seed: int, problem: Problem, eps: float, gamma: float
                ) -> dict[str, Any]:
    """The what-if rows (:func:`distsgd.whatif.what_if`, the i.i.d. reading from the fit's spec,
    with the bound's time to ε for ``problem``), their table, chart and sentence.  The rows and
    the figure are shared by every session; the table and the sentence are text in the reader's
    language, so they are made on each run (from a few rows: cheap), never cached."""
    K, H, _ = _read(schemes, K, H)
    view = _whatif(trace, schemes, K, H, stragglers, fit, budget, seed, problem, eps, gamma)
    return {**view, "table": views.whatif_table(view["rows"]), "notice": claims.whatif(view["rows"])}


@cache_data(**_CACHE)
def replay_timeline_json(trace: Trace, updates: int, seed: int) -> str:
    """Sync replaying the trace for ``updates`` updates, as Perfetto / chrome://tracing JSON."""
    tl = simulate_timeline(make_scheme("sync", trace.m), make_cluster(trace=trace, trace_mode="replay"), updates, seed)
    return json.dumps(perfetto_trace(tl), allow_nan=False)

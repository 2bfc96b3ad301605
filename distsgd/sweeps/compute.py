"""One point of a sweep: its model built through the library's one validation, its results as
one row, and what it is expected to cost (to pack points into tasks).

A point is a dict of parameters (:data:`distsgd.sweeps.grid.PARAMETERS`, only those it has)
and an index.  :func:`build` makes its cluster with :func:`~distsgd.clusters.make_cluster`, its
scheme with :func:`~distsgd.schemes.make_scheme` and what its workers draw from with
:func:`~distsgd.clusters.as_source`, as ``python -m distsgd runtime`` does with its flags; a
:class:`~distsgd.params.ParameterError` there (K > m for k-sync, slow with a trace, …) is the
row's ``error``.  :func:`compute_point` then runs what ``[compute]`` asks, with point i's stream
(:func:`~distsgd.sweeps.grid.point_seed`) as the seed of both parts, as the CLI's ``runtime``
and ``error`` share ``--seed``:

* runtime — ``expected_runtime`` (``analytic_value``, null when its kind is ``infinite`` or
  ``unavailable``; ``analytic_kind``, ``analytic_method``) and ``simulate_runtime`` for the point's
  ``iterations`` (``mc_mean``, ``mc_ci_low``, ``mc_ci_high``, ``mc_iterations``, ``mc_note``, and
  ``staleness_mean``, ``fresh_fraction`` for the asynchronous schemes);
* error — ``simulate_error`` on ``linspace(0, time, points)``, then the time to reach ε from its
  mean curve with the band of its 95 % edges (``time_to_target``, ``_low``, ``_high``: the
  first grid time at or below ε, inf if never) and from Dutta et al.'s bound
  (``bound_time_to_target``, with ``bound_note`` saying how it was obtained), γ and p0 as given
  or, for the asynchronous schemes, measured in the simulation (as the CLI's ``error``).

A part the library refuses for this point (a run over its time bound, a horizon needing too
many updates) leaves that part's columns empty and its message in ``error`` (``"[runtime] …"``
or ``"[error curve] …"``); any other exception is a bug and propagates.  Every library call a
point makes goes through the library's per-call budgets (``limits.TIME_BUDGET``,
``limits.ANALYTIC_WORK``, ``limits.MAX_SGD_WORK``, chunks within ``limits.MEMORY_BYTES``): about
a minute of one core and at most a gigabyte each, refused (a row's ``error``) beyond.
"""

from __future__ import annotations

import math
from typing import Any

from .. import limits
from ..clusters import Cluster, as_source, make_cluster
from ..curves import mean_time
from ..delays import Delay
from ..error import Problem
from ..montecarlo import iteration_cost, simulation_cost
from ..params import ParameterError
from ..problems import GradientProblem
from ..records import error_curve, problem_error_curve, runtime_point
from ..schemes import GraphScheme, Scheme, make_scheme
from .grid import Context, ErrorSpec, point_seed

__all__ = ["build", "compute_point", "compute_task", "point_cost", "ANALYTIC_COST", "SGD_COST"]

#: cost units (≈ ns) assumed for one analytic E[T]: closed forms take microseconds, the lattice
#: and quadrature paths milliseconds (up to about a second at limits.ANALYTIC_WORK)
ANALYTIC_COST = 2e6
#: cost units per gradient coordinate of simulated SGD (the compiled kernels' update)
SGD_COST = 2.0


def build(params: dict[str, Any], ctx: Context) -> tuple[Scheme, Delay | Cluster, Cluster]:
    """The point's scheme, what its workers draw from (the delay itself when the cluster is
    i.i.d.) and its cluster — a ParameterError names what the point cannot take."""
    trace = params.get("trace")
    cluster = make_cluster(
        m=params.get("m"), delay=ctx.delays[params["delay"]] if "delay" in params else None,
        slow=params.get("slow"), slowdown=params.get("slowdown"), slow_fraction=params.get("slow_fraction"),
        persistence=params.get("persistence"),
        workers=ctx.workers[params["workers"]] if "workers" in params else None,
        trace=None if trace is None else ctx.traces[(trace, params.get("trace_columns"))],
        trace_mode=params.get("trace_mode"),
        # a loaded trace has its columns already; without a trace make_cluster names them
        trace_columns=params.get("trace_columns") if trace is None else None)
    scheme = make_scheme(params["scheme"], cluster.m, K=params.get("K"), H=params.get("H"),
                         comm_delay=params.get("comm_delay", 0.0), topology=params.get("topology"))
    return scheme, as_source(cluster, cluster.m), cluster


def _effective(scheme: Scheme, cluster: Cluster) -> dict[str, Any]:
    """The parameters as the point ran them: m is the cluster's (given by workers or a trace),
    comm_delay local SGD's default 0, and the cluster's kind and the scheme's label."""
    d = scheme.as_dict()
    out: dict[str, Any] = {k: d[k] for k in ("m", "K", "H") if d[k] is not None}
    if hasattr(scheme, "comm_delay"):
        out["comm_delay"] = float(scheme.comm_delay)
    if isinstance(scheme, GraphScheme):  # the graph as built (a random one's spec records its seed)
        out["topology"] = scheme.topology.spec
    return {**out, "cluster": cluster.kind, "label": scheme.label}


def _runtime(scheme: Scheme, src: Delay | Cluster, iterations: int, seed: Any) -> dict[str, Any]:
    return runtime_point(scheme, src, iterations, seed).as_columns()


def _problem(params: dict[str, Any], spec: ErrorSpec, ctx: Context | None) -> Problem | GradientProblem:
    """The point's problem: the quadratic of ``[compute].error``, or a logreg problem of the
    context (``problem`` and ``lam`` of the point)."""
    name = params.get("problem", "quadratic")
    if name == "quadratic":
        assert spec.problem is not None  # load_grid asks for it when a point is the quadratic
        return spec.problem
    assert ctx is not None
    return ctx.problems[(name, params.get("lam"))]


def _error(scheme: Scheme, src: Delay | Cluster, spec: ErrorSpec, seed: Any, problem: Problem | GradientProblem,
           schedule: str | None = None) -> dict[str, Any]:
    """The error part's columns; ``schedule`` (a spec, or None / ``none``: K or H fixed).  A
    schedule's first value replaces the point's K or H, and the row says so in that column."""
    sched = None if schedule in (None, "none") else schedule
    if isinstance(problem, Problem):
        curve = error_curve(scheme, src, problem, spec.time, spec.points, spec.replicas, seed, spec.lr,
                            spec.gamma, spec.p0, bound=False, model_paths=None, eps=spec.eps, schedule=sched)
    else:
        curve = problem_error_curve(scheme, src, problem, spec.eta, spec.b, spec.time, spec.points, spec.replicas,
                                    seed, spec.lr, spec.gamma, spec.p0, eps=spec.eps,
                                    target_accuracy=spec.target_accuracy, schedule=sched)
    out = curve.as_columns()
    run = curve.simulated.schedule
    if run is not None:
        out[run.schedule.parameter] = run.schedule.start
    return out


def compute_point(index: int, params: dict[str, Any], seed: int, ctx: Context, runtime: bool,
                  error: ErrorSpec | None) -> dict[str, Any]:
    """Point ``index``'s row: its parameters, its results, and ``error`` (None, or what the
    library refused and why)."""
    row: dict[str, Any] = {"point": index, **params}
    try:
        scheme, src, cluster = build(params, ctx)
    except ParameterError as exc:  # the point itself: a row saying why, never a gap
        row["error"] = str(exc)
        return row
    row.update(_effective(scheme, cluster))
    stream = point_seed(seed, index)
    refused = []
    if runtime:
        try:
            row.update(_runtime(scheme, src, params["iterations"], stream))
        except ParameterError as exc:
            refused.append(f"[runtime] {exc}")
    if error is not None:
        try:
            row.update(_error(scheme, src, error, stream, _problem(params, error, ctx), params.get("schedule")))
        except ParameterError as exc:
            refused.append(f"[error curve] {exc}")
    row["error"] = "; ".join(refused) or None
    return row


def compute_task(points: list[tuple[int, dict[str, Any]]], seed: int, ctx: Context, runtime: bool,
                 error: ErrorSpec | None) -> list[dict[str, Any]]:
    """The rows of a task's points, in order (what a Dask worker runs)."""
    return [compute_point(i, p, seed, ctx, runtime, error) for i, p in points]


def point_cost(scheme: Scheme, src: Delay | Cluster, params: dict[str, Any], runtime: bool,
               error: ErrorSpec | None, ctx: Context | None = None) -> float:
    """Expected cost of a point in the Monte Carlo cost units (≈ ns of one core): the runtime
    part by :func:`~distsgd.montecarlo.simulation_cost`, warm-up included, plus
    :data:`ANALYTIC_COST`; the error part as replicas × updates × (one update's timing cost +
    K·d coordinates of SGD; b·d per gradient on a logreg problem), the updates from E[X] (an
    estimate for packing tasks, within a small factor; never used to refuse anything)."""
    cost = 0.0
    if runtime:
        cost += ANALYTIC_COST + simulation_cost(scheme, params["iterations"], src)
    if error is not None:
        per_update = mean_time(src) * scheme.steps_per_update
        if scheme.renewal:
            per_update *= scheme.grads_per_update / scheme.m
        updates = min(error.time / per_update, limits.MAX_UPDATES) if 0 < per_update < math.inf else 0.0
        grads = 1 if scheme.averages_models else scheme.grads_per_update
        problem = _problem(params, error, ctx)
        rows = 1 if isinstance(problem, Problem) else error.b  # the quadratic's gradient costs d, a batch's b·d
        unit = iteration_cost(scheme, src) + grads * rows * problem.dim * SGD_COST
        cost += ANALYTIC_COST + error.replicas * updates * unit
    return cost

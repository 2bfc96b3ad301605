"""One typed record per kind of result, built by one function each; every surface is a view.

A :class:`RuntimePoint` is E[T] per iteration of one scheme on one source of job times: the
analytic estimate (value, kind, method), the Monte Carlo run (mean, 95 % interval, iterations,
seed, staleness, and its *note* when the simulated statistic has an infinite mean or variance),
or why it was not simulated.  The command line's JSON (DESIGN §5), the dashboard's chart rows
and tables (:mod:`distsgd.curves`, :mod:`distsgd.whatif`) and the Dask sweep's Parquet columns
(:mod:`distsgd.sweeps`, DESIGN §8) are its three views: :meth:`RuntimePoint.as_json`,
:meth:`RuntimePoint.as_row` and :meth:`RuntimePoint.as_columns`, so a field added here reaches
every surface, and a note cannot be dropped by one of them.  An :class:`ErrorCurve` is the same
for error against wall-clock time (simulated SGD, the bound with its γ and p₀, the model curve,
the times to ε): :func:`error_curve` builds it; the CLI's JSON, a chart's rows and table and the
sweep's columns are its views.

A time to reach ε (:class:`~distsgd.error.TargetTime`: from Dutta et al.'s bound on E[T], or from
the simulated mean curve with the band of its 95 % edges, DESIGN §3) has one set of column names
on every surface: :func:`target_columns`.

:func:`share_budget` is the one way a Monte Carlo budget is split among the points of a chart,
a table or a what-if: cheapest first, each point gets what is left divided by the points left
and runs the longest it can within it (halving from ``most``), so what a cheap point does not
use goes to the dearer ones and the total stays within the budget.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import limits
from .analytic import expected_runtime
from .clusters import Cluster
from .delays import Delay
from .error import (
    BoundCurve,
    ErrorSimulation,
    LearningRate,
    ModelCurve,
    Problem,
    bound_time_to_target,
    bound_vs_time,
    exact_error_vs_time,
    simulate_error,
    simulated_time_to_target,
)
from .error.general import Floor, linearised_floor, simulate_problem
from .error.targets import TargetTime, simulated_time_to_metric
from .estimate import Estimate
from .montecarlo import RuntimeSample, simulate_runtime, simulation_cost
from .params import from_jsonable, jsonable
from .problems.base import GradientProblem
from .random import Seed
from .reasons import Phrase
from .schedules import Schedule
from .schemes import GraphScheme, Scheme

__all__ = ["RuntimePoint", "runtime_point", "ErrorCurve", "error_curve", "problem_error_curve", "bound_problem",
           "share_budget", "target_columns", "accuracy_columns",
           "note_parts", "finite", "MIN_ITERATIONS", "NOTE_JSON_MAX_CHARS"]

#: the longest ``mc_note_parts`` cell of a results file that is read as sentences (the library writes
#: a few hundred characters; a longer one is shown by its English text alone)
NOTE_JSON_MAX_CHARS = 4096
#: the shortest Monte Carlo run a point is given (a point whose run of this length does not fit its
#: share of the budget is not simulated)
MIN_ITERATIONS = 300


def finite(x: float | None) -> float | None:
    """``x`` as a plain float, or None when it is None, infinite or NaN (JSON has no ∞)."""
    return None if x is None or not math.isfinite(x) else float(x)


@dataclass(frozen=True)
class RuntimePoint:
    """E[T] per iteration of ``scheme`` on one source: analytic and Monte Carlo (see the module).

    ``monte_carlo`` is None when the point was not simulated, and then ``mc_skipped`` says why.
    """

    scheme: Scheme
    analytic: Estimate
    monte_carlo: RuntimeSample | None
    mc_skipped: str | None = None

    @property
    def note(self) -> str:
        """The Monte Carlo run's warning (infinite mean or variance, a warm-up too short), or ''."""
        return self.monte_carlo.note if self.monte_carlo is not None else ""

    def as_json(self) -> dict[str, Any]:
        """The command line's JSON (DESIGN §5): the scheme's parameters, ``analytic {value, kind,
        method}`` (value null unless finite) and ``monte_carlo {mean, ci95, iterations, seed}``
        with ``staleness_mean``/``fresh_fraction`` for the asynchronous schemes and ``note``."""
        d = self.scheme.as_dict()
        out: dict[str, Any] = {**d, "analytic": {"value": finite(self.analytic.value), "kind": self.analytic.kind,
                                                 "method": self.analytic.method}}
        if hasattr(self.scheme, "comm_delay"):
            out["comm_delay"] = self.scheme.comm_delay
        if isinstance(self.scheme, GraphScheme):
            out["topology"] = self.scheme.topology_json()
        mc = self.monte_carlo
        if mc is None:
            out["monte_carlo"] = {"skipped": self.mc_skipped}
            return out
        sim: dict[str, Any] = {"mean": finite(mc.mean), "ci95": [finite(mc.ci95[0]), finite(mc.ci95[1])],
                               "iterations": mc.iterations, "seed": mc.seed}
        if mc.staleness_mean is not None:
            sim.update(staleness_mean=mc.staleness_mean, fresh_fraction=mc.fresh_fraction)
        if mc.note:
            sim["note"] = mc.note
        out["monte_carlo"] = sim
        return out

    def as_row(self) -> dict[str, Any]:
        """A chart's or table's row (flat): the scheme's parameters and label, ``analytic``,
        ``kind``, ``method``, ``analytic_std``/``analytic_error``; ``mc_mean``, ``mc_low``,
        ``mc_high``, ``mc_iterations``, ``mc_note`` (and the staleness) or ``mc_skipped``."""
        a = self.analytic
        row: dict[str, Any] = {**self.scheme.as_dict(), "label": self.scheme.label,
                               "grads_per_update": self.scheme.grads_per_update, "analytic": a.value,
                               "kind": a.kind, "method": a.method, "analytic_std": a.std, "analytic_error": a.error}
        mc = self.monte_carlo
        if mc is not None:
            row.update(mc_mean=mc.mean, mc_low=mc.ci95[0], mc_high=mc.ci95[1], mc_iterations=mc.iterations,
                       staleness_mean=mc.staleness_mean, fresh_fraction=mc.fresh_fraction,
                       mc_note=mc.note or None, mc_note_parts=mc.note_parts or None)
        elif self.mc_skipped is not None:
            row["mc_skipped"] = self.mc_skipped
        return row

    def as_columns(self) -> dict[str, Any]:
        """The sweep's Parquet columns (DESIGN §8): ``analytic_value`` (null unless finite),
        ``analytic_kind``, ``analytic_method``, ``mc_mean``, ``mc_ci_low``, ``mc_ci_high``,
        ``mc_iterations``, ``mc_note`` (and ``mc_note_parts``: its sentences as JSON, so a reader
        can say them in another language), ``staleness_mean``, ``fresh_fraction``."""
        a, mc = self.analytic, self.monte_carlo
        out: dict[str, Any] = {"analytic_value": finite(a.value), "analytic_kind": a.kind, "analytic_method": a.method}
        if mc is not None:
            out.update(mc_mean=float(mc.mean), mc_ci_low=float(mc.ci95[0]), mc_ci_high=float(mc.ci95[1]),
                       mc_iterations=int(mc.iterations), mc_note=mc.note or None,
                       mc_note_parts=json.dumps(jsonable(mc.note_parts), ensure_ascii=False) if mc.note else None,
                       staleness_mean=mc.staleness_mean, fresh_fraction=mc.fresh_fraction)
        return out


def note_parts(cell: object) -> tuple[Phrase, ...] | None:
    """The Monte Carlo warnings of a results file's ``mc_note_parts`` cell (the JSON that
    :meth:`RuntimePoint.as_columns` writes), or None unless it is exactly that: at most
    :data:`NOTE_JSON_MAX_CHARS` characters, a list of the library's ``mc_*`` phrases whose fields
    fill their templates (a file's cell is not trusted; the caller shows the English ``mc_note``)."""
    if not isinstance(cell, str) or len(cell) > NOTE_JSON_MAX_CHARS:
        return None
    try:
        data = json.loads(cell)
        parts = tuple(from_jsonable(d) for d in data) if isinstance(data, list) else None
        if parts is None or not all(isinstance(p, Phrase) and p.code.startswith("mc_") for p in parts):
            return None
        "".join(map(str, parts))  # every template fills with its fields (nested phrases included)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError):
        return None  # not the library's JSON: unknown code, missing field, wrong shape
    return parts


def runtime_point(scheme: Scheme, src: Delay | Cluster, iterations: int | None, seed: Seed, *,
                  analytic_work: float = limits.ANALYTIC_WORK, skipped: str | None = None) -> RuntimePoint:
    """The analytic E[T] (:func:`~distsgd.analytic.expected_runtime`) and a Monte Carlo run of
    ``iterations`` from ``seed`` (:func:`~distsgd.montecarlo.simulate_runtime`, which checks the
    count); with ``iterations`` None, ``skipped`` says why the point was not simulated."""
    est = expected_runtime(scheme, src, work=analytic_work)
    if iterations is None:
        return RuntimePoint(scheme, est, None, skipped)
    mc = simulate_runtime(scheme, src, iterations, seed=seed, keep_times=False)
    return RuntimePoint(scheme, est, mc)


def share_budget(points: Sequence[tuple[Scheme, Delay | Cluster]], budget: float, most: int,
                 least: int = MIN_ITERATIONS) -> list[int]:
    """Each point's Monte Carlo run length within ``budget`` cost units in all (0: not simulated).

    Cheapest first (by the cost of a run of ``least`` iterations), point k of n gets the budget
    left divided by the n − k points left and runs the longest it can within that: ``most``,
    halved until its cost fits or it reaches ``least`` (a replay's length is fixed by its trace),
    0 when even that does not fit.  What a cheap point does not use goes to the dearer ones.
    """
    def fit(scheme: Scheme, src: Delay | Cluster, share: float) -> tuple[int, float]:
        n = most
        while n > least and simulation_cost(scheme, n, src) > share:
            n //= 2
        cost = simulation_cost(scheme, n, src)
        return (n, cost) if cost <= share else (0, 0.0)

    floor = [simulation_cost(s, least, src) for s, src in points]
    runs, left = [0] * len(points), budget
    for k, i in enumerate(sorted(range(len(points)), key=floor.__getitem__)):
        runs[i], cost = fit(*points[i], left / (len(points) - k))
        left -= cost
    return runs


def target_columns(bound: TargetTime | None = None, simulated: TargetTime | None = None) -> dict[str, Any]:
    """A time to ε as columns, the same names on every surface (the sweep's Parquet, DESIGN §8):
    ``bound_time_to_target`` with ``bound_note`` (how it was obtained, None for the plain bound;
    ``bound_why``, when the bound gives no time, the reason for the dashboard to translate: a
    Phrase, not a column of any file),
    ``time_to_target`` with ``time_to_target_low``/``_high`` (the simulated mean and its band)."""
    out: dict[str, Any] = {}
    if bound is not None:
        out.update(bound_time_to_target=bound.value, bound_note=bound.source)
        if bound.why is not None:  # a chart's: the reason as a Phrase (no file has this column)
            out["bound_why"] = bound.why
    if simulated is not None:
        out.update(time_to_target=simulated.value, time_to_target_low=simulated.low,
                   time_to_target_high=simulated.high)
    return out


def accuracy_columns(t: TargetTime | None) -> dict[str, Any]:
    """The time to a target test accuracy as columns (``time_to_accuracy`` and its band
    ``_low``/``_high``: the simulated mean's first grid time at or above the target, inf if
    never); none without a target."""
    if t is None:
        return {}
    return {"time_to_accuracy": t.value, "time_to_accuracy_low": t.low, "time_to_accuracy_high": t.high}


@dataclass(frozen=True)
class ErrorCurve:
    """Error against wall-clock time of ``scheme`` (DESIGN §3): the simulated SGD (mean and 95 %
    band over replicas, measured staleness), Dutta et al.'s bound with the γ and p₀ it used, the
    exact model curve where there is one, the E[T] the time axis used (``axis``: None when each
    part found its own), and with a target ε the times to reach it.  Views: :meth:`as_json` (the
    command line, DESIGN §5), :meth:`as_rows` and :meth:`summary` (a chart's long rows and its
    table), :meth:`as_columns` (the sweep's Parquet, DESIGN §8)."""

    scheme: Scheme
    simulated: ErrorSimulation
    bound: BoundCurve | None
    model: ModelCurve | None
    gamma: float | None
    p0: float | None
    axis: Estimate | None = None
    bound_target: TargetTime | None = None
    simulated_target: TargetTime | None = None
    #: a real problem (DESIGN §9): the problem, its linearised floor, the time to a test accuracy
    problem: GradientProblem | None = None
    floor: Floor | None = None
    accuracy_target: TargetTime | None = None
    target_accuracy: float | None = None

    def as_json(self) -> dict[str, Any]:
        """``time``, ``bound`` (+ kind, note, the constants it used), ``exact_model`` and
        ``simulated`` (mean, band, replicas; staleness for the asynchronous schemes), non-finite
        numbers as null."""
        sim, bound, model = self.simulated, self.bound, self.model
        assert bound is not None  # (the command line always draws the bound)
        simulated: dict[str, Any] = {"mean": _floats(sim.mean), "ci95_low": _floats(sim.ci95_low),
                                     "ci95_high": _floats(sim.ci95_high), "replicas": sim.replicas}
        if not self.scheme.fresh:
            simulated.update(staleness_mean=sim.staleness_mean, fresh_fraction=sim.fresh_fraction,
                             gamma_measured=finite(sim.gamma_measured))
        if sim.metrics and self.problem is None:  # a graph's mean node error and consensus distance
            simulated["metrics"] = {name: {"mean": _floats(m), "ci95_low": _floats(lo), "ci95_high": _floats(hi)}
                                    for name, (m, lo, hi) in sim.metrics.items()}
        rt = bound.runtime
        return {"time": _floats(sim.time), "bound": _floats(bound.values), "bound_kind": bound.kind,
                "bound_note": bound.note or None,
                "bound_params": {"gamma": self.gamma, "p0": self.p0, "floor": bound.floor,
                                 "runtime": finite(rt.value) if rt and rt.value else None,
                                 "runtime_method": rt.method if rt else None},
                "exact_model": None if model is None else {
                    "mean": _floats(model.mean), "stderr": _floats(model.stderr), "paths": model.paths,
                    "method": ModelCurve.METHOD},
                "simulated": simulated, **self._problem_json(),
                **({"schedule": sim.schedule.as_json()} if sim.schedule is not None else {})}

    def _problem_json(self) -> dict[str, Any]:
        """A real problem's keys of the JSON (DESIGN §9): ``problem``, ``floor``, ``metrics`` and
        ``time_to_target``; nothing for the quadratic."""
        if self.problem is None:
            return {}
        pb, sim = self.problem, self.simulated
        info = getattr(pb, "info", {})
        out: dict[str, Any] = {
            "problem": {"name": pb.name, "n_train": info.get("n_train", getattr(pb, "n", None)),
                        "n_test": info.get("n_test"), "dim": pb.dim, "classes": getattr(pb, "classes", None),
                        "lam": getattr(pb, "lam", None), "dropped_columns": info.get("dropped_columns"),
                        "constants": pb.constants.as_json()},
            "floor": None if self.floor is None else self.floor.as_json(),
            "metrics": {name: {"mean": _floats(m), "ci95_low": _floats(lo), "ci95_high": _floats(hi)}
                        for name, (m, lo, hi) in sim.metrics.items()}}
        targets: dict[str, Any] = {}
        if self.simulated_target is not None:
            targets["error"] = {**(_target_json(self.simulated_target) or {}),
                                "bound": _target_json(self.bound_target)}
        if self.accuracy_target is not None:
            targets["test_accuracy"] = {"target": self.target_accuracy, **(_target_json(self.accuracy_target) or {})}
        out["time_to_target"] = targets
        return out

    def as_rows(self) -> list[dict[str, Any]]:
        """One row per grid time: ``bound``, ``model`` (and its standard error), the simulated
        mean and band; the scheme by its label."""
        sim, bound, model = self.simulated, self.bound, self.model
        n = len(sim.time)

        def floats(v: Any) -> list[Any]:  # Python floats (None where there is no such curve), in one call
            return [None] * n if v is None else np.asarray(v, dtype=float).tolist()

        columns = {"time": floats(sim.time), "bound": floats(None if bound is None else bound.values),
                   "model": floats(None if model is None else model.mean),
                   "model_stderr": floats(None if model is None else model.stderr),
                   "simulated_mean": floats(sim.mean), "simulated_low": floats(sim.ci95_low),
                   "simulated_high": floats(sim.ci95_high),
                   **{f"{name}_{part}": floats(v) for name, band in sim.metrics.items()
                      for part, v in zip(("mean", "low", "high"), band, strict=True)}}
        label = self.scheme.label
        return [{"scheme": label, **{k: v[j] for k, v in columns.items()}} for j in range(n)]

    def summary(self) -> dict[str, Any]:
        """The chart's table row: the bound's kind, note and floor, the E[T] it used, γ and p₀,
        the measured staleness, and the Monte Carlo note of the time axis's E[T]."""
        sim, bound = self.simulated, self.bound
        assert bound is not None
        rt = bound.runtime
        out: dict[str, Any] = {
            "scheme": self.scheme.label, "bound_kind": bound.kind, "bound_note": bound.note, "floor": bound.floor,
            "runtime": rt.value if rt else None, "runtime_kind": rt.kind if rt else None,
            "gamma": self.gamma, "p0": self.p0, "staleness_mean": sim.staleness_mean,
            "fresh_fraction": sim.fresh_fraction, "replicas": sim.replicas,
            "staleness_counts": None if sim.staleness_counts is None else [int(c) for c in sim.staleness_counts]}
        if bound.why is not None:
            out["bound_why"] = bound.why
        if self.floor is not None:
            out["linearised_floor"] = self.floor.value
        if self.axis is not None and self.axis.notes:
            out.update(mc_note="".join(map(str, self.axis.notes)), mc_note_parts=self.axis.notes)
        return out

    def as_columns(self) -> dict[str, Any]:
        """The sweep's columns: the times to ε (:func:`target_columns`), the final error, the
        SGD's measured staleness, γ and p₀; on a real problem also the linearised floor, the
        final mean of each metric (``final_test_accuracy``, …) and the time to the target test
        accuracy (:func:`accuracy_columns`)."""
        sim = self.simulated
        out = {**target_columns(self.bound_target, self.simulated_target), "final_error": float(sim.mean[-1]),
               "final_schedule_value": None if sim.schedule is None else float(sim.schedule.grid_value[0][-1]),
               "sgd_staleness_mean": sim.staleness_mean, "sgd_fresh_fraction": sim.fresh_fraction,
               "gamma": self.gamma, "p0": self.p0}
        if self.floor is not None:
            out["linearised_floor"] = self.floor.value
        out.update({f"final_{name}": float(band[0][-1]) for name, band in sim.metrics.items()})
        return {**out, **accuracy_columns(self.accuracy_target)}


def _floats(a: Any) -> list[float | None] | None:
    return None if a is None else [finite(float(v)) for v in a]


def _target_json(t: TargetTime | None) -> dict[str, Any] | None:
    if t is None:
        return None
    return {"value": finite(t.value) if t.value is not None else None, "never": t.value == math.inf,
            "low": finite(t.low), "high": finite(t.high), "source": t.source}


def bound_problem(problem: GradientProblem, eta: float, b: int) -> Problem | None:
    """The constants Dutta et al.'s bound takes (DESIGN §3) from a real problem's (DESIGN §9):
    L, μ, the everywhere bound σ² and F0, with the run's η and b (the bound uses nothing else of
    the model problem); None when one of them is unknown (a user's functions without them)."""
    c = problem.constants
    if c.L.value is None or c.mu.value is None or c.sigma2_bound.value is None or c.F0.value is None:
        return None
    return Problem(eta=eta, L=c.L.value, mu=c.mu.value, sigma2=c.sigma2_bound.value, b=b, f0=max(c.F0.value, 1e-300),
                   dim=1)


def problem_error_curve(scheme: Scheme, src: Delay | Cluster, problem: GradientProblem, eta: float, b: int,
                        time: float, points: int, replicas: int, seed: Seed, lr: LearningRate | None = None,
                        gamma: float | None = None, p0: float | None = None, *, runtime: Estimate | None = None,
                        eps: float | None = None, target_accuracy: float | None = None,
                        schedule: Schedule | str | None = None, **caps: Any) -> ErrorCurve:
    """Simulated SGD on a real problem (:func:`~distsgd.error.general.simulate_problem`), the
    bound with the problem's constants (:func:`bound_problem`), the linearised floor, and with
    ``eps`` / ``target_accuracy`` the times to reach them; no exact curve (DESIGN §9).  With a
    ``schedule`` (DESIGN §13) no bound (it is for a fixed K or H) and the floor at the last K."""
    sim = simulate_problem(scheme, src, problem, eta, b, time, points, replicas, seed, lr, runtime=runtime,
                           schedule=schedule, **caps)
    g, p = sim.bound_constants(gamma, p0)
    proxy = bound_problem(problem, eta, b)
    bound_target: TargetTime | None
    if sim.schedule is not None:
        curve, bound_target = _no_bound_for(sim, runtime)
    elif proxy is None:
        why = Phrase("bound_needs_constants")
        curve = BoundCurve(sim.time, None, "unavailable", None, None, "", why, runtime)
        bound_target = TargetTime.unavailable(why)
    else:
        curve = bound_vs_time(scheme, src, proxy, sim.time, g, p, seed=seed, runtime=runtime)
        bound_target = None if eps is None else bound_time_to_target(scheme, src, proxy, eps, g, p, seed=seed,
                                                                      runtime=runtime)
    targets = (bound_target, simulated_time_to_target(sim, eps)) if eps is not None else (None, None)
    acc = None if target_accuracy is None else simulated_time_to_metric(sim, "test_accuracy", target_accuracy)
    return ErrorCurve(scheme, sim, curve, None, g, p, runtime, bound_target=targets[0], simulated_target=targets[1],
                      problem=problem,
                      floor=linearised_floor(_at_last_value(scheme, sim), problem, eta, b), accuracy_target=acc,
                      target_accuracy=target_accuracy)


def error_curve(scheme: Scheme, src: Delay | Cluster, problem: Problem, time: float, points: int, replicas: int,
                seed: Seed, lr: LearningRate | None = None, gamma: float | None = None, p0: float | None = None, *,
                sim_seed: Seed = None, runtime: Estimate | None = None, bound: bool = True,
                model_paths: int | None = 2000, model_seed: Seed = None, eps: float | None = None,
                schedule: Schedule | str | None = None, **caps: Any) -> ErrorCurve:
    """Simulated SGD on ``linspace(0, time, points)`` (:func:`~distsgd.error.simulate_error`,
    stream ``sim_seed``, default ``seed``; ``caps``: its ``max_work``, ``max_updates``,
    ``max_timing_cost``), γ and p₀ as given else measured
    (:meth:`~distsgd.error.ErrorSimulation.bound_constants`), then the bound on the same grid
    (``bound``), the exact model curve from ``model_paths`` timing paths (None: none; stream
    ``model_seed``, default ``seed``) and, with ``eps``, the times to reach it from the bound and
    from the simulated mean.  ``runtime``: the E[T] every part uses (else each finds its own
    from ``seed``, :func:`~distsgd.error.timing.runtime_for_time_axis`).  ``schedule`` (DESIGN
    §13) changes K or H during the run: then no bound and no exact curve."""
    sim = simulate_error(scheme, src, problem, time, points, replicas, seed if sim_seed is None else sim_seed, lr,
                         runtime=runtime, schedule=schedule, **caps)
    g, p = sim.bound_constants(gamma, p0)
    if sim.schedule is not None:  # no bound and no exact curve: both are for a fixed K or H
        no_bound, no_target = _no_bound_for(sim, runtime)
        return ErrorCurve(scheme, sim, no_bound if bound else None, None, g, p, runtime,
                          *((no_target, simulated_time_to_target(sim, eps)) if eps is not None else (None, None)))
    curve = bound_vs_time(scheme, src, problem, sim.time, g, p, seed=seed, runtime=runtime) if bound else None
    model = (None if model_paths is None else
             exact_error_vs_time(scheme, src, problem, sim.time, paths=model_paths,
                                 seed=seed if model_seed is None else model_seed, runtime=runtime))
    targets = ((bound_time_to_target(scheme, src, problem, eps, g, p, seed=seed, runtime=runtime),
                simulated_time_to_target(sim, eps)) if eps is not None else (None, None))
    return ErrorCurve(scheme, sim, curve, model, g, p, runtime, *targets)


def _no_bound_for(sim: ErrorSimulation, runtime: Estimate | None) -> tuple[BoundCurve, TargetTime]:
    """A scheduled run's: no bound and no exact curve (both are for a fixed K or H)."""
    why = Phrase("bound_schedule")
    return (BoundCurve(sim.time, None, "unavailable", None, None, "", why, runtime), TargetTime.unavailable(why))


def _at_last_value(scheme: Scheme, sim: ErrorSimulation) -> Scheme:
    """The scheme with the K or H in force at the end of a scheduled run (the mean over replicas,
    rounded: the linearised floor's K); the scheme itself without a schedule."""
    if sim.schedule is None:
        return scheme
    parameter = type(scheme).schedulable
    last = int(round(float(sim.schedule.grid_value[0][-1])))
    return dataclasses.replace(scheme, **{parameter: last}) if parameter else scheme

"""Command line: ``python -m distsgd runtime …`` and ``python -m distsgd error …`` (DESIGN §5),
``python -m distsgd fit --trace FILE …`` (§7), ``python -m distsgd sweep GRID.toml --out FILE …``
(§8); the only user of argparse.

Bad input exits with status 2 and one line on stderr naming the parameter; nothing
prints a traceback (set ``DISTSGD_DEBUG=1`` to see one for an internal error).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from .clusters import Cluster, TraceCluster, as_source, make_cluster
from .delays import Delay
from .error import (
    GAMMA,
    P0,
    LearningRate,
    ModelCurve,
    Problem,
)
from .fit import Fit, fit_laws, fit_report
from .params import ParameterError
from .problems import TARGET_ACCURACY, builtin
from .random import SEED
from .records import error_curve, problem_error_curve, runtime_point
from .schedules import Schedule, check_schedule, schedule
from .schemes import GraphScheme, Scheme, make_scheme
from .sweeps import run_sweep
from .traces import THRESHOLD, Trace, load_trace

__all__ = ["main", "build_parser"]


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (``distsgd runtime: --m: invalid int value``)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(f"{self.prog}: {message}")


def _finite(x: Any) -> Any:
    """JSON has no NaN/inf: map them to null."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _seed(text: str) -> int:
    """--seed: an integer read exactly (int(), not through a float)."""
    try:
        return int(SEED.check(text, "seed"))
    except ParameterError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_scheme_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scheme", required=True, help="sync, k-sync, k-batch-sync, async, k-async, "
                   "k-batch-async or local-sgd")
    p.add_argument("--m", type=int, default=None, help="number of workers (given by --workers or --trace "
                   "when those are used; must match if given)")
    p.add_argument("--K", type=int, default=None, help="gradients per update (k-* schemes)")
    p.add_argument("--H", type=int, default=None, help="local steps per round (local-sgd)")
    p.add_argument("--topology", default=None, help="the graph of d-psgd and ad-psgd (DESIGN §12): ring, torus, "
                   "hypercube, complete, star, exponential, random-regular(d=…), edges(file=…); default ring")
    p.add_argument("--comm-delay", type=float, default=0.0, dest="comm_delay",
                   help="averaging time per round D (local-sgd)")
    p.add_argument("--delay", default=None, help="delay spec, e.g. 'exp(rate=1)', "
                   "'pareto(xm=1, alpha=2.5)', 'empirical(file=trace.csv)'")
    g = p.add_argument_group("stragglers (DESIGN §7): who is slow, and for how long")
    g.add_argument("--slow", type=int, default=None, help="b workers always slow (with --slowdown)")
    g.add_argument("--slowdown", type=float, default=None, help="s ≥ 1: a slow mini-batch takes s·X")
    g.add_argument("--slow-fraction", type=float, default=None, dest="slow_fraction",
                   help="π in [0, 1): long-run fraction of slow mini-batches (random slowdowns, with --slowdown)")
    g.add_argument("--persistence", type=float, default=None,
                   help="ρ in [0, 1): how long a slow spell lasts (0: independent; 0.99: ~100 mini-batches)")
    g.add_argument("--workers", default=None, help="groups instead of --m/--delay, e.g. "
                   "'6*exp(rate=1) + 2*exp(rate=0.5)'")
    g.add_argument("--trace", default=None, help="a measured trace (CSV, TSV or Parquet) instead of --delay")
    g.add_argument("--trace-mode", default=None, dest="trace_mode", choices=("replay", "per-worker", "pooled"),
                   help="replay each worker's own times in order (default), draw from each worker's own "
                   "times, or from all times pooled")
    g.add_argument("--trace-columns", default=None, dest="trace_columns",
                   help="worker=COL,step=COL,duration=COL when the layout cannot be detected")
    p.add_argument("--seed", type=_seed, default=None, help="random seed in [0, 2**63 − 1] "
                   "(default: fresh, and printed)")
    p.add_argument("--json", action="store_true", help="print JSON")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="distsgd", description="Stragglers and staleness in distributed SGD: "
                     "runtime per iteration and error against wall-clock time.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    rt = sub.add_parser("runtime", help="expected runtime per iteration: analytic and Monte Carlo")
    _add_scheme_args(rt)
    rt.add_argument("--iterations", type=int, default=100_000, help="Monte Carlo iterations")
    _add_error_parser(sub)
    _add_fit_parser(sub)
    _add_sweep_parser(sub)
    return parser


def _resolve_seed(seed: int | None) -> int:
    """The seed to use and print: exactly the one given (an int, never through a float), or a
    fresh one."""
    if seed is None:
        entropy = np.random.SeedSequence().entropy
        assert isinstance(entropy, int)
        return entropy % (2**63 - 1)
    return int(SEED.check(seed, "seed"))


def _cluster(args: argparse.Namespace) -> Cluster:
    """The cluster the flags describe (one validation: :func:`distsgd.clusters.make_cluster`)."""
    if args.trace is None and args.workers is None and args.delay is None:
        raise ParameterError("delay", "give_delay_cli")
    if args.trace is None and args.workers is None and args.m is None:
        raise ParameterError("m", "give_m_cli")
    return make_cluster(m=args.m, delay=args.delay, slow=args.slow, slowdown=args.slowdown,
                        slow_fraction=args.slow_fraction, persistence=args.persistence, workers=args.workers,
                        trace=args.trace, trace_mode=args.trace_mode, trace_columns=args.trace_columns)


def _model(args: argparse.Namespace) -> tuple[Scheme, Delay | Cluster, Cluster]:
    """The scheme and what its workers draw from: the delay when the cluster is i.i.d. (the same
    numbers as without a cluster), else the cluster."""
    cluster = _cluster(args)
    scheme = make_scheme(args.scheme, cluster.m, K=args.K, H=args.H, comm_delay=args.comm_delay,
                         topology=args.topology)
    return scheme, as_source(cluster, cluster.m), cluster


def _scheme_json(scheme: Scheme) -> dict[str, Any]:
    """The JSON's scheme fields: ``scheme``, ``m``, ``K``, ``H``, and for the decentralised schemes
    the ``topology`` object of DESIGN §12 (spec, m, degrees, spectral gap)."""
    d = scheme.as_dict()
    out: dict[str, Any] = {k: d[k] for k in ("scheme", "m", "K", "H")}
    if isinstance(scheme, GraphScheme):
        out["topology"] = scheme.topology_json()
    return out


def _delay_text(cluster: Cluster) -> str | None:
    """The JSON ``delay``: the one law the cluster derives from, if it has one."""
    d = getattr(cluster, "delay", None)
    return str(d) if isinstance(d, Delay) else None


def _cluster_json(cluster: Cluster) -> dict[str, Any]:
    """The JSON ``cluster`` of ``runtime`` and ``error`` (DESIGN §7): ``kind`` and its parameters;
    for a trace also what reading it counted, as in the ``fit`` JSON: ``duplicates`` (repeated
    (worker, step) rows, the first kept), ``dropped_steps`` (steps without a time of every worker:
    not replayed) and ``missing`` ((worker, step) pairs of the grid without a time)."""
    out = cluster.as_dict()
    if isinstance(cluster, TraceCluster):
        t = cluster.trace
        out.update(duplicates=t.duplicates, dropped_steps=t.dropped_steps, missing=t.missing)
    return out


def _trace_line(cluster: Cluster, prefix: str) -> list[str]:
    """The text output's line on a trace, its counts (``Trace.describe``); none for other kinds."""
    return [prefix + cluster.trace.describe()] if isinstance(cluster, TraceCluster) else []


def run_runtime(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    scheme, delay, cluster = _model(args)
    seed = _resolve_seed(args.seed)
    point = runtime_point(scheme, delay, args.iterations, seed)
    est, mc = point.analytic, point.monte_carlo
    assert mc is not None  # iterations ≥ 1 (checked by simulate_runtime's domain)
    view = point.as_json()
    out: dict[str, Any] = {**_scheme_json(scheme), "delay": _delay_text(cluster),
                           "cluster": _cluster_json(cluster), "analytic": view["analytic"],
                           "monte_carlo": {**view["monte_carlo"], "seed": seed}}
    if "comm_delay" in view:
        out["comm_delay"] = view["comm_delay"]
    analytic = ("—" if est.value is None else f"{est.value:.6g}") + f"  ({est.kind}: {est.method})"
    lines = [
        f"scheme       {scheme.label}",
        (f"delay        {delay}   [{delay.label}, E[X] = {delay.mean:.6g}]" if isinstance(delay, Delay) else
         f"cluster      {cluster.label}"),
        *_trace_line(cluster, "trace        "),
        f"analytic     {analytic}",
        f"monte carlo  {mc.mean:.6g}  95% CI [{mc.ci95[0]:.6g}, {mc.ci95[1]:.6g}]  "
        f"({mc.iterations} iterations, seed {seed})",
    ]
    if mc.staleness_mean is not None:
        lines.append(f"staleness    mean {mc.staleness_mean:.4g}, fresh fraction {mc.fresh_fraction:.4g}")
    if mc.note:
        lines.append(f"note         {mc.note}")
    return out, "\n".join(lines)


def _add_error_parser(sub: Any) -> None:
    p = sub.add_parser("error", help="error against wall-clock time: bound and simulated SGD")
    _add_scheme_args(p)
    for flag, typ, doc in [
        ("--eta", float, "learning rate η"), ("--b", int, "mini-batch size b"),
        ("--time", float, "wall-clock horizon T"),
        ("--points", int, "points on the time grid"), ("--replicas", int, "SGD replicas"),
    ]:
        p.add_argument(flag, type=typ, required=True, help=doc)
    p.add_argument("--problem", default="quadratic",
                   help="quadratic (DESIGN §3; needs --L --mu --sigma2 --f0 --dim), logreg:breast_cancer, "
                        "logreg:digits or logreg:FILE (CSV/TSV with a label column, or LIBSVM)")
    for flag, typ, doc in QUADRATIC_FLAGS:
        p.add_argument(flag, type=typ, default=None, help=doc + " (quadratic only)")
    for flag, typ, doc in LOGREG_FLAGS:
        p.add_argument(flag, type=typ, default=None, dest=flag[2:].replace("-", "_"), help=doc + " (logreg only)")
    p.add_argument("--eps", type=float, default=None, help="error target ε: the times to reach it")
    p.add_argument("--gamma", type=float, default=None,
                   help="staleness factor γ for the async bound (default: measured in the simulation)")
    p.add_argument("--p0", type=float, default=None,
                   help="P(fresh) lower bound p0 (default: measured fraction of fresh gradients)")
    p.add_argument("--lr-rule", default="constant", dest="lr_rule", choices=LearningRate.RULES,
                   help="learning-rate rule for the asynchronous schemes")
    p.add_argument("--C", type=float, default=0.01, help="constant of the adaptive rule")
    p.add_argument("--K-schedule", default=None, dest="K_schedule",
                   help="change K during the run (k-sync, k-async; DESIGN §13): adasync(K0=…, period=…) or "
                   "steps(0:K1, t2:K2, …)")
    p.add_argument("--H-schedule", default=None, dest="H_schedule",
                   help="change H during the run (local-sgd; DESIGN §13): adacomm(H0=…, period=…) or "
                   "steps(0:H1, t2:H2, …)")


QUADRATIC_FLAGS = [("--L", float, "smoothness L"), ("--mu", float, "strong convexity μ"),
                   ("--sigma2", float, "gradient noise σ²"), ("--f0", float, "initial error F0"),
                   ("--dim", int, "model dimension d")]
LOGREG_FLAGS = [("--lam", float, "L2 regularisation λ (default 1e-2)"),
                ("--test-fraction", float, "fraction of rows held out (default 0.25)"),
                ("--split-seed", int, "seed of the stratified split (default 0)"),
                ("--label", str, "the label column of a CSV/TSV file (default: the last)"),
                ("--target-accuracy", float, "test accuracy to reach: the time to reach it")]


def _problem(args: argparse.Namespace) -> Any:
    """The quadratic (its five flags required) or a logreg problem (those flags refused)."""
    if args.problem == "quadratic":
        for flag, _, _ in LOGREG_FLAGS:
            if getattr(args, flag[2:].replace("-", "_")) is not None:
                raise ParameterError(flag[2:].replace("-", "_"), "problem_logreg_only", flag=flag[2:])
        for flag, _, _ in QUADRATIC_FLAGS:
            if getattr(args, flag[2:]) is None:
                raise ParameterError(flag[2:], "problem_quadratic_needs", flag=flag[2:])
        return Problem(eta=args.eta, L=args.L, mu=args.mu, sigma2=args.sigma2, b=args.b, f0=args.f0, dim=args.dim)
    for flag, _, _ in QUADRATIC_FLAGS:
        if getattr(args, flag[2:]) is not None:
            raise ParameterError(flag[2:], "problem_quadratic_only", flag=flag[2:], problem=args.problem[:80])
    if args.target_accuracy is not None:
        TARGET_ACCURACY.check(args.target_accuracy, "target_accuracy")
    options = {k: v for k, v in (("lam", args.lam), ("test_fraction", args.test_fraction),
                                 ("split_seed", args.split_seed), ("label", args.label)) if v is not None}
    return builtin(args.problem, **options)


def _schedule(args: argparse.Namespace, scheme: Scheme) -> Schedule | None:
    """--K-schedule or --H-schedule, checked against the scheme (one of them at most)."""
    if args.K_schedule is not None and args.H_schedule is not None:
        raise ParameterError("schedule", "schedule_one_flag")
    for parameter, spec in (("K", args.K_schedule), ("H", args.H_schedule)):
        if spec is not None:
            return check_schedule(schedule(spec, parameter), scheme)
    return None


def _schedule_lines(sim: Any) -> list[str]:
    """The text output's account of a schedule: the value in force after each checkpoint."""
    rec = sim.schedule
    if rec is None:
        return []
    p = rec.schedule.parameter
    pairs = ", ".join(f"t={t:.4g}: {p}≈{v:.3g} (loss ×{r:.3g})"
                      for t, v, r in zip(rec.checkpoints[:8], rec.value[:8], rec.loss_ratio[:8], strict=True))
    more = f", … ({rec.checkpoints.size} checkpoints)" if rec.checkpoints.size > 8 else ""
    return [f"schedule {rec.schedule.spec}: mean {p} in force after each checkpoint — {pairs or 'none'}{more}"]


def run_error(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    scheme, delay, cluster = _model(args)
    problem = _problem(args)
    sched = _schedule(args, scheme)
    if not isinstance(problem, Problem):
        return _run_problem_error(args, scheme, delay, cluster, problem, sched)
    if args.eps is not None:
        raise ParameterError("eps", "problem_logreg_only", flag="eps")
    gamma = None if args.gamma is None else GAMMA.check(args.gamma, "gamma")
    p0 = None if args.p0 is None else P0.check(args.p0, "p0")
    seed = _resolve_seed(args.seed)
    curve = error_curve(scheme, delay, problem, args.time, args.points, args.replicas, seed,
                        LearningRate(args.lr_rule, args.C), gamma, p0, schedule=sched)
    sim, bound, exact = curve.simulated, curve.bound, curve.model
    assert bound is not None
    out: dict[str, Any] = {**_scheme_json(scheme),
                           "delay": _delay_text(cluster), "cluster": _cluster_json(cluster),
                           **curve.as_json(), "seed": seed}
    idx = np.unique(np.linspace(0, sim.time.size - 1, min(11, sim.time.size)).astype(int))
    lines = [f"scheme {scheme.label}, {'delay ' + str(delay) if isinstance(delay, Delay) else cluster.label}, "
             f"η={problem.eta:g}, L={problem.L:g}, "
             f"μ={problem.mu:g}, σ²={problem.sigma2:g}, b={problem.b}, F0={problem.f0:g}, d={problem.dim}",
             *_trace_line(cluster, "trace: "),
             f"bound: {bound.kind}" + (f" — {bound.note}" if bound.note else
                                       f" (floor {bound.floor:.4g}, E[T] {bound.runtime.value:.4g} "
                                       f"[{bound.runtime.kind}])" if bound.runtime and bound.floor is not None else ""),
             f"{'time':>12} {'bound':>12} {'model':>12} {'simulated':>12} {'95% CI':>25}"]
    for i in idx:
        b = "—" if bound.values is None else f"{bound.values[i]:.5g}"
        e = "—" if exact is None else f"{exact.mean[i]:.5g}"
        lines.append(f"{sim.time[i]:12.5g} {b:>12} {e:>12} {sim.mean[i]:12.5g} "
                     f"[{sim.ci95_low[i]:.5g}, {sim.ci95_high[i]:.5g}]".rjust(0))
    if not scheme.fresh:
        lines.append(f"staleness mean {sim.staleness_mean:.4g}, fresh fraction {sim.fresh_fraction:.4g}, "
                     f"measured γ {sim.gamma_measured if sim.gamma_measured is None else round(sim.gamma_measured, 4)}")
    if exact is not None:
        lines.append(f"model: {ModelCurve.METHOD} ({exact.paths} paths; largest standard error "
                     f"{float(exact.stderr.max()):.2g})")
    lines += _schedule_lines(sim)
    lines.append(f"{sim.replicas} replicas, seed {seed}")
    return out, "\n".join(lines)


def _run_problem_error(args: argparse.Namespace, scheme: Scheme, delay: Delay | Cluster, cluster: Cluster,
                       problem: Any, sched: Schedule | None) -> tuple[dict[str, Any], str]:
    """``error`` on a real problem (DESIGN §9): the JSON adds problem, floor, metrics and
    time_to_target; the text prints the constants with their kinds."""
    gamma = None if args.gamma is None else GAMMA.check(args.gamma, "gamma")
    p0 = None if args.p0 is None else P0.check(args.p0, "p0")
    seed = _resolve_seed(args.seed)
    curve = problem_error_curve(scheme, delay, problem, args.eta, args.b, args.time, args.points, args.replicas, seed,
                                LearningRate(args.lr_rule, args.C), gamma, p0, eps=args.eps,
                                target_accuracy=args.target_accuracy, schedule=sched)
    sim, bound = curve.simulated, curve.bound
    assert bound is not None and curve.floor is not None
    out: dict[str, Any] = {**_scheme_json(scheme),
                           "delay": _delay_text(cluster), "cluster": _cluster_json(cluster),
                           **curve.as_json(), "seed": seed}
    c = problem.constants
    info = problem.info
    lines = [f"scheme {scheme.label}, {'delay ' + str(delay) if isinstance(delay, Delay) else cluster.label}, "
             f"η={args.eta:g}, b={args.b}",
             *_trace_line(cluster, "trace: "),
             f"problem {problem.name}: {info.get('n_train')} training rows, {info.get('n_test')} test rows, "
             f"{problem.classes} classes, d={problem.dim}, λ={problem.lam:g}"
             + (f", {info['dropped_columns']} constant columns dropped" if info.get("dropped_columns") else ""),
             *(f"  {name:13s} {getattr(c, name).value:.6g} [{getattr(c, name).kind}]"
               + (f" (certified gap {c.f_star.gap:.2g})" if name == "f_star" else "")
               for name in ("f_star", "L", "mu", "sigma2", "sigma2_bound", "F0")),
             f"floor ησ²*/(4bK) = {curve.floor.value:.4g} [{curve.floor.kind}: small η, fresh gradients]",
             f"bound: {bound.kind}" + (f" — {bound.note}" if bound.note else
                                       f" (floor {bound.floor:.4g}, with L, μ and the σ² bound above)"
                                       if bound.floor is not None else "")]
    acc = sim.metrics.get("test_accuracy")
    head = f"{'time':>12} {'bound':>12} {'simulated':>12} {'95% CI':>25}"
    lines.append(head + (f" {'test acc.':>10}" if acc else ""))
    idx = np.unique(np.linspace(0, sim.time.size - 1, min(11, sim.time.size)).astype(int))
    for i in idx:
        b = "—" if bound.values is None else f"{bound.values[i]:.5g}"
        lines.append(f"{sim.time[i]:12.5g} {b:>12} {sim.mean[i]:12.5g} "
                     f"{f'[{sim.ci95_low[i]:.5g}, {sim.ci95_high[i]:.5g}]':>25}"
                     + (f" {acc[0][i]:10.4f}" if acc else ""))
    for what, t in (("error ε", curve.simulated_target), ("test accuracy", curve.accuracy_target)):
        if t is not None:
            lines.append(f"time to {what}: {t.value if t.value is not None else '—'} ({t.source})")
    if not scheme.fresh:
        lines.append(f"staleness mean {sim.staleness_mean:.4g}, fresh fraction {sim.fresh_fraction:.4g}")
    lines += _schedule_lines(sim)
    lines.append(f"{sim.replicas} replicas, seed {seed}")
    return out, "\n".join(lines)


def _add_fit_parser(sub: Any) -> None:
    p = sub.add_parser("fit", help="a measured trace: per-worker summary, stragglers and fitted laws (DESIGN §7)")
    p.add_argument("--trace", required=True, help="the trace (CSV, TSV or Parquet)")
    p.add_argument("--trace-columns", default=None, dest="trace_columns",
                   help="worker=COL,step=COL,duration=COL when the layout cannot be detected")
    p.add_argument("--threshold", default=1.2, help=f"slowdown from which a worker is a straggler, "
                   f"{THRESHOLD.describe()} (default 1.2)")
    p.add_argument("--json", action="store_true", help="print JSON")


def _fit_text(trace: Trace, out: dict[str, Any], fits: Sequence[Fit], skipped: dict[str, str],
              threshold: float) -> str:
    def num(x: float | None) -> str:
        return "—" if x is None else f"{x:.5g}"

    lines = [trace.describe()]
    if out["per_worker"]:
        w = min(max(6, *(len(r["worker"]) for r in out["per_worker"])), 24)
        lines.append(f"{'worker':<{w}} {'mean':>11} {'median':>11} {'slowdown':>9}  straggler")
        for r in out["per_worker"]:
            flag = "" if not r["straggler"] else "persistent" if r["from_step"] is None else \
                f"from step {r['from_step']}"
            lines.append(f"{r['worker']:<{w}} {num(r['mean']):>11} {num(r['median']):>11} {num(r['slowdown']):>9}  "
                         f"{flag}".rstrip())
        lines.append(f"stragglers (slowdown ≥ {threshold:g}): {', '.join(out['stragglers']) or 'none'}")
    lines.append(f"fits of the {trace.pooled.size} pooled times, best AIC first:")
    if fits:
        lines.append(f"{'family':<12} {'ΔAIC':>10} {'KS':>8}  spec  [what was fixed]")
    for f in fits:
        lines.append(f"{f.family:<12} {f.aic - fits[0].aic:>10.4g} {f.ks:>8.4f}  {f.spec}  [{f.fixed}]")
    lines += [f"not fitted: {variant}: {why}" for variant, why in skipped.items()]
    return "\n".join(lines)


def run_fit(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    threshold = float(THRESHOLD.check(args.threshold, "threshold"))
    trace = load_trace(args.trace, args.trace_columns)
    fits = fit_laws(trace.pooled)
    out = fit_report(trace, threshold, fits=fits)
    return out, _fit_text(trace, out, fits, fits.skipped, threshold)


def _add_sweep_parser(sub: Any) -> None:
    p = sub.add_parser("sweep", help="a grid of points (TOML) on Dask or serially, into one Parquet file (DESIGN §8)")
    p.add_argument("grid", help="the grid file: seed, [base], [grid] lists, [compute] (see the README)")
    p.add_argument("--out", required=True, help="the results file (Parquet, one row per point)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", default=None, help="the address of a running Dask scheduler, "
                       "e.g. tcp://127.0.0.1:8786 (default: a LocalCluster on this machine)")
    where.add_argument("--local-workers", type=int, default=None, dest="local_workers",
                       help="worker processes of the LocalCluster (default: the CPUs; 0: serial, without Dask)")
    p.add_argument("--resume", action="store_true", help="complete an existing results file of this grid")
    p.add_argument("--yes", action="store_true", help="run a grid over the size that needs confirming")
    p.add_argument("--task-seconds", type=float, default=None, dest="task_seconds",
                   help="predicted work per Dask task, in seconds of one core (default: from the work and the workers)")
    p.add_argument("--json", action="store_true", help="print a JSON summary (and no progress bar)")


def run_sweep_command(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    _, s = run_sweep(args.grid, scheduler=args.scheduler, local_workers=args.local_workers, out=args.out,
                     resume=args.resume, yes=args.yes, progress=not args.json, task_seconds=args.task_seconds)
    text = (f"{s.points} points: {s.done} in {s.out} ({s.errors} with an error), {s.computed} computed now "
            f"in {s.tasks} tasks on {s.workers}, {s.seconds:.1f} s")
    return s.as_dict(), text


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command == "runtime":
            out, text = run_runtime(args)
        elif args.command == "fit":
            out, text = run_fit(args)
        elif args.command == "sweep":
            out, text = run_sweep_command(args)
        else:
            out, text = run_error(args)
    except _UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ParameterError as exc:
        print(f"distsgd: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        return 130
    except Exception as exc:  # never a traceback for a user; DISTSGD_DEBUG shows it
        if os.environ.get("DISTSGD_DEBUG"):
            raise
        print(f"distsgd: internal error: {type(exc).__name__}: {exc} "
              "(set DISTSGD_DEBUG=1 for details)", file=sys.stderr)
        return 1
    try:
        print(json.dumps(out, allow_nan=False) if args.json else text)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`| head`): no traceback
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except OSError:  # pragma: no cover
            pass
    return 0

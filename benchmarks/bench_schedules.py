"""Adaptive schedules (DESIGN §13), measured, not asserted.

    python -m benchmarks.bench_schedules            # full run (~3 min), writes benchmarks/results/schedules.md
    python -m benchmarks.bench_schedules --quick    # fewer replicas (~40 s), writes schedules-quick.md

(1) Cost: a scheduled run against the same run with K (or H) fixed, on the model problem and on
    breast cancer: ``simulate_error`` / ``simulate_problem`` with ``schedule=adasync(...)`` (or
    ``adacomm``) against the same call without it, wall time (median of eleven, the three calls
    interleaved), the ratio; and
    ``steps(0:K)``, the schedule that never changes K: the mechanism's own overhead (the scheduled
    run also does a different amount of work: AdaSync's K grows, AdaComm's H falls).
(2) Where a schedule wins: k-sync with m = 16 on the model problem, exponential delays and a heavy
    tail (Pareto α = 1.5): the time to ε of AdaSync against every fixed K, with the 95 % band of
    each (the first grid time its mean, and the edges of its band, are ≤ ε); the same for AdaComm
    against every fixed H of local SGD with an expensive averaging (D = 20).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import functools
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

from distsgd import make_scheme, parse_delay
from distsgd.error import Problem, simulate_error
from distsgd.error.general import simulate_problem
from distsgd.error.targets import simulated_time_to_target
from distsgd.problems import bundled

RESULTS = Path(__file__).parent / "results"


def _median_times(calls: list[Any], repeat: int = 11) -> list[float]:
    """The median wall time of each call, the calls interleaved (a drift of the machine's speed
    during the measurement falls on all of them alike)."""
    out: list[list[float]] = [[] for _ in calls]
    for _ in range(repeat):
        for times, call in zip(out, calls, strict=True):
            t = time.perf_counter()
            call()
            times.append(time.perf_counter() - t)
    return [statistics.median(t) for t in out]


def cost(replicas: int) -> list[str]:
    q = Problem(eta=0.05, sigma2=4.0, dim=10)
    exp = parse_delay("exp(rate=1)")
    pb = bundled("breast_cancer", 1e-3, 0.25, 0)
    cases = [
        ("k-sync m=16, quadratic d=10, T=200", make_scheme("k-sync", 16, K=4), "adasync(K0=4, period=20)",
         lambda s, sc: simulate_error(s, exp, q, 200.0, 101, replicas, 1, schedule=sc)),
        ("k-async m=16, quadratic d=10, T=100", make_scheme("k-async", 16, K=2), "adasync(K0=2, period=20)",
         lambda s, sc: simulate_error(s, exp, q, 100.0, 101, replicas, 1, schedule=sc)),
        ("local-sgd m=16, quadratic d=10, T=400, D=5", make_scheme("local-sgd", 16, H=8, comm_delay=5.0),
         "adacomm(H0=8, period=40)",
         lambda s, sc: simulate_error(s, exp, q, 400.0, 101, replicas, 1, schedule=sc)),
        ("k-sync m=8, breast cancer b=4, T=60", make_scheme("k-sync", 8, K=2), "adasync(K0=2, period=10)",
         lambda s, sc: simulate_problem(s, exp, pb, 0.5, 4, 60.0, 61, max(10, replicas // 4), 1, schedule=sc)),
        ("local-sgd m=8, breast cancer b=4, T=60, D=2", make_scheme("local-sgd", 8, H=4, comm_delay=2.0),
         "adacomm(H0=4, period=10)",
         lambda s, sc: simulate_problem(s, exp, pb, 0.5, 4, 60.0, 61, max(10, replicas // 4), 1, schedule=sc)),
    ]
    lines = ["| run | fixed (s) | steps(0:K) (s) | scheduled (s) | scheduled / fixed | K or H at the end |",
             "|---|---|---|---|---|---|"]
    for name, scheme, spec, run in cases:
        param = type(scheme).schedulable
        same = f"steps(0:{getattr(scheme, param)})"
        for sc in (None, same):
            run(scheme, sc)  # warm: compiled kernels, data set, E[T]
        end = run(scheme, spec).schedule.grid_value[0][-1]  # the mean over replicas
        fixed, flat, sched = _median_times([functools.partial(run, scheme, sc) for sc in (None, same, spec)])
        lines.append(f"| {name}; {spec} | {fixed:.3f} | {flat:.3f} | {sched:.3f} | {sched / fixed:.2f} | "
                     f"{getattr(scheme, param)} → {end:.1f} |")
    return lines


def _target(sim: Any, eps: float) -> str:
    t = simulated_time_to_target(sim, eps)
    if t.value is None or t.value == float("inf"):
        return "never"
    lo = "?" if t.low is None else f"{t.low:.0f}"
    hi = "never" if t.high is None or t.high == float("inf") else f"{t.high:.0f}"
    return f"{t.value:.0f} [{lo}, {hi}]"


def wins(replicas: int) -> list[str]:
    q = Problem(eta=0.05, sigma2=4.0, dim=10)
    out: list[str] = []
    for law, horizon, eps in (("exp(rate=1)", 200.0, 0.008), ("pareto(xm=1, alpha=1.5)", 400.0, 0.008)):
        delay = parse_delay(law)
        out += [f"\n**k-sync, m = 16, {law}, ε = {eps}** (time to ε [band], grid step {horizon / 100:g})\n",
                "| K | time to ε | final error [band] |", "|---|---|---|"]
        for K in (1, 2, 4, 8, 12, 16):
            sim = simulate_error(make_scheme("k-sync", 16, K=K), delay, q, horizon, 101, replicas, 7)
            out.append(f"| {K} | {_target(sim, eps)} | {sim.mean[-1]:.4f} [{sim.ci95_low[-1]:.4f}, "
                       f"{sim.ci95_high[-1]:.4f}] |")
        for spec in ("adasync(K0=1, period=10)", "adasync(K0=2, period=20)"):
            sim = simulate_error(make_scheme("k-sync", 16, K=1), delay, q, horizon, 101, replicas, 7, schedule=spec)
            assert sim.schedule is not None
            out.append(f"| {spec} (K at the end ≈ {sim.schedule.grid_value[0][-1]:.1f}) | {_target(sim, eps)} | "
                       f"{sim.mean[-1]:.4f} [{sim.ci95_low[-1]:.4f}, {sim.ci95_high[-1]:.4f}] |")
    delay = parse_delay("exp(rate=1)")
    eps = 0.006
    out += [f"\n**local SGD, m = 16, exp(rate=1), D = 20, ε = {eps}** (time to ε [band], grid step 6)\n",
            "| H | time to ε | final error [band] |", "|---|---|---|"]
    for H in (1, 2, 4, 8, 16):
        sim = simulate_error(make_scheme("local-sgd", 16, H=H, comm_delay=20.0), delay, q, 600.0, 101, replicas, 7)
        out.append(f"| {H} | {_target(sim, eps)} | {sim.mean[-1]:.4f} [{sim.ci95_low[-1]:.4f}, "
                   f"{sim.ci95_high[-1]:.4f}] |")
    for spec in ("adacomm(H0=16, period=60)", "adacomm(H0=8, period=60)"):
        sim = simulate_error(make_scheme("local-sgd", 16, H=1, comm_delay=20.0), delay, q, 600.0, 101, replicas, 7,
                             schedule=spec)
        assert sim.schedule is not None
        out.append(f"| {spec} (H at the end ≈ {sim.schedule.grid_value[0][-1]:.1f}) | {_target(sim, eps)} | "
                   f"{sim.mean[-1]:.4f} [{sim.ci95_low[-1]:.4f}, {sim.ci95_high[-1]:.4f}] |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    replicas = 60 if args.quick else 300
    t0 = time.perf_counter()
    lines = [f"# Adaptive schedules ({'quick' if args.quick else 'full'} run)", "",
             f"{_dt.date.today()}, {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
             f"{replicas} replicas; `python -m benchmarks.bench_schedules{' --quick' if args.quick else ''}`", "",
             "## (1) What a schedule costs", "", *cost(replicas), "",
             "## (2) Where a schedule wins", *wins(replicas), "",
             f"Total {time.perf_counter() - t0:.0f} s."]
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / ("schedules-quick.md" if args.quick else "schedules.md")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

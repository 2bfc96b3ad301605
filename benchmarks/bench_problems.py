"""Cost of simulated SGD on a real problem (issue 23): digits (d = 610 after the constant
columns are dropped), m = 8, b = 16, 200 replicas, against the bare gradient work it needs — the
same number of mini-batch gradient calls of the same shapes in a tight numpy loop, measured in
the same run — and f* (Newton with its certificate) on both bundled sets.

``python -m benchmarks.bench_problems [--replicas R] [--output PATH]`` prints a Markdown table
and writes it to benchmarks/results/problems.md.  The horizon of each scheme is set so that it
makes about 100 updates (local SGD 10 rounds of m·H = 32 gradients); "bare" is what the
gradients alone cost: for the fresh schemes one call of K·b rows per update on the R models,
for the asynchronous ones one call of b rows on R·K models, for local SGD H calls of b rows on
R·m models per update.  The simulation also evaluates the loss and the test metrics of every
replica at the 11 grid times, on every training and test row.
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np

from distsgd import limits, make_scheme, parse_delay
from distsgd.analytic import expected_runtime
from distsgd.error.general import simulate_problem
from distsgd.problems import builtin

ROOT = Path(__file__).resolve().parent.parent
SCHEMES = [("sync", {}), ("k-sync", {"K": 4}), ("k-batch-sync", {"K": 8}), ("async", {}), ("k-async", {"K": 2}),
           ("k-batch-async", {"K": 4}), ("local-sgd", {"H": 4})]
M, B, UPDATES = 8, 16, 100
WORK = 4 * limits.MAX_SGD_WORK


def _bare(pb, scheme, R: int, n: int) -> float:
    """Seconds of the gradient calls alone (see the module's docstring)."""
    rng = np.random.default_rng(0)
    W = np.zeros((R, pb.dim))
    if scheme.averages_models:
        calls, shape, rows = n * scheme.steps_per_update, (R * scheme.m, pb.dim), B
    elif scheme.fresh:
        calls, shape, rows = n, (R, pb.dim), B * scheme.grads_per_update
    else:
        calls, shape, rows = n, (R * scheme.grads_per_update, pb.dim), B
    W = np.zeros(shape)
    t = time.perf_counter()
    for _ in range(calls):
        W -= 0.01 * pb.grad(W, rng, rows)
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicas", type=int, default=200)
    ap.add_argument("--output", default=str(ROOT / "benchmarks" / "results" / "problems.md"))
    args = ap.parse_args(argv)
    lines = ["# Simulated SGD on a real problem (issue 23)", "",
             f"`python -m benchmarks.bench_problems` on {platform.machine()}, Python {platform.python_version()}, "
             f"{time.strftime('%Y-%m-%dT%H:%M')}.", "", "## f* by Newton, with its certificate", "",
             "| set | d | f* | certified gap | seconds (load, prepare, f*) |", "|---|---|---|---|---|"]
    import sklearn.datasets  # noqa: F401  (its import is not f*'s time)

    for name in ("breast_cancer", "digits"):
        t = time.perf_counter()
        pb = builtin(f"logreg:{name}", lam=1e-2)
        c = pb.constants
        lines.append(f"| {name} | {pb.dim} | {c.f_star.value:.10g} | {c.f_star.gap:.1e} | "
                     f"{time.perf_counter() - t:.2f} |")
    lines += ["", f"## SGD on digits (d = {pb.dim}), m = {M}, b = {B}, {args.replicas} replicas, ≈ {UPDATES} updates",
              "", "| scheme | updates | simulation s | bare gradients s | ratio |", "|---|---|---|---|---|"]
    delay = parse_delay("exp(rate=1)")
    for name, kw in SCHEMES:
        scheme = make_scheme(name, M, **kw)
        est = expected_runtime(scheme, delay)
        per = (est.value or 1.0) * (scheme.steps_per_update if scheme.averages_models else 1)
        horizon = UPDATES * per / (10 if scheme.averages_models else 1)  # (a round: m·H = 32 gradients)
        simulate_problem(scheme, delay, pb, 0.05, B, horizon / 20, 5, 4, 0)  # warm: imports, caches
        t = time.perf_counter()
        # (the SGD and the grid's evaluations exceed the library's default work cap for sync)
        sim = simulate_problem(scheme, delay, pb, 0.05, B, horizon, 11, args.replicas, 1, max_work=WORK)
        total = time.perf_counter() - t
        bare = _bare(pb, scheme, args.replicas, sim.updates)
        lines.append(f"| {scheme.label} | {sim.updates} | {total:.2f} | {bare:.2f} | {total / bare:.2f} |")
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    Path(args.output).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

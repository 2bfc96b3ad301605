"""Cost of the simulated SGD (issues 3 and 9): R replicas × n updates × d = 10 with m = 100
workers, now and at commit 921affb (before the compiled kernels), back to back in one run.

``python -m benchmarks.bench_sgd [--quick] [--baseline DIR] [--output PATH]`` prints a Markdown
table and writes it to benchmarks/results/sgd.md (sgd-quick.md with --quick).  DIR is a checkout
of 921affb (default /tmp/sgd921: ``git worktree add /tmp/sgd921 921affb``); ``--baseline ''``
measures only the current code.  The horizon of each scheme is n · E[T], so that every replica
performs about n updates.

Every measurement runs in a fresh subprocess with PYTHONPATH pointing at the tree measured:
the full run measures scheme by scheme, 921affb then now; ``--quick`` one process per tree.
Before the table, the kernels' cold start is measured on its own: a process with an empty
numba cache compiles them, a second one loads them from that cache (what every later process
pays once).  "now, first call" is a scheme's first small call in its process (cache load of
its kernel, imports); "timing" is the part of the time spent in the timing engine (the
covering trace), which the SGD kernels do not touch.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "/tmp/sgd921"
SCHEMES: list[tuple[str, int | None]] = [
    ("sync", None), ("k-sync", 50), ("k-batch-sync", 100), ("async", None), ("k-async", 25),
    ("k-batch-async", 10), ("local-sgd", None)]
M, DIM = 100, 10
#: the first, small call of a scheme in a process: replicas and updates
SMALL = (4, 30)


# -- the worker: runs in a subprocess, imports whichever distsgd PYTHONPATH points at ---------

def _library() -> tuple[Any, ...]:
    # deferred: the tree measured is the one the subprocess's PYTHONPATH points at
    import distsgd
    from distsgd import make_scheme, parse_delay
    from distsgd.analytic import expected_runtime
    try:
        from distsgd.error import Problem, simulate_error
        from distsgd.error import simulate as module
        trace_name = "covering_trace"
    except ImportError:  # 921affb: one module distsgd.sgd
        from distsgd.sgd import Problem, simulate_error

        from distsgd import sgd as module
        trace_name = "_covering_trace"
    return distsgd, make_scheme, parse_delay, expected_runtime, Problem, simulate_error, module, trace_name


def _worker(spec: dict[str, Any]) -> list[dict[str, Any]]:
    t0 = time.perf_counter()
    distsgd, make_scheme, parse_delay, expected_runtime, Problem, simulate_error, module, trace_name = _library()
    import_s = time.perf_counter() - t0
    timing = [0.0]
    covering = getattr(module, trace_name)

    def timed_trace(*a: Any, **k: Any) -> Any:
        t = time.perf_counter()
        try:
            return covering(*a, **k)
        finally:
            timing[0] += time.perf_counter() - t

    setattr(module, trace_name, timed_trace)
    extra = {"budget": 1e12} if "budget" in inspect.signature(simulate_error).parameters else {}
    delay = parse_delay("shifted-exp(rate=1, shift=0.1)")
    problem = Problem(eta=0.01, L=2.0, mu=0.5, sigma2=1.0, b=1, f0=1.0, dim=DIM)
    rows = []
    for name, K in spec["schemes"]:
        H = 4 if name == "local-sgd" else None
        scheme = make_scheme(name, M, K=K, H=H)
        per = expected_runtime(scheme, delay).value * (H or 1)

        def run(replicas: int, updates: int, scheme: Any = scheme, per: float = per) -> tuple[float, Any]:
            t = time.perf_counter()
            sim = simulate_error(scheme, delay, problem, time=updates * per, points=101, replicas=replicas,
                                 seed=1, **extra)
            return time.perf_counter() - t, sim

        first, _ = run(*SMALL)
        second, _ = run(*SMALL)
        timing[0] = 0.0
        seconds, sim = run(spec["replicas"], spec["updates"])
        rows.append({"scheme": scheme.label, "replicas": spec["replicas"], "updates": sim.updates,
                     "seconds": seconds, "timing": timing[0], "first": first, "small": second,
                     "import": import_s, "mean_end": float(sim.mean[-1]), "root": str(Path(distsgd.__file__).parent),
                     "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})
    return rows


# -- the driver ---------------------------------------------------------------------------------

def _spawn(tree: Path, spec: dict[str, Any], cache: str) -> list[dict[str, Any]]:
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_CACHE_DIR=cache)
    env.pop("DISTSGD_JIT", None)
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec)],
                         env=env, cwd=tempfile.gettempdir(), check=True, capture_output=True, text=True)
    rows: list[dict[str, Any]] = json.loads(out.stdout.strip().splitlines()[-1])
    for r in rows:
        assert Path(r["root"]).resolve() == (tree / "distsgd").resolve(), (r["root"], tree)
    return rows


def cold_start(cache: str) -> dict[str, float]:
    """Seconds of the first small call of sync (fresh kernel) and k-async (asynchronous kernel)
    beyond a second one: with an empty numba cache (compile) and then with it filled (load)."""
    spec = {"schemes": [("sync", None), ("k-async", 25)], "replicas": SMALL[0], "updates": SMALL[1]}
    out: dict[str, float] = {}
    for phase in ("compile", "load"):
        rows = _spawn(ROOT, spec, cache)
        out[phase] = sum(r["first"] - r["small"] for r in rows)
        out[f"{phase}_import"] = rows[0]["import"]
    return out


def measure(baseline: Path | None, replicas: int, updates: int, per_scheme: bool, cache: str
            ) -> list[tuple[dict[str, Any] | None, dict[str, Any]]]:
    """(921affb row or None, current row) per scheme; old and new measured back to back."""
    groups = [[s] for s in SCHEMES] if per_scheme else [SCHEMES]
    pairs: list[tuple[dict[str, Any] | None, dict[str, Any]]] = []
    for schemes in groups:
        spec = {"schemes": schemes, "replicas": replicas, "updates": updates}
        old = _spawn(baseline, spec, cache) if baseline else [None] * len(schemes)
        new = _spawn(ROOT, spec, cache)
        pairs.extend(zip(old, new, strict=True))
        for o, n in pairs[-len(schemes):]:
            print(f"  {n['scheme']}: {o['seconds'] if o else float('nan'):.2f} s → {n['seconds']:.2f} s",
                  file=sys.stderr)
    return pairs


def table(pairs: list[tuple[dict[str, Any] | None, dict[str, Any]]], cold: dict[str, float]) -> str:
    lines = ["| scheme (m = 100, d = 10) | replicas | updates simulated | 921affb s | now s | speed-up "
             "| now, first call s | timing s (now) | peak RSS MiB (now) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for o, n in pairs:
        old = f"{o['seconds']:.2f}" if o else "–"
        up = f"{o['seconds'] / n['seconds']:.1f}×" if o else "–"
        lines.append(f"| {n['scheme']} | {n['replicas']} | {n['updates']} | {old} | {n['seconds']:.2f} | {up} | "
                     f"{n['first']:.2f} | {n['timing']:.2f} | {n['rss_mib']:.0f} |")
    lines.append("")
    lines.append(f"Kernels' cold start (sync's and k-async's first small call beyond a second one): "
                 f"{cold['compile']:.2f} s compiling with an empty numba cache, {cold['load']:.2f} s loading "
                 f"from the cache; importing distsgd (with numba) {cold['load_import']:.2f} s.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--baseline", default=BASELINE, help="checkout of 921affb ('' to skip)")
    ap.add_argument("--output", default=None)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker is not None:
        print(json.dumps(_worker(json.loads(args.worker))))
        return 0
    baseline = Path(args.baseline) if args.baseline else None
    if baseline is not None and not (baseline / "distsgd").is_dir():
        ap.error(f"no checkout at {baseline}: git worktree add {baseline} 921affb (or --baseline '')")
    replicas, updates = (100, 500) if args.quick else (1000, 2000)
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        cold = cold_start(cache)
        pairs = measure(baseline, replicas, updates, not args.quick, cache)
    text = table(pairs, cold)
    print(text)
    out = Path(args.output) if args.output else (
        Path(__file__).parent / "results" / ("sgd-quick.md" if args.quick else "sgd.md"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("# Simulated SGD cost\n\n`python -m benchmarks.bench_sgd`"
                   f"{' --quick' if args.quick else ''}: each scheme at 921affb and now, back to back, each in a "
                   "fresh process; updates simulated includes the margin that covers the horizon in every "
                   "replica.\n\n" + text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Cost of heterogeneous clusters (DESIGN §7) against the i.i.d. engines, measured, not asserted.

    python -m benchmarks.bench_clusters            # full run (~4 min), writes benchmarks/results/clusters.md
    python -m benchmarks.bench_clusters --quick    # m = 1000 only, one timed call (~20 s), writes clusters-quick.md

(1) Monte Carlo: ``simulate_runtime`` of every scheme (sync, k-sync K = m/2, k-batch-sync
    K = 2m, async, k-async K = m/4, k-batch-async K = m/4, local-sgd H = 4) at m = 1000 and
    10 000 on (a) i.i.d. ``shifted-exp(rate=1, shift=0.5)``, (b) static stragglers (m/10 workers
    3× slower), (c) Markov slowdowns (π = 0.1, ρ = 0.9, s = 4), (d) two groups (half that law,
    half ``lognormal(mu=0, sigma=0.6)``).  Time per simulated update — every update the call
    simulates, R·(w + n) in the engine's layout, the renewal schemes' warm-up included — its
    ratio to the i.i.d. engine, and the library's predicted cost
    (``distsgd.montecarlo.simulation_cost``) against the measured wall time.  A combination the
    library refuses (ParameterError) is reported with its message.
(2) Memory of the same calls: the tracemalloc peak of one traced call, the growth of the
    process's peak RSS during the timed calls (VmHWM, reset just before each call; Linux) and
    the process's max RSS so far (``resource.getrusage``, monotone over the whole run).
(3) The Poisson-binomial quadrature (``distsgd.clusters.independent_orderstats.kth_of_independent`` through
    ``expected_runtime``): sync and k-sync (K = m/2) on static stragglers, two groups, five groups
    (and Markov slowdowns, whose one-mini-batch law is a mixture) at m = 1000 and 10 000 — wall
    time, value, kind, error, and the Monte Carlo mean of (1) for the same cluster.

Iterations per call are chosen from the library's own cost model for about 0.5 s (0.1 s with
--quick) and re-scaled once from the traced call when that is off by more than 4×; a Markov
cluster's layout has a floor (batches spanning 10× its memory), so its calls may be longer.
Each timing is the median of three calls (one with --quick, or when a call takes over 3 s).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import math
import os
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy

from distsgd import expected_runtime, jit, limits, make_cluster, make_scheme, parse_delay, simulate_runtime
from distsgd.clusters import Cluster
from distsgd.delays import Delay
from distsgd.engines import batchmeans
from distsgd.engines import clusters as cluster_engine
from distsgd.montecarlo import simulation_cost
from distsgd.params import ParameterError
from distsgd.schemes import Scheme

from .bench_runtime import proc_status_bytes, reset_peak_rss

try:
    import resource
except ImportError:  # pragma: no cover - not on Windows
    resource = None  # type: ignore[assignment]

RESULTS = Path(__file__).resolve().parent / "results"
DELAY = "shifted-exp(rate=1, shift=0.5)"
OTHER = "lognormal(mu=0, sigma=0.6)"
FIVE = [DELAY, OTHER, "weibull(shape=1.5, scale=1)", "uniform(low=0.5, high=2)", "exp(rate=0.5)"]
KINDS = ("iid", "static", "markov", "groups")
HEAVY = 3.0      # seconds: a call longer than this is timed once
OFF = 4.0        # re-scale the iterations when the traced call is off its target by more than this
MODEL_BAR = 3.0  # the cost model should be within ×3 either way


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------

def table(headers: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def fmt_time(seconds: float) -> str:
    """A time with a sensible unit."""
    if seconds < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def fmt_bytes(n: float | None) -> str:
    return "—" if n is None else f"{n / 2**20:.1f} MiB"


def fmt_x(r: float) -> str:
    return f"{r:,.0f}×" if r >= 100 else f"{r:.2f}×" if r < 10 else f"{r:.1f}×"


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def numba_version() -> str:
    try:
        import numba
    except ImportError:
        return "not installed"
    return str(numba.__version__)


def max_rss() -> int | None:
    """The process's max RSS so far, ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` in bytes."""
    if resource is None:
        return None
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(r if sys.platform == "darwin" else r * 1024)


def timed_call(fn: Callable[[], object]) -> tuple[float, int | None, object]:
    """Wall time of one call, the growth of the peak RSS during it (None where VmHWM cannot be
    reset), and its result."""
    rss0 = proc_status_bytes("VmRSS") if reset_peak_rss() else None
    t = time.perf_counter()
    out = fn()
    el = time.perf_counter() - t
    hwm = proc_status_bytes("VmHWM")
    return el, (None if rss0 is None or hwm is None else max(0, hwm - rss0)), out


def traced_call(fn: Callable[[], object]) -> tuple[float, int, object]:
    """Wall time (tracemalloc on: slower) and tracemalloc peak of one call, and its result."""
    tracemalloc.start()
    try:
        t = time.perf_counter()
        out = fn()
        el = time.perf_counter() - t
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return el, peak, out


# ---------------------------------------------------------------------------------------
# the models
# ---------------------------------------------------------------------------------------

def scheme_cases(m: int) -> list[Scheme]:
    return [make_scheme("sync", m), make_scheme("k-sync", m, m // 2), make_scheme("k-batch-sync", m, 2 * m),
            make_scheme("async", m), make_scheme("k-async", m, m // 4), make_scheme("k-batch-async", m, m // 4),
            make_scheme("local-sgd", m, H=4)]


def short_label(s: Scheme) -> str:
    extra = [f"{k}={v}" for k, v in (("K", getattr(s, "K", None)), ("H", getattr(s, "H", None))) if v is not None]
    return s.name + (f" {', '.join(extra)}" if extra else "")


def groups_spec(m: int, laws: list[str]) -> str:
    """``N1*law1 + N2*law2 + …``: m workers split as evenly as possible, in order."""
    g = len(laws)
    counts = [m // g + (1 if i < m % g else 0) for i in range(g)]
    return " + ".join(f"{n}*{law}" for n, law in zip(counts, laws, strict=True))


def sources(m: int) -> dict[str, Delay | Cluster]:
    d = parse_delay(DELAY)
    return {
        "iid": d,
        "static": make_cluster(m=m, delay=d, slow=m // 10, slowdown=3),
        "markov": make_cluster(m=m, delay=d, slow_fraction=0.1, persistence=0.9, slowdown=4),
        "groups": make_cluster(workers=groups_spec(m, [DELAY, OTHER])),
    }


KIND_LABELS = {
    "iid": f"(a) i.i.d. {DELAY}",
    "static": "(b) static: m/10 slow, s = 3",
    "markov": "(c) Markov π = 0.1, ρ = 0.9, s = 4",
    "groups": f"(d) groups ½ {DELAY} + ½ {OTHER}",
}


def simulated_updates(scheme: Scheme, src: Delay | Cluster, iterations: int) -> tuple[int, int]:
    """(R·(w + n), R·n): every update the call simulates, warm-up included, and the measured ones,
    in the layout the engine uses (what ``simulation_cost`` multiplies its unit cost by)."""
    K = scheme.grads_per_update
    if isinstance(src, Cluster) and src.iid_delay is None:
        R, w, n, _ = cluster_engine.layout(src, K, iterations, scheme.renewal, scheme.lockstep)
    elif scheme.renewal:
        delay = src if isinstance(src, Delay) else src.iid_delay
        R, w, n, _ = batchmeans.layout(scheme.m, K, iterations, delay, scheme.lockstep)
    else:
        R, w, n = 1, 0, iterations
    return R * (w + n), R * n


def iterations_for(scheme: Scheme, src: Delay | Cluster, target_ns: float) -> int:
    """The most iterations whose predicted cost is within ``target_ns`` (≥ the minimum, ≤ the cap)."""
    lo, hi = limits.MIN_ITERATIONS, limits.MAX_ITERATIONS
    if simulation_cost(scheme, lo, src) >= target_ns:
        return lo
    if simulation_cost(scheme, hi, src) <= target_ns:
        return hi
    while hi - lo > max(1, lo // 50):  # 2 % is close enough
        mid = int(math.sqrt(lo * hi))
        lo, hi = (mid, hi) if simulation_cost(scheme, mid, src) <= target_ns else (lo, mid)
    return lo


# ---------------------------------------------------------------------------------------
# (1) + (2) Monte Carlo cost and memory
# ---------------------------------------------------------------------------------------

@dataclass
class Run:
    scheme: str
    m: int
    kind: str
    refused: str = ""
    iterations: int = 0
    simulated: int = 0
    measured: int = 0
    times: list[float] = field(default_factory=list)
    predicted: float = 0.0          # ns, simulation_cost of the timed iterations
    traced_iterations: int = 0
    traced_time: float = 0.0
    tracemalloc_peak: int = 0
    rss_growth: int | None = None
    max_rss: int | None = None
    mean: float = math.nan
    half_width: float = math.nan

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def per_update(self) -> float:
        return self.median / self.simulated


def measure(scheme: Scheme, kind: str, src: Delay | Cluster, target: float, repeats: int) -> Run:
    """One (scheme, cluster) combination: a traced call (memory; it also calibrates the
    iterations), then ``repeats`` timed calls (no more once a call takes over HEAVY seconds)."""
    run = Run(short_label(scheme), scheme.m, kind)
    it = iterations_for(scheme, src, target * 1e9)

    def call(n: int) -> Callable[[], object]:
        return lambda: simulate_runtime(scheme, src, n, seed=1, keep_times=False)

    try:
        el, peak, _ = traced_call(call(it))
    except ParameterError as exc:
        run.refused = str(exc)
        return run
    run.traced_iterations, run.traced_time, run.tracemalloc_peak = it, el, peak
    if el < target / OFF or el > target * OFF:
        # the time is about proportional to the updates simulated, R·(w + n), and asking Δ more
        # iterations simulates about Δ more (the warm-up and a Markov floor stay)
        sim = simulated_updates(scheme, src, it)[0]
        it = int(min(limits.MAX_ITERATIONS, max(limits.MIN_ITERATIONS, it + (target / max(el, 1e-6) - 1) * sim)))
    run.iterations = it
    run.simulated, run.measured = simulated_updates(scheme, src, it)
    run.predicted = simulation_cost(scheme, it, src)
    rss: list[int] = []
    for i in range(repeats):
        t, grew, res = timed_call(call(it))
        run.times.append(t)
        if grew is not None:
            rss.append(grew)
        if i == 0:
            run.mean, run.half_width = res.mean, res.half_width  # type: ignore[attr-defined]
            if res.iterations != run.measured:  # type: ignore[attr-defined]
                print(f"warning: {run.scheme} on {kind}: the layout gives {run.measured} measured updates, the "
                      f"result {res.iterations}", file=sys.stderr)  # type: ignore[attr-defined]
        if t > HEAVY:
            break
    run.rss_growth = max(rss) if rss else None
    run.max_rss = max_rss()
    return run


def warm_up() -> float:
    """First calls of every engine (kernel loads, imports) on small models, outside the timings."""
    t = time.perf_counter()
    for s in scheme_cases(16):
        for src in sources(16).values():
            simulate_runtime(s, src, 200, seed=0, keep_times=False)
    return time.perf_counter() - t


def bench_montecarlo(ms: tuple[int, ...], target: float, repeats: int, echo: bool) -> list[Run]:
    runs = []
    for m in ms:
        srcs = sources(m)
        for scheme in scheme_cases(m):
            for kind in KINDS:
                r = measure(scheme, kind, srcs[kind], target, repeats)
                if echo:
                    what = f"refused ({r.refused[:60]}…)" if r.refused else \
                        f"{fmt_time(r.median)} × {len(r.times)}, {r.per_update * 1e9:,.0f} ns/update"
                    print(f"  m={m} {r.scheme:22s} {kind:7s} {what}", file=sys.stderr, flush=True)
                runs.append(r)
    return runs


def _iid_of(runs: list[Run], r: Run) -> Run | None:
    return next((x for x in runs if x.m == r.m and x.scheme == r.scheme and x.kind == "iid" and not x.refused),
                None)


def cost_rows(runs: list[Run], m: int) -> tuple[list[list[str]], list[str]]:
    rows, far = [], []
    for r in (x for x in runs if x.m == m):
        if r.refused:
            rows.append([r.scheme, KIND_LABELS[r.kind], f"**refused**: {r.refused}"] + [""] * 7)
            continue
        base = _iid_of(runs, r)
        ratio = "—" if base is None else ("1" if base is r else fmt_x(r.per_update / base.per_update))
        model = r.predicted / 1e9 / r.median
        flag = "" if 1 / MODEL_BAR <= model <= MODEL_BAR else " ⚠"
        if flag:
            far.append(f"{r.scheme} on {r.kind} at m = {m}: predicted {r.predicted / 1e9:.3g} s, "
                       f"measured {r.median:.3g} s ({fmt_x(model)})")
        rows.append([r.scheme, KIND_LABELS[r.kind], f"{r.iterations:,}", f"{r.simulated:,}", str(len(r.times)),
                     fmt_time(r.median), f"{r.per_update * 1e9:,.0f}", ratio,
                     fmt_time(r.predicted / 1e9), fmt_x(model) + flag])
    return rows, far


def memory_rows(runs: list[Run], m: int) -> list[list[str]]:
    rows = []
    for r in (x for x in runs if x.m == m and not x.refused):
        base = _iid_of(runs, r)
        rel = "—" if base is None or not base.tracemalloc_peak else \
            "1" if base is r else fmt_x(r.tracemalloc_peak / base.tracemalloc_peak)
        rows.append([r.scheme, KIND_LABELS[r.kind], f"{r.traced_iterations:,}", fmt_bytes(r.tracemalloc_peak), rel,
                     fmt_bytes(r.rss_growth), fmt_bytes(r.max_rss)])
    return rows


# ---------------------------------------------------------------------------------------
# (3) the Poisson-binomial quadrature
# ---------------------------------------------------------------------------------------

def quadrature_clusters(m: int) -> dict[str, Cluster]:
    d = parse_delay(DELAY)
    return {
        "static": make_cluster(m=m, delay=d, slow=m // 10, slowdown=3),
        "groups ×2": make_cluster(workers=groups_spec(m, [DELAY, OTHER])),
        "groups ×5": make_cluster(workers=groups_spec(m, FIVE)),
        "markov (mixture)": make_cluster(m=m, delay=d, slow_fraction=0.1, persistence=0.9, slowdown=4),
    }


MC_KIND = {"static": "static", "groups ×2": "groups", "markov (mixture)": "markov"}


def bench_quadrature(ms: tuple[int, ...], repeats: int, runs: list[Run], echo: bool) -> str:
    expected_runtime(make_scheme("k-sync", 100, 50), quadrature_clusters(100)["groups ×5"])  # first call
    rows = []
    for m in ms:
        for scheme in (make_scheme("sync", m), make_scheme("k-sync", m, m // 2)):
            for name, cluster in quadrature_clusters(m).items():
                t = time.perf_counter()
                est = expected_runtime(scheme, cluster)
                times = [time.perf_counter() - t]
                while len(times) < repeats and times[-1] <= HEAVY:
                    t = time.perf_counter()
                    expected_runtime(scheme, cluster)
                    times.append(time.perf_counter() - t)
                mc = next((r for r in runs if r.m == m and r.scheme == short_label(scheme) and not r.refused
                           and r.kind == MC_KIND.get(name)), None)
                mc_txt = "—" if mc is None else f"{mc.mean:.4f} ± {mc.half_width:.4f}"
                agree = ""
                if mc is not None and est.value is not None:
                    agree = " ✓" if abs(est.value - mc.mean) <= 4 * mc.half_width else " ✗"
                value = "—" if est.value is None else f"{est.value:.6f}"
                error = "—" if est.error is None else f"{est.error:.1e}"
                note = "" if est.kind != "unavailable" else est.method
                rows.append([short_label(scheme), str(m), name, fmt_time(statistics.median(times)), str(len(times)),
                             value, est.kind, error, mc_txt + agree, note])
                if echo:
                    print(f"  quadrature m={m} {short_label(scheme)} {name}: {fmt_time(statistics.median(times))} "
                          f"{est.kind}", file=sys.stderr, flush=True)
    return table(["scheme", "m", "cluster", "time (median)", "runs", "E[T]", "kind", "error",
                  "Monte Carlo of (1) ± 95%", "note"], rows)


# ---------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------

def _machine(quick: bool, total: float, load0: tuple[float, ...], load1: tuple[float, ...]) -> list[str]:
    stamp = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    return [
        f"{stamp}; `python -m benchmarks.bench_clusters{' --quick' if quick else ''}`, {total:.0f} s in all.",
        "",
        f"Machine: {cpu_model()}, `os.cpu_count()` = {os.cpu_count()}, {platform.machine()}; Python "
        f"{platform.python_version()}, numpy {np.__version__}, numba {numba_version()} (kernels "
        f"{'on' if jit.ENABLED else 'off'}), scipy {scipy.__version__}; load average (1 min) "
        f"{load0[0]:.2f} at the start, {load1[0]:.2f} at the end.",
    ]


def run(quick: bool = False, output: Path | None = None, echo: bool = True) -> dict:
    """Run the three parts; return the records and write the Markdown report."""
    start = time.perf_counter()
    load0 = os.getloadavg() if hasattr(os, "getloadavg") else (math.nan,)
    ms = (1000,) if quick else (1000, 10_000)
    target, repeats = (0.1, 1) if quick else (0.5, 3)
    warm = warm_up()
    runs = bench_montecarlo(ms, target, repeats, echo)
    md_quad = bench_quadrature(ms, repeats, runs, echo)
    total = time.perf_counter() - start
    load1 = os.getloadavg() if hasattr(os, "getloadavg") else (math.nan,)

    cost_headers = ["scheme", "cluster", "iterations asked", "updates simulated R·(w+n)", "runs", "median wall",
                    "ns / update", "× i.i.d.", "predicted", "predicted / measured"]
    mem_headers = ["scheme", "cluster", "iterations (traced call)", "tracemalloc peak", "× i.i.d.",
                   "peak-RSS growth (VmHWM)", "process max RSS so far (getrusage)"]
    body: list[str] = []
    far_all: list[str] = []
    for m in ms:
        rows, far = cost_rows(runs, m)
        far_all += far
        body += [f"### m = {m:,}", "", table(cost_headers, rows), ""]
    body_mem: list[str] = []
    for m in ms:
        body_mem += [f"### m = {m:,}", "", table(mem_headers, memory_rows(runs, m)), ""]
    refused = [f"- {r.scheme} on {r.kind} at m = {r.m}: {r.refused}" for r in runs if r.refused]
    text = "\n".join([
        f"# Cluster benchmarks{' (quick smoke run — not representative)' if quick else ''}",
        "",
        *_machine(quick, total, load0, load1),
        f"Engines warmed up first (every scheme on every kind at m = 16: {warm:.1f} s).",
        "",
        "## (1) Monte Carlo cost: `simulate_runtime` on each cluster against the i.i.d. engine",
        "",
        "`ns / update` = median wall time / every update the call simulates (R replicas × (warm-up w + "
        "measured n) in the engine's layout; the sync-like schemes on a stateless cluster have R = 1, w = 0). "
        "`× i.i.d.` compares it with the same scheme and m on (a). `predicted` is "
        "`distsgd.montecarlo.simulation_cost(scheme, iterations, cluster)` (≈ ns); predicted / measured > 1: "
        f"the model errs high; ⚠ outside ×{MODEL_BAR:g} either way. `keep_times=False`, seed 1.",
        "",
        *body,
        "Refused (ParameterError): " + ("none." if not refused else ""),
        *refused,
        "",
        "Cost model outside ×3: " + ("none." if not far_all else ""),
        *[f"- {f}" for f in far_all],
        "",
        "## (2) Peak memory of the same calls",
        "",
        "`tracemalloc peak`: the peak of Python and numpy allocations during one call with tracemalloc on (the "
        "first, untimed call). `peak-RSS growth`: the process's peak resident set during a timed call (VmHWM "
        "reset just before it through /proc/self/clear_refs) minus its resident set before it, the largest over "
        "the timed calls (0 when the call fit in memory the process already held: the allocator keeps freed "
        "memory). `process max RSS so far`: `resource.getrusage(RUSAGE_SELF).ru_maxrss` after the "
        "combination — the whole process's high-water mark since it started (monotone; includes the "
        "interpreter, numpy, scipy and numba).",
        "",
        *body_mem,
        "## (3) The Poisson-binomial quadrature (`expected_runtime` → `kth_of_independent`)",
        "",
        f"Static: m/10 workers 3× slower, `{DELAY}`; groups ×2: `{groups_spec(10, [DELAY, OTHER])}` scaled to m; "
        f"groups ×5: m/5 each of {', '.join(f'`{x}`' for x in FIVE)}; Markov: π = 0.1, ρ = 0.9, s = 4 (one group "
        "whose law is the mixture). Work budget `limits.ANALYTIC_WORK` = "
        f"{limits.ANALYTIC_WORK:.3g} binomial terms. The Monte Carlo column is (1)'s estimate for the same "
        "cluster (✓: within 4 half-widths).",
        "",
        md_quad,
        "",
    ])
    if echo:
        print(text)
    if output is None:
        output = RESULTS / ("clusters-quick.md" if quick else "clusters.md")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    if echo:
        print(f"written to {output}", file=sys.stderr)
    return {"runs": runs, "seconds": total, "output": str(output), "markdown": text}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_clusters", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="m = 1000 only, one timed call per combination (< 1 min; figures less reliable)")
    p.add_argument("--output", type=Path, default=None,
                   help="where to write the Markdown (default benchmarks/results/clusters.md, "
                        "or clusters-quick.md with --quick)")
    args = p.parse_args(argv)
    run(quick=args.quick, output=args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())

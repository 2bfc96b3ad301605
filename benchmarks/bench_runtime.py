"""Speed and memory of the Monte Carlo engine (DESIGN §6), measured, not asserted.

    python -m benchmarks.bench_runtime            # full run (~1–2 min), writes benchmarks/results/runtime.md
    python -m benchmarks.bench_runtime --quick    # smoke run (seconds), writes benchmarks/results/runtime-quick.md

Every ratio is measured within the same run, on the same machine, back to back:

(a) order-statistic sampling (``simulate_runtime`` for sync / k-sync, which draws X_{K:m} as
    F⁻¹(Beta(K, m−K+1))) against the naive baseline that samples all m delays of every
    iteration and partitions, ``np.partition(delay.sample(rng, (n, m)), K-1, axis=1)[:, K-1]``
    in memory-sized chunks — time per iteration and ratio (bar: ≥ 100× at m = 1000);
(b) the renewal / superposition schemes — the engine against the SimPy reference model of
    the same process (tests/reference/simpy_models.py) — time per update and ratio (bar: ≥ 200×, issue 9);
(c) peak memory of ``simulate_runtime`` at m = 10 000 for every scheme (tracemalloc peak of
    the call; in the full run also the growth of the process's peak RSS, each scheme in a
    fresh process);
(d) that the two sides of (b) estimate the same mean runtime (and staleness), so that the
    speed comparison is like for like;
(e) the compiled kernels (distsgd/engines/runtime_kernels.py): the engines of (b) on their numpy
    reference path (kernels off) against the compiled one, async against the raw throughput
    of its random numbers (``delay.sample`` of as many values; bar: within 10×), the
    first-call compile time (fresh numba cache) and the load time (warm cache), each in a fresh
    process, and two threads running k-async at once against one (the kernel releases the GIL).

Timings are the best of three repeats on each side (one in --quick); the engine's
time includes its warm-up updates although only the measured updates are counted, so its
per-update figure is conservative.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import math
import multiprocessing as mp
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import numpy as np
import scipy

from distsgd import jit, limits
from distsgd.delays import Delay, parse_delay
from distsgd.montecarlo import simulate_runtime
from distsgd.schemes import make_scheme
from tests.reference import simpy_models as sm

try:
    import resource
except ImportError:  # pragma: no cover - not on Windows
    resource = None  # type: ignore[assignment]

RESULTS = Path(__file__).resolve().parent / "results"
CHUNK_FLOATS = 2**21  # 16 MiB per working array in the baseline
TOL = 4.0  # half-widths for "agree"


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------

def best_time(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    """Smallest wall time of ``repeats`` calls, and the last result."""
    best, out = math.inf, None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def fmt_time(seconds: float) -> str:
    """A per-item time with a sensible unit."""
    if seconds < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def fmt_ratio(r: float, bar: float = 100.0) -> str:
    mark = "✓" if r >= bar else "✗"
    return f"{r:,.0f}× {mark}" if r >= 1000 else f"{r:.1f}× {mark}"


def fmt_bytes(n: float | None) -> str:
    if n is None:
        return "—"
    return f"{n / 2**20:.1f} MiB"


def table(headers: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def scheme_label(name: str, m: int, K: int | None, H: int | None = None) -> str:
    parts = [f"m={m}"]
    if K is not None:
        parts.append(f"K={K}")
    if H is not None:
        parts.append(f"H={H}")
    return f"{name} ({', '.join(parts)})"


# ---------------------------------------------------------------------------------------
# (a) order statistics vs sample-all-and-partition
# ---------------------------------------------------------------------------------------

def partition_baseline(delay: Delay, m: int, K: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """K-th smallest of m delays for n iterations by sampling all of them (chunked)."""
    out = np.empty(n)
    rows = max(1, CHUNK_FLOATS // m)
    for s in range(0, n, rows):
        b = min(rows, n - s)
        out[s:s + b] = np.partition(delay.sample(rng, (b, m)), K - 1, axis=1)[:, K - 1]
    return out


def bench_order_statistics(quick: bool) -> tuple[str, list[dict]]:
    m = 1000
    n_fast = 100_000 if quick else 2_000_000
    n_base = 2_000 if quick else 40_000
    repeats = 1 if quick else 3
    rows, records = [], []
    for spec in ("exp(rate=1)", "lognormal(mu=0, sigma=1)"):
        delay = parse_delay(spec)
        for K in (m, m // 2):
            scheme = make_scheme("sync", m) if K == m else make_scheme("k-sync", m, K)
            # the loop's values are bound as defaults (each call is timed before the loop moves on)
            t_fast, fast = best_time(
                lambda s=scheme, d=delay: simulate_runtime(s, d, n_fast, seed=1, keep_times=False), repeats)
            t_base, base = best_time(
                lambda d=delay, k=K: partition_baseline(d, m, k, n_base, np.random.default_rng(2)), repeats)
            per_fast, per_base = t_fast / n_fast, t_base / n_base
            ratio = per_base / per_fast
            # like for like: both estimate E[X_{K:m}]
            bm = float(np.mean(base))
            bh = 1.96 * float(np.std(base, ddof=1)) / math.sqrt(n_base)
            fh = (fast.ci95[1] - fast.ci95[0]) / 2
            agree = abs(fast.mean - bm) <= TOL * math.hypot(fh, bh)
            rows.append([f"{spec}", scheme_label(scheme.name, m, getattr(scheme, "K", None)),
                         f"{n_fast:,}", fmt_time(per_fast), f"{n_base:,}", fmt_time(per_base),
                         fmt_ratio(ratio), f"{fast.mean:.4f} / {bm:.4f} {'✓' if agree else '✗'}"])
            records.append({"delay": spec, "K": K, "ratio": ratio, "agree": agree})
    md = table(["delay", "scheme", "engine iters", "engine / iter", "baseline iters",
                "baseline / iter", "speed-up", "mean engine / baseline"], rows)
    return md, records


# ---------------------------------------------------------------------------------------
# (b) + (d) renewal schemes vs SimPy
# ---------------------------------------------------------------------------------------

def renewal_cases(ms: tuple[int, ...]) -> list[tuple[str, int, int | None]]:
    cases = []
    for m in ms:
        cases += [("async", m, None), ("k-async", m, max(1, m // 4)),
                  ("k-batch-async", m, 4), ("k-batch-sync", m, m)]
    return cases


def exponential_theory(name: str, m: int, K: int | None, delay: Delay) -> float | None:
    """Exact long-run mean time between updates for Exp(λ) delays without shift (DESIGN §2)."""
    if type(delay).__name__ != "Exponential" or delay.shift:
        return None
    lam = delay.rate
    if name == "async":
        return 1.0 / (m * lam)
    if name == "k-async":
        return sum(1.0 / i for i in range(m - K + 1, m + 1)) / lam
    if name in ("k-batch-async", "k-batch-sync"):
        return K / (m * lam)
    return None


def _simpy_updates_for(scheme, delay: Delay, budget: float, cap: int) -> int:
    """Updates that make the SimPy run last about ``budget`` seconds (from a short pilot)."""
    pilot = 50
    while True:
        t = time.perf_counter()
        sm.simulate(scheme, delay, pilot, np.random.default_rng(0))
        el = time.perf_counter() - t
        if el > 0.05 or pilot >= cap:
            break
        pilot *= 4
    return int(min(cap, max(200, budget / (el / pilot))))


def _engine_iterations_for(scheme, delay: Delay, budget: float) -> int:
    """Iterations that make one engine call last about ``budget`` seconds (from pilots)."""
    it = 10_000
    for _ in range(4):
        t = time.perf_counter()
        simulate_runtime(scheme, delay, it, seed=0, keep_times=False)
        el = time.perf_counter() - t
        target = int(min(5_000_000, it * budget / max(el, 1e-4)))
        if el >= budget / 3 or target <= it:
            return max(it, min(target, 5_000_000)) if el < budget else it
        it = min(target, it * 16)
    return it


@contextmanager
def reference_path() -> Iterator[None]:
    """Run the engines on their numpy reference path (the dispatch reads ``jit.ENABLED`` per call)."""
    was = jit.ENABLED
    jit.ENABLED = False
    try:
        yield
    finally:
        jit.ENABLED = was


def rng_time(delay: Delay, values: int, repeats: int) -> float:
    """Seconds to draw ``values`` delays with ``delay.sample`` in CHUNK-sized blocks (best of repeats)."""
    def draw() -> None:
        rng = np.random.default_rng(5)
        for s0 in range(0, values, limits.CHUNK):
            delay.sample(rng, min(limits.CHUNK, values - s0))
    return best_time(draw, repeats)[0]


def kernel_row(label: str, scheme, delay: Delay, n_eng: int, t_eng: float, updates: int,
               repeats: int) -> list[str]:
    """(e) the engine call of (b) again on the numpy reference path; async against its RNG."""
    with reference_path():
        t_ref, _ = best_time(lambda: simulate_runtime(scheme, delay, n_eng, seed=4, keep_times=False), repeats)
    per_eng = t_eng / updates
    row = [label, "on" if jit.ENABLED else "off", fmt_time(t_ref / updates), fmt_time(per_eng), f"{t_ref / t_eng:.2f}×"]
    if scheme.name != "async":
        return row + ["—", "—"]
    per_rng = rng_time(delay, updates, repeats) / updates
    return row + [fmt_time(per_rng), f"{per_eng / per_rng:.1f}× {'✓' if per_eng <= 10 * per_rng else '✗'}"]


def bench_renewal(quick: bool, spec: str) -> tuple[str, str, list[dict]]:
    delay = parse_delay(spec)
    ms = (16,) if quick else (16, 100)
    simpy_budget = 0.4 if quick else 4.0
    simpy_cap = 20_000 if quick else 400_000
    engine_budget = 0.1 if quick else 1.0
    repeats = 1 if quick else 3
    rows, sanity, records, kernel_rows = [], [], [], []
    for name, m, K in renewal_cases(ms):
        scheme = make_scheme(name, m, K)
        n_sim = _simpy_updates_for(scheme, delay, simpy_budget / repeats, simpy_cap)
        seeds = iter(range(3, 3 + repeats))
        t_sim, model = best_time(
            lambda s=scheme, n=n_sim, it=seeds: sm.simulate(s, delay, n, np.random.default_rng(next(it))), repeats)
        n_eng = _engine_iterations_for(scheme, delay, engine_budget)
        t_eng, eng = best_time(
            lambda s=scheme, n=n_eng: simulate_runtime(s, delay, n, seed=4, keep_times=False), repeats)
        per_eng, per_sim = t_eng / eng.iterations, t_sim / n_sim
        ratio = per_sim / per_eng
        label = scheme_label(name, m, K)
        rows.append([label, f"{eng.iterations:,}", fmt_time(per_eng), f"{n_sim:,}", f"{t_sim:.2f} s",
                     fmt_time(per_sim), fmt_ratio(ratio, 200.0)])
        kernel_rows.append(kernel_row(label, scheme, delay, n_eng, t_eng, eng.iterations, repeats))
        # (d) the same quantity on both sides
        fresh_scheme = name == "k-batch-sync"
        ms_, hs_ = (sm.batch_means(model.intervals) if fresh_scheme
                    else model.mean_runtime())
        he = (eng.ci95[1] - eng.ci95[0]) / 2
        z = (eng.mean - ms_) / math.hypot(he, hs_)
        agree = abs(z) <= TOL
        st = "—"
        if eng.staleness_mean is not None:
            ss, hss = model.mean_staleness()
            st = f"{eng.staleness_mean:.4f} / {ss:.4f} ± {hss:.4f}"
        truth = exponential_theory(name, m, K, delay)
        sanity.append([label, "—" if truth is None else f"{truth:.5f}", f"{eng.mean:.5f} ± {he:.5f}",
                       f"{ms_:.5f} ± {hs_:.5f}", f"{z:+.2f}", "✓" if agree else "✗", st])
        records.append({"scheme": label, "ratio": ratio, "agree": agree})
    md = table(["scheme", "engine updates", "engine / update", "SimPy updates", "SimPy run",
                "SimPy / update", "speed-up"], rows)
    md_sanity = table(["scheme", "theory", "engine mean ± 95%", "SimPy mean ± 95%", "z", "agree (abs z ≤ 4)",
                       "staleness engine / SimPy"], sanity)
    md_kernels = table(["scheme", "kernels", "numpy reference / update", "engine / update", "kernel gain",
                        "RNG / value", "engine / RNG (bar ≤ 10×)"], kernel_rows)
    return md, md_sanity + "\n\n### (e) Kernels against the numpy reference path, and async against its RNG\n\n" \
        + md_kernels, records


_FIRST_CALL = """
import time, numpy as np
t0 = time.perf_counter()
from distsgd.delays import parse_delay
from distsgd.engines import renewal
t1 = time.perf_counter()
list(renewal.kasync_blocks(parse_delay("exp(rate=1)"), 8, 3, 2, np.random.default_rng(0), True, 40))
list(renewal.kasync_blocks(parse_delay("exp(rate=1)"), 8, 3, 2, np.random.default_rng(0), False, 40))
renewal._previous_push(0, np.zeros(5, dtype=np.int16), np.full(2, -1, dtype=np.int64))
renewal._previous_push(0, np.zeros(5, dtype=np.int32), np.full(2, -1, dtype=np.int64))
print(t1 - t0, time.perf_counter() - t1)
"""


def bench_compile() -> list[list[str]]:
    """First calls of every kernel signature the engines use, in fresh processes sharing a fresh
    numba cache: the first compiles (and writes the cache), the second loads it."""
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "DISTSGD_JIT": "1"}
        root = Path(__file__).resolve().parent.parent
        for what in ("cold cache: compile", "warm cache: load"):
            out = subprocess.run([sys.executable, "-c", _FIRST_CALL], env=env, cwd=root, check=True,
                                 capture_output=True, text=True).stdout.split()
            rows.append([what, f"{float(out[0]):.2f} s", f"{float(out[1]):.2f} s"])
    return rows


def bench_threads(quick: bool) -> list[list[str]]:
    """k-async on one thread, then the same call on two threads at once: with the GIL released
    by the kernel, two threads take about as long as one on a machine with two free cores."""
    scheme, delay = make_scheme("k-async", 16, 4), parse_delay("exp(rate=1)")
    n = 1_000_000 if quick else 4_000_000
    simulate_runtime(scheme, delay, 10_000, seed=0, keep_times=False)  # compile / load outside the timing

    def one() -> None:
        simulate_runtime(scheme, delay, n, seed=1, keep_times=False)

    def two() -> None:
        ts = [threading.Thread(target=one) for _ in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    rows = []
    for label, ctx in (("compiled", nullcontext), ("numpy reference", reference_path)):
        with ctx():
            t1, _ = best_time(one, 1)
            t2, _ = best_time(two, 1)
        rows.append([label, f"{t1:.2f} s", f"{t2:.2f} s", f"{2 * t1 / t2:.2f}×"])
    return rows


# ---------------------------------------------------------------------------------------
# (c) memory at m = 10 000
# ---------------------------------------------------------------------------------------

MEMORY_CASES: list[tuple[str, dict, int, int]] = [
    # name, scheme kwargs, iterations (full), iterations (quick)
    ("sync", {}, 1_000_000, 20_000),
    ("k-sync", {"K": 5000}, 1_000_000, 20_000),
    ("k-batch-sync", {"K": 10_000}, 1_000, 20),
    ("async", {}, 1_000_000, 20_000),
    ("k-async", {"K": 2500}, 2_000, 100),
    ("k-batch-async", {"K": 4}, 200_000, 5_000),
    ("local-sgd", {"H": 4}, 1_000, 20),
]
MEMORY_M = 10_000
MEMORY_DELAY = "lognormal(mu=0, sigma=0.5)"


def proc_status_bytes(field: str) -> int | None:
    """A memory field of /proc/self/status (VmRSS, VmHWM, …) in bytes; None where there is none."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark of this process to its current RSS (Linux ≥ 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _peak_rss_bytes() -> int | None:
    """Peak RSS of this process's address space (VmHWM).  Unlike ru_maxrss it is not
    inherited from the parent across fork + exec, so a spawned probe measures itself."""
    hwm = proc_status_bytes("VmHWM")
    if hwm is not None or resource is None:
        return hwm
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(r if sys.platform == "darwin" else r * 1024)


def memory_probe(name: str, kw: dict, iterations: int) -> dict:
    """One scheme's simulate_runtime call: tracemalloc peak, peak-RSS growth, wall time."""
    scheme = make_scheme(name, MEMORY_M, **kw)
    delay = parse_delay(MEMORY_DELAY)
    simulate_runtime(scheme, delay, 2, seed=0)  # import/first-call costs outside the measurement
    reset_peak_rss()
    rss0 = proc_status_bytes("VmRSS") if proc_status_bytes("VmRSS") is not None else _peak_rss_bytes()
    tracemalloc.start()
    t = time.perf_counter()
    try:
        sample = simulate_runtime(scheme, delay, iterations, seed=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    el = time.perf_counter() - t
    rss1 = _peak_rss_bytes()
    return {"peak": peak, "rss": None if rss0 is None or rss1 is None else max(0, rss1 - rss0),
            "time": el, "iterations": sample.iterations,
            "kept": 0 if sample.times is None else sample.times.nbytes}


def bench_memory(quick: bool) -> tuple[str, list[dict]]:
    rows, records = [], []
    jobs = [(name, kw, it_q if quick else it) for name, kw, it, it_q in MEMORY_CASES]
    if quick:
        results = [memory_probe(*job) for job in jobs]
    else:
        # each scheme in a fresh process, so the peak-RSS growth is its own
        ctx = mp.get_context("spawn")
        results = []
        for job in jobs:
            with ctx.Pool(1) as pool:
                results.append(pool.apply(memory_probe, job))
    for (name, kw, _), r in zip(jobs, results, strict=True):
        label = scheme_label(name, MEMORY_M, kw.get("K"), kw.get("H"))
        rows.append([label, f"{r['iterations']:,}", fmt_bytes(r["peak"]), fmt_bytes(r["kept"]),
                     fmt_bytes(r["rss"]) if not quick else "—", f"{r['time']:.2f} s"])
        records.append({"scheme": label, **r})
    md = table(["scheme", "iterations", "tracemalloc peak", "of which kept times",
                "peak-RSS growth", "wall time"], rows)
    return md, records


# ---------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------

def run(quick: bool = False, output: Path | None = None, echo: bool = True) -> dict:
    """Run all four parts; return the records and write the Markdown report."""
    start = time.perf_counter()
    renewal_delay = "exp(rate=1)"
    md_a, rec_a = bench_order_statistics(quick)
    md_b, md_d, rec_b = bench_renewal(quick, renewal_delay)
    md_c, rec_c = bench_memory(quick)
    md_e = table(["first call", "import", "first calls of the kernels"], bench_compile()) if jit.ENABLED else \
        "kernels off (DISTSGD_JIT=0 or no numba)"
    md_gil = table(["k-async (m=16, K=4)", "1 thread", "2 threads at once", "throughput 2 threads / 1"],
                   bench_threads(quick))
    total = time.perf_counter() - start
    stamp = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    head = [
        f"# Runtime benchmarks{' (quick smoke run — not representative)' if quick else ''}",
        "",
        f"{stamp}; Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"simpy {sm.simpy.__version__}; {platform.machine()}, {os.cpu_count()} CPUs; "
        f"`python -m benchmarks.bench_runtime{' --quick' if quick else ''}`, {total:.0f} s in all.",
        "Each ratio is measured within this run: same machine, back to back.",
    ]
    body = [
        "## (a) Order statistics vs sampling all m and partitioning (m = 1000)",
        "",
        "Engine: `simulate_runtime` (sync / k-sync: X_{K:m} = F⁻¹(Beta(K, m−K+1)), one draw per "
        "iteration). Baseline: `np.partition(delay.sample(rng, (n, m)), K-1, axis=1)[:, K-1]` in "
        "16 MiB chunks. Bar: ≥ 100×. Last column: the two means of X_{K:m} (✓ within 4 combined half-widths).",
        "",
        md_a,
        "",
        f"## (b) Engine vs the SimPy model of the same process (delay `{renewal_delay}`)",
        "",
        "SimPy: tests/reference/simpy_models.py, one parameter-server process and m worker processes, one "
        "`delay.sample` per computation; \"SimPy run\" is one run of that many updates (best of the repeats). "
        "Engine time includes its warm-up and is divided by the measured "
        "updates only. Bar: ≥ 200× (issue 9; ≥ 100× before it).",
        "",
        md_b,
        "",
        "## (c) Peak memory of `simulate_runtime` at m = 10 000",
        "",
        f"Delay `{MEMORY_DELAY}`; the call keeps its per-iteration times (`keep_times=True`, counted in the peak). "
        + ("Quick run: in-process, tracemalloc only." if quick else
           "Each scheme in a fresh process; peak-RSS growth is the process's peak resident set during the "
           "call (VmHWM, reset just before it) minus its resident set before it."),
        "",
        md_c,
        "",
        "## (d) Like for like: the engine and SimPy estimate the same mean runtime",
        "",
        "Mean time between updates; theory is exact for Exp(λ) (DESIGN §2); 95% intervals (engine: its own "
        "batch means; SimPy: batch means after a 10% warm-up; k-batch-sync iterations are i.i.d.), "
        "z = difference / combined half-width; staleness is the mean staleness per gradient "
        "(engine point value / SimPy ± 95%).",
        "",
        md_d,
        "",
        "Kernel gain: the same `simulate_runtime` call with the kernels (default) and on the numpy reference "
        "path (the kernels switched off in-process); both draw the same random numbers. RNG: `delay.sample` of "
        "as many values as the engine's measured updates, in 16 MiB blocks.",
        "",
        "### (e) First-call compile time (numba, `cache=True`), each line a fresh process",
        "",
        md_e,
        "",
        "### (e) Two threads at once (DESIGN §11: a kernel releases the GIL)",
        "",
        "The same `simulate_runtime` call on one thread, then on two threads at once; throughput ratio 2 means "
        "the two threads ran on two cores, 1 that they took turns (only meaningful on an otherwise idle machine).",
        "",
        md_gil,
        "",
    ]
    text = "\n".join(head + [""] + body)
    if echo:
        print(text)
    if output is None:
        output = RESULTS / ("runtime-quick.md" if quick else "runtime.md")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    if echo:
        print(f"written to {output}", file=sys.stderr)
    return {"order_statistics": rec_a, "renewal": rec_b, "memory": rec_c, "seconds": total,
            "output": str(output), "markdown": text}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_runtime", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="fast smoke run with small sizes (figures not representative)")
    p.add_argument("--output", type=Path, default=None,
                   help="where to write the Markdown table (default benchmarks/results/runtime.md, "
                        "or runtime-quick.md with --quick)")
    args = p.parse_args(argv)
    run(quick=args.quick, output=args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())

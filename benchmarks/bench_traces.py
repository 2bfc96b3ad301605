"""A million-time trace through the "Your cluster" path (issue 11), measured, not asserted.

    python -m benchmarks.bench_traces            # 1000 workers × 1000 steps, writes benchmarks/results/traces.md
    python -m benchmarks.bench_traces --quick    # 200 × 200, writes benchmarks/results/traces-quick.md

A synthetic trace of lognormal(0, 0.2) step times with three persistent stragglers (×1.5) and
two that emerge at 60% of the run (×3), written as a long CSV (worker, step, duration), a wide
CSV (one column per worker: the "5 MB upload") and a long Parquet file.  Timed (median of three
calls): ``load_trace`` of each file's bytes, ``Trace.summary`` (slowdowns, persistent and
emerging stragglers), ``fit_laws`` of the pooled times and ``fit_report`` (the ``fit``
command's JSON), ``what_if`` (four schemes, the page's budget), and the page's cached views
(``distsgd.ui.cached.trace_view`` / ``fits_view``) on a first call and on a rerun (a cache hit
keyed by the trace's digest: nothing is re-parsed or re-summarised).  Peak memory of one load
and one summary by tracemalloc.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import io
import statistics
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from distsgd import parse_delay
from distsgd.fit import fit_laws, fit_report
from distsgd.traces import load_trace
from distsgd.whatif import what_if

from .bench_clusters import cpu_model, fmt_bytes, fmt_time, table

RESULTS = Path(__file__).resolve().parent / "results"


def synthetic(m: int, n: int, seed: int = 1) -> np.ndarray:
    """m × n lognormal(0, 0.2) times; workers 0–2 ×1.5 throughout, 3–4 ×3 from step 0.6·n."""
    t = np.random.default_rng(seed).lognormal(0.0, 0.2, (m, n))
    t[:3] *= 1.5
    t[3:5, int(0.6 * n):] *= 3.0
    return t


def files(t: np.ndarray) -> dict[str, bytes]:
    m, n = t.shape
    workers = np.repeat([f"w{i}" for i in range(m)], n)
    steps = np.tile(np.arange(1, n + 1), m)
    long = pd.DataFrame({"worker": workers, "step": steps, "duration": t.ravel()})
    wide = pd.DataFrame(t.T, columns=[f"w{i}" for i in range(m)])
    wide.insert(0, "step", np.arange(1, n + 1))
    pq = io.BytesIO()
    long.to_parquet(pq, index=False)
    return {"long CSV": long.to_csv(index=False, float_format="%.4f").encode(),
            "wide CSV": wide.to_csv(index=False, float_format="%.4f").encode(),
            "long Parquet": pq.getvalue()}


def median_time(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def peak(fn: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def run(quick: bool = False, output: Path | None = None) -> str:
    m = n = 200 if quick else 1000
    repeats = 1 if quick else 3
    t = synthetic(m, n)
    data = files(t)
    rows = []
    traces = {}
    for name, blob in data.items():
        fname = "trace.parquet" if "Parquet" in name else "trace.csv"
        secs, tr = median_time(lambda b=blob, f=fname: load_trace(b, name=f), repeats)
        traces[name] = tr
        rows.append([f"load_trace ({name}, {fmt_bytes(len(blob))})", fmt_time(secs),
                     fmt_bytes(peak(lambda b=blob, f=fname: load_trace(b, name=f)))])
    trace = traces["wide CSV"]
    secs, summary = median_time(lambda: trace.summary(1.2), repeats)
    rows.append(["Trace.summary (slowdowns, persistent and emerging)", fmt_time(secs),
                 fmt_bytes(peak(lambda: trace.summary(1.2)))])
    flagged = sorted(r["worker"] for r in summary if r["straggler"])  # type: ignore[union-attr]
    secs, fits = median_time(lambda: fit_laws(trace.pooled), repeats)
    rows.append(["fit_laws (pooled, every family)", fmt_time(secs), ""])
    secs, _ = median_time(lambda: fit_report(trace, 1.2, fits=fits), repeats)  # type: ignore[arg-type]
    rows.append(["fit_report (summary + JSON, fits given)", fmt_time(secs), ""])
    best = parse_delay(fits[0].spec) if fits else None  # type: ignore[index]
    secs, _ = median_time(lambda: what_if(trace, ["sync", "k-sync", "async", "k-async"], m // 2, 4,
                                          stragglers=flagged, fit=best, budget=2e8, seed=1), 1)
    rows.append(["what_if (4 schemes × 5 readings, budget 2e8)", fmt_time(secs), ""])
    page_rows = page_views(trace)
    stamp = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    text = "\n".join([
        f"# A {m} × {n} trace through the cluster page's path ({'quick' if quick else 'full'} run)", "",
        f"{stamp}, {cpu_model()}; `python -m benchmarks.bench_traces{' --quick' if quick else ''}`.", "",
        f"Flagged at θ = 1.2: {', '.join(flagged)} (planted: w0, w1, w2 persistent; w3, w4 from step "
        f"{int(0.6 * n) + 1}).", "",
        table(["step", "time (median)", "peak memory (tracemalloc)"], rows), "",
        "The page's cached views (first call, then the rerun a widget move causes):", "",
        table(["view", "first call", "rerun"], page_rows), ""])
    out = output or RESULTS / ("traces-quick.md" if quick else "traces.md")
    out.write_text(text, encoding="utf-8")
    return text


def page_views(trace: object) -> list[list[str]]:
    """The page's st.cache_data views, called outside a Streamlit run (in-memory cache)."""
    from distsgd.ui import cached  # the dashboard's module: imported only for this table

    out = []
    for name, fn in (("trace_view (heatmap, boxes, summary)", lambda: cached.trace_view(trace, 1.2)),
                     ("fits_view (fits table, histogram, Q–Q)", lambda: cached.fits_view(trace))):
        first, _ = median_time(fn, 1)
        again, _ = median_time(fn, 3)
        out.append([name, fmt_time(first), fmt_time(again)])
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="200 × 200 instead of 1000 × 1000")
    p.add_argument("--output", type=Path, default=None)
    args = p.parse_args(argv)
    print(run(args.quick, args.output))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

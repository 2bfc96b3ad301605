"""Sweeps on Dask (DESIGN §8, issue 13): serial against a LocalCluster of 2 workers, measured.

    python -m benchmarks.bench_sweep            # full run (~5 min), writes benchmarks/results/sweep.md
    python -m benchmarks.bench_sweep --quick    # 200 + 16 points (~1 min), writes sweep-quick.md

(1) Two grids, each run serially (``local_workers=0``) and on a LocalCluster of two single-threaded
    worker processes (``distsgd.sweeps.run._local_client(2)``, the CLI's default here), both
    to a Parquet file:
    - runtime: 2 000 points — k-sync, k-async, k-batch-sync, k-batch-async × five delay laws ×
      m ∈ {10 … 400} × K ∈ {1 … 10}, 20 000 Monte Carlo iterations and the analytic E[T] each;
    - error: 100 points — the same four schemes × K ∈ {1, 2, 4, 8, 16} × five laws at m = 16,
      simulated SGD of 500 replicas to T = 100 and the time to reach ε = 0.05.
    Measured: the cluster's start (workers up), the first run on it (the workers import distsgd
    and load the compiled kernels on their first task) and a second run on the warm cluster;
    speed-up = serial / warm run; overhead per task = (2 · warm − serial) / tasks, the time two
    workers spend beyond the serial work, per task; the predicted work per task
    (:func:`distsgd.sweeps.compute.point_cost`) against the measured; each worker process's
    peak RSS (VmHWM) and the driver's; the file's size per row; that the serial and Dask files
    are the same bytes; and, since wall times move with the load of a shared machine, the CPU
    seconds of the serial run and of each worker and the driver during the warm run.
(2) Dask's own cost per task: 2 000 no-op tasks ``client.submit``-ted and taken ``as_completed``.
(3) One task's CPU time in this process, on a sweep worker and on a worker with Dask's default
    environment (``MALLOC_TRIM_THRESHOLD_=65536``).
(4) The driver: checking and planning a 100 000-point grid (time and tracemalloc bytes per
    point), and the Arrow bytes per finished row — what SWEEP_MAX_POINTS in distsgd/limits.py
    rests on.

The report ends with a paper extrapolation to 1 000 cores from these figures.  A hand-written
``**Reading …**`` paragraph at the top of an existing report is kept when it is rewritten.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import logging
import os
import platform
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
from distributed import Client, LocalCluster, as_completed

from distsgd import limits
from distsgd.sweeps import load_grid
from distsgd.sweeps import run as sweep_run
from distsgd.sweeps.compute import compute_task
from distsgd.sweeps.output import to_table

from .bench_runtime import proc_status_bytes, reset_peak_rss

RESULTS = Path(__file__).resolve().parent / "results"
LAWS = ["exp(rate=1)", "shifted-exp(rate=1, shift=0.5)", "pareto(xm=1, alpha=2.5)",
        "lognormal(mu=0, sigma=0.5)", "weibull(shape=1.5, scale=1)"]
SCHEMES = ["k-sync", "k-async", "k-batch-sync", "k-batch-async"]
NOOP_TASKS = {False: 2000, True: 200}


def runtime_grid(quick: bool) -> dict[str, Any]:
    ms = [10, 100] if quick else [10, 20, 40, 60, 80, 100, 150, 200, 300, 400]
    Ks = list(range(1, 6)) if quick else list(range(1, 11))
    return {"seed": 1, "base": {"iterations": 20_000},
            "grid": {"scheme": SCHEMES, "delay": LAWS, "m": ms, "K": Ks}, "compute": {"runtime": True}}


def error_grid(quick: bool) -> dict[str, Any]:
    return {"seed": 2, "base": {"m": 16},
            "grid": {"scheme": SCHEMES, "K": [1, 16] if quick else [1, 2, 4, 8, 16], "delay": LAWS[:2] if quick
                     else [LAWS[0], LAWS[1], LAWS[3], LAWS[4], "uniform(low=0.5, high=1.5)"]},
            "compute": {"error": {"eta": 0.05, "L": 2, "mu": 0.5, "sigma2": 1, "b": 1, "f0": 1, "dim": 10,
                                  "time": 100, "replicas": 500, "eps": 0.05}}}


def _worker_peak() -> int:
    """A worker process's peak RSS (VmHWM, bytes), run on every worker by ``client.run``."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return -1


def _cpu_seconds() -> float:
    """A process's CPU time so far (every thread), run on every worker by ``client.run``."""
    return time.process_time()


def _noop(i: int) -> int:
    return i


def measure(name: str, grid: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """Serial, then a LocalCluster of 2 (start, first run, warm run); files compared."""
    g = load_grid(grid)
    ctx = g.context()
    valid, _ = sweep_run._plan(g, ctx)
    serial_out, cold_out, warm_out = (tmp / f"{name}-{k}.parquet" for k in ("serial", "cold", "warm"))
    reset_peak_rss()
    t0, c0 = time.perf_counter(), time.process_time()
    table, serial = sweep_run.run_sweep(grid, local_workers=0, out=serial_out)
    t_serial, cpu_serial = time.perf_counter() - t0, time.process_time() - c0
    driver_peak = proc_status_bytes("VmHWM")
    t0 = time.perf_counter()
    with sweep_run._local_client(2) as client:
        t_start = time.perf_counter() - t0
        t0 = time.perf_counter()
        _, cold = sweep_run.run_sweep(grid, client, out=cold_out)
        t_cold = time.perf_counter() - t0
        w0 = client.run(_cpu_seconds)
        t0, c0 = time.perf_counter(), time.process_time()
        _, warm = sweep_run.run_sweep(grid, client, out=warm_out)
        t_warm, cpu_driver = time.perf_counter() - t0, time.process_time() - c0
        w1 = client.run(_cpu_seconds)
        cpu_workers = [w1[k] - w0[k] for k in w0]
        peaks = sorted(client.run(_worker_peak).values())
    same = serial_out.read_bytes() == cold_out.read_bytes() == warm_out.read_bytes()
    predicted = sum(p.cost for p in valid) / 1e9
    return {"name": name, "points": serial.points, "errors": serial.errors, "tasks_serial": serial.tasks,
            "tasks": warm.tasks, "serial": t_serial, "start": t_start, "cold": t_cold, "warm": t_warm,
            "cpu_serial": cpu_serial, "cpu_workers": cpu_workers, "cpu_driver": cpu_driver,
            "predicted": predicted, "worker_peaks": peaks, "driver_peak": driver_peak, "same": same,
            "bytes": serial_out.stat().st_size, "arrow_bytes": table.nbytes, "rows": table.num_rows}


def _task_cpu(task: list[Any], seed: int, ctx: Any, runtime: bool, error: Any) -> float:
    """CPU seconds of one task's points (run in the driver or on a worker)."""
    c0 = time.process_time()
    compute_task(task, seed, ctx, runtime, error)
    return time.process_time() - c0


def worker_env_cost(quick: bool) -> dict[str, float]:
    """The same task (the quick runtime grid, 200 points) in this process, on a worker of
    ``_local_client`` and on a worker with Dask's default environment (MALLOC_TRIM_THRESHOLD_):
    the least CPU seconds of three runs each (after one to warm up)."""
    g = load_grid(runtime_grid(True))
    ctx = g.context()
    valid, _ = sweep_run._plan(g, ctx)
    task = [(p.index, p.params) for p in valid]
    args = (task, g.seed, ctx, g.runtime, g.error)
    runs = 2 if quick else 3
    _task_cpu(*args)
    out = {"in process": min(_task_cpu(*args) for _ in range(runs))}
    with sweep_run._local_client(1) as client:
        out["local worker (sweep's)"] = min(client.submit(_task_cpu, *args, pure=False).result()
                                            for _ in range(runs + 1))
    had = os.environ.get("MALLOC_TRIM_THRESHOLD_")
    try:
        with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                          host="127.0.0.1", silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
            out["local worker (Dask's default)"] = min(client.submit(_task_cpu, *args, pure=False).result()
                                                       for _ in range(runs + 1))
    finally:  # the Nanny copies its environment into this process's: undo it
        if had is None:
            os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    return out


def dask_task_cost(n: int) -> float:
    """Seconds per no-op task through submit / as_completed on a warm LocalCluster of 2."""
    with sweep_run._local_client(2) as client:
        list(as_completed([client.submit(_noop, i, pure=False) for i in range(50)]))  # warm up
        t0 = time.perf_counter()
        futures = [client.submit(_noop, i, pure=False) for i in range(n)]
        for f in as_completed(futures):
            f.result()
        return (time.perf_counter() - t0) / n


def driver_cost(n_m: int, n_k: int) -> dict[str, float]:
    """Check and plan a k-batch-sync grid of n_m × n_k points: seconds and bytes per point."""
    grid = {"seed": 3, "base": {"delay": "exp(rate=1)", "scheme": "k-batch-sync", "iterations": 1000},
            "grid": {"m": list(range(1, n_m + 1)), "K": list(range(1, n_k + 1))}, "compute": {"runtime": True}}
    tracemalloc.start()
    t0 = time.perf_counter()
    g = load_grid(grid)
    g.check_size(yes=True)
    valid, invalid = sweep_run._plan(g, g.context())
    seconds = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    n = len(valid) + len(invalid)
    rows = to_table([{"point": i, **p.params} for i, p in enumerate(valid[:10_000])])
    return {"points": n, "seconds": seconds, "bytes_per_point": peak / n,
            "arrow_param_bytes_per_row": rows.nbytes / rows.num_rows}


def dur(seconds: float) -> str:
    """A duration in s, min or h."""
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min" if seconds < 7200 \
        else f"{seconds / 3600:.1f} h"


def mib(n: float | None) -> str:
    return "—" if n is None else f"{n / 2**20:.0f} MiB"


def report(results: list[dict[str, Any]], task_cost: float, driver: dict[str, float], env_cost: dict[str, float],
           quick: bool, total: float, load0: float) -> str:
    head = ["grid", "points (errors)", "tasks", "predicted work", "serial", "cluster start", "first run (cold)",
            "warm run", "speed-up (serial / warm)", "overhead per task (wall)", "CPU: serial / each worker / driver",
            "CPU overhead per task", "speed-up from CPU times", "s per task (measured / predicted)",
            "worker peak RSS", "driver peak RSS", "file (per row)", "serial = Dask bytes"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        over = (2 * r["warm"] - r["serial"]) / r["tasks"]
        spent = sum(r["cpu_workers"]) + r["cpu_driver"]
        ideal = max(max(r["cpu_workers"]), spent / 2)  # two idle cores: the busier worker, or all CPU / 2
        lines.append("| " + " | ".join([
            r["name"], f"{r['points']:,} ({r['errors']})", f"{r['tasks']}", f"{r['predicted']:.1f} s",
            f"{r['serial']:.1f} s", f"{r['start']:.1f} s", f"{r['cold']:.1f} s", f"{r['warm']:.1f} s",
            f"{r['serial'] / r['warm']:.2f}×", f"{over * 1e3:.0f} ms",
            f"{r['cpu_serial']:.1f} / {' + '.join(f'{c:.1f}' for c in r['cpu_workers'])} / {r['cpu_driver']:.1f} s",
            f"{(spent - r['cpu_serial']) / r['tasks'] * 1e3:.0f} ms", f"{r['cpu_serial'] / ideal:.2f}×",
            f"{r['serial'] / r['tasks']:.2f} / {r['predicted'] / r['tasks']:.2f}",
            " / ".join(mib(p) for p in r["worker_peaks"]), mib(r["driver_peak"]),
            f"{r['bytes'] / 1024:.0f} KiB ({r['bytes'] / r['rows']:.0f} B)", "yes" if r["same"] else "**NO**",
        ]) + " |")
    rt, er = results
    per_point = {r["name"]: r["serial"] / r["points"] for r in results}
    peak = max(max(r["worker_peaks"]) for r in results)
    row_bytes = max(r["bytes"] / r["rows"] for r in results)
    arrow_row = max(r["arrow_bytes"] / r["rows"] for r in results)
    stamp = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    machine = (f"{stamp}; `python -m benchmarks.bench_sweep{' --quick' if quick else ''}`, {total:.0f} s in all. "
               f"Machine: `os.cpu_count()` = {os.cpu_count()}, {platform.machine()}; Python "
               f"{platform.python_version()}, numpy {np.__version__}; load average (1 min) {load0:.2f} at the "
               f"start, {os.getloadavg()[0]:.2f} at the end (this machine is shared: a load over ~0.5 beyond this "
               "run slows the 2-worker runs most).")
    big_task = sweep_run.task_target(1e6 * per_point[rt["name"]], 1000)
    driver_gib = (2 * arrow_row + driver["bytes_per_point"]) * limits.SWEEP_MAX_POINTS / 2**30
    return "\n".join([
        f"# Sweeps on Dask{' (quick smoke run — not representative)' if quick else ''}", "", machine, "",
        "## (1) Serial against a LocalCluster of 2 workers", "",
        "Each grid run serially (`local_workers=0`), then on a LocalCluster of two single-threaded worker "
        "processes: its start, a first run (the workers import distsgd and load the compiled kernels on their "
        "first task) and a second, warm run. Speed-up = serial / warm; overhead per task (wall) = (2 · warm − "
        "serial) / tasks. On a shared machine wall times move with the load, so CPU times are given too: the "
        "serial run's, each worker process's and the driver's (scheduler, client, checkpoints) during the warm "
        "run; CPU overhead per task = (workers + driver − serial) / tasks; speed-up from CPU times = serial / "
        "max(busier worker, all CPU / 2), what two idle cores would give. Predicted work = Σ `point_cost` "
        "(cost units ≈ ns of this machine's core). Peak RSS is VmHWM.", "",
        *lines, "",
        "## (2) Dask's cost per task", "",
        f"{NOOP_TASKS[quick]:,} no-op tasks, `client.submit` + `as_completed`, warm LocalCluster of 2: "
        f"**{task_cost * 1e3:.2f} ms per task** ({1 / task_cost:,.0f} tasks/s through one scheduler and this "
        "driver).", "",
        "## (3) The workers' environment", "",
        "One task of 200 runtime points (the quick grid): least CPU seconds of a few runs, in this process and "
        "on one worker process of a LocalCluster — the sweep's (`WORKER_ENV`: one BLAS thread, glibc's malloc "
        "trimming left alone) and Dask's default (`MALLOC_TRIM_THRESHOLD_=65536` as well):", "",
        "| where | CPU seconds | × in process |", "|---|---:|---:|",
        *[f"| {k} | {v:.2f} | {v / env_cost['in process']:.2f} |" for k, v in env_cost.items()], "",
        "## (4) The driver", "",
        f"Checking and planning {driver['points']:,} points (every point built through `make_cluster` / "
        f"`make_scheme`, its cost predicted): {driver['seconds']:.1f} s, "
        f"{driver['seconds'] / driver['points'] * 1e6:.0f} µs and {driver['bytes_per_point']:.0f} B "
        f"(tracemalloc peak) per point. A finished row is {arrow_row:.0f} B in Arrow and "
        f"{row_bytes:.0f} B in the zstd Parquet file of the grids above.", "",
        "## A 1 000-core run, on paper", "",
        f"- **Work.** Measured here (serial): {per_point[rt['name']] * 1e3:.1f} ms per runtime point (20 000 "
        f"iterations + analytic) and {per_point[er['name']]:.2f} s per error point (500 SGD replicas to "
        f"T = 100). A million runtime points are {dur(1e6 * per_point[rt['name']])} of one core, "
        f"{dur(1e6 * per_point[rt['name']] / 1000)} on 1 000 cores at perfect scaling; 100 000 error points "
        f"{dur(1e5 * per_point[er['name']])} of one core, {dur(1e5 * per_point[er['name']] / 1000)} on 1 000.",
        f"- **Task size.** One scheduler moved {1 / task_cost:,.0f} no-op tasks/s here ({task_cost * 1e3:.1f} ms "
        "each, the driver and two workers sharing these 2 cores; Dask documents ≈ 1 ms of scheduler time per "
        "task). 1 000 busy cores with tasks of t seconds ask 1 000/t tasks per second, so t must be ≥ 1 s at "
        f"1 ms per task ({1000 * task_cost:.1f} s at this machine's figure). `task_target` gives "
        f"{big_task:g} s per task at 1 000 workers (at least workers × "
        f"{sweep_run.SCHEDULER_SECONDS_PER_TASK * 1e3:g} ms): {1000 / big_task:,.0f} tasks/s; a million runtime "
        f"points of the grid above are then about {1e6 * per_point[rt['name']] / big_task:,.0f} tasks. A sweep "
        "too small to keep 1 000 cores busy that long ends in seconds, where starting the workers dominates.",
        f"- **Memory per worker.** Peak RSS {mib(peak)} per worker process here (the interpreter, numpy, "
        "numba, distributed and one point at a time); every point is bounded by `limits.MEMORY_BYTES` (1 GiB), "
        "so 1.5–2 GiB per single-threaded worker is safe for any grid and 1 000 cores need ~2 TB in all; "
        "Dask's default memory limit is the node's memory / workers.",
        f"- **Output.** {row_bytes:.0f} B per row on disk: a million points are "
        f"{1e6 * row_bytes / 2**20:.0f} MiB of Parquet; the driver keeps {arrow_row:.0f} B per row in Arrow "
        f"(twice that while a checkpoint concatenates) and ~{driver['bytes_per_point']:.0f} B per planned point: "
        f"{driver_gib:.2f} GiB at the cap of {limits.SWEEP_MAX_POINTS:,} points (`limits.SWEEP_MAX_POINTS`). "
        f"A checkpoint rewrites the whole file, at most once per {sweep_run.CHECKPOINT_RATIO:g} times its own "
        "duration, so checkpoints take ≤ 5 % of the driver's time.",
        f"- **Cold start.** {results[0]['start']:.1f} s to start 2 local workers, then a first run of "
        f"{results[0]['cold']:.1f} s against {results[0]['warm']:.1f} s warm (the workers import distsgd and "
        "load the kernels on their first task); a batch cluster's workers start once per job: paid once, not "
        "per task.",
        "",
    ])


def _keep_reading(path: Path, text: str) -> str:
    """Keep a hand-written ``**Reading …**`` paragraph of an existing report at its top."""
    if not path.exists():
        return text
    old = path.read_text(encoding="utf-8").split("\n\n")
    reading = [p for p in old if p.startswith("**Reading")]
    if not reading:
        return text
    title, rest = text.split("\n\n", 1)
    return f"{title}\n\n{reading[0]}\n\n{rest}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_sweep", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="200 + 16 points, a smoke run")
    p.add_argument("--output", type=Path, default=None, help="the report (default benchmarks/results/sweep.md)")
    args = p.parse_args(argv)
    start = time.perf_counter()
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        results = [measure("runtime", runtime_grid(args.quick), Path(tmp)),
                   measure("error", error_grid(args.quick), Path(tmp))]
    task_cost = dask_task_cost(NOOP_TASKS[args.quick])
    env_cost = worker_env_cost(args.quick)
    driver = driver_cost(100, 100) if args.quick else driver_cost(1000, 100)
    text = report(results, task_cost, driver, env_cost, args.quick, time.perf_counter() - start, load0)
    out = args.output or RESULTS / ("sweep-quick.md" if args.quick else "sweep.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(_keep_reading(out, text), encoding="utf-8")
    print(text)
    return 0 if all(r["same"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

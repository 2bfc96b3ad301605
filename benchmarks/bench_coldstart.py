"""Cold start: a fresh clone, ``make run``, until the first page's chart is drawn in Chromium.

    python -m benchmarks.bench_coldstart            # writes benchmarks/results/coldstart.md
    python -m benchmarks.bench_coldstart --quick    # the same (one clone is the smallest run)

Clones this repository's committed HEAD into a temporary directory, runs ``make run`` on a free
loopback port and measures (1) the time until the server answers ``/_stcore/health`` — the
venv's creation and the Makefile's install of requirements.txt included (uv's or pip's own cache,
if the machine has one, is used as on any machine) — (2) the time from opening the page in
headless Chromium (Debian's ``/usr/bin/chromium``) until its first plotly chart is drawn:
Streamlit's and plotly's JavaScript and the default view's computation (after a fresh install the
runtime page draws its analytic curves while a child process compiles the numba kernels:
``distsgd.ui.warmup``), and (3) until that chart shows its Monte Carlo markers.
Then it stops the server and starts it again in the same clone (venv and numba cache present:
what every later start pays) and measures both again, plus the local SGD page.
Bounded: 15 minutes for the install, 2 minutes per page; the server is always stopped.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results" / "coldstart.md"
CHROMIUM = "/usr/bin/chromium"
CHART = ".js-plotly-plot"
#: a drawn marker of a chart (the Monte Carlo means; the analytic curves are lines)
MARKERS = ".js-plotly-plot .points path"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(clone: Path, port: int, limit: float) -> tuple[subprocess.Popen[bytes], float]:
    """``make run`` in ``clone``; the seconds until the server is healthy."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(["make", "run", f"PORT={port}"], cwd=clone, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1).read()
            return proc, time.perf_counter() - t0
        except OSError:
            if proc.poll() is not None or time.perf_counter() - t0 > limit:
                _stop(proc)
                raise SystemExit(f"make run gave no healthy server within {limit:.0f} s") from None
            time.sleep(0.2)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)


def _pages(port: int, paths: list[str]) -> list[tuple[float, float]]:
    """Seconds from opening each path until its first chart is drawn, and until a chart shows
    markers (the Monte Carlo), in one browser tab."""
    from playwright.sync_api import sync_playwright

    out = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        try:
            page = browser.new_page()
            for path in paths:
                t0 = time.perf_counter()
                page.goto(f"http://127.0.0.1:{port}{path}", timeout=120_000)
                page.wait_for_selector(CHART, timeout=120_000)
                chart = time.perf_counter() - t0
                page.wait_for_selector(MARKERS, timeout=120_000)
                out.append((chart, time.perf_counter() - t0))
        finally:
            browser.close()
    return out


def _commit() -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                          text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the same run (one clone is the smallest)")
    ap.add_argument("--output", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"no {CHROMIUM}: install it (make browser)", file=sys.stderr)
        return 1
    rows = []
    with tempfile.TemporaryDirectory(prefix="distsgd-coldstart-") as tmp:
        clone = Path(tmp) / "distsgd"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        for label, limit in (("fresh clone (venv built, numba cache empty)", 900.0),
                             ("second start (venv and numba cache present)", 120.0)):
            port = _free_port()
            proc, up = _start(clone, port, limit)
            try:
                first, local = _pages(port, ["/", "/local_sgd"])
            finally:
                _stop(proc)
            rows.append((label, up, *first, local[1]))
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Cold start", "",
        f"`python -m benchmarks.bench_coldstart` — {now}; commit {_commit()}; {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}. A fresh clone of HEAD, `make run`, headless Chromium.", "",
        "| start | `make run` → server healthy (s) | first page's chart drawn (s) | `make run` → first chart (s) | "
        "→ its Monte Carlo markers (s) | then the local SGD page (s) |",
        "|---|---:|---:|---:|---:|---:|",
        *(f"| {label} | {up:.1f} | {chart:.2f} | {up + chart:.1f} | {up + mc:.1f} | {local:.2f} |"
          for label, up, chart, mc, local in rows),
        "",
        "The first column includes creating the venv and installing requirements.txt (the Makefile's uv, "
        "from its cache where the machine has one; pip if uv cannot be had) and the server's first imports "
        "(bytecode written as they go); the kernels are compiled into numba's empty cache (fresh clone) or "
        "loaded from it by a child process meanwhile (`distsgd.ui.warmup`). The second: opening the page in "
        "Chromium (Streamlit's and plotly's JavaScript) until its chart is drawn — after a fresh install its "
        "analytic curves, drawn while the child compiles; the fourth, until its Monte Carlo markers are "
        "drawn as well (both from `make run`'s start).",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

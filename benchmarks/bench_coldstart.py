"""Cold start: a fresh clone, ``make run``, until the first page's chart is drawn in Chromium.

    python -m benchmarks.bench_coldstart            # writes benchmarks/results/coldstart.md
    python -m benchmarks.bench_coldstart --quick    # the same (one clone is the smallest run)

Clones this repository's committed HEAD into a temporary directory, runs ``make run`` on a free
loopback port and measures (1) the time until the server answers ``/_stcore/health`` — the
venv's creation and the Makefile's install of requirements.txt included (uv's or pip's own cache,
if the machine has one, is used as on any machine) — and (2) the time from opening the page in
headless Chromium (Debian's ``/usr/bin/chromium``) until its first plotly chart is drawn:
Streamlit's and plotly's JavaScript and the default view's computation (``distsgd.ui.serve``
imports the libraries and compiles the numba kernels into an empty cache before it answers).
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


def _pages(port: int, paths: list[str]) -> list[float]:
    """Seconds from opening each path until its first chart is drawn, in one browser tab."""
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
                out.append(time.perf_counter() - t0)
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
            rows.append((label, up, first, local))
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Cold start", "",
        f"`python -m benchmarks.bench_coldstart` — {now}; commit {_commit()}; {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}. A fresh clone of HEAD, `make run`, headless Chromium.", "",
        "| start | `make run` → server healthy (s) | first page's chart drawn (s) | total (s) | "
        "then the local SGD page (s) |",
        "|---|---:|---:|---:|---:|",
        *(f"| {label} | {up:.1f} | {first:.2f} | {up + first:.1f} | {local:.2f} |" for label, up, first, local in rows),
        "",
        "The first column includes creating the venv and installing requirements.txt (the Makefile's uv, "
        "from its cache where the machine has one; pip if uv cannot be had), the first imports and the "
        "numba kernels' compile into an empty cache (fresh clone) or their load from it; the second, "
        "opening the page in Chromium (Streamlit's and plotly's JavaScript) and the default view.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

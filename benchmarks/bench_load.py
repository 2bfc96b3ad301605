"""Load benchmark: N concurrent dashboard sessions over Streamlit's websocket protocol.

    python -m benchmarks.bench_load                           # N = 1, 10, 30, 60; 60 s each
    python -m benchmarks.bench_load --nginx 2 --sessions 30   # through deploy/run-multi.sh
    python -m benchmarks.bench_load --quick                   # N = 1, 5; 8 s each (load-quick.md)
    python -m benchmarks.bench_load --workload mixed          # the lighter, earlier workload
    python -m benchmarks.bench_load --sessions 30 --query problem=logreg:digits   # a class on a data set

For each N a fresh server is started on a free loopback port (``streamlit run app.py``, or
``deploy/run-multi.sh P`` — P processes behind nginx — with ``--nginx P``), one warm-up
session visits the six pages once (imports, compiled kernels), then N sessions run for
``--duration`` seconds.  Each session is what a browser tab sends and waits for
(:mod:`benchmarks.load_client`): it opens, draws its first page (session i starts on page
i mod 6), then every ``--interval`` s (± ``--jitter``) does one thing.  Two workloads:

* ``sidebar`` (the default, the one the targets refer to: what a class does): two moves of a
  **sidebar** control (λ, m, K, Δ, H in turn) to a value no other session uses, then a click on
  the next page — every action a full-page rerun with parameters nobody asked for before;
* ``mixed`` (the earlier benchmark): a sidebar control and a control of the page in turn
  (a page control reruns only its fragment), and every ``--moves-per-page`` moves a page click.
  A session waits
for a rerun to finish before its next move (a student looks at the chart first), so a slow
server also means fewer moves.  Latency = send of the ``rerun_script`` BackMsg to its
``script_finished``; an exception element, an ``st.error`` alert, a timeout, a closed socket,
a failed script run, or a move whose new value the URL the app writes back does not hold (a
change not applied) is an error.  The server's process tree (children included) is
sampled from /proc: cores used (CPU seconds / wall seconds) and peak RSS.  The server is
stopped at the end of each N, also on an error or Ctrl-C.  Traffic goes to 127.0.0.1 only.

Results go to a section of ``benchmarks/results/load.md`` (one process, or through nginx),
leaving the other section as it was.  Measured, not asserted: the exit status is non-zero only
when the benchmark itself could not run (``--strict`` also fails on a missed target).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import math
import os
import platform
import random
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs

from . import load_server
from .load_client import RunResult, Session, Widget, open_session, route_cookie

RESULTS = Path(__file__).resolve().parent / "results"

# the targets, at 30 sessions
TARGET_N = 30
TARGET_P50_S, TARGET_P95_S, TARGET_RSS = 0.3, 1.0, 1.5e9

#: the settings README gives a class's host: worker processes for the heavy calls (one per core of
#: this 2-core machine) and the "fast" Monte Carlo budget (a student can ask for more)
SHARED_HOST = {"DISTSGD_PROCESSES": "2", "DISTSGD_BUDGET": "fast"}
SIDEBAR = ("lam", "m", "delta", "K", "seed", "H")
#: the sidebar controls a student moves in the sidebar-heavy workload (the law is a box: not moved)
STUDENT = ("lam", "m", "K", "delta", "H")
#: key -> (first value, step, count): the u-th move of the run sets ``first + step * (u % count)``
#: with u = session + N * move, so a key with count ≥ N * moves never repeats a value across
#: sessions; the small integer controls cycle a classroom range (every session's λ is unique
#: from its first move on, so no two sessions ever ask for the same parameter set)
RULES: dict[str, tuple[float, float, int]] = {
    "lam": (0.3, 0.01, 2000), "delta": (0.0, 0.01, 2000), "seed": (1, 1, 1_000_000),
    "m": (8, 1, 57), "K": (1, 1, 16), "H": (1, 1, 16),
    "eta": (0.01, 1e-4, 2000), "L": (1.0, 0.005, 2000), "sigma2": (0.1, 0.005, 2000),
    "horizon": (20.0, 0.05, 2000), "eps": (0.01, 5e-5, 2000), "gamma": (0.0, 0.05, 21),
    "replicas": (20, 10, 5), "D": (0.05, 0.05, 2000), "params_m": (1.0, 0.05, 2000),
    "gbps": (1.0, 0.01, 2000), "latency_ms": (0.01, 0.001, 2000), "tl_iters": (2, 1, 11),
}


@dataclass
class Config:
    sessions: list[int]
    duration: float
    interval: float
    jitter: float
    moves_per_page: int
    timeout: float
    nginx: int
    seed: int
    out: Path
    quick: bool
    strict: bool = False
    workload: str = "sidebar"
    host: str = "shared"
    query: str = ""  # the link every session opens with (e.g. problem=logreg:digits)

    @property
    def env(self) -> dict[str, str]:
        """The server's host settings (README, "Deploying as a shared app")."""
        if self.host != "shared":
            return {}
        # behind nginx the backends share the cores: one worker each
        return {**SHARED_HOST, "DISTSGD_PROCESSES": "1"} if self.nginx else dict(SHARED_HOST)


@dataclass
class Sample:
    kind: str  # "open", "page" or "control"
    latency: float
    ok: bool
    errors: list[str]
    key: str = ""


@dataclass
class Phase:
    """The figures of one N."""

    n: int
    samples: list[Sample] = field(default_factory=list)
    wall: float = 0.0
    startup: float = 0.0
    warmup: float = 0.0
    cores: float = 0.0
    root_cores: float = 0.0  # the Streamlit process's own share of ``cores``
    peak_rss: int = 0
    peak_pss: int = 0
    hwm: int = 0
    processes: int = 0
    client_cores: float = 0.0
    backends: dict[str, int] = field(default_factory=dict)
    log_lines: list[str] = field(default_factory=list)
    warmup_errors: list[str] = field(default_factory=list)
    unfinished: int = 0
    machine_cores: float = 0.0
    load: tuple[float, float] = (0.0, 0.0)

    def latencies(self, kind: str) -> list[float]:
        return sorted(s.latency for s in self.samples if s.kind == kind and s.ok)

    @property
    def errors(self) -> list[str]:
        return [e for s in self.samples for e in s.errors]


def pct(xs: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) of sorted ``xs``; NaN when empty."""
    if not xs:
        return float("nan")
    return xs[min(len(xs) - 1, max(0, round(q / 100 * len(xs) + 0.5) - 1))]


def value_for(w: Widget, session: int, n: int, move: int) -> float:
    """The value move ``move`` of session ``session`` (of ``n``) gives widget ``w``."""
    first, step, count = RULES[w.key]
    v = first + step * ((session + n * move) % count)
    v = min(max(v, w.low), w.high)
    return float(round(v)) if w.integer else round(v, 9)


def pick_sidebar(sess: Session, session: int, move: int) -> Widget | None:
    """The sidebar-heavy workload's control: λ first (unique per session), then m, K, Δ, H, λ, …
    (each session starts the cycle at its own place)."""
    if move == 0:
        return sess.widgets.get("lam")
    keys = [k for k in STUDENT if k in sess.widgets]
    return sess.widgets[keys[(session + move) % len(keys)]] if keys else None


def pick(sess: Session, session: int, move: int) -> Widget | None:
    """The control to move: λ first (unique per session), then a sidebar control and a control
    of the page in turn (sidebar only on a page without numeric controls of its own)."""
    if move == 0:
        return sess.widgets.get("lam")
    own = [k for k in sess.widgets if k in RULES and k not in SIDEBAR]
    turn = session + move // 2
    if move % 2 and own:
        return sess.widgets[own[turn % len(own)]]
    keys = [k for k in SIDEBAR if k in sess.widgets]
    return sess.widgets[keys[turn % len(keys)]] if keys else None


def applied(query_string: str, key: str, value: float) -> bool:
    """Whether the URL the app wrote after a move holds the moved control's new value (the
    dashboard mirrors every control into the URL): the change reached the session's state.  The
    URL leaves out a control at its default value, so an absent key is not counted against it."""
    got = parse_qs(query_string).get(key)
    try:
        return got is None or math.isclose(float(got[-1]), value, rel_tol=1e-9, abs_tol=1e-12)
    except ValueError:
        return False


async def _timed(sess: Session, cfg: Config, out: list[Sample], kind: str, page_hash: str | None = None,
                 widget: Widget | None = None, value: float | None = None) -> RunResult:
    r = await sess.rerun(cfg.timeout, page_hash=page_hash, widget=widget, value=value)
    if r.ok and widget is not None and value is not None and not applied(sess.query_string, widget.key, value):
        r = RunResult(r.latency, False, [f"change not applied: {widget.key} = {value:g}"])
    out.append(Sample(kind, r.latency, r.ok, r.errors, widget.key if widget is not None else ""))
    return r


async def drive(index: int, n: int, base: str, cfg: Config, t_end: float, phase: Phase) -> None:
    """One session: open, first page, then a move every interval until ``t_end``."""
    rng = random.Random(cfg.seed * 100_003 + index)
    await asyncio.sleep(rng.uniform(0, cfg.interval))  # the class does not click in the same ms
    cookie = ""
    if cfg.nginx:
        cookie, backend = await asyncio.to_thread(route_cookie, base)
        phase.backends[backend] = phase.backends.get(backend, 0) + 1
    try:
        sess = await open_session(base, cookie)
    except (OSError, TimeoutError) as exc:
        phase.samples.append(Sample("open", 0.0, False, [f"connect: {exc!r}"]))
        return
    try:
        await _run_session(sess, index, n, cfg, t_end, phase, rng)
    finally:
        await sess.close()


async def _run_session(sess: Session, index: int, n: int, cfg: Config, t_end: float, phase: Phase,
                       rng: random.Random) -> None:
    out = phase.samples
    sess.query_string = cfg.query
    if not (await _timed(sess, cfg, out, "open", page_hash="")).ok or not sess.pages:
        return
    titles = list(sess.pages)
    page = index % len(titles)
    if page:
        await _timed(sess, cfg, out, "page", page_hash=sess.pages[titles[page]])
    next_at = time.perf_counter() + rng.uniform(0, cfg.interval)
    max_moves = int(cfg.duration / cfg.interval) + 2
    moves = 0
    for action in range(max_moves):
        await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
        if time.perf_counter() >= t_end or sess.closed:
            return
        t_action = time.perf_counter()
        next_at = t_action + cfg.interval + rng.uniform(-cfg.jitter, cfg.jitter)
        if cfg.workload == "sidebar":
            if action % 3 == 2:  # two sidebar moves, then a page click
                page = (page + 1) % len(titles)
                await _timed(sess, cfg, out, "page", page_hash=sess.pages[titles[page]])
            else:
                w = pick_sidebar(sess, index, moves)
                if w is not None:
                    await _timed(sess, cfg, out, "control", widget=w, value=value_for(w, index, n, moves))
                moves += 1
            continue
        move = action
        if move and move % cfg.moves_per_page == 0:
            page = (page + 1) % len(titles)
            await _timed(sess, cfg, out, "page", page_hash=sess.pages[titles[page]])
        w = pick(sess, index, move)
        if w is not None:
            await _timed(sess, cfg, out, "control", widget=w, value=value_for(w, index, n, move))


async def warm_up(base: str, cookie: str, timeout: float, query: str = "") -> tuple[float, list[str]]:
    """One session that draws each page once (imports, kernels, shared caches): seconds, errors."""
    t0 = time.perf_counter()
    errors: list[str] = []
    sess = await open_session(base, cookie)
    sess.query_string = query
    try:
        r = await sess.rerun(timeout, page_hash="")
        errors += [f"first page: {e}" for e in r.errors]
        for title, h in list(sess.pages.items()):
            r = await sess.rerun(timeout, page_hash=h)
            errors += [f"{title}: {e}" for e in r.errors]
    finally:
        await sess.close()
    return time.perf_counter() - t0, errors


async def backend_cookies(base: str, processes: int) -> list[str]:
    """A route cookie for each backend behind nginx (one empty cookie for a single server)."""
    if not processes:
        return [""]
    found: dict[str, str] = {}
    for _ in range(20 * processes):  # random keys: 20·P draws miss a backend with odds < 1e-6
        cookie, backend = await asyncio.to_thread(route_cookie, base)
        found.setdefault(backend, cookie)
        if len(found) >= processes:
            break
    return list(found.values())


async def run_phase(n: int, cfg: Config, logdir: Path) -> Phase:
    """A fresh server, a warm-up, N sessions for the duration; the server is always stopped."""
    phase = Phase(n)
    port = load_server.free_port()
    server = load_server.start(logdir / f"server-{n}.log", port, cfg.nginx, cfg.env)
    try:
        phase.startup = await load_server.wait_healthy(server)
        t_warm = time.perf_counter()
        for cookie in await backend_cookies(server.base, cfg.nginx):
            phase.warmup_errors += (await warm_up(server.base, cookie, max(cfg.timeout, 120.0), cfg.query))[1]
        phase.warmup = time.perf_counter() - t_warm
        log_start = server.log.stat().st_size
        sampler = load_server.Sampler(server.proc.pid)
        done = asyncio.Event()
        sampling = asyncio.create_task(sampler.run(done))
        cpu0, busy0, load0 = _self_cpu(), load_server.machine_busy()[0], os.getloadavg()[0]
        t0 = time.perf_counter()
        t_end = t0 + cfg.interval + cfg.duration
        tasks = [asyncio.create_task(drive(i, n, server.base, cfg, t_end, phase)) for i in range(n)]
        finished, pending = await asyncio.wait(tasks, timeout=cfg.interval * 2 + cfg.duration + cfg.timeout + 30)
        phase.unfinished = len(pending)
        for t in pending:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        phase.wall = time.perf_counter() - t0
        phase.client_cores = (_self_cpu() - cpu0) / phase.wall
        phase.machine_cores = (load_server.machine_busy()[0] - busy0) / phase.wall
        phase.load = (load0, os.getloadavg()[0])
        done.set()
        await sampling
        for t in finished:
            if t.exception() is not None:
                phase.samples.append(Sample("open", 0.0, False, [f"session: {t.exception()!r}"]))
        phase.cores, phase.peak_rss, phase.peak_pss = sampler.cores, sampler.peak_rss, sampler.peak_pss
        phase.root_cores = sampler.root_cores
        phase.hwm, phase.processes = sampler.hwm_total, sampler.processes
        phase.log_lines = load_server.log_problems(server.log, log_start)
    finally:
        load_server.stop(server)  # not in a thread: a cancelled task (Ctrl-C) still runs this to the end
    return phase


def _self_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _ms(x: float) -> str:
    return "–" if x != x else f"{x * 1000:.0f}"


def _row(p: Phase) -> str:
    ctl, page = p.latencies("control"), p.latencies("page")
    all_ok = sorted(s.latency for s in p.samples if s.ok)
    rate = len(all_ok) / p.wall if p.wall else 0.0
    worst = ctl[-1] if ctl else float("nan")
    return (f"| {p.n} | {len(ctl)} | {_ms(pct(ctl, 50))} | {_ms(pct(ctl, 95))} | {_ms(worst)} "
            f"| {_ms(pct(page, 50))} | {_ms(pct(page, 95))} | {rate:.2f} | {len(p.errors)} "
            f"| {p.cores:.2f} | {_ms(p.cores / rate if rate else float('nan'))} "
            f"| {_ms(p.root_cores / rate if rate and not p.backends else float('nan'))} | {p.machine_cores:.2f} "
            f"| {p.peak_rss / 2**20:.0f} | {p.peak_pss / 2**20:.0f} | {p.hwm / 2**20:.0f} | {p.client_cores:.2f} |")


def verdict(p: Phase) -> str:
    """The issue's targets against one phase's figures."""
    ctl = p.latencies("control")
    checks = [(f"p50 {_ms(pct(ctl, 50))} ms ≤ {TARGET_P50_S * 1000:.0f}", pct(ctl, 50) <= TARGET_P50_S),
              (f"p95 {_ms(pct(ctl, 95))} ms ≤ {TARGET_P95_S * 1000:.0f}", pct(ctl, 95) <= TARGET_P95_S),
              (f"{len(p.errors)} errors", not p.errors),
              # PSS: a worker process shares its parent's pages, which a sum of RSS counts twice
              (f"peak PSS {p.peak_pss / 2**30:.2f} GB ≤ {TARGET_RSS / 1e9:.1f}", p.peak_pss <= TARGET_RSS)]
    met = all(ok for _, ok in checks)
    return ("**met**" if met else "**missed**") + ": " + "; ".join(
        f"{text} {'✓' if ok else '✗'}" for text, ok in checks)


def section(cfg: Config, phases: list[Phase], load_before: tuple[float, float, float]) -> str:
    """The markdown of this run (one section of load.md)."""
    title = (f"## {cfg.nginx} server processes behind nginx (deploy/run-multi.sh {cfg.nginx})" if cfg.nginx
             else "## One server process (streamlit run app.py)" if cfg.workload == "mixed"
             else "## One server process (python -m distsgd.ui.serve)")
    title += (", sidebar-heavy workload" if cfg.workload == "sidebar" else ", mixed workload")
    if cfg.workload != "mixed":
        title += (", shared-host settings (" + " ".join(f"{k}={v}" for k, v in cfg.env.items()) + ")"
                  if cfg.env else ", default settings")
    if cfg.query:
        title += f", every session opens ?{cfg.query}"
    cmd = "python -m benchmarks.bench_load " + " ".join(sys.argv[1:])
    lines = [title, "",
             f"Measured {_dt.datetime.now().isoformat(timespec='minutes')} with `{cmd.strip()}`; "
             f"{cfg.duration:.0f} s per N, an action every {cfg.interval:g} ± {cfg.jitter:g} s, "
             + ("two sidebar moves then a page click" if cfg.workload == "sidebar"
                else f"a page click every {cfg.moves_per_page} moves")
             + f", rerun timeout {cfg.timeout:.0f} s. Load average before the run: "
             f"{load_before[0]:.2f} / {load_before[1]:.2f} / {load_before[2]:.2f} on {os.cpu_count()} CPUs.", "",
             "| N | moves | p50 ms | p95 ms | max ms | page click p50 ms | page click p95 ms | reruns/s | errors "
             "| server cores | CPU ms / rerun | of which Streamlit's process | machine busy cores | peak RSS MiB "
             "| peak PSS MiB | Σ VmHWM MiB "
             "| client cores |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += [_row(p) for p in phases]
    lines.append("")
    for p in phases:
        lines.append(_notes(p))
    return "\n".join(lines).rstrip() + "\n"


def _notes(p: Phase) -> str:
    bits = [f"- N = {p.n}: server up in {p.startup:.1f} s, warm-up (six pages per process) {p.warmup:.1f} s, "
            f"{p.processes} processes sampled, load average {p.load[0]:.1f} → {p.load[1]:.1f}"]
    opens = p.latencies("open")
    if opens:
        bits.append(f"first page p50 {_ms(pct(opens, 50))} ms, max {_ms(opens[-1])} ms")
    if p.n == TARGET_N:
        bits.append("target " + verdict(p))
    if p.backends:
        bits.append("sessions per backend " + ", ".join(f"{b or '?'}: {c}" for b, c in sorted(p.backends.items())))
    if p.errors:
        kinds: dict[str, int] = {}
        for e in p.errors:
            k = re.sub(r"\d+(\.\d+)?", "#", e)[:90]
            kinds[k] = kinds.get(k, 0) + 1
        bits.append("errors: " + "; ".join(f"{k} ×{c}" for k, c in sorted(kinds.items(), key=lambda kv: -kv[1])[:4]))
    if p.warmup_errors:
        bits.append(f"warm-up errors (not counted): {len(p.warmup_errors)}, first `{p.warmup_errors[0][:100]}`")
    if p.unfinished:
        bits.append(f"{p.unfinished} sessions cut off at the phase's time limit")
    if p.log_lines:
        shown = [ln for ln in p.log_lines if "Traceback" not in ln][:2] or p.log_lines[:1]
        bits.append(f"server log: {len(p.log_lines)} error line(s): " + " / ".join(f"`{ln[:100]}`" for ln in shown))
    return "; ".join(bits) + "."


HEADER = """# Load benchmark: concurrent sessions over Streamlit's websocket protocol

`benchmarks/bench_load.py` (see its docstring): N sessions, each a protocol-level client doing what
a browser tab sends, one action every 3 s with values no other session uses, over every page of the
navigation. Two workloads: **sidebar-heavy** (what a class does, and what the targets refer to: two
moves of a sidebar control — λ, m, K, Δ, H — then a click on the next page, every action a full-page
rerun) and **mixed** (the earlier benchmark: a sidebar control and a page control in turn, the latter
rerunning only its fragment, and a page click every 3 moves). Latency = `rerun_script` sent →
`script_finished` received. **moves** = timed control moves; **p50/p95/max** are theirs; **page
click** = a rerun that switches page; **reruns/s** counts every finished rerun (first pages, page
clicks, moves) over the phase; **server cores** = CPU seconds of the server's process tree (worker
processes included) / wall seconds; **peak RSS** = the largest sampled sum of VmRSS over the tree;
**peak PSS** = the same with each shared page counted once (what the tree holds: worker processes
share their parent's pages); **Σ VmHWM** = the sum of each process's own peak (an upper bound);
**CPU ms / rerun** = server cores / reruns/s (**of which Streamlit's process**: the root of the
tree alone, without the worker processes that compute the charts; "–" behind nginx); **machine
busy cores** = all CPU time spent on the machine during the phase (/proc/stat) / wall seconds —
what the server did not get went to other jobs; **client cores** = this benchmark's own CPU (it shares the machine too).
Target at N = 30 (sidebar-heavy workload): p50 ≤ 300 ms, p95 ≤ 1 s, no error, memory (PSS) ≤ 1.5 GB,
server CPU per rerun ≤ 60 ms.

**Reading.** N sessions ask for N/3 reruns/s (10 at N = 30); that rate × **CPU ms / rerun** is
the CPU the class needs. Without worker processes one server gets about one core (its Python holds
the GIL), so once the need passes it the reruns queue and latency grows with N while reruns/s
stays flat; with the shared-host settings the heavy calls run in worker processes on the other
core.

**Noise.** {noise}

Rerun on a quiet machine (`make bench-load` does both):

```bash
.venv/bin/python -m benchmarks.bench_load                           # one process, N = 1, 10, 30, 60
.venv/bin/python -m benchmarks.bench_load --nginx 2 --sessions 30   # 2 processes behind nginx
```
"""
NOISE_DEFAULT = ("These figures were measured on a shared 2-core machine while other jobs were running (load "
                 "average and **machine busy cores** are given: near 2.00 the server was competing for the CPU), "
                 "on a working tree with other changes in progress: latencies are pessimistic and "
                 "cores/reruns/s are noisy.")
MARK = "<!-- load:{} -->"
END = "<!-- /load:{} -->"


def write(cfg: Config, body: str) -> None:
    """Replace this configuration's section of the results file, keeping the other one."""
    name = f"nginx-{cfg.nginx}" if cfg.nginx else "direct"
    if cfg.workload != "mixed":
        name = f"{cfg.workload}-{cfg.host}-{name}"
    if cfg.query:
        name += "-" + re.sub(r"[^\w]+", "-", cfg.query).strip("-")
    old = cfg.out.read_text() if cfg.out.exists() else ""
    sections = dict(re.findall(r"<!-- load:([\w-]+) -->\n(.*?)<!-- /load:\1 -->", old, flags=re.S))
    sections[name] = body
    noise = os.environ.get("BENCH_LOAD_NOISE", NOISE_DEFAULT)
    order = sorted(sections, key=lambda k: (not k.startswith("sidebar"), k != "direct", k))
    text = HEADER.format(noise=noise) + "".join(f"\n{MARK.format(k)}\n{sections[k]}{END.format(k)}\n" for k in order)
    cfg.out.parent.mkdir(parents=True, exist_ok=True)
    cfg.out.write_text(text)


def parse(argv: list[str] | None) -> Config:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--sessions", default=None, help="comma-separated N (default 1,10,30,60; 30 with --nginx)")
    ap.add_argument("--duration", type=float, default=None, help="seconds of moves per N (default 60)")
    ap.add_argument("--interval", type=float, default=3.0, help="seconds between a session's moves")
    ap.add_argument("--jitter", type=float, default=0.5, help="± seconds around the interval")
    ap.add_argument("--moves-per-page", type=int, default=3, help="moves before a session clicks the next page")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds a rerun may take before it is an error")
    ap.add_argument("--nginx", type=int, default=0, metavar="P", help="P processes behind nginx (deploy/run-multi.sh)")
    ap.add_argument("--workload", choices=("sidebar", "mixed"), default="sidebar",
                    help="sidebar: two sidebar moves then a page click (the targets' workload); "
                         "mixed: sidebar and page controls in turn")
    ap.add_argument("--host", choices=("shared", "default"), default="shared",
                    help="shared: the server with README's settings for a class (" +
                         " ".join(f"{k}={v}" for k, v in SHARED_HOST.items()) + "); default: none")
    ap.add_argument("--query", default="", help="the link's query every session opens with, e.g. "
                    "problem=logreg:digits (the class explores a real problem)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="N = 1, 5 for 8 s each (a smoke run)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when the N = 30 target is missed")
    ap.add_argument("--out", type=Path, default=None, help="results file (default benchmarks/results/load.md)")
    a = ap.parse_args(argv)
    default_n = "1,5" if a.quick else ("30" if a.nginx else "1,10,30,60")
    sessions = [int(x) for x in (a.sessions or default_n).split(",") if x.strip()]
    if not sessions or min(sessions) < 1 or max(sessions) > 200 or a.interval <= 0 or a.moves_per_page < 1:
        ap.error("sessions must be 1..200, interval > 0, moves-per-page ≥ 1")
    duration = a.duration if a.duration is not None else (8.0 if a.quick else 60.0)
    if not 0 < duration <= 3600 or not 0 < a.timeout <= 600:
        ap.error("duration must be in (0, 3600] and timeout in (0, 600]")
    out = a.out or RESULTS / ("load-quick.md" if a.quick else "load.md")
    return Config(sessions, duration, a.interval, a.jitter, a.moves_per_page, a.timeout, a.nginx, a.seed, out,
                  a.quick, a.strict, a.workload, a.host, a.query.lstrip("?"))


def _git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=load_server.REPO, capture_output=True,
                              text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


async def amain(cfg: Config) -> int:
    load_before = os.getloadavg()
    phases = []
    with tempfile.TemporaryDirectory(prefix="bench-load-") as logdir:
        for n in cfg.sessions:
            print(f"N = {n}: starting a server{' behind nginx' if cfg.nginx else ''}…", flush=True)
            p = await run_phase(n, cfg, Path(logdir))
            phases.append(p)
            print("  " + _row(p), flush=True)
            print("  " + _notes(p), flush=True)
    body = section(cfg, phases, load_before)
    body += (f"\n_{platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
             f"commit {_git_commit()} (+ uncommitted changes, if any)._\n")
    write(cfg, body)
    print(f"wrote {cfg.out}")
    missed = [p for p in phases if p.n == TARGET_N and not verdict(p).startswith("**met")]
    return 1 if cfg.strict and missed else 0


def _sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # the same clean-up as Ctrl-C: every server stopped in a finally


def main(argv: list[str] | None = None) -> int:
    cfg = parse(argv)
    if cfg.nginx and load_server.nginx_path() is None:
        print("nginx is not installed: on Debian/Ubuntu `sudo apt-get install -y nginx`; skipped.")
        return 0
    signal.signal(signal.SIGTERM, _sigterm)
    try:
        return asyncio.run(amain(cfg))
    except KeyboardInterrupt:
        print("interrupted: servers stopped, nothing written", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

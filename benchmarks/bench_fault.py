"""Fault test of the deployed host: a backend killed under load is restarted, the other one's
sessions never notice.

    python -m benchmarks.bench_fault                 # 20 sessions for 60 s, kill -9 at 20 s
    python -m benchmarks.bench_fault --browser       # the same, then one Chromium tab's view of it
    python -m benchmarks.bench_fault --quick         # 6 sessions for 25 s, kill at 8 s (fault-quick.md)

``deploy/run-multi.sh 2`` is started on free loopback ports (:func:`load_server.start`), both
backends are warmed up (every page once, :func:`bench_load.warm_up`), then N tabs run: each gets
nginx's route cookie first (:func:`load_client.route_cookie`, which names the backend it was
given), opens a session and acts every ``--interval`` s exactly as in the load benchmark
(:func:`bench_load._run_session`, its default workload; the backends get its host settings).
``--kill-at`` s after the last tab has started, one backend is sent SIGKILL by its PID (found in
the run's process tree by its ``--server.port``), and measured:

* **restart**: seconds from the kill until that backend's own ``/_stcore/health`` answers "ok"
  again (polled every 0.1 s on its port), the new PID, the restart lines run-multi.sh logged,
  and when nginx first routes a new tab to it again;
* **surviving backend**: every rerun of the tabs on the other backend, before and after the
  kill — errors (exception or ``st.error`` elements, timeouts, closed sockets) must be 0;
* **killed backend's tabs**: how each one's websocket ended; then what Streamlit's page does
  (seen in Chromium, ``--browser``): poll ``/_stcore/health`` through nginx with its cookie and
  open a new websocket — no rerun; and the student's next move as the page sends it (its URL, its
  page, the widget ids it still shows).  Kept = every numeric control the URL names is drawn with
  that value by the new session and the URL is not rewritten; the move itself is applied (the run
  used it: the URL the app writes back says so), lost (run with the URL's old value) or ignored
  (a control inside an st.fragment: no run at all);
  then the tab goes on moving controls until the end;
* **a new session on the restarted backend**: after the run, a cookie that nginx routes to the
  restarted process, a new session opened with a killed tab's URL, its values checked as above,
  then every page once.

``--browser`` then repeats the fault with one tab of Debian's Chromium (Playwright and the
browser test's helpers; a ``run-multi.sh 2`` with the default host settings): what the page
shows, what the next actions do, whether the CSV download works before and after the killed
process is back, and after a reload.

Traffic goes to 127.0.0.1 only; every phase has a time limit and the servers are stopped at the
end, on an error, on Ctrl-C or SIGTERM.  Writes ``benchmarks/results/fault.md``; the exit status
is 1 when the target is missed (restart within 30 s, 0 errors on the surviving backend, every
killed tab's settings kept, the new session without errors), 2 when it could not run.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import os
import platform
import random
import re
import signal
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from distsgd.ui.controls import CONTROLS

from . import load_server
from .bench_load import Config as LoadConfig
from .bench_load import Phase, Sample, _git_commit, _run_session, _sigterm, pct, pick, value_for, warm_up
from .load_client import Session, _key_of, check_loopback, open_session, route_cookie

RESULTS = Path(__file__).resolve().parent / "results"
TARGET_RESTART_S = 30.0
NUMERIC = ("slider", "number_input")


@dataclass
class Cfg:
    sessions: int
    duration: float
    kill_at: float
    interval: float
    timeout: float
    seed: int
    out: Path
    limit: float  # the whole run's time limit (s)
    browser: bool = False

    def load_config(self) -> LoadConfig:
        """The load benchmark's settings: its default workload (an action every interval ± 0.5 s)
        and host (README's class settings, ``LoadConfig.env``)."""
        return LoadConfig([self.sessions], self.duration, self.interval, 0.5, 3, self.timeout, 2,
                          self.seed, self.out, False)


@dataclass
class Tab:
    """One browser tab: its route, its reruns, and — if its backend was killed — what happened."""

    index: int
    backend: str
    before: Phase = field(default_factory=lambda: Phase(0))  # reruns on its first session
    after: Phase = field(default_factory=lambda: Phase(0))   # reruns after a reconnect
    n_at_kill: int | None = None  # len(before.samples) at the kill: later ones ended after it
    closed_at: float | None = None
    closed_how: str = ""
    url: str = ""
    reconnect_s: float | None = None
    reconnect_backend: str = ""
    reconnect_errors: list[str] = field(default_factory=list)
    kept: bool | None = None
    first_move: str = ""  # what became of the first move after the reconnect: applied / lost / ignored
    kept_detail: str = ""

    def errors(self) -> list[str]:
        """Errors of all this tab's reruns (and of its reconnection)."""
        return self.before.errors + self.reconnect_errors + self.after.errors

    def samples(self, after_kill: bool) -> list[Sample]:
        """The reruns that ended before the kill, or after it."""
        k = len(self.before.samples) if self.n_at_kill is None else self.n_at_kill
        return self.before.samples[k:] + self.after.samples if after_kill else self.before.samples[:k]


def record_values(sess: Session) -> dict[str, float]:
    """Make ``sess`` remember the value each numeric control is drawn with (key -> value).

    Call it right after :func:`open_session`, before awaiting anything: the session's reader
    has not run yet, so it sees every message."""
    values: dict[str, float] = {}
    inner = sess._handle

    def handle(msg: Any) -> None:
        inner(msg)
        if msg.WhichOneof("type") == "new_session":
            values.clear()
        elif msg.WhichOneof("type") == "delta" and msg.delta.WhichOneof("type") == "new_element":
            el = msg.delta.new_element
            kind = el.WhichOneof("type")
            if kind in NUMERIC:
                w = getattr(el, kind)
                key = _key_of(w.id)
                v = (w.value if w.set_value else w.default)
                if key and (kind == "number_input" or len(v)):
                    values[key] = float(v[0] if kind == "slider" else v)

    sess._handle = handle  # type: ignore[method-assign]
    return values


def compare(url: str, values: dict[str, float], new_url: str, moved: str = "") -> tuple[bool, str]:
    """Whether the controls named in ``url`` (but ``moved``) were drawn with those values and the
    URL still says so: (kept, a line saying what was compared)."""
    qs = {k: v[0] for k, v in parse_qs(url, keep_blank_values=True).items()}
    checked, wrong = [], []
    for k, raw in qs.items():
        if k not in values or k == moved:
            continue
        try:
            want = float(raw)
        except ValueError:
            continue
        checked.append(f"{k}={raw}")
        if abs(values[k] - want) > 1e-9 * max(1.0, abs(want)):
            wrong.append(f"{k}: URL {raw}, drawn {values[k]:g}")
    before = {k: v for k, v in parse_qs(url).items() if k != moved}
    if {k: v for k, v in parse_qs(new_url).items() if k != moved} != before:
        wrong.append(f"URL rewritten to {new_url!r}")
    return not wrong, (", ".join(checked) or "no numeric control in the URL") + (
        "; " + "; ".join(wrong) if wrong else "")


async def get_ok(url: str, cookie: str) -> tuple[bool, str]:
    """GET ``url`` with the tab's cookie: (answered "ok", the backend nginx named)."""
    check_loopback(url)

    def go() -> tuple[bool, str]:
        req = urllib.request.Request(url, headers={"Cookie": cookie})
        try:
            with urllib.request.urlopen(req, timeout=5) as r:  # noqa: S310 - loopback (checked)
                return r.read().strip() == b"ok", r.headers.get("X-Distsgd-Backend", "")
        except OSError:
            return False, ""
    return await asyncio.to_thread(go)


async def reopen(base: str, cookie: str, t_limit: float) -> tuple[Session | None, dict[str, float], str, list[str]]:
    """What the page does after its websocket dropped (seen in Chromium, see --browser): ping the
    health check through nginx until it answers, open a new websocket — and nothing else: no
    rerun until the student's next action.  (session, the values it will draw, the backend nginx
    named for the health check, connect errors)."""
    backend = ""
    errors: list[str] = []
    while time.perf_counter() < t_limit:
        ok, backend = await get_ok(base + "/_stcore/health", cookie)
        if not ok:
            await asyncio.sleep(0.5)
            continue
        try:
            sess = await open_session(base, cookie, timeout=10)
        except (OSError, TimeoutError) as exc:
            errors.append(f"connect: {exc!r}")
            await asyncio.sleep(0.5)
            continue
        # nginx names every process it tried ("A, B"): the last one answered
        return sess, record_values(sess), backend.rsplit(",", 1)[-1].strip(), errors
    return None, {}, backend, [*errors, "not back before the time limit"]


async def first_move(tab: Tab, new: Session, old: Session, values: dict[str, float], cfg: Cfg) -> None:
    """The student's next actions after the reconnect, as the page sends them — its URL, its page,
    the widget ids it still shows (ids are the same on every process): in odd tabs first a control
    of the page's own (inside an st.fragment), then in every tab a sidebar control.  Then: were
    the URL's other settings drawn again (kept), and what became of each move?"""
    new.widgets, new.query_string, new.page_hash = dict(old.widgets), tab.url, old.page_hash
    fates = []
    own = pick(new, tab.index, 1) if tab.index % 2 else None
    if own is not None and own.fragment_id:
        v = value_for(own, tab.index, cfg.sessions, 996)
        r = await new.rerun(min(cfg.timeout, 20.0), widget=own, value=v)
        if r.errors == ["timeout"]:
            fates.append(f"fragment's {own.key} → {v:g}: ignored (no run within 20 s)")
        else:
            tab.reconnect_errors += r.errors
            fates.append(f"fragment's {own.key} → {v:g}: a run ({'ok' if r.ok else r.errors})")
    w = pick(new, tab.index, 2)
    if w is None:
        r = await new.rerun(cfg.timeout)
        tab.reconnect_errors += r.errors
        tab.kept, tab.kept_detail = compare(tab.url, values, new.query_string)
        return
    v = value_for(w, tab.index, cfg.sessions, 997)  # a value this tab has not used
    r = await new.rerun(cfg.timeout, widget=w, value=v)
    tab.reconnect_errors += r.errors
    tab.kept, detail = compare(tab.url, values, new.query_string, moved=w.key)
    # the value the run used is the one the app writes back to the URL, which leaves out a default
    # (a widget left with the browser's own value is drawn without one: its proto holds only the
    # slider's minimum)
    in_url = parse_qs(new.query_string).get(w.key)
    drawn = float(in_url[0]) if in_url else float(CONTROLS[w.key].initial())
    tab.first_move = "applied" if drawn is not None and abs(drawn - v) <= 1e-9 * max(1.0, abs(v)) else "lost"
    fates.append(f"sidebar {w.key} → {v:g}: run with {'?' if drawn is None else f'{drawn:g}'} ({tab.first_move})")
    if len(fates) > 1:
        tab.first_move = f"fragment {'ignored' if 'ignored' in fates[0] else 'ran'}, then sidebar {tab.first_move}"
    tab.kept_detail = f"{detail}; " + "; ".join(fates)


async def moves(sess: Session, tab: Tab, phase: Phase, cfg: Cfg, t_end: float, rng: random.Random) -> None:
    """The load benchmark's tab (first page, then a move every interval) until ``t_end`` or
    until the websocket closes — noticed at once, as the page notices it, not at the next move."""
    runner = asyncio.create_task(_run_session(sess, tab.index, cfg.sessions, cfg.load_config(), t_end, phase, rng))
    await asyncio.wait({runner, sess._reader}, return_when=asyncio.FIRST_COMPLETED)
    if sess.closed and not runner.done():
        await asyncio.sleep(0.2)  # a rerun in flight records its "closed" first
        runner.cancel()
    await asyncio.gather(runner, return_exceptions=True)


async def run_tab(tab: Tab, base: str, cookie: str, cfg: Cfg, t_end: float) -> None:
    rng = random.Random(cfg.seed * 100_003 + tab.index)
    await asyncio.sleep(rng.uniform(0, cfg.interval))
    try:
        sess = await open_session(base, cookie)
    except (OSError, TimeoutError) as exc:
        tab.before.samples.append(Sample("open", 0.0, False, [f"connect: {exc!r}"]))
        return

    def on_closed(_: object) -> None:
        if tab.closed_at is None and sess.closed:  # the socket ended (not our own close)
            tab.closed_at = time.perf_counter()
            tab.closed_how = sess.closed
    sess._reader.add_done_callback(on_closed)
    try:
        await moves(sess, tab, tab.before, cfg, t_end, rng)
    finally:
        url, closed = sess.query_string, bool(sess.closed)
        await sess.close()
    tab.url = url
    if not closed or time.perf_counter() >= t_end:
        return
    # the backend went away: reconnect as the page does, then the student's next move
    assert tab.closed_at is not None
    new, values, tab.reconnect_backend, tab.reconnect_errors = await reopen(base, cookie, t_end + cfg.timeout)
    if new is None:
        return
    tab.reconnect_s = time.perf_counter() - tab.closed_at
    try:
        await asyncio.sleep(max(0.0, min(cfg.interval, t_end - time.perf_counter())))  # the student's pace
        await first_move(tab, new, sess, values, cfg)
        if time.perf_counter() < t_end:
            await moves(new, tab, tab.after, cfg, t_end, rng)
    finally:
        await new.close()


def backend_pid(root: int, port: int) -> int | None:
    """The PID of the Streamlit process listening on ``port`` in the tree of ``root``."""
    for pid in load_server.tree(root):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        server = b"streamlit" in args or b"distsgd.ui.serve" in args  # (run-multi.sh runs the latter)
        if server and b"--server.port" in args and str(port).encode() in args:
            return pid
    return None


async def cookie_for(base: str, backend: str, tries: int = 40) -> str | None:
    """A route cookie nginx sends to ``backend`` (random keys: 40 draws miss one of 2 backends
    with odds 1e-12), or None."""
    for _ in range(tries):
        cookie, b = await asyncio.to_thread(route_cookie, base)
        if b == backend:
            return cookie
    return None


_STARTED: list[load_server.Server] = []  # every run-multi.sh of this run: main() stops them all


def _start(log: Path, port: int, env: dict[str, str]) -> load_server.Server:
    server = load_server.start(log, port, 2, env)
    _STARTED.append(server)
    return server


@dataclass
class Result:
    cfg: Cfg
    startup: float = 0.0
    warmup: float = 0.0
    warmup_errors: list[str] = field(default_factory=list)
    victim: str = ""
    survivor: str = ""
    old_pid: int | None = None
    new_pid: int | None = None
    t0: float = 0.0
    t_kill: float = 0.0
    health_back: float | None = None
    routed_back: float | None = None
    tabs: list[Tab] = field(default_factory=list)
    new_session_ok: bool | None = None
    new_session_detail: str = ""
    new_session_first_s: float | None = None
    log_restarts: list[str] = field(default_factory=list)
    log_other: list[str] = field(default_factory=list)
    unfinished: int = 0
    browser: list[str] = field(default_factory=list)  # --browser: what one Chromium tab showed


async def watch_health(base: str, port: int, t_kill: float, res: Result, limit: float) -> None:
    """Poll the killed backend's own health check every 0.1 s from the kill until it says ok;
    then ask nginx for new route cookies every 0.5 s until one goes to it again."""
    url = f"http://127.0.0.1:{port}/_stcore/health"
    while time.perf_counter() - t_kill < limit:
        ok, _ = await get_ok(url, "")
        if ok:
            res.health_back = time.perf_counter() - t_kill
            break
        await asyncio.sleep(0.1)
    while res.health_back is not None and time.perf_counter() - t_kill < limit:
        if (await asyncio.to_thread(route_cookie, base))[1] == res.victim:
            res.routed_back = time.perf_counter() - t_kill
            return
        await asyncio.sleep(0.5)


async def run(cfg: Cfg, logdir: Path) -> Result:
    res = Result(cfg)
    port = load_server.free_port()
    server = _start(logdir / "run-multi.log", port, cfg.load_config().env)
    try:
        res.startup = await load_server.wait_healthy(server)
        first = int(str(server.proc.args[-1]))  # type: ignore[index]  # run-multi.sh P PORT FIRST
        backends = [f"127.0.0.1:{first}", f"127.0.0.1:{first + 1}"]
        res.victim, res.survivor = backends
        t_warm = time.perf_counter()
        for b in backends:
            cookie = await cookie_for(server.base, b)
            if cookie is None:
                raise RuntimeError(f"nginx never routed a new cookie to {b}")
            res.warmup_errors += (await warm_up(server.base, cookie, max(cfg.timeout, 120.0)))[1]
        res.warmup = time.perf_counter() - t_warm
        res.old_pid = backend_pid(server.proc.pid, first)
        if res.old_pid is None:
            raise RuntimeError(f"no Streamlit process on port {first} under run-multi.sh")
        log_start = server.log.stat().st_size

        # N tabs, each with the route nginx gave it
        routes = [await asyncio.to_thread(route_cookie, server.base) for _ in range(cfg.sessions)]
        res.tabs = [Tab(i, b) for i, (_, b) in enumerate(routes)]
        res.t0 = time.perf_counter()
        t_end = res.t0 + cfg.interval + cfg.duration
        tasks = [asyncio.create_task(run_tab(tab, server.base, c, cfg, t_end))
                 for tab, (c, _) in zip(res.tabs, routes, strict=True)]

        await asyncio.sleep(cfg.interval + cfg.kill_at)
        res.t_kill = time.perf_counter()
        os.kill(res.old_pid, signal.SIGKILL)
        for tab in res.tabs:
            tab.n_at_kill = len(tab.before.samples)
        print(f"  kill -9 {res.old_pid} ({res.victim}) at {res.t_kill - res.t0:.1f} s", flush=True)
        health = asyncio.create_task(watch_health(server.base, first, res.t_kill, res, max(60.0, cfg.duration)))

        _, pending = await asyncio.wait(tasks, timeout=cfg.interval * 2 + cfg.duration + 2 * cfg.timeout + 30)
        res.unfinished = len(pending)
        for t in pending:
            t.cancel()
        for tab, out in zip(res.tabs, await asyncio.gather(*tasks, return_exceptions=True), strict=True):
            if isinstance(out, BaseException) and not isinstance(out, asyncio.CancelledError):
                tab.after.samples.append(Sample("open", 0.0, False, [f"tab: {out!r}"]))
        await health
        res.new_pid = backend_pid(server.proc.pid, first)

        # a new session that lands on the restarted backend, with a killed tab's URL
        await check_restarted(server.base, cfg, res)
        text = server.log.read_bytes()[log_start:].decode("utf-8", "replace")
        res.log_restarts = [ln.strip() for ln in text.splitlines() if ln.startswith("run-multi ")]
        res.log_other = [ln for ln in load_server.log_problems(server.log, log_start)
                         if not ln.startswith("run-multi ")]
    finally:
        load_server.stop(server)  # not in a thread: a cancelled task (Ctrl-C) still runs this to the end
    return res


async def check_restarted(base: str, cfg: Cfg, res: Result) -> None:
    t_limit = time.perf_counter() + 60
    cookie = None
    while time.perf_counter() < t_limit:  # nginx tries the restarted process again after fail_timeout
        cookie = await cookie_for(base, res.victim, tries=10)
        if cookie is not None:
            break
        await asyncio.sleep(1.0)
    if cookie is None:
        res.new_session_ok, res.new_session_detail = False, "nginx did not route a new cookie to it within 60 s"
        return
    url = next((t.url for t in res.tabs if t.backend == res.victim and t.url), "") or "lam=0.77&m=12&lang=en"
    sess = await open_session(base, cookie)
    values = record_values(sess)
    try:
        sess.query_string = url
        r = await sess.rerun(max(cfg.timeout, 120.0), page_hash="")
        res.new_session_first_s = r.latency
        errors = list(r.errors)
        kept, detail = compare(url, values, sess.query_string)
        for title, h in list(sess.pages.items()):
            r = await sess.rerun(max(cfg.timeout, 120.0), page_hash=h)
            errors += [f"{title}: {e}" for e in r.errors]
        res.new_session_ok = kept and not errors and bool(sess.pages)
        res.new_session_detail = (f"URL `{url}`: {'kept' if kept else 'NOT kept'} ({detail}); "
                                  f"{len(sess.pages)} pages visited, {len(errors)} errors"
                                  + (f" (first: `{errors[0][:100]}`)" if errors else ""))
    finally:
        await sess.close()


# ---------------------------------------------------------------------------------------------
# the report
# ---------------------------------------------------------------------------------------------

def _ms(xs: list[float], q: float) -> str:
    v = pct(sorted(xs), q)
    return "–" if v != v else f"{v * 1000:.0f}"


def _kinds(errors: list[str]) -> str:
    kinds: dict[str, int] = {}
    for e in errors:
        k = re.sub(r"\d+(\.\d+)?", "#", e)[:110]
        kinds[k] = kinds.get(k, 0) + 1
    return "; ".join(f"`{k}` ×{c}" for k, c in sorted(kinds.items(), key=lambda kv: -kv[1])[:4])


def verdict(res: Result) -> tuple[bool, list[tuple[str, bool]]]:
    surv = [t for t in res.tabs if t.backend == res.survivor]
    killed = [t for t in res.tabs if t.backend == res.victim]
    surv_errors = sum(len(t.errors()) for t in surv)
    back = [t for t in killed if t.closed_at is not None]
    checks = [
        (f"restarted: health check ok {res.health_back:.1f} s after the kill ≤ {TARGET_RESTART_S:.0f} s"
         if res.health_back is not None else "restarted: health check never answered again",
         res.health_back is not None and res.health_back <= TARGET_RESTART_S),
        (f"{surv_errors} errors in {len(surv)} sessions on the surviving backend", surv_errors == 0 and bool(surv)),
        (f"{sum(1 for t in back if t.kept)} of {len(back)} cut sessions back with their settings",
         bool(back) and all(t.kept for t in back)),
        ("a new session on the restarted backend works" if res.new_session_ok
         else "a new session on the restarted backend failed", bool(res.new_session_ok)),
    ]
    return all(ok for _, ok in checks), checks


def _lat(tabs: list[Tab], after: bool) -> list[float]:
    return [s.latency for t in tabs for s in t.samples(after) if s.kind == "control" and s.ok]


def _killed_lines(res: Result) -> list[str]:
    """What happened to the killed process."""
    lines = [f"- `kill -9 {res.old_pid}` → run-multi.sh started it again as pid {res.new_pid}; its own "
             f"`/_stcore/health` answered ok **{res.health_back:.1f} s** after the kill"
             if res.health_back is not None else f"- `kill -9 {res.old_pid}` → its health check never answered again"]
    if res.routed_back is not None:
        lines.append(f"- nginx sent a new tab to it again {res.routed_back:.1f} s after the kill "
                     "(new route cookies asked for every 0.5 s once it answered; `fail_timeout=5s`)")
    if res.log_restarts:
        lines.append("- run-multi.sh logged: " + " / ".join(f"`{ln}`" for ln in res.log_restarts[:4]))
    if res.new_session_ok is not None:
        first = f", first page {res.new_session_first_s:.1f} s (a cold process)" if res.new_session_first_s else ""
        lines.append("- a new session routed to the restarted process: "
                     f"**{'works' if res.new_session_ok else 'FAILED'}**{first}; {res.new_session_detail}")
    return lines


def _session_lines(res: Result) -> list[str]:
    """The sessions of each backend, and what the killed one's tabs saw."""
    surv = [t for t in res.tabs if t.backend == res.survivor]
    killed = [t for t in res.tabs if t.backend == res.victim]
    lines = ["| backend | sessions | control moves before the kill | p50 / p95 ms before | moves after the kill "
             "| p50 / p95 ms after | errors |",
             "|---|---|---|---|---|---|---|"]
    for name, tabs in ((f"surviving {res.survivor}", surv), (f"killed {res.victim}", killed)):
        b, a = _lat(tabs, False), _lat(tabs, True)
        errs = sum(len(t.errors()) for t in tabs)
        lines.append(f"| {name} | {len(tabs)} | {len(b)} | {_ms(b, 50)} / {_ms(b, 95)} | {len(a)} "
                     f"| {_ms(a, 50)} / {_ms(a, 95)} | {errs} |")
    surv_err = [e for t in surv for e in t.errors()]
    lines += ["", f"- **Surviving backend**: {len(surv_err)} errors"
              + (f": {_kinds(surv_err)}" if surv_err else "") + "."]
    cut = [t for t in killed if t.closed_at is not None]
    hows = _kinds([t.closed_how for t in cut])
    lines.append(f"- **Killed backend**: {len(cut)} of {len(killed)} tabs had their websocket cut"
                 + (f" ({hows})" if hows else "") + "; errors of their reruns (a rerun in flight at the kill "
                 "ends with the closed socket): "
                 + (_kinds([e for t in killed for e in t.before.errors]) or "none") + ".")
    back = [t for t in cut if t.reconnect_s is not None]
    if back:
        secs = sorted(t.reconnect_s for t in back if t.reconnect_s is not None)
        where: dict[str, int] = {}
        for t in back:
            where[t.reconnect_backend or "?"] = where.get(t.reconnect_backend or "?", 0) + 1
        fates: dict[str, int] = {}
        for t in back:
            if t.first_move:
                fates[t.first_move] = fates.get(t.first_move, 0) + 1
        lines.append(
            f"- Reconnected as the page does (health check through nginx, then a new websocket, no rerun): "
            f"{len(back)} of {len(cut)}, the websocket open again {secs[0]:.1f}–{secs[-1]:.1f} s after the cut "
            f"(median {pct(secs, 50):.1f} s), on " + ", ".join(f"{b} ×{c}" for b, c in sorted(where.items()))
            + f". The next move (URL, page and widget ids as the page sends them): the URL's settings drawn "
            f"again in {sum(1 for t in back if t.kept)} of {len(back)}; the move itself: "
            + (", ".join(f"{k} ×{c}" for k, c in sorted(fates.items())) or "–") + "; errors after reconnecting: "
            + (_kinds([e for t in back for e in t.reconnect_errors + t.after.errors]) or "none") + ".")
    lines += ["", "| tab | cut at | how | websocket back after | on | next move: URL's settings; the move |",
              "|---|---|---|---|---|---|"]
    for t in killed:
        cut_s = f"{t.closed_at - res.t0:.1f} s" if t.closed_at is not None else "–"
        back_s = f"{t.reconnect_s:.1f} s" if t.reconnect_s is not None else "–"
        kept = ("kept" if t.kept else "NOT kept") if t.kept is not None else "–"
        lines.append(f"| {t.index} | {cut_s} | {t.closed_how[:60] or '–'} | {back_s} | "
                     f"{t.reconnect_backend or '–'} | {kept}: {t.kept_detail[:120]} |")
    other = [t.backend for t in res.tabs if t.backend not in (res.survivor, res.victim)]
    if other:
        lines.append(f"\n{len(other)} tabs were routed to no known backend: {other}.")
    return lines


def _notes(res: Result) -> str:
    notes = [f"server up in {res.startup:.1f} s, warm-up (every page on each backend) {res.warmup:.1f} s"]
    if res.warmup_errors:
        notes.append(f"warm-up errors (not counted): {len(res.warmup_errors)}")
    if res.unfinished:
        notes.append(f"{res.unfinished} tabs cut off at the time limit")
    refused = sum(1 for ln in res.log_other if "Connection refused" in ln)
    cut = sum(1 for ln in res.log_other if "while proxying upgraded connection" in ln)
    rest = [ln for ln in res.log_other if "Connection refused" not in ln and "proxying upgraded" not in ln]
    if refused:
        notes.append(f"server log: {refused} nginx `connect() failed (111: Connection refused)` line(s) (a request "
                     "passed on to the other backend)")
    if cut:
        notes.append(f"{cut} nginx line(s) `… while proxying upgraded connection` (the websockets the kill cut)")
    if rest:
        notes.append(f"{len(rest)} other error line(s) in the log, e.g. "
                     + " / ".join(f"`{ln[:120]}`" for ln in rest[:3]))
    return "Notes: " + "; ".join(notes) + "."


def report(res: Result) -> str:
    cfg = res.cfg
    met, checks = verdict(res)
    cmd = "python -m benchmarks.bench_fault " + " ".join(sys.argv[1:])
    lines = [
        "# Fault test: one backend of `deploy/run-multi.sh 2` killed under load", "",
        "`benchmarks/bench_fault.py` (see its docstring for the method). "
        f"Measured {_dt.datetime.now().isoformat(timespec='minutes')} with `{cmd.strip()}`: "
        f"{cfg.sessions} protocol-level sessions through nginx, each acting every {cfg.interval:g} s ± 0.5 s "
        f"(the load benchmark's `{cfg.load_config().workload}` workload and `{cfg.load_config().host}` host) for "
        f"{cfg.duration:.0f} s; `kill -9` of backend {res.victim} (pid {res.old_pid}) "
        f"{res.t_kill - res.t0:.1f} s after the first tab started. Load average at the end: "
        f"{' / '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs (a shared machine: "
        "latencies are the machine's, not the app's).", "",
        "**Target** (restarted within 30 s by the project's own scripts, the other backend's sessions never "
        f"notice): **{'met' if met else 'missed'}** — "
        + "; ".join(f"{text} {'✓' if ok else '✗'}" for text, ok in checks) + ".", "",
        "## The killed backend", "",
        *_killed_lines(res), "",
        "## Sessions", "",
        *_session_lines(res), "",
        _notes(res), "",
        *(["## In a real browser (`--browser`: one Chromium tab, its backend killed)", "",
            "A fresh `run-multi.sh 2` (default host settings), one tab of Debian's Chromium driven by Playwright "
            "with the browser test's helpers (`tests/browser_support.py`):", "",
            *(f"- {ln}" for ln in res.browser), ""] if res.browser else []),
        f"_{platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
        f"commit {_git_commit()} (+ uncommitted changes, if any)._"]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# --browser: the same fault seen by one tab of real Chromium (what a student sees)
# ---------------------------------------------------------------------------------------------

def browser_check(logdir: Path, env: dict[str, str]) -> list[str]:
    """One Chromium tab behind a fresh ``run-multi.sh 2``: its backend killed, then what the tab
    does and what works.  Every observation is a line of the report; nothing here raises."""
    try:
        sys.path.insert(0, str(load_server.REPO / "tests"))
        from playwright.sync_api import sync_playwright

        import browser_support as bs  # type: ignore[import-not-found]  # the browser test's helpers
    except ImportError as exc:
        return [f"skipped: {exc} (requirements-dev.txt and Debian's chromium: `make browser`)"]
    if not (bs.CHROMIUM.is_file() and os.access(bs.CHROMIUM, os.X_OK)):
        return [f"skipped: no {bs.CHROMIUM} (`make browser` installs it)"]
    bs.RERUN_START_S, bs.RENDER_S = 90, 120  # a cold process on a shared machine
    out: list[str] = []
    server = _start(logdir / "run-multi-browser.log", load_server.free_port(), env)
    try:
        asyncio.run(load_server.wait_healthy(server))
        with sync_playwright() as pw:
            br = pw.chromium.launch(executable_path=str(bs.CHROMIUM), headless=True, args=bs.CHROMIUM_ARGS)
            try:
                ctx = br.new_context(viewport=bs.VIEWPORT)
                ctx.set_default_timeout(bs.RENDER_S * 1000)
                _browser_steps(bs, ctx, server, out)
            finally:
                br.close()
    except BaseException as exc:  # noqa: BLE001 - pytest.fail in the helpers is a BaseException
        if isinstance(exc, KeyboardInterrupt):
            raise
        out.append(f"stopped by an error: `{exc!r}`"[:300])
    finally:
        load_server.stop(server)
    return out


class _Chromium:
    """The one tab of the browser check: its page, the sockets it opened, helpers to act on it."""

    def __init__(self, bs: Any, ctx: Any) -> None:
        self.bs, self.spec = bs, bs.introspect()
        self.label = {k: c["label"] for k, c in self.spec.controls.items()}
        self.errors: list[str] = []
        self.pg = bs.new_page(ctx, self.errors)
        self.sockets: list[tuple[float, str]] = []
        self.media: list[str] = []  # the /media/ responses: status and the processes nginx tried
        self.pg.on("websocket", self._socket)
        self.pg.on("response", self._response)

    def _socket(self, ws: Any) -> None:
        self.sockets.append((time.perf_counter(), "open"))
        ws.on("close", lambda _: self.sockets.append((time.perf_counter(), "close")))

    def _response(self, r: Any) -> None:
        if "/media/" in r.url:
            self.media.append(f"{r.status} from {r.headers.get('x-distsgd-backend') or '?'}")

    def m_shown(self) -> str:
        return str(self.bs.snap(self.pg, self.spec).widgets.get(self.label["m"], ("", "?"))[1])

    def move_m(self, what: str) -> tuple[str, str]:
        """Press → on the m slider: (the value it showed when pressed, the value after the run)."""
        n = self.bs.runs(self.pg)
        _, pressed = self.bs.slider_step(self.pg, self.label["m"], +1)
        try:
            self.bs.settle(self.pg, since=n, what=what)
        except AssertionError as exc:
            return pressed, f"no run ({exc})"
        return pressed, self.m_shown()

    def download(self, what: str, wait_s: float = 30) -> str:
        self.media.clear()
        render, self.bs.RENDER_S = self.bs.RENDER_S, wait_s
        try:
            text = self.bs.download_csv(self.pg)
            seen = ", ".join(self.media) or "not seen by Playwright"
            return f"{what}: the CSV downloads ({len(text)} characters; /media/ answered {seen})"
        except Exception as exc:  # noqa: BLE001 - reported
            got = ", ".join(self.media) or f"no request for the file within {wait_s:g} s"
            return f"{what}: the CSV download fails (`{type(exc).__name__}`; /media/: {got})"
        finally:
            self.bs.RENDER_S = render

    def backend(self, base: str) -> str:
        """The process nginx sends this tab's HTTP requests to now (by its cookie)."""
        return str(self.pg.request.get(base + "/_stcore/health").headers.get("x-distsgd-backend", ""))


def _browser_steps(bs: Any, ctx: Any, server: load_server.Server, out: list[str]) -> None:
    tab = _Chromium(bs, ctx)
    pg = tab.pg
    bs.open_url(pg, f"{server.base}/?lam=0.77&m=12&lang=en", charts=True)
    tab.move_m("the first move")
    url0, snap0 = pg.url, bs.snap(pg, tab.spec)
    backend = tab.backend(server.base)
    pid = backend_pid(server.proc.pid, int(backend.rsplit(":", 1)[1])) if backend else None
    if pid is None:
        out.append(f"could not find the tab's backend ({backend!r})")
        return
    out.append(f"The tab: `{bs.path_of(url0)}?{url0.split('?', 1)[1]}` on {backend}; `kill -9 {pid}`.")
    n0, t_kill = bs.runs(pg), time.perf_counter()
    os.kill(pid, signal.SIGKILL)
    status: list[str] = []
    for dt in (0.3, 1.0, 2.0):
        time.sleep(max(0.0, t_kill + dt - time.perf_counter()))
        shown = " ".join(pg.locator('[data-testid="stStatusWidget"]').all_inner_texts()).strip() or "nothing"
        dialog = " and a dialog" if pg.locator('[role="dialog"]').count() else ""
        status.append(f"+{dt:g} s: {shown!r}{dialog}")
    cut = next((t - t_kill for t, k in tab.sockets if k == "close" and t > t_kill), None)
    back = next((t - t_kill for t, k in tab.sockets if k == "open" and t > t_kill), None)
    snap1 = bs.snap(pg, tab.spec)
    same = snap1.url == url0 and all(bs.same(v[1], snap1.widgets.get(k, ("", None))[1])
                                     for k, v in snap0.widgets.items())
    out.append("After the kill: websocket closed " + (f"{cut:.1f} s" if cut is not None else "never")
               + " and a new one open " + (f"{back:.1f} s" if back is not None else "never")
               + f" after it; the status corner showed {', '.join(status)}; script runs since the kill: "
               f"{bs.runs(pg) - n0} (the page stays as it was: URL, controls and charts "
               + ("unchanged" if same else "CHANGED") + ").")
    # the CSV download at once, while the killed process is (most likely) still starting
    up = _answers(backend)
    out.append(tab.download(f"First action, {time.perf_counter() - t_kill:.0f} s after the kill (the killed process "
                            f"{'already' if up else 'not yet'} answering again): the download button"))
    _browser_after(tab, server, backend, t_kill, out)


def _answers(backend: str) -> bool:
    """Whether the process at ``backend`` (127.0.0.1:PORT) answers its health check now."""
    try:
        with urllib.request.urlopen(f"http://{backend}/_stcore/health", timeout=2) as r:  # noqa: S310 - loopback
            return bool(r.read().strip() == b"ok")
    except OSError:
        return False


def _browser_after(tab: _Chromium, server: load_server.Server, backend: str, t_kill: float, out: list[str]) -> None:
    """The student's next actions on the reconnected tab, the restart, a reload."""
    bs, pg = tab.bs, tab.pg
    rt = tab.label.get("rt_view")
    if rt:
        n = bs.runs(pg)
        radio = pg.locator('[data-testid="stRadio"]').filter(
            has=pg.locator('[data-testid="stWidgetLabel"]', has_text=rt))
        radio.get_by_text("m", exact=True).first.click()
        wait, bs.RERUN_START_S = bs.RERUN_START_S, 15
        try:
            bs.settle(pg, since=n, what="the radio")
            out.append(f"Next: the page's own radio \"{rt}\" (inside an st.fragment) → m: it reruns.")
        except AssertionError:
            out.append(f"Next: the page's own radio \"{rt}\" (inside an st.fragment) → m: **nothing "
                       f"happens** — no script run within {bs.RERUN_START_S} s (the new process has no such "
                       "fragment and drops the request; the radio shows m, the chart stays).")
        finally:
            bs.RERUN_START_S = wait
    pressed, after = tab.move_m("the first sidebar move after the kill")
    out.append(f"Then the sidebar slider m moved to {pressed}: the page reruns and shows m = {after} "
               f"(URL `{pg.url.split('?', 1)[-1]}`) — "
               + ("the move took effect." if after == pressed else "**the move is lost**: the new session took "
                  "its settings from the URL, not from the moved widget."))
    pressed, after = tab.move_m("the second sidebar move")
    out.append(f"Next move, m to {pressed}: shows m = {after} " + ("(works)." if after == pressed else "(**lost**)."))
    up = _answers(backend)
    out.append(tab.download(f"{time.perf_counter() - t_kill:.0f} s after the kill (the killed process "
                            f"{'already' if up else 'not yet'} answering again)"))
    t_wait = time.perf_counter()
    routed = ""
    while time.perf_counter() - t_wait < 60:
        routed = tab.backend(server.base)
        if routed == backend:
            break
        time.sleep(0.5)
    out.append(f"{time.perf_counter() - t_kill:.0f} s after the kill the tab's cookie is routed to {routed} "
               f"({'the restarted process' if routed == backend else 'not yet the restarted process'}); "
               "its websocket stays on the other one.")
    out.append(tab.download("Then, on the same tab"))
    pressed, after = tab.move_m("a move after the restart")
    out.append(f"A move then (m to {pressed}): shows m = {after}.")
    pg.reload()
    bs.settle(pg, since=0, what="reload", charts=True)
    wrong = bs.mismatch_with_url(tab.spec, bs.snap(pg, tab.spec))
    out.append(f"Reload (F5): a new session on {tab.backend(server.base)}, URL `{pg.url.split('?', 1)[-1]}`, "
               f"controls as in the URL: {'yes' if not wrong else 'NO: ' + '; '.join(wrong)[:300]}; "
               + tab.download("then"))
    if tab.errors:
        out.append(f"page errors: {tab.errors[:3]}")


def parse(argv: list[str] | None) -> Cfg:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--sessions", type=int, default=None, help="tabs (default 20; 6 with --quick)")
    ap.add_argument("--duration", type=float, default=None, help="seconds of moves (default 60; 25 with --quick)")
    ap.add_argument("--kill-at", type=float, default=None, help="seconds into the run (default 20; 8 with --quick)")
    ap.add_argument("--interval", type=float, default=3.0, help="seconds between a tab's moves")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds a rerun may take before it is an error")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="6 tabs for 25 s, kill at 8 s (writes fault-quick.md)")
    ap.add_argument("--browser", action="store_true",
                    help="then the same fault seen by one tab of Chromium (Debian's /usr/bin/chromium, playwright)")
    ap.add_argument("--out", type=Path, default=None, help="results file (default benchmarks/results/fault.md)")
    a = ap.parse_args(argv)
    sessions = a.sessions or (6 if a.quick else 20)
    duration = a.duration or (25.0 if a.quick else 60.0)
    kill_at = a.kill_at if a.kill_at is not None else (8.0 if a.quick else 20.0)
    if not 2 <= sessions <= 100 or not 5 <= duration <= 600 or not 0 <= kill_at < duration \
            or a.interval <= 0 or not 0 < a.timeout <= 300:
        ap.error("sessions 2..100, duration 5..600 s, 0 ≤ kill-at < duration, interval > 0, timeout in (0, 300]")
    out = a.out or RESULTS / ("fault-quick.md" if a.quick else "fault.md")
    limit = load_server.STARTUP_TIMEOUT_S + 300 + 2 * duration + 3 * a.timeout
    return Cfg(sessions, duration, kill_at, a.interval, a.timeout, a.seed, out, limit + (600 if a.browser else 0),
               a.browser)


async def amain(cfg: Cfg) -> int:
    with tempfile.TemporaryDirectory(prefix="bench-fault-") as logdir:
        print(f"run-multi.sh 2 with {cfg.sessions} tabs for {cfg.duration:.0f} s, kill -9 at {cfg.kill_at:.0f} s…",
              flush=True)
        try:
            res = await asyncio.wait_for(run(cfg, Path(logdir)), cfg.limit)
            if cfg.browser:
                print("one Chromium tab, its backend killed…", flush=True)
                # the default host settings: the browser test's helpers read the controls' defaults
                # without the host's environment (DISTSGD_BUDGET would change one)
                check = asyncio.to_thread(browser_check, Path(logdir), {})
                res.browser = await asyncio.wait_for(check, 600)
        except TimeoutError:
            print(f"the fault test did not finish within {cfg.limit:.0f} s; servers stopped", file=sys.stderr)
            return 2
    text = report(res)
    cfg.out.parent.mkdir(parents=True, exist_ok=True)
    cfg.out.write_text(text)
    print(text)
    print(f"wrote {cfg.out}")
    return 0 if verdict(res)[0] else 1


def main(argv: list[str] | None = None) -> int:
    cfg = parse(argv)
    if load_server.nginx_path() is None:
        print("nginx is not installed: on Debian/Ubuntu `sudo apt-get install -y nginx`; skipped.")
        return 0
    signal.signal(signal.SIGTERM, _sigterm)
    try:
        return asyncio.run(amain(cfg))
    except KeyboardInterrupt:
        print("interrupted: servers stopped, nothing written", file=sys.stderr)
        return 130
    except RuntimeError as exc:
        print(f"the fault test could not run: {exc}", file=sys.stderr)
        return 2
    finally:
        for server in _STARTED:
            load_server.stop(server)  # again (a no-op when stopped): an interrupted run stops here


if __name__ == "__main__":
    sys.exit(main())

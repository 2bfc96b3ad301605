"""The deployed host: deploy/run-multi.sh supervises its backends, nginx skips a dead one, and
the server does not watch its source tree.

The run-multi.sh tests put a stub in place of Streamlit (``PYTHON`` points at a wrapper that
answers ``-m distsgd.ui.serve …`` with a tiny HTTP server on the same port), so they take seconds:
what is tested is the script and deploy/nginx.conf, not Streamlit.  They need nginx (skipped
without it; on CI, where ``make test`` installs it, a missing nginx fails).  The file-watcher
test starts the real app.  benchmarks/bench_fault.py is the full fault test with real backends.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks import load_server
from benchmarks.load_client import open_session

ROOT = Path(__file__).resolve().parent.parent
RUN_MULTI = ROOT / "deploy" / "run-multi.sh"

STUB = r'''
import http.server, sys
port = int(sys.argv[sys.argv.index("--server.port") + 1])

class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"ok" if self.path.startswith("/_stcore/health") else f"stub {port}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
'''

WRAPPER = """#!/usr/bin/env bash
# `python -m distsgd.ui.serve …` (a backend) → the stub; anything else → the real Python
if [[ ${1:-} == -m && ${2:-} == distsgd.ui.serve ]]; then exec "%(python)s" "%(stub)s" "$@"; fi
exec "%(python)s" "$@"
"""


def need_nginx() -> str:
    path = load_server.nginx_path()
    if path is None:
        msg = "deploy tests need nginx (Debian: apt-get install nginx; `make test` installs it as root)"
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail(f"{msg} (CI is set, so this is a failure, not a skip)", pytrace=False)
        pytest.skip(msg)
    return path


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def two_free_ports() -> int:
    """A port p with p and p + 1 free (run-multi.sh puts its backends on consecutive ports)."""
    for _ in range(50):
        p = load_server.free_port()
        if p < 65535 and _bindable(p + 1):
            return p
    raise RuntimeError("no two consecutive free ports")


def get(url: str, cookie: str = "") -> tuple[int, str, str, str]:
    """(status, body, X-Distsgd-Backend, the Set-Cookie pair) of a GET (loopback only)."""
    req = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:  # noqa: S310 - loopback
            set_cookie = (r.headers.get("Set-Cookie") or "").split(";", 1)[0]
            return r.status, r.read().decode(), r.headers.get("X-Distsgd-Backend", ""), set_cookie
    except urllib.error.HTTPError as e:
        return e.code, "", "", ""
    except OSError:
        return 0, "", "", ""


def wait_for(cond, timeout: float, what: str, step: float = 0.1):  # type: ignore[no-untyped-def]
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        v = cond()
        if v:
            return v
        time.sleep(step)
    raise AssertionError(f"{what} (waited {timeout:.0f} s)")


@dataclass
class Multi:
    proc: subprocess.Popen[bytes]
    port: int
    base: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def backend_pid(self, port: int) -> int | None:
        for pid in load_server.tree(self.proc.pid):
            try:
                args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"--server.port" in args and str(port).encode() in args and b"distsgd.ui.serve" in args:
                return pid
        return None

    def group_alive(self) -> list[str]:
        """Processes still in the script's process group (it is their leader)."""
        out = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                    if int(stat.rsplit(")", 1)[1].split()[2]) == self.proc.pid and " (Z) " not in stat:
                        out.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:100])
                except (OSError, IndexError, ValueError):
                    continue
        return out


@pytest.fixture
def multi(tmp_path: Path) -> Iterator[Multi]:
    """deploy/run-multi.sh 2 with stub backends, nginx in front, in a process group of its own."""
    need_nginx()
    (tmp_path / "stub.py").write_text(STUB)
    wrapper = tmp_path / "python"
    wrapper.write_text(WRAPPER % {"python": sys.executable, "stub": tmp_path / "stub.py"})
    wrapper.chmod(0o755)
    port, base = load_server.free_port(), two_free_ports()
    log = tmp_path / "run-multi.log"
    env = dict(os.environ, PYTHON=str(wrapper))
    with open(log, "wb") as out:
        proc = subprocess.Popen(["bash", str(RUN_MULTI), "2", str(port), str(base)], cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    m = Multi(proc, port, base, log)
    try:
        wait_for(lambda: get(m.url + "/_stcore/health")[1] == "ok" or proc.poll() is not None, 30,
                 "nginx did not answer")
        assert proc.poll() is None, f"run-multi.sh exited {proc.returncode}:\n{m.text()}"
        yield m
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(10)


def test_a_killed_backend_is_restarted_and_nginx_skips_it_meanwhile(multi: Multi) -> None:
    a, b = f"127.0.0.1:{multi.base}", f"127.0.0.1:{multi.base + 1}"

    def cookie_for(backend: str) -> str:
        return str(wait_for(lambda: (lambda r: r[3] if r[2] == backend else "")(get(multi.url + "/")), 10,
                            f"nginx never sent a new cookie to {backend}", step=0))

    cookie = cookie_for(a)
    assert get(multi.url + "/", cookie)[1:3] == (f"stub {multi.base}", a)  # sticky

    pid = multi.backend_pid(multi.base)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    t_kill = time.monotonic()
    # meanwhile every request of that cookie is answered by the other backend, none fails
    for _ in range(20):
        status, body, backend, _ = get(multi.url + "/", cookie)
        assert status == 200 and body == f"stub {multi.base + 1}", (status, body, backend)
    # restarted (1 s back-off): its own health check answers again, with a new PID
    wait_for(lambda: get(f"http://{a}/_stcore/health")[1] == "ok", 15, f"{a} was not restarted")
    assert time.monotonic() - t_kill < 15
    new_pid = multi.backend_pid(multi.base)
    assert new_pid not in (None, pid)
    text = multi.text()
    assert f"backend {a} exited (killed by SIGKILL)" in text and "restarting it in 1 s" in text, text
    assert f"backend {a} started again (pid {new_pid}, restart 1)" in text, text
    # after fail_timeout nginx tries it again: the cookie's requests go back to it
    wait_for(lambda: get(multi.url + "/", cookie)[2] == a, 15, "the cookie was not routed back", step=0.5)

    # killed again soon after: the back-off doubles
    assert new_pid is not None
    os.kill(new_pid, signal.SIGKILL)
    wait_for(lambda: "restarting it in 2 s" in multi.text(), 5, "no doubled back-off")
    wait_for(lambda: get(f"http://{a}/_stcore/health")[1] == "ok", 15, f"{a} was not restarted twice")
    assert get(multi.url + "/", cookie_for(b))[1] == f"stub {multi.base + 1}"  # the other one untouched

    # SIGTERM to the script stops everything: nginx, both backends, the supervisors
    multi.proc.send_signal(signal.SIGTERM)
    multi.proc.wait(20)
    wait_for(lambda: not multi.group_alive(), 5, f"left behind: {multi.group_alive()}")


def test_ctrl_c_stops_everything_and_restarts_nothing(multi: Multi) -> None:
    # Ctrl-C in a terminal: SIGINT to the whole foreground group, backends included
    os.killpg(multi.proc.pid, signal.SIGINT)
    multi.proc.wait(20)
    wait_for(lambda: not multi.group_alive(), 5, f"left behind: {multi.group_alive()}")
    assert "restarting" not in multi.text(), multi.text()


def test_nginx_conf_fails_over() -> None:
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    assert "proxy_next_upstream error timeout;" in conf
    servers = [ln for ln in conf.splitlines() if ln.strip().startswith("server 127.0.0.1:")]
    assert servers and all("max_fails=" in ln and "fail_timeout=" in ln for ln in servers), servers


# ---------------------------------------------------------------------------------------------
# the file watcher: numba's cache files must not make every page offer "File change. Rerun"
# ---------------------------------------------------------------------------------------------

def test_the_config_turns_the_file_watcher_off() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["fileWatcherType"] == "none"


def _watched_cache_dir() -> Path | None:
    """A __pycache__ of a namespace package of distsgd (no __init__.py): Streamlit watches such a
    package's whole directory, so numba's .nbi files there are what it would report."""
    for d in sorted((ROOT / "distsgd").iterdir()):
        if d.is_dir() and not (d / "__init__.py").exists() and any(d.glob("*.py")):
            return d / "__pycache__"
    return None


#: the control (``auto``) sees its event within 0.01 s of the write on an idle machine: the
#: project's config is given WATCH_S to send one, the control up to 4 s (it stops at its event)
WATCH_S = 2.0


async def _changed_on_disk(base: str, cache_file: Path, wait_s: float, until_one: bool) -> list[str]:
    """Open a session, run the first page, rewrite ``cache_file`` as numba does, and return the
    session events (script_changed_on_disk…) the server sent in the next ``wait_s`` seconds
    (``until_one``: until the first one, if it comes sooner)."""
    sess = await open_session(base)
    events: list[str] = []
    inner = sess._handle

    def handle(msg):  # type: ignore[no-untyped-def]
        if msg.WhichOneof("type") == "session_event":
            events.append(str(msg.session_event.WhichOneof("type")))
        inner(msg)
    sess._handle = handle  # type: ignore[method-assign]
    try:
        await sess.rerun(180, page_hash="")  # imports distsgd: its modules are watched from now on
        await asyncio.sleep(1.0)
        events.clear()
        cache_file.write_bytes(os.urandom(64))  # a new index, as numba writes one
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and not (until_one and events):
            await asyncio.sleep(0.05)
        return events
    finally:
        await sess.close()


@pytest.mark.parametrize("watcher", ["config", "auto"])
def test_numba_cache_files_do_not_prompt_a_rerun(watcher: str, tmp_path: Path) -> None:
    """With the project's config nothing is sent; with ``auto`` (the control) the server sends
    ``script_changed_on_disk`` — the "File change. Rerun / Always rerun" prompt."""
    cache = _watched_cache_dir()
    if cache is None:
        pytest.skip("no namespace package under distsgd/: Streamlit watches no cache directory")
    cache.mkdir(exist_ok=True)
    cache_file = cache / f"zz_test_deploy_{os.getpid()}_{watcher}.nbi"  # numba ignores unknown index names
    cache_file.write_bytes(b"")
    port = load_server.free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
           "--server.address", "127.0.0.1"] + (["--server.fileWatcherType", watcher] if watcher != "config" else [])
    log = tmp_path / "streamlit.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    server = load_server.Server(proc, f"http://127.0.0.1:{port}", log, 1)
    try:
        asyncio.run(load_server.wait_healthy(server, 60))
        events = asyncio.run(_changed_on_disk(server.base, cache_file, WATCH_S if watcher == "config" else 4.0,
                                              until_one=watcher != "config"))
    finally:
        load_server.stop(server)
        cache_file.unlink(missing_ok=True)
    if watcher == "config":
        assert events == [], f"the server reported a file change: {events}"
    else:
        assert "script_changed_on_disk" in events, f"the control saw no file change: {events}"

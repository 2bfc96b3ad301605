"""Servers for the load benchmark: started on loopback, watched through /proc, always stopped.

:func:`start` runs either one ``streamlit run app.py`` or ``deploy/run-multi.sh`` (P Streamlit
processes behind nginx) in a new process group of its own; :func:`stop` ends that group (by
its id) with SIGTERM, then SIGKILL after a grace period.  :class:`Sampler` follows the whole
process tree (children included): CPU time from ``/proc/PID/stat`` (utime + stime + cutime +
cstime) and memory from ``/proc/PID/status`` (VmRSS summed over the tree, sampled; VmHWM).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from .load_client import check_loopback

REPO = Path(__file__).resolve().parent.parent
RUN_MULTI = REPO / "deploy" / "run-multi.sh"
CLK_TCK = os.sysconf("SC_CLK_TCK")
STARTUP_TIMEOUT_S = 180.0
STOP_GRACE_S = 20.0


@dataclass
class Server:
    """A server this benchmark started: its process (a group leader), URL and log file."""

    proc: subprocess.Popen[bytes]
    base: str
    log: Path
    backends: int


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def nginx_path() -> str | None:
    """The nginx binary (Debian puts it in /usr/sbin, often not on a user's PATH)."""
    return shutil.which("nginx") or (("/usr/sbin/nginx") if os.access("/usr/sbin/nginx", os.X_OK) else None)


def start(log: Path, port: int, processes: int = 0, env_extra: dict[str, str] | None = None) -> Server:
    """Start one Streamlit server (``processes`` = 0) or ``deploy/run-multi.sh`` with that many
    backends behind nginx, listening on 127.0.0.1:``port``; output goes to ``log``; ``env_extra``
    adds to the server's environment (the host settings of distsgd.ui.rerun_caps)."""
    env = dict(os.environ, PYTHON=sys.executable, STREAMLIT_BROWSER_GATHER_USAGE_STATS="false", **(env_extra or {}))
    if processes:
        cmd = ["bash", str(RUN_MULTI), str(processes), str(port), str(free_port())]
    else:
        cmd = [sys.executable, "-m", "distsgd.ui.serve", "--server.port", str(port),
               "--server.address", "127.0.0.1", "--server.headless", "true",
               "--server.fileWatcherType", "none"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    return Server(proc, f"http://127.0.0.1:{port}", log, max(processes, 1))


async def wait_healthy(server: Server, timeout: float = STARTUP_TIMEOUT_S) -> float:
    """Poll ``/_stcore/health`` until it answers "ok"; the seconds it took."""
    check_loopback(server.base)
    t0 = time.perf_counter()
    url = server.base + "/_stcore/health"
    while time.perf_counter() - t0 < timeout:
        if server.proc.poll() is not None:
            raise RuntimeError(f"the server exited ({server.proc.returncode}); see {server.log}")
        try:
            body = await asyncio.to_thread(_get, url)
            if body.strip() == b"ok":
                return time.perf_counter() - t0
        except OSError:
            pass
        await asyncio.sleep(0.5)
    raise RuntimeError(f"the server did not answer {url} within {timeout:.0f} s; see {server.log}")


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as resp:  # noqa: S310 - loopback only (checked)
        return bytes(resp.read())


def stop(server: Server) -> None:
    """SIGTERM to the group this benchmark started (its leader's id), SIGKILL if it lingers."""
    proc = server.proc
    for sig, wait_s in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)  # our own group: start_new_session made proc its leader
        except ProcessLookupError:
            break
        try:
            proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            continue
    # a straggler of the group (nginx worker, backend) outlives its leader: end it too
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def tree(root: int) -> list[int]:
    """``root`` and all its descendants (bounded: at most 1000 processes)."""
    kids = _children()
    out: list[int] = []
    todo = [root]
    while todo and len(out) < 1000:
        pid = todo.pop()
        out.append(pid)
        todo.extend(kids.get(pid, []))
    return out


def cpu_seconds(pid: int) -> float | None:
    """utime + stime + cutime + cstime of one process, in seconds (None once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return sum(int(x) for x in fields[11:15]) / CLK_TCK


def memory(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of one process, in bytes (zeros once it is gone)."""
    rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
    except OSError:
        pass
    return rss, hwm


def pss(pid: int) -> int:
    """Proportional set size of one process, in bytes (0 once gone or where the kernel has no
    smaps_rollup): shared pages counted once over the processes that share them, so the sum over
    a tree is the memory it holds (the sum of VmRSS counts a forked worker's inherited pages again)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


@dataclass
class Sampler:
    """CPU and memory of a process tree over a window, sampled every ``period`` seconds."""

    root: int
    period: float = 0.5
    first: dict[int, float] = field(default_factory=dict)
    last: dict[int, float] = field(default_factory=dict)
    hwm: dict[int, int] = field(default_factory=dict)
    peak_rss: int = 0
    peak_pss: int = 0
    processes: int = 0
    t0: float = 0.0
    t1: float = 0.0

    def sample(self) -> None:
        total_rss = total_pss = 0
        initial = not self.first
        pids = tree(self.root)
        self.processes = max(self.processes, len(pids))
        for pid in pids:
            cpu = cpu_seconds(pid)
            if cpu is None:
                continue
            # a process first seen after the start did all its work inside the window
            self.first.setdefault(pid, cpu if initial else 0.0)
            self.last[pid] = cpu
            rss, hwm = memory(pid)
            total_rss += rss
            total_pss += pss(pid)
            self.hwm[pid] = max(self.hwm.get(pid, 0), hwm)
        self.peak_rss = max(self.peak_rss, total_rss)
        self.peak_pss = max(self.peak_pss, total_pss)

    async def run(self, stop_event: asyncio.Event) -> None:
        """Sample until ``stop_event`` is set (once at start, every period, once at the end)."""
        self.t0 = time.perf_counter()
        self.sample()
        while not stop_event.is_set():
            try:
                await asyncio.wait_for(stop_event.wait(), self.period)
            except TimeoutError:
                pass
            self.sample()
        self.t1 = time.perf_counter()

    @property
    def cores(self) -> float:
        """Average cores the tree used over the window."""
        used = sum(self.last[p] - self.first.get(p, 0.0) for p in self.last)
        return used / max(self.t1 - self.t0, 1e-9)

    @property
    def root_cores(self) -> float:
        """Average cores of the tree's root alone (the Streamlit process, without its workers)."""
        used = self.last.get(self.root, 0.0) - self.first.get(self.root, 0.0)
        return used / max(self.t1 - self.t0, 1e-9)

    @property
    def hwm_total(self) -> int:
        """Sum of each process's VmHWM (an upper bound of the tree's peak)."""
        return sum(self.hwm.values())


def machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, from /proc/stat (all cores):
    the difference over a window says how much the other jobs on the machine took."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    total = sum(ticks[:8])  # guest time is already in user
    return (total - idle) / CLK_TCK, total / CLK_TCK


def log_problems(log: Path, start: int = 0) -> list[str]:
    """Tracebacks and error lines the server wrote after byte ``start`` of its log."""
    try:
        with open(log, "rb") as f:
            f.seek(start)
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    exc_line = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt)\b")
    return [ln.strip()[:160] for ln in text.splitlines()
            if "Traceback" in ln or " ERROR " in ln or "[error]" in ln or "[emerg]" in ln or exc_line.match(ln)]

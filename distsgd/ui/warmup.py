"""A fresh install's kernels compiled in a child process while the dashboard's server starts.

numba compiles the library's kernels into its cache the first time they run after an install:
≈ 9 s of one core on the 2-core reference machine, ≈ 4 s of it the runtime page's
(``benchmarks/results/coldstart.md``); loading them from the cache later takes well under a second.
``python -m distsgd.ui.serve`` without worker processes (``make run``) calls :func:`start` before
it imports the dashboard: a child process (``python -m distsgd.ui.workers``) runs
:data:`distsgd.ui.workers.WARM_STAGES` in order and prints each stage's name (:data:`STAGES`) once
its kernels are in numba's cache, the runtime page's first.  Meanwhile the server imports its
libraries on the other core and starts answering.  :func:`wait` (called by
:func:`distsgd.ui.workers.call`) holds a computation until the runtime stage is reported, so that
the server loads those kernels from the cache instead of compiling them a second time beside the
child, and :func:`pending` tells the runtime page to draw its analytic curves meanwhile
(DESIGN §11).  Every later start finds the kernels in the cache: the child only loads them.

A child that fails or is killed ends its stages by exiting: the server then compiles what it needs
itself, as it would without the child, and its log says so.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Sequence

__all__ = ["STAGES", "WAIT_S", "Warmup", "start", "pending", "wait"]

#: the stages the child reports, in order: the runtime page's kernels, then every other kernel
STAGES = ("runtime", "all")
#: the longest a computation waits for a stage (s): a fresh install compiles the runtime stage in
#: ≈ 4 s; a child still at it after this long is stopped (the server compiles the kernels itself)
WAIT_S = 120.0
#: the child: :mod:`distsgd.ui.workers` run as a program, by the server's own interpreter
COMMAND = (sys.executable, "-m", "distsgd.ui.workers")
#: the child's niceness: the server and the visitor's browser (on a laptop, the same machine) go
#: first; the compile takes the cycles they leave (a run without: the first chart ≈ 1 s later,
#: benchmarks/results/coldstart.md)
NICENESS = 10


class Warmup:
    """A running child that compiles the kernels, and the stages it has reported.

    The child is in a session of its own (a Ctrl-C in the server's terminal is the server's to
    handle) and reads its stdin until the server closes it: it ends with the server, however the
    server ends (``workers._compile_stages``)."""

    def __init__(self, command: Sequence[str] = COMMAND) -> None:
        self._done = {name: threading.Event() for name in STAGES}
        self._stopped = False
        self.returncode: int | None = None
        self.proc = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     errors="replace", start_new_session=True)
        with contextlib.suppress(OSError, AttributeError):  # a platform without priorities: it runs at ours
            os.setpriority(os.PRIO_PROCESS, self.proc.pid, os.getpriority(os.PRIO_PROCESS, 0) + NICENESS)
        threading.Thread(target=self._follow, name="distsgd-warmup", daemon=True).start()

    def _follow(self) -> None:
        assert self.proc.stdout is not None
        try:
            for line in self.proc.stdout:
                if line.strip() in self._done:
                    self._done[line.strip()].set()
            self.returncode = self.proc.wait()
            missing = [name for name in STAGES if not self._done[name].is_set()]
            if missing and not self._stopped:
                print(f"distsgd: the kernel compiler ended (code {self.returncode}) before "
                      f"{'its stages' if len(missing) > 1 else 'its stage'} {', '.join(missing)}: the server "
                      "compiles those kernels itself when it needs them", file=sys.stderr, flush=True)
        finally:
            self._end()

    def _end(self) -> None:
        for event in self._done.values():
            event.set()

    def done(self, stage: str) -> bool:
        """Whether ``stage``'s kernels are in the cache (or the child has ended)."""
        return self._done[stage].is_set()

    def wait(self, stage: str = "runtime", timeout: float = WAIT_S) -> bool:
        """Block until ``stage`` is done, for at most ``timeout`` seconds; whether it was.  A child
        that took longer is stopped, and nothing waits for it again."""
        if self._done[stage].wait(timeout):
            return True
        self.stop()
        self._end()
        return False

    def stop(self) -> None:
        """End the child (a timeout, the server's exit).  Killing it is safe: numba writes each
        cache file whole, under a temporary name."""
        self._stopped = True
        if self.proc.poll() is None:
            self.proc.kill()


_current: Warmup | None = None


def start(command: Sequence[str] = COMMAND) -> Warmup | None:
    """Start the child (once per server process) and make :func:`wait` and :func:`pending` follow
    it; None if it cannot be started (the server then compiles what it needs itself, as it says)."""
    global _current
    if _current is None:
        try:
            _current = Warmup(command)
        except OSError as e:
            print(f"distsgd: the kernel compiler could not start ({e}): the server compiles the kernels itself",
                  file=sys.stderr, flush=True)
            return None
        atexit.register(_current.stop)
    return _current


def pending() -> bool:
    """True while a child started by this process has not yet compiled the runtime page's kernels."""
    return _current is not None and not _current.done("runtime")


def wait(stage: str = "runtime") -> None:
    """Block until the child (if this process started one) has done ``stage``, at most :data:`WAIT_S`."""
    if _current is not None:
        _current.wait(stage)

"""The dashboard's heavy library calls in worker processes, so that all cores serve a class.

Streamlit runs every session's script in a thread of one process: the Python parts of all
reruns share one GIL, so one server gets about one core however many the host has.  With
``DISTSGD_PROCESSES=P`` (:data:`distsgd.ui.host.UI_PROCESSES`) the cached calls of
:mod:`distsgd.ui.cached` that simulate or integrate (runtime charts, error and trade-off
curves, what-if tables, fits) run in a pool of P processes instead: the session's thread waits
for the result without holding the GIL, so the server keeps drawing other sessions' pages while
P cores compute.  The call is the same library function with the same arguments, so the numbers
are the ones it gives in the server's own process (``tests/test_ui_workers.py``).

P = 0 (the default, and the test suite's) calls the function in the server's process.  The
pool is made on the first call (``forkserver``: workers start from a clean process, never from
a fork of Streamlit's threads) and made again if a worker died (a call then runs once more in
the new pool, so one killed worker costs a student one slower chart, not an error).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from threadpoolctl import threadpool_limits

from .. import curves, plots
from ..analytic import expected_runtime
from ..delays import parse_delay
from ..error import Problem, simulate_error
from ..montecarlo import simulate_timeline
from ..schemes import SCHEME_NAMES
from . import warmup
from .host import UI_PROCESSES

__all__ = ["call", "start", "warm", "shutdown", "BLAS_THREADS"]

T = TypeVar("T")

#: modules the forkserver imports once, so every worker starts with them (this module: the libraries)
PRELOAD = ["distsgd.ui.workers", "distsgd.whatif", "distsgd.fit"]

#: BLAS threads of a worker: one — the P workers already share the cores, and OpenBLAS's threads,
#: busy-waiting beside each small matrix product of a chart, doubled a data set's CPU per rerun
#: (digits' Error page: 1.6 → 0.8 s of CPU)
BLAS_THREADS = 1

_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None


def _get(broken: ProcessPoolExecutor | None = None) -> ProcessPoolExecutor | None:
    """The pool (None without worker processes); a new one in place of ``broken``."""
    global _pool
    if UI_PROCESSES <= 0:
        return None
    with _lock:
        if broken is not None and _pool is broken:
            broken.shutdown(wait=False, cancel_futures=True)
            _pool = None
        if _pool is None:
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(PRELOAD)
            _pool = ProcessPoolExecutor(max_workers=UI_PROCESSES, mp_context=ctx, initializer=_worker_start)
        return _pool


def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, in a worker process when the dashboard has them.  ``fn`` is a
    module-level library function; its exceptions (a ``ParameterError`` saying what to change)
    reach the caller as they are."""
    pool = _get()
    if pool is None:
        warmup.wait()  # a fresh install's first start: the kernels from the child's cache, not compiled twice
        return fn(*args, **kwargs)
    try:
        return pool.submit(fn, *args, **kwargs).result()
    except BrokenProcessPool:
        pool = _get(broken=pool)
        assert pool is not None
        return pool.submit(fn, *args, **kwargs).result()


def _worker_start() -> None:
    """Each worker process, as it starts: its BLAS threads limited (:data:`BLAS_THREADS`), then :func:`warm`."""
    threadpool_limits(BLAS_THREADS)
    warm()


def _warm_runtime() -> None:
    """The runtime page's kernels (the page a visitor lands on): E[T] against K for every scheme."""
    delay = parse_delay("exp(rate=1, shift=0.1)")
    # a budget that simulates every point (≈ 10 ms): at 10⁶ the renewal and gossip schemes were skipped
    rows = curves.runtime_vs_K(SCHEME_NAMES, 4, delay, (1, 2, 4), 2, 0.0, 1e7, 1)
    plots.runtime_figure(rows, "x_K", "K", "warm-up")


def _warm_rest() -> None:
    """The other pages' kernels: simulated SGD, timelines, the gap chain, the schedules."""
    delay = parse_delay("exp(rate=1, shift=0.1)")
    curves.error_rows(tuple(curves.build(name, 4, 2, 2) for name in SCHEME_NAMES), delay, Problem(), 2.0, 5, 4, 1)
    for name in SCHEME_NAMES:
        simulate_timeline(curves.build(name, 4, 2, 2), delay, 3, 1)
    expected_runtime(curves.build("d-psgd", 4), parse_delay("exp(rate=1)"))  # the gap chain's sweep kernel
    for name, schedule in (("local-sgd", "adacomm(H0=2, period=1)"), ("k-async", "adasync(K0=1, period=1)")):
        simulate_error(curves.build(name, 4, 2, 2), delay, Problem(), 2.0, 5, 4, 1, schedule=schedule)


#: :func:`warm`'s stages in order, named by :data:`distsgd.ui.warmup.STAGES` (the child that compiles
#: them reports each as its kernels reach numba's cache): the runtime page's kernels first
WARM_STAGES: tuple[tuple[str, Callable[[], None]], ...] = tuple(zip(warmup.STAGES, (_warm_runtime, _warm_rest),
                                                                    strict=True))


def warm() -> None:
    """Load in this process what the first charts need: the libraries, and every compiled kernel
    (from numba's cache, or compiled into it), by running each engine once on a tiny problem
    (≈ 0.1 s once imported; ≈ 9 s of compiling after an install).  Each worker runs it as it
    starts; so does ``distsgd.ui.serve`` with worker processes (without, :mod:`distsgd.ui.warmup`)."""
    for _, stage in WARM_STAGES:
        stage()


def start() -> list[Future[int]]:
    """Start the worker processes now (each warms itself as it starts) rather than on the first
    chart; the futures end when they are ready."""
    pool = _get()
    return [] if pool is None else [pool.submit(int) for _ in range(UI_PROCESSES)]


def shutdown() -> None:
    """Stop the workers (tests; the server's exit stops them too)."""
    global _pool
    with _lock:
        if _pool is not None:
            _pool.shutdown(wait=True, cancel_futures=True)
            _pool = None


def _compile_stages() -> int:
    """``python -m distsgd.ui.workers``, the child of :mod:`distsgd.ui.warmup`: each stage of
    :data:`WARM_STAGES` run (its kernels compiled into numba's cache, or loaded from it), then its
    name printed.  It ends when its stdin does: the server that started it has ended."""
    threading.Thread(target=_end_with_stdin, name="distsgd-lifeline", daemon=True).start()
    for name, stage in WARM_STAGES:
        stage()
        print(name, flush=True)
    return 0


def _end_with_stdin() -> None:
    sys.stdin.read()
    os._exit(0)


if __name__ == "__main__":
    raise SystemExit(_compile_stages())

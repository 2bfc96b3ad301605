"""The dashboard's worker processes (distsgd.ui.workers): the same numbers as in the server's
process, the library's refusals unchanged, a killed worker replaced; the host settings checked."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from threadpoolctl import threadpool_info

from benchmarks import load_server
from benchmarks.load_client import open_session
from distsgd import curves, parse_delay
from distsgd.params import ParameterError
from distsgd.ui import host, rerun_caps, workers

EXP = parse_delay("exp(rate=1, shift=0.1)")


@pytest.fixture
def pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(workers, "UI_PROCESSES", 2)
    workers.shutdown()
    yield
    workers.shutdown()


def test_a_worker_gives_the_numbers_of_the_server_process(pool: None) -> None:
    args = (("sync", "k-sync", "async", "k-async"), 8, EXP, (1, 2, 4, 8), 1, 0.0, 3e6, 7)
    here = curves.runtime_vs_K(*args)
    there = workers.call(curves.runtime_vs_K, *args)
    assert workers.call(os.getpid) != os.getpid()  # it did run elsewhere
    assert there == here
    blas = [lib["num_threads"] for lib in workers.call(threadpool_info) if lib["user_api"] == "blas"]
    assert blas and max(blas) == workers.BLAS_THREADS  # the workers share the cores: no BLAS threads of their own


def test_a_refusal_crosses_as_it_is(pool: None) -> None:
    with pytest.raises(ParameterError) as err:
        workers.call(parse_delay, "exp(rate=-1)")
    assert err.value.parameter == "delay" or "rate" in str(err.value)
    with pytest.raises(ParameterError) as here:
        parse_delay("exp(rate=-1)")
    assert str(err.value) == str(here.value) and err.value.parameter == here.value.parameter


def test_a_killed_worker_is_replaced(pool: None) -> None:
    pid = workers.call(os.getpid)
    os.kill(pid, signal.SIGKILL)
    assert workers.call(curves.async_speedup, 4, EXP) == curves.async_speedup(4, EXP)


def test_without_workers_the_call_is_made_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "UI_PROCESSES", 0)
    assert workers.call(os.getpid) == os.getpid()


@pytest.mark.parametrize("value", ["lots", "-1", "17", "2.5"])
def test_a_bad_host_setting_stops_the_server_naming_it(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("DISTSGD_PROCESSES", value)
    with pytest.raises(SystemExit, match="DISTSGD_PROCESSES"):
        host.setting("DISTSGD_PROCESSES", "0", tuple(str(n) for n in range(17)))


def test_host_settings_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISTSGD_BUDGET", "fast")
    assert host.setting("DISTSGD_BUDGET", "balanced", tuple(rerun_caps.UI_BUDGETS)) == "fast"
    monkeypatch.delenv("DISTSGD_BUDGET")
    assert host.setting("DISTSGD_BUDGET", "balanced", tuple(rerun_caps.UI_BUDGETS)) == "balanced"


def test_serve_starts_the_dashboard_warm(tmp_path: Path) -> None:
    """``python -m distsgd.ui.serve`` (make run, deploy/run-multi.sh): healthy, and its first page
    is drawn without an error by a session over Streamlit's protocol; with worker processes.  And
    a tab whose server process was replaced (a new session, behind nginx): its next move — the
    widget's new value, sent with the URL the app last wrote — is applied, not the URL's value,
    and the other controls keep theirs."""
    async def run() -> tuple[list[str], int, str, str]:
        server = load_server.start(tmp_path / "server.log", load_server.free_port(), 0, {"DISTSGD_PROCESSES": "1"})
        try:
            await load_server.wait_healthy(server, timeout=240)
            sess = await open_session(server.base)
            try:
                result = await sess.rerun(120, page_hash="")
                m = sess.widgets["m"]
                moved = await sess.rerun(120, widget=m, value=m.low + 3)
                K = sess.widgets["K"]  # its slider's maximum is m
                moved_K = await sess.rerun(120, widget=K, value=K.low + 2)
                K = sess.widgets["K"]
            finally:
                await sess.close()
            later = await open_session(server.base)  # the tab, reconnected to a process it never spoke to
            try:
                later.query_string = sess.query_string
                back = await later.rerun(120, page_hash=sess.page_hash, widget=m, value=m.low + 5,
                                         also=[(K, K.low + 2)])  # (the page sends every widget it shows)
            finally:
                await later.close()
            errors = [*result.errors, *moved.errors, *moved_K.errors, *back.errors]
            errors += [] if result.ok and moved.ok and moved_K.ok and back.ok else ["not finished"]
            return errors, len(load_server.tree(server.proc.pid)), sess.query_string, later.query_string
        finally:
            load_server.stop(server)

    errors, processes, before, after = asyncio.run(run())
    assert errors == [], (tmp_path / "server.log").read_text()[-2000:]
    assert processes >= 3  # the server, the forkserver and its worker
    assert parse_qs(before).get("m") and parse_qs(after).get("m"), (before, after)
    assert int(parse_qs(after)["m"][0]) == int(parse_qs(before)["m"][0]) + 2, (before, after)
    # K's slider now has another maximum, so another widget id: it keeps the store's value, not its default
    assert parse_qs(after).get("K") == parse_qs(before).get("K") == ["3"], (before, after)


def _is_compiler(pid: int) -> bool:
    try:
        return b"distsgd.ui.workers" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # gone
        return False


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads the process tree from /proc")
def test_serve_without_workers_compiles_in_a_child_that_ends_with_it(tmp_path: Path) -> None:
    """``make run``'s server (no worker processes) after an install (numba's cache empty): a child
    compiles the kernels from the start, the first page is drawn without an error once the runtime
    page's are ready, and when the server is killed outright the child, still compiling the other
    pages' kernels, ends at once (its stdin closes) instead of running on alone."""
    env = {"DISTSGD_PROCESSES": "0", "NUMBA_CACHE_DIR": str(tmp_path / "numba")}

    async def run() -> tuple[set[int], list[str]]:
        server = load_server.start(tmp_path / "server.log", load_server.free_port(), 0, env)
        seen: set[int] = set()
        try:
            healthy = asyncio.create_task(load_server.wait_healthy(server, timeout=240))
            while not healthy.done():
                seen |= {pid for pid in load_server.tree(server.proc.pid) if _is_compiler(pid)}
                await asyncio.sleep(0.05)
            await healthy
            sess = await open_session(server.base)
            try:
                result = await sess.rerun(240, page_hash="")
            finally:
                await sess.close()
            assert any(_is_compiler(pid) for pid in seen), "the child ended before the test could kill its server"
            os.kill(server.proc.pid, signal.SIGKILL)
            return seen, [*result.errors, *([] if result.ok else ["not finished"])]
        finally:
            load_server.stop(server)

    seen, errors = asyncio.run(run())
    assert errors == [], (tmp_path / "server.log").read_text()[-2000:]
    assert seen, "no kernel-compiling child was started"
    deadline = time.monotonic() + 2  # its other stage takes ≈ 7 s more: it has not just finished
    while any(_is_compiler(pid) for pid in seen) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_is_compiler(pid) for pid in seen), "the child outlived its server"

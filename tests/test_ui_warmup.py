"""The kernels' warm-up child of ``make run`` (distsgd/ui/warmup.py) and what waits for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from apptest_support import open_app
from distsgd import jit, parse_delay
from distsgd.params import ParameterError
from distsgd.ui import cached, warmup, workers

ROOT = Path(__file__).resolve().parent.parent
EXP = parse_delay("exp(rate=1, shift=0.1)")


def _child(script: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(script)]


@pytest.fixture
def current(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """warmup's module state restored after the test (a test's child is stopped)."""
    monkeypatch.setattr(warmup, "_current", None)
    yield
    if warmup._current is not None:
        warmup._current.stop()


def test_stages_are_reported_in_order_and_the_child_ends() -> None:
    w = warmup.Warmup(_child("""
        import sys
        print("runtime", flush=True)
        sys.stdin.readline()  # the test's go-ahead
        print("all", flush=True)
    """))
    assert w.wait("runtime", timeout=30)
    assert not w.done("all")
    assert w.proc.stdin is not None
    w.proc.stdin.write("\n")
    w.proc.stdin.flush()
    assert w.wait("all", timeout=30) and w.proc.wait(timeout=30) == 0


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the niceness from /proc")
def test_the_child_runs_at_a_lower_priority() -> None:
    """The server and a visitor's browser on the same machine go first (warmup.NICENESS)."""
    w = warmup.Warmup(_child("import time; time.sleep(30)"))
    try:
        nice = int(Path(f"/proc/{w.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[16])
        assert nice == os.getpriority(os.PRIO_PROCESS, 0) + warmup.NICENESS
    finally:
        w.stop()


def test_a_child_that_fails_ends_the_wait_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    w = warmup.Warmup(_child("import sys; print('not a stage', flush=True); sys.exit(3)"))
    t0 = time.monotonic()
    assert w.wait("runtime", timeout=30) and w.done("all")
    assert time.monotonic() - t0 < 20
    err = capsys.readouterr().err
    assert "code 3" in err and "runtime, all" in err


def test_a_child_that_hangs_is_waited_for_once_then_stopped() -> None:
    w = warmup.Warmup(_child("import time; time.sleep(120)"))
    assert not w.wait("runtime", timeout=0.5)
    assert w.proc.wait(timeout=30) is not None
    assert w.wait("runtime", timeout=30)  # its end ended every stage: nothing waits again


def test_a_computation_waits_for_the_runtime_stage(current: None) -> None:
    """Without worker processes, ``workers.call`` runs the function only once the child has the
    runtime page's kernels in the cache (it would otherwise compile them a second time beside it)."""
    warmup.start(_child("""
        import time
        time.sleep(1.0)
        print("runtime", flush=True)
        time.sleep(60)
    """))
    assert warmup.pending()
    assert workers.call(warmup._current.done, "runtime") is True  # type: ignore[union-attr]
    assert not warmup.pending()


def test_no_child_nothing_pending(current: None) -> None:
    assert not warmup.pending()
    warmup.wait()  # returns at once


@pytest.mark.skipif(not jit.ENABLED, reason="the kernels' signatures exist only when compiled")
def test_the_runtime_stage_compiles_what_the_runtime_page_draws() -> None:
    """After the runtime stage alone, the runtime page's default charts (E[T] against K and
    against m, the sidebar's defaults) compile nothing more: its Monte Carlo, waiting for that
    stage, never compiles a kernel in the server.  In a process of its own (a test's process has
    compiled other signatures already)."""
    script = """
        import numba
        from streamlit.testing.v1 import AppTest
        from distsgd.engines import runtime_kernels
        from distsgd.error import graph_kernels, sgd_kernels
        from distsgd.numerics import graph_chain
        from distsgd.ui import workers

        def signatures():
            return {(mod.__name__, name, str(sig)) for mod in (runtime_kernels, sgd_kernels, graph_kernels, graph_chain)
                    for name, f in vars(mod).items() if isinstance(f, numba.core.registry.CPUDispatcher)
                    for sig in f.signatures}

        workers.WARM_STAGES[0][1]()
        before = signatures()
        at = AppTest.from_file("app.py", default_timeout=300)
        at.run()
        at.radio(key="rt_view").set_value("m").run()
        assert not at.exception and len(at.get("plotly_chart")) == 1
        print(sorted(signatures() - before))
    """
    out = subprocess.run(_child(script), capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_the_runtime_page_draws_theory_first_while_the_kernels_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    """While pending, the runtime page asks for its chart's analytic curves first, then the chart;
    the final page holds the chart alone, with its Monte Carlo markers, and no caption about it."""
    asked: list[bool] = []
    view = cached._runtime_vs_K_view

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        asked.append(args[-1])  # simulate
        return view(*args, **kwargs)

    monkeypatch.setattr(cached, "_runtime_vs_K_view", spy)
    monkeypatch.setattr(warmup, "pending", lambda: True)
    at = open_app()
    assert not at.exception
    assert asked == [False, True]
    charts = at.get("plotly_chart")
    assert len(charts) == 1
    assert any("markers" in t.get("mode", "") for t in json.loads(charts[0].proto.spec)["data"])
    assert not [c for c in at.caption if "Theory only" in c.value]


def test_an_error_replaces_the_analytic_chart_and_its_caption(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the chart itself cannot be computed, the page says why, and neither the analytic
    chart nor the caption promising markers stays."""
    view = cached._runtime_vs_K_view

    def refuses(*args, **kwargs):  # type: ignore[no-untyped-def]
        if args[-1]:  # simulate
            raise ParameterError("m", "timeline_workers", cap=64, m=100)
        return view(*args, **kwargs)

    monkeypatch.setattr(cached, "_runtime_vs_K_view", refuses)
    monkeypatch.setattr(warmup, "pending", lambda: True)
    at = open_app()
    assert not at.exception
    assert [e for e in at.error if "64" in e.value]
    assert not at.get("plotly_chart")
    assert not [c for c in at.caption if "Theory only" in c.value]


def test_the_analytic_rows_never_wait_for_the_kernels(current: None) -> None:
    """While the child has not reported (here: never), a runtime chart's analytic rows are computed
    at once in this process; the chart that simulates is the one that waits."""
    warmup.start(_child("import time; time.sleep(120)"))
    t0 = time.monotonic()
    rows = cached.runtime_vs_K(("sync", "async"), 7, EXP, (1, 3, 7), 1, 1e6, 11, simulate=False)
    assert time.monotonic() - t0 < 10
    assert rows and all("mc_mean" not in r and r["analytic"] > 0 for r in rows)
    assert warmup.pending()  # the child still at it: nobody waited for it and stopped it

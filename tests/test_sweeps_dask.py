"""Sweeps on Dask and across interruptions (DESIGN §8, issue 13): one small grid gives the same
file — the same bytes — serially, on a LocalCluster of two workers, and on a scheduler and two
worker processes started here on loopback ports; a sweep killed with SIGKILL leaves a readable
file, and resuming it computes only the missing points and gives the file of an uninterrupted
run."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from distsgd import cli
from distsgd.sweeps import run as sweep_run

ROOT = Path(__file__).resolve().parent.parent

#: fourteen points: five schemes × two laws, a static-straggler cluster, the runtime and the error part, one
#: points k-sync cannot take (K > m); one task per point (--task-seconds), so tasks interleave
GRID = """
seed = 11
[base]
iterations = 2000
slowdown = 2.0
[grid]
scheme = ["sync", "k-sync", "async", "k-batch-async", "local-sgd"]
delay = ["exp(rate=1)", "pareto(xm=1, alpha=3)"]
m = [3]
K = [2, 4]
H = [2]
slow = [1]
[compute]
runtime = true
[compute.error]
eta = 0.05
L = 2
mu = 0.5
sigma2 = 1
b = 1
f0 = 1
dim = 3
time = 8
replicas = 4
eps = 0.3
points = 21
"""
FLAGS = ["--task-seconds", "0.001", "--json"]


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def _sweep(capsys, grid, out, *flags):
    code = cli.main(["sweep", str(grid), "--out", str(out), *FLAGS, *flags])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


@pytest.fixture()
def serial(tmp_path, capsys):
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID, encoding="utf-8")
    out = tmp_path / "serial.parquet"
    summary = _sweep(capsys, grid, out, "--local-workers", "0")
    assert summary["points"] == 14 and summary["errors"] == 2 and summary["tasks"] == 12
    return grid, out


def _same_file(a: Path, b: Path) -> None:
    left, right = pd.read_parquet(a), pd.read_parquet(b)
    assert left.equals(right)  # every float to the bit (NaN where both are NaN)
    assert a.read_bytes() == b.read_bytes()


def test_a_local_cluster_of_two_workers_gives_the_serial_file(serial, tmp_path, capsys):
    grid, expected = serial
    out = tmp_path / "local.parquet"
    summary = _sweep(capsys, grid, out, "--local-workers", "2")
    assert summary["workers"] == "2 threads (local)" and summary["computed"] == 14
    _same_file(expected, out)


def test_the_local_workers_have_one_blas_thread_and_glibcs_malloc_trimming():
    with sweep_run._local_client(1) as client:
        env = client.run(lambda: {k: os.environ.get(k) for k in sweep_run.WORKER_ENV})
    assert list(env.values()) == [{**{k: "1" for k in sweep_run.BLAS_ENV}, "MALLOC_TRIM_THRESHOLD_": None}]


def _stop(procs):
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def test_a_scheduler_and_two_worker_processes_give_the_serial_file(serial, tmp_path, capsys, request):
    grid, expected = serial
    info = tmp_path / "scheduler.json"
    logs = [open(tmp_path / name, "w") for name in ("scheduler.log", "worker.log")]  # noqa: SIM115
    procs: list[subprocess.Popen] = []

    def stop():
        _stop(procs)
        for f in logs:
            f.close()

    request.addfinalizer(stop)
    common = dict(cwd=tmp_path, env=_env(), stderr=subprocess.STDOUT, start_new_session=True)
    procs.append(subprocess.Popen([sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", "0",
                                   "--no-dashboard", "--scheduler-file", str(info)], stdout=logs[0], **common))
    procs.append(subprocess.Popen([sys.executable, "-m", "dask", "worker", "--scheduler-file", str(info),
                                   "--nworkers", "2", "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"],
                                  stdout=logs[1], **common))
    from distributed import Client
    deadline = time.monotonic() + 60
    while not info.exists() or not info.read_text():
        assert time.monotonic() < deadline and procs[0].poll() is None, (tmp_path / "scheduler.log").read_text()
        time.sleep(0.1)
    address = json.loads(info.read_text())["address"]
    assert address.startswith("tcp://127.0.0.1:")
    with Client(address, timeout="30s") as client:
        client.wait_for_workers(2, timeout=60)
        assert len(set(client.run(os.getpid).values())) == 2  # two worker processes
    out = tmp_path / "cluster.parquet"
    summary = _sweep(capsys, grid, out, "--scheduler", address)
    assert summary["workers"] == f"2 threads ({address})" and summary["computed"] == 14
    _same_file(expected, out)


#: sixteen points of about 0.1–0.3 s each (asynchronous schemes, long runs): long enough to kill
KILL_GRID = """
seed = 99
[base]
delay = "exp(rate=1)"
iterations = 300000
[grid]
scheme = ["async", "k-batch-async"]
m = [4, 6, 8, 10, 12, 14, 16, 18]
K = [2]
[compute]
runtime = true
"""


def test_a_sweep_killed_midway_leaves_a_readable_file_and_resumes_to_the_same_file(tmp_path, capsys):
    grid = tmp_path / "grid.toml"
    grid.write_text(KILL_GRID, encoding="utf-8")
    whole = tmp_path / "whole.parquet"
    _sweep(capsys, grid, whole, "--local-workers", "0")
    out = tmp_path / "killed.parquet"
    proc = subprocess.Popen([sys.executable, "-m", "distsgd", "sweep", str(grid), "--out", str(out),
                             "--local-workers", "0", *FLAGS], cwd=tmp_path, env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        rows = 0
        while rows < 3:
            assert proc.poll() is None, f"the sweep ended before it was killed: {proc.stderr.read()}"
            assert time.monotonic() < deadline
            if out.exists():
                # a checkpoint is complete whenever it is there: read in one open (pyarrow opens a
                # path more than once, and a checkpoint replacing the file between two opens made
                # a mismatch of the reader's own making: "Page was smaller (0) than expected")
                rows = len(pd.read_parquet(io.BytesIO(out.read_bytes())))
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
    killed = pd.read_parquet(out)
    assert 3 <= len(killed) < 16 and killed["point"].is_monotonic_increasing
    same_rows = pd.read_parquet(whole).set_index("point").loc[killed["point"]].reset_index()
    pd.testing.assert_frame_equal(killed, same_rows, check_dtype=False, check_exact=True)
    summary = _sweep(capsys, grid, out, "--local-workers", "0", "--resume")
    assert summary["computed"] == 16 - len(killed) and summary["done"] == 16
    _same_file(whole, out)

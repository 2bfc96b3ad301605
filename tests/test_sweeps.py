"""Sweeps (DESIGN §8, issue 13), in this process: the grid's points (ignored parameters collapsed,
error rows), bad grids refused before anything is written, each row's numbers against the
public API with the seed the test derives itself, the CLI's summary, and resume's refusals.
The same grid on Dask and a killed-and-resumed sweep are in test_sweeps_dask.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import distsgd
from distsgd import cli, limits
from distsgd.error import Problem, bound_time_to_target, simulate_error, simulated_time_to_target
from distsgd.sweeps import load_grid

RUNTIME_GRID = """
seed = 7
[base]
delay = "exp(rate=1)"
iterations = 3000
[grid]
scheme = ["sync", "k-sync", "async", "k-batch-async", "local-sgd"]
m = [4, 8]
K = [2, 4, 8]
H = [1, 3]
[compute]
runtime = true
"""


def _write(tmp_path, text, name="grid.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_ignored_parameters_do_not_multiply_points_and_k_over_m_is_an_error_row(tmp_path):
    grid = _write(tmp_path, RUNTIME_GRID)
    # sync 2 (m), k-sync 2×3, async 2, k-batch-async 2×3, local-sgd 2×2 (H; K ignored)
    assert load_grid(grid).count() == 2 + 6 + 2 + 6 + 4
    df = distsgd.sweep(grid, local_workers=0)
    assert len(df) == 20 and df["point"].tolist() == list(range(20))
    assert df["scheme"].tolist() == ["sync"] * 2 + ["k-sync"] * 6 + ["async"] * 2 + ["k-batch-async"] * 6 \
        + ["local-sgd"] * 4
    no_k = df[df["scheme"].isin(["sync", "async", "local-sgd"])]
    assert no_k["K"].isna().all()
    not_local = df[df["scheme"] != "local-sgd"]
    assert not_local["H"].isna().all() and not_local["comm_delay"].isna().all()
    # the order is scheme-major, then the [grid] keys in file order, the last fastest
    assert df[df["scheme"] == "k-sync"][["m", "K"]].values.tolist() == [[4, 2], [4, 4], [4, 8], [8, 2], [8, 4], [8, 8]]
    assert df[df["scheme"] == "local-sgd"][["m", "H", "comm_delay"]].values.tolist() == \
        [[4, 1, 0.0], [4, 3, 0.0], [8, 1, 0.0], [8, 3, 0.0]]
    bad = df[df["error"].notna()]
    assert bad[["scheme", "m", "K"]].values.tolist() == [["k-sync", 4, 8]]
    assert bad["error"].iloc[0] == "K: k-sync needs 1 ≤ K ≤ m = 4 (got 8)"
    assert bad[["analytic_value", "mc_mean", "label"]].isna().all(axis=None)
    good = df[df["error"].isna()]
    assert good["mc_mean"].notna().all() and good["analytic_kind"].notna().all()
    assert (good["mc_iterations"] >= 3000).all() and (good["cluster"] == "iid").all()


def test_k_batch_sync_takes_k_over_m_and_a_base_k_is_left_empty_where_ignored(tmp_path):
    df = distsgd.sweep({"seed": 1, "base": {"delay": "exp(rate=2)", "m": 2, "K": 5, "iterations": 500},
                        "grid": {"scheme": ["k-batch-sync", "async"]}, "compute": {"runtime": True}},
                       local_workers=0)
    assert df[["scheme", "K"]].fillna(-1).values.tolist() == [["k-batch-sync", 5], ["async", -1]]
    assert df["error"].isna().all()


BAD_GRIDS = {
    "unknown key in base": ("K", "[base]\nKk = 3\n[grid]\nscheme = ['sync']\nm = [4]", "Kk"),
    "unknown key in grid": ("", "[grid]\nscheme = ['sync']\nmm = [4]", "mm"),
    "key in base and grid": ("", "[base]\nm = 4\n[grid]\nscheme = ['sync']\nm = [4, 8]", "m"),
    "empty list": ("", "[base]\nm = 4\n[grid]\nscheme = ['k-sync']\nK = []", "K"),
    "value outside its domain": ("", "[grid]\nscheme = ['sync']\nm = [4, 0]", "m"),
    "bad delay": ("delay", "[base]\ndelay = 'exp(rate=-1)'\n[grid]\nscheme = ['sync']\nm = [4]", "delay"),
    "unknown scheme": ("", "[grid]\nscheme = ['sync', 'fast']\nm = [4]", "scheme"),
    "list in base": ("", "[base]\nm = [4]\n[grid]\nscheme = ['sync']", "m"),
    "value in grid": ("", "[base]\nscheme = 'sync'\n[grid]\nm = 4", "m"),
    "repeated value": ("", "[grid]\nscheme = ['sync']\nm = [4, 4.0]", "m"),
    "seed in grid": ("", "[grid]\nscheme = ['sync']\nm = [4]\nseed = [1, 2]", "seed"),
    "no scheme": ("", "[grid]\nm = [4]", "scheme"),
    "no point can run": ("", "[base]\nslow = 1\nslow_fraction = 0.1\nslowdown = 2\n[grid]\nscheme = ['sync']\n"
                             "m = [4]", "slow_fraction"),
    "bad trace mode": ("", "[base]\ntrace_mode = 'shuffle'\n[grid]\nscheme = ['sync']\nm = [4]", "trace_mode"),
    "bad iterations": ("", "[base]\niterations = 1\n[grid]\nscheme = ['sync']\nm = [4]", "iterations"),
}


def _grid_text(case):
    drop, body, _ = case
    head = "seed = 1\n[compute]\nruntime = true\n"
    delay = "" if drop == "delay" else "delay = 'exp(rate=1)'\n"
    if "[base]" in body:
        body = body.replace("[base]\n", "[base]\n" + delay, 1)
    else:
        body = "[base]\n" + delay + body
    return head + body


def _refused(tmp_path, capsys, text, *extra):
    grid = _write(tmp_path, text)
    out = tmp_path / "results.parquet"
    code = cli.main(["sweep", str(grid), "--out", str(out), "--local-workers", "0", *extra])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.toml"], "nothing may be written"
    return err


@pytest.mark.parametrize("case", BAD_GRIDS.values(), ids=BAD_GRIDS.keys())
def test_bad_grids_exit_2_naming_the_key_before_writing_anything(tmp_path, capsys, case):
    err = _refused(tmp_path, capsys, _grid_text(case))
    assert err.startswith(f"distsgd: error: {case[2]}:"), err


ERROR_TABLE = "eta = 0.05, L = 2, mu = 0.5, sigma2 = 1, b = 1, f0 = 1, dim = 4, time = 10, replicas = 8, eps = 0.2"


@pytest.mark.parametrize("text, key", [
    ("seed = 1\n[grid]\nscheme = ['sync']\nm = [4]\n[base]\ndelay = 'exp(rate=1)'", "compute"),
    ("[compute]\nruntime = true\n[grid]\nscheme = ['sync']", "seed"),
    ("seed = 1\nseeds = 2\n[compute]\nruntime = true", "seeds"),
    ("seed = 1\n[compute]\nruntime = 'yes'\n[grid]\nscheme = ['sync']", "runtime"),
    ("seed = 1\n[compute]\nerror = { " + ERROR_TABLE.replace("eta = 0.05", "eta = -1")
     + " }\n[grid]\nscheme = ['sync']", "error.eta"),
    ("seed = 1\n[compute]\nerror = { " + ERROR_TABLE.replace(", eps = 0.2", "") + " }\n[grid]\nscheme = ['sync']",
     "error.eps"),
    ("seed = 1\n[compute]\nerror = { " + ERROR_TABLE + ", rho = 1 }\n[grid]\nscheme = ['sync']", "error.rho"),
    ("seed = 1\n[compute\nruntime = true", "grid"),
], ids=["no compute", "no seed", "unknown top-level key", "runtime not a bool", "error value", "error key missing",
        "error key unknown", "not TOML"])
def test_bad_files_exit_2_naming_the_key(tmp_path, capsys, text, key):
    err = _refused(tmp_path, capsys, text)
    assert err.startswith(f"distsgd: error: {key}:"), err


def test_grid_size_caps(tmp_path, capsys):
    big = "seed = 1\n[compute]\nruntime = true\n[base]\ndelay = 'exp(rate=1)'\nscheme = 'k-batch-sync'\n[grid]\n" \
          f"m = {list(range(1, 102))}\nK = {list(range(1, 101))}\n"
    assert load_grid(_write(tmp_path, big, "other.toml")).count() == 10_100 > limits.SWEEP_CONFIRM_POINTS
    (tmp_path / "other.toml").unlink()
    err = _refused(tmp_path, capsys, big)
    assert err.startswith("distsgd: error: grid:") and "--yes" in err
    assert load_grid(tmp_path / "grid.toml").check_size(yes=True) == 10_100
    huge = big.replace("range(1, 101)", "range(1, 10_001)").replace(f"K = {list(range(1, 101))}",
                                                                     f"K = {list(range(1, 10_001))}")
    assert load_grid(_write(tmp_path, huge)).count() > limits.SWEEP_MAX_POINTS
    err = _refused(tmp_path, capsys, huge, "--yes")
    assert err.startswith("distsgd: error: grid:") and "SWEEP_MAX_POINTS" in err


def test_an_unreachable_scheduler_exits_2_after_the_grid_is_checked(tmp_path, capsys, monkeypatch):
    from distsgd.sweeps import run as sweep_run

    monkeypatch.setattr(sweep_run, "CONNECT_SECONDS", 0.5)
    text = _grid_text(BAD_GRIDS["unknown key in grid"])  # a bad grid: named first, nothing tried
    grid = _write(tmp_path, text)
    out = tmp_path / "r.parquet"
    assert cli.main(["sweep", str(grid), "--out", str(out), "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert capsys.readouterr().err.startswith("distsgd: error: mm:")
    _write(tmp_path, text.replace("mm = [4]", "m = [4]"))
    assert cli.main(["sweep", str(grid), "--out", str(out), "--scheduler", "tcp://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("distsgd: error: scheduler: cannot connect") and len(err.splitlines()) == 1
    assert not out.exists()


def test_bad_options_exit_2(tmp_path, capsys):
    text = _grid_text(BAD_GRIDS["unknown key in grid"]).replace("mm = [4]", "m = [4]")
    assert "local_workers" in _refused(tmp_path, capsys, text, "--local-workers", "-1")
    assert "task_seconds" in _refused(tmp_path, capsys, text, "--task-seconds", "0")
    assert cli.main(["sweep", str(tmp_path / "grid.toml"), "--out", str(tmp_path / "r.parquet"),
                     "--local-workers", "0", "--scheduler", "tcp://127.0.0.1:1"]) == 2  # one or the other
    assert "not allowed with" in capsys.readouterr().err
    assert not (tmp_path / "r.parquet").exists()
    assert cli.main(["sweep", str(tmp_path / "nowhere.toml"), "--out", str(tmp_path / "r.parquet")]) == 2
    assert capsys.readouterr().err.startswith("distsgd: error: grid: cannot read")
    with pytest.raises(distsgd.ParameterError) as exc:  # the API: one place to run, too
        distsgd.sweep(tmp_path / "grid.toml", scheduler="tcp://127.0.0.1:1", local_workers=0)
    assert exc.value.parameter == "local_workers"


VALUES_GRID = {
    "seed": 2024,
    "base": {"m": 6, "iterations": 4000},
    "grid": {"scheme": ["k-sync", "k-batch-async"], "K": [3], "delay": ["exp(rate=1)", "pareto(xm=1, alpha=2.5)"],
             "slow": [0, 2]},
    "compute": {"runtime": True},
}


def _source(row):
    """The point's cluster, built here through the public API from the row's parameters."""
    return distsgd.make_cluster(m=int(row.m), delay=distsgd.parse_delay(row.delay), slow=int(row.slow),
                                slowdown=float(row.slowdown))


def test_each_runtime_row_is_the_public_api_at_the_points_own_seed():
    grid = {**VALUES_GRID, "base": {**VALUES_GRID["base"], "slowdown": 3.0}}
    df = distsgd.sweep(grid, local_workers=0)  # one task of all the points
    n = len(df)
    assert n == 8 and df["error"].isna().all()
    assert (df["cluster"] == "static").all() and sorted(set(df["slow"])) == [0, 2]
    children = np.random.SeedSequence(2024).spawn(n)
    for row in df.itertuples():
        scheme = distsgd.make_scheme(row.scheme, int(row.m), K=int(row.K))
        src = _source(row)
        est = distsgd.expected_runtime(scheme, src)
        assert row.analytic_kind == est.kind and row.analytic_method == est.method
        assert (np.isnan(row.analytic_value) and est.value is None) or row.analytic_value == est.value
        mc = distsgd.simulate_runtime(scheme, src, 4000, seed=children[row.point])
        assert (row.mc_mean, row.mc_ci_low, row.mc_ci_high) == (mc.mean, *mc.ci95), row.point
        assert row.mc_iterations == mc.iterations


def test_an_error_row_is_the_libraries_time_to_target_at_the_points_own_seed():
    eps = 0.15
    error = {"eta": 0.05, "L": 2, "mu": 0.5, "sigma2": 1, "b": 1, "f0": 1, "dim": 4, "time": 30,
             "replicas": 16, "eps": eps, "points": 61}
    df = distsgd.sweep({"seed": 5, "base": {"m": 4, "delay": "exp(rate=1)"},
                        "grid": {"scheme": ["k-sync", "async"], "K": [2]}, "compute": {"error": error}},
                       local_workers=0)
    assert df["iterations"].isna().all() and df["mc_mean"].isna().all()  # no runtime asked
    problem = Problem(eta=0.05, L=2, mu=0.5, sigma2=1, b=1, f0=1, dim=4)
    children = np.random.SeedSequence(5).spawn(len(df))
    for row in df.itertuples():
        scheme = distsgd.make_scheme(row.scheme, 4, K=None if np.isnan(row.K) else int(row.K))
        delay = distsgd.parse_delay("exp(rate=1)")
        sim = simulate_error(scheme, delay, problem, 30, 61, 16, children[row.point])
        st = simulated_time_to_target(sim, eps)
        assert (row.time_to_target, row.time_to_target_low, row.time_to_target_high) == (st.value, st.low, st.high)
        gamma, p0 = (None, None) if scheme.fresh else (sim.gamma_measured, sim.fresh_fraction)
        bt = bound_time_to_target(scheme, delay, problem, eps, gamma, p0, seed=children[row.point])
        assert row.bound_note == bt.source and (row.bound_time_to_target == bt.value
                                                or (bt.value is None and np.isnan(row.bound_time_to_target)))
        assert row.final_error == sim.mean[-1]
    assert np.isfinite(df["time_to_target"]).all()


def test_a_problem_row_is_the_librarys_sgd_on_that_data_set_at_the_points_own_seed():
    """The grid takes ``problem`` and ``lam`` (DESIGN §9): a point on breast cancer is SGD on
    the set built with its λ, as problem_error_curve gives it at the point's stream (times to ε
    and to the test accuracy, the final accuracy); the quadratic's keys are not needed."""
    from distsgd.problems import builtin
    from distsgd.records import problem_error_curve
    error = {"eta": 0.2, "b": 4, "time": 20, "replicas": 8, "eps": 0.1, "points": 21, "target_accuracy": 0.9}
    df = distsgd.sweep({"seed": 3, "base": {"m": 4, "delay": "exp(rate=1)", "problem": "logreg:breast_cancer"},
                        "grid": {"scheme": ["sync", "async"], "lam": [0.01, 0.1]}, "compute": {"error": error}},
                       local_workers=0)
    assert len(df) == 4 and set(df["lam"]) == {0.01, 0.1} and df["error"].isna().all()
    children = np.random.SeedSequence(3).spawn(len(df))
    for row in df.itertuples():
        pb = builtin("logreg:breast_cancer", lam=row.lam)
        c = problem_error_curve(distsgd.make_scheme(row.scheme, 4), distsgd.parse_delay("exp(rate=1)"), pb, 0.2, 4,
                                20, 21, 8, children[row.point], eps=0.1, target_accuracy=0.9)
        acc = c.accuracy_target
        assert (row.time_to_accuracy, row.time_to_accuracy_low, row.time_to_accuracy_high) == (acc.value, acc.low,
                                                                                                acc.high)
        assert row.time_to_target == c.simulated_target.value and row.final_error == c.simulated.mean[-1]
        assert row.final_test_accuracy == c.simulated.metrics["test_accuracy"][0][-1]
    assert (df["final_test_accuracy"] > 0.9).all()


@pytest.mark.parametrize("problem, extra, key", [
    ("'logreg:breast_cancer'", ", L = 2", "error.L"),          # a quadratic key without a quadratic point
    ("['quadratic', 'logreg:digits']", "", "error.L"),         # a quadratic point without its keys
    ("'quadratic'", ", L = 2, mu = 0.5, sigma2 = 1, f0 = 1, dim = 4, target_accuracy = 0.9", "error.target_accuracy"),
    ("'logreg:breast_cancer'\nlam = [0.01]", "", None),       # λ in [base]: one value
    ("'logreg:nothing_here.csv'", "", "problem"),             # no such file
    ("'logistic'", "", "problem"),
], ids=["quadratic key", "quadratic keys missing", "accuracy on the quadratic", "lam listed in base", "no file",
        "unknown problem"])
def test_a_grids_problem_keys_are_checked(tmp_path, capsys, problem, extra, key):
    where = "grid" if problem.startswith("[") else "base"
    text = (f"seed = 1\n[compute]\nerror = {{ eta = 0.1, b = 2, time = 5, replicas = 4, eps = 0.1{extra} }}\n"
            f"[{where}]\nscheme = {'[' if where == 'grid' else ''}'sync'{']' if where == 'grid' else ''}\n"
            f"problem = {problem}\n")
    if where == "grid":
        text = text.replace("[grid]\n", "[base]\ndelay = 'exp(rate=1)'\n[grid]\n")
    else:
        text += "delay = 'exp(rate=1)'\n"
    err = _refused(tmp_path, capsys, text)
    assert err.startswith(f"distsgd: error: {key or 'lam'}:"), err


def test_lam_is_refused_beside_the_quadratic(tmp_path, capsys):
    text = ("seed = 1\n[compute]\nerror = { " + ERROR_TABLE + " }\n[base]\ndelay = 'exp(rate=1)'\nlam = 0.1\n"
            "[grid]\nscheme = ['sync']\nproblem = ['quadratic', 'logreg:breast_cancer']\n")
    err = _refused(tmp_path, capsys, text)
    assert err.startswith("distsgd: error: lam:") and "quadratic" in err, err


def test_cli_summary_progress_and_refusals_of_an_existing_file(tmp_path, capsys):
    grid = _write(tmp_path, RUNTIME_GRID.replace("iterations = 3000", "iterations = 500"))
    out = tmp_path / "r.parquet"
    assert cli.main(["sweep", str(grid), "--out", str(out), "--local-workers", "0", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""  # quiet with --json
    summary = json.loads(captured.out)
    assert {k: summary[k] for k in ("points", "done", "computed", "errors", "out")} == \
        {"points": 20, "done": 20, "computed": 20, "errors": 1, "out": str(out)}
    assert summary["seconds"] > 0 and summary["workers"] == "serial"
    first = pd.read_parquet(out)
    # an existing file is not overwritten; --resume of a complete file computes nothing
    assert cli.main(["sweep", str(grid), "--out", str(out), "--local-workers", "0", "--json"]) == 2
    assert capsys.readouterr().err.startswith("distsgd: error: out:")
    assert cli.main(["sweep", str(grid), "--out", str(out), "--local-workers", "0", "--resume"]) == 0
    captured = capsys.readouterr()
    assert "0 computed now" in captured.out and "point" in captured.err  # the progress bar
    assert pd.read_parquet(out).equals(first)
    # another grid's file is not resumed
    other = _write(tmp_path, RUNTIME_GRID.replace("seed = 7", "seed = 8"), "other.toml")
    assert cli.main(["sweep", str(other), "--out", str(out), "--local-workers", "0", "--resume"]) == 2
    assert capsys.readouterr().err.startswith("distsgd: error: resume:")
    assert pd.read_parquet(out).equals(first)


def test_a_trace_and_worker_groups_give_the_points_m(tmp_path):
    times = np.random.default_rng(0).exponential(1.0, size=(3, 40)) + 0.1
    trace = tmp_path / "trace.csv"
    pd.DataFrame(times.T, columns=["w0", "w1", "w2"]).to_csv(trace, index=False)
    grid = {"seed": 3, "base": {"iterations": 600, "scheme": "sync"},
            "grid": {"trace": [str(trace)], "trace_mode": ["replay", "pooled"]}, "compute": {"runtime": True}}
    df = distsgd.sweep(grid, local_workers=0, out=tmp_path / "r.parquet")
    assert df["m"].tolist() == [3, 3] and df["cluster"].tolist() == ["trace", "trace"]
    assert df["trace_mode"].tolist() == ["replay", "pooled"] and df["error"].isna().all()
    assert df["analytic_value"].iloc[0] == pytest.approx(times.max(axis=0).mean(), rel=1e-12)  # replay: exact
    assert pd.read_parquet(tmp_path / "r.parquet").equals(df)  # what the API returns is what the file holds
    assert distsgd.sweep(grid, local_workers=0, out=tmp_path / "r.parquet", resume=True).equals(df)
    pd.DataFrame(times.T * 2, columns=["w0", "w1", "w2"]).to_csv(trace, index=False)  # the file changes
    with pytest.raises(distsgd.ParameterError) as exc:
        distsgd.sweep(grid, local_workers=0, out=tmp_path / "r.parquet", resume=True)
    assert exc.value.parameter == "resume"
    df = distsgd.sweep({"seed": 3, "base": {"iterations": 600, "workers": "2*exp(rate=1) + 1*exp(rate=0.5)"},
                        "grid": {"scheme": ["sync", "async"]}, "compute": {"runtime": True}}, local_workers=0)
    assert df["m"].tolist() == [3, 3] and (df["cluster"] == "groups").all()
    assert df["analytic_value"].iloc[1] == pytest.approx(1 / (1 + 1 + 0.5))


def test_the_readme_grid_and_the_example_grids_are_valid(tmp_path):
    root = Path(__file__).resolve().parent.parent
    [readme] = re.findall(r"```toml\n(.*?)```", (root / "README.md").read_text(encoding="utf-8"), flags=re.S)
    grid = load_grid(_write(tmp_path, readme))
    # (sync 3 + k-sync 9 + async 3 + k-batch-async 9) × 2 replicates
    assert grid.count() == 48 and grid.runtime and grid.error is not None and grid.error.eps == 0.05
    assert load_grid(root / "examples" / "sweep-runtime.toml").count() == 2 * (3 + 9 + 3 + 9)
    assert load_grid(root / "examples" / "sweep-error.toml").count() == 2 * 4 * 2

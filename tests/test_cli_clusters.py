"""The command line on clusters (DESIGN §7): the straggler flags, the JSON ``cluster`` field,
traces with a column mapping, and bad combinations exiting 2 with one line naming the parameter."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.test_cli import cli as run  # main() in a kept child process: no interpreter a call


def write_pai(path, t: np.ndarray, prefix: str):  # type: ignore[no-untyped-def]
    """Times t[i, j] as Alibaba PAI's layout: an unnamed index column, then worker, gpu, time (the
    step) and batch_time_norm (the duration), step by step; the path."""
    lines = [",worker,gpu,time,batch_time_norm"]
    for k, (j, i) in enumerate((j, i) for j in range(t.shape[1]) for i in range(t.shape[0])):
        lines.append(f"{k},{prefix}{i},gpu{i},{j},{float(t[i, j])!r}")
    path.write_text("\n".join(lines) + "\n")
    return path


BASE = ("runtime", "--scheme", "k-sync", "--K", "5", "--iterations", "4000", "--seed", "3", "--json")


@pytest.mark.parametrize("flags, cluster", [
    (("--m", "8", "--delay", "exp(rate=1)"), {"kind": "iid", "delay": "exp(rate=1)"}),
    (("--m", "8", "--delay", "exp(rate=1)", "--slow", "2", "--slowdown", "3"),
     {"kind": "static", "delay": "exp(rate=1)", "slow": 2, "slowdown": 3.0}),
    (("--m", "8", "--delay", "exp(rate=1)", "--slow-fraction", "0.2", "--persistence", "0.9", "--slowdown", "5"),
     {"kind": "markov", "delay": "exp(rate=1)", "slow_fraction": 0.2, "persistence": 0.9, "slowdown": 5.0}),
    (("--workers", "6*exp(rate=1) + 2*exp(rate=0.5)"),
     {"kind": "groups", "workers": "6*exp(rate=1) + 2*exp(rate=0.5)"}),
])
def test_json_has_the_cluster_and_m_is_every_worker(flags: tuple, cluster: dict) -> None:
    code, out, err = run(*BASE, *flags)
    assert code == 0, err
    d = json.loads(out)
    assert d["m"] == 8 and d["cluster"] == cluster
    assert d["delay"] == cluster.get("delay")
    lo, hi = d["monte_carlo"]["ci95"]
    assert lo <= d["monte_carlo"]["mean"] <= hi and d["analytic"]["kind"] == "numerical" or cluster["kind"] == "iid"


def test_an_iid_cluster_gives_the_numbers_of_the_plain_delay() -> None:
    a = json.loads(run(*BASE, "--m", "8", "--delay", "exp(rate=1)")[1])
    b = json.loads(run(*BASE, "--m", "8", "--delay", "exp(rate=1)", "--slow", "0", "--slowdown", "4")[1])
    assert a["monte_carlo"] == b["monte_carlo"] and a["analytic"] == b["analytic"]


def test_a_pai_shaped_trace_loads_with_the_documented_mapping(tmp_path) -> None:
    """Alibaba PAI's layout: `,worker,gpu,time,batch_time_norm`; replay sync is exactly the mean
    over the steps of the slowest worker's time (computed here)."""
    t = np.random.default_rng(4).uniform(100, 900, (4, 30))
    path = write_pai(tmp_path / "pai.csv", t, "w")
    code, out, err = run("runtime", "--scheme", "sync", "--trace", str(path), "--trace-columns",
                         "worker=worker,step=time,duration=batch_time_norm", "--iterations", "300", "--seed", "1",
                         "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["m"] == 4 and d["cluster"]["kind"] == "trace" and d["cluster"]["mode"] == "replay"
    assert d["analytic"]["kind"] == "exact"
    assert d["analytic"]["value"] == pytest.approx(t.max(axis=0).mean(), rel=1e-12)
    code, _, err = run("runtime", "--scheme", "sync", "--trace", str(path), "--iterations", "300")
    assert code == 2 and "--trace-columns" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("flags, name", [
    (("--m", "8", "--delay", "exp(rate=1)", "--slow", "9", "--slowdown", "2"), "slow"),
    (("--m", "8", "--delay", "exp(rate=1)", "--slow-fraction", "1", "--slowdown", "2"), "slow_fraction"),
    (("--m", "8", "--delay", "exp(rate=1)", "--slow-fraction", "-0.1", "--slowdown", "2"), "slow_fraction"),
    (("--m", "8", "--delay", "exp(rate=1)", "--slow", "1"), "slowdown"),
    (("--m", "8", "--delay", "exp(rate=1)", "--slow", "1", "--slowdown", "0.5"), "slowdown"),
    (("--m", "8", "--delay", "exp(rate=1)", "--persistence", "0.5"), "persistence"),
    (("--m", "8", "--delay", "exp(rate=1)", "--slow", "1", "--slow-fraction", "0.1", "--slowdown", "2"),
     "slow_fraction"),
    (("--workers", "2*exp(rate=1)", "--m", "3"), "m"),
    (("--workers", "2*exp(rate=1)", "--delay", "exp(rate=1)"), "delay"),
    (("--m", "8", "--trace", "x.csv", "--slow", "1", "--slowdown", "2"), "slow"),
    (("--m", "8", "--delay", "exp(rate=1)", "--trace-mode", "pooled"), "trace_mode"),
    (("--m", "8",), "delay"),
])
def test_bad_combinations_exit_2_naming_the_parameter(flags: tuple, name: str) -> None:
    code, out, err = run("runtime", "--scheme", "sync", *flags)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and f"error: {name}:" in err, err


def test_a_trace_m_must_match(tmp_path) -> None:
    path = tmp_path / "w.csv"
    path.write_text("a,b,c\n1,2,3\n2,3,4\n")
    code, _, err = run("runtime", "--scheme", "sync", "--m", "4", "--trace", str(path))
    assert code == 2 and "error: m:" in err
    code, out, err = run("runtime", "--scheme", "async", "--trace", str(path), "--trace-mode", "per-worker",
                         "--iterations", "2000", "--seed", "1", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["m"] == 3 and d["cluster"]["mode"] == "per-worker"
    assert d["analytic"]["value"] == pytest.approx(1 / (1 / 1.5 + 1 / 2.5 + 1 / 3.5), rel=1e-12)


def test_error_command_takes_a_cluster() -> None:
    code, out, err = run("error", "--scheme", "async", "--m", "6", "--delay", "exp(rate=1)", "--slow", "2",
                         "--slowdown", "3", "--eta", "0.05", "--L", "2", "--mu", "0.5", "--sigma2", "1", "--b", "1",
                         "--f0", "1", "--dim", "5", "--time", "10", "--points", "5", "--replicas", "10", "--seed", "1",
                         "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["cluster"] == {"kind": "static", "delay": "exp(rate=1)", "slow": 2, "slowdown": 3.0}
    assert d["simulated"]["staleness_mean"] > 0


def _planted_trace(path):  # type: ignore[no-untyped-def]
    """A long file of 4 workers × 30 steps with planted faults: two repeated (worker, step) rows
    (a different time: the first must be kept), three (worker, step) pairs left out (at two
    steps) and a step only one worker has.  The path, and the counts and the replay's sync E[T]
    as the test counts them from the rows it wrote."""
    rng = np.random.default_rng(7)
    rows = [(f"w{i}", str(j), float(rng.uniform(1, 2))) for j in range(30) for i in range(4)]
    rows = [r for r in rows if (r[0], r[1]) not in {("w1", "7"), ("w2", "12"), ("w3", "12")}]
    rows.insert(40, ("w0", "3", 50.0))  # repeats: after their first rows, with other times
    rows.append(("w2", "20", 60.0))
    rows.append(("w3", "99", 1.5))  # a step of one worker
    path.write_text("worker,step,duration\n" + "".join(f"{w},{s},{t!r}\n" for w, s, t in rows))
    first: dict[tuple[str, str], float] = {}
    for w, s, t in rows:
        first.setdefault((w, s), t)
    workers, steps = {w for w, _ in first}, {s for _, s in first}
    complete = [s for s in steps if all((w, s) in first for w in workers)]
    counts = {"duplicates": len(rows) - len(first), "dropped_steps": len(steps) - len(complete),
              "missing": len(workers) * len(steps) - len(first)}
    sync = float(np.mean([max(first[w, s] for w in workers) for s in complete]))
    return path, counts, len(complete), sync


def test_runtime_json_cluster_counts_what_reading_the_trace_left_out(tmp_path) -> None:
    path, counts, complete, sync = _planted_trace(tmp_path / "faulty.csv")
    assert counts == {"duplicates": 2, "dropped_steps": 3, "missing": 6}  # the plan, as counted
    code, out, err = run("runtime", "--scheme", "sync", "--trace", str(path), "--iterations", "300", "--seed", "1",
                         "--json")
    assert code == 0, err
    cluster = json.loads(out)["cluster"]
    assert {k: cluster.get(k) for k in counts} == counts
    assert cluster["kind"] == "trace" and cluster["workers"] == 4 and cluster["steps"] == complete
    assert json.loads(out)["analytic"]["value"] == pytest.approx(sync, rel=1e-12)  # the first of a repeat kept
    code, text, err = run("runtime", "--scheme", "sync", "--trace", str(path), "--iterations", "300", "--seed", "1")
    assert code == 0, err
    assert (f"{complete} complete steps ({counts['dropped_steps']} dropped, {counts['duplicates']} duplicates, "
            f"{counts['missing']} missing)") in text


def test_error_json_cluster_is_the_same_object_as_runtime(tmp_path) -> None:
    path, counts, _, _ = _planted_trace(tmp_path / "faulty.csv")
    code, out, err = run("error", "--scheme", "sync", "--trace", str(path), "--eta", "0.05", "--L", "2", "--mu",
                         "0.5", "--sigma2", "1", "--b", "1", "--f0", "1", "--dim", "5", "--time", "10", "--points",
                         "5", "--replicas", "4", "--seed", "1", "--json")
    assert code == 0, err
    cluster = json.loads(out)["cluster"]
    assert {k: cluster.get(k) for k in counts} == counts
    code, out, err = run("runtime", "--scheme", "sync", "--trace", str(path), "--iterations", "300", "--seed", "1",
                         "--json")
    assert code == 0, err
    assert json.loads(out)["cluster"] == cluster

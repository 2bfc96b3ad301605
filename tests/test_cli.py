"""The command line: JSON contract (DESIGN §5), human output, and one-line errors with exit 2."""

import json
import subprocess
import sys

import pytest



def run(*args):
    p = subprocess.run([sys.executable, "-m", "distsgd", *args], capture_output=True, text=True,
                       timeout=120, cwd=str(__import__("pathlib").Path(__file__).parent.parent))
    return p.returncode, p.stdout, p.stderr


def test_runtime_json_contract():
    code, out, err = run("runtime", "--scheme", "k-sync", "--m", "20", "--K", "10", "--delay",
                         "pareto(xm=1, alpha=2.5)", "--iterations", "20000", "--seed", "1", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["scheme"] == "k-sync" and d["m"] == 20 and d["K"] == 10 and d["H"] is None
    assert d["delay"] == "pareto(xm=1, alpha=2.5)"
    assert set(d["analytic"]) >= {"value", "kind", "method"} and d["analytic"]["kind"] == "exact"
    mc = d["monte_carlo"]
    assert mc["iterations"] == 20000 and mc["seed"] == 1 and len(mc["ci95"]) == 2
    assert mc["ci95"][0] <= mc["mean"] <= mc["ci95"][1]
    # same seed, same numbers
    assert json.loads(run("runtime", "--scheme", "k-sync", "--m", "20", "--K", "10", "--delay",
                          "pareto(xm=1, alpha=2.5)", "--iterations", "20000", "--seed", "1",
                          "--json")[1]) == d


def test_runtime_json_null_value_when_infinite():
    code, out, _ = run("runtime", "--scheme", "sync", "--m", "4", "--delay", "pareto(xm=1, alpha=0.9)",
                       "--iterations", "1000", "--seed", "2", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["analytic"]["kind"] == "infinite" and d["analytic"]["value"] is None
    assert "note" in d["monte_carlo"]


def test_runtime_human_output_and_random_seed_is_printed():
    code, out, _ = run("runtime", "--scheme", "async", "--m", "8", "--delay", "exp(rate=1)",
                       "--iterations", "5000")
    assert code == 0
    assert "analytic" in out and "monte carlo" in out and "seed" in out and "staleness" in out


def test_local_sgd_json_has_h():
    code, out, err = run("runtime", "--scheme", "local-sgd", "--m", "4", "--H", "3", "--comm-delay", "0.5",
                         "--delay", "uniform(low=1, high=2)", "--iterations", "2000", "--seed", "3", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["H"] == 3 and d["K"] is None and d["comm_delay"] == 0.5


@pytest.mark.parametrize("args, names", [
    (["--scheme", "k-sync", "--m", "5", "--K", "10", "--delay", "exp(rate=1)"], "K"),
    (["--scheme", "sync", "--m", "4", "--delay", "exp(rate=-1)"], "rate"),
    (["--scheme", "sync", "--m", "4", "--delay", "exp(rate=0)"], "rate"),
    (["--scheme", "sync", "--m", "0", "--delay", "exp(rate=1)"], "m"),
    (["--scheme", "sync", "--m", "abc", "--delay", "exp(rate=1)"], "--m"),
    (["--scheme", "sync", "--m", "4", "--delay", "gamma(k=2)"], "gamma"),
    (["--scheme", "warp", "--m", "4", "--delay", "exp(rate=1)"], "warp"),
    (["--scheme", "sync", "--m", "4", "--delay", "pareto(xm=1"], "pareto(xm=1"),
    (["--scheme", "sync", "--m", "4", "--delay", "exp(rate=1)", "--iterations", "0"], "iterations"),
    (["--scheme", "sync", "--m", "4", "--delay", "exp(rate=1)", "--seed", "-4"], "seed"),
    (["--scheme", "sync", "--m", "4"], "--delay"),
    (["--scheme", "local-sgd", "--m", "4", "--delay", "exp(rate=1)"], "H"),
])
def test_runtime_bad_input_exits_2_with_one_line(args, names):
    code, out, err = run("runtime", *args)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert names in lines[0]
    assert "Traceback" not in err


ERROR_ARGS = ["--eta", "0.1", "--L", "2", "--mu", "0.5", "--sigma2", "1", "--b", "1", "--f0", "1",
              "--dim", "5", "--time", "10", "--points", "11", "--replicas", "50", "--seed", "4"]


def test_error_json_contract_fresh_scheme():
    code, out, err = run("error", "--scheme", "k-sync", "--m", "8", "--K", "4", "--delay", "exp(rate=1)",
                         *ERROR_ARGS, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert len(d["time"]) == 11 and d["time"][0] == 0 and d["time"][-1] == 10
    assert len(d["bound"]) == 11 and d["bound_kind"] == "upper_bound"
    s = d["simulated"]
    assert len(s["mean"]) == len(s["ci95_low"]) == len(s["ci95_high"]) == 11 and s["replicas"] == 50
    assert all(lo <= m <= hi for lo, m, hi in zip(s["ci95_low"], s["mean"], s["ci95_high"]))
    assert len(d["exact"]) == 11


def test_error_json_async_reports_staleness_and_uses_measured_p0():
    code, out, err = run("error", "--scheme", "async", "--m", "4", "--delay", "exp(rate=1)",
                         *ERROR_ARGS, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["simulated"]["staleness_mean"] > 0
    assert d["bound_params"]["p0"] == pytest.approx(d["simulated"]["fresh_fraction"])
    assert d["exact"] is None


@pytest.mark.parametrize("change, name", [
    (("--eta", "0"), "eta"), (("--eta", "-1"), "eta"), (("--mu", "3"), "mu"), (("--sigma2", "-1"), "sigma2"),
    (("--dim", "0"), "dim"), (("--points", "1"), "points"), (("--replicas", "100000"), "replicas"),
    (("--time", "-2"), "time"), (("--b", "0"), "b"),
])
def test_error_bad_input_exits_2(change, name):
    args = list(ERROR_ARGS)
    i = args.index(change[0])
    args[i + 1] = change[1]
    code, out, err = run("error", "--scheme", "sync", "--m", "4", "--delay", "exp(rate=1)", *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and name in err and "Traceback" not in err

"""The command line: JSON contract (DESIGN §5), human output, and one-line errors with exit 2."""

import json
import subprocess
import sys

import pytest


def _limit_memory():
    # the CLI promises ≤ 1 GiB per call; the interpreter with numpy/scipy takes ~350 MB of
    # address space: a call that tries to allocate more fails here instead of swapping
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (1536 * 2**20, 1536 * 2**20))


def run(*args):
    env = dict(__import__("os").environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-m", "distsgd", *args], capture_output=True, text=True,
                       timeout=120, cwd=str(__import__("pathlib").Path(__file__).parent.parent),
                       preexec_fn=_limit_memory, env=env)
    return p.returncode, p.stdout, p.stderr


# ``cli(*args)``: as run(), but main(args) is called in a child process kept for the next calls
# (an interpreter each took 3–10 s, most of a refusal's time); the same memory limit and
# environment.  The tests of ``python -m distsgd`` itself, and of the same numbers from two
# processes, use run().
_SERVE = r"""
import contextlib, io, json, sys, traceback
from distsgd.cli import main
for line in sys.stdin:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(json.loads(line))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            traceback.print_exc()
            code = 1
    print(json.dumps([code, out.getvalue(), err.getvalue()]), flush=True)
"""
_child = []  # the running child, if any


def cli(*args, timeout=120):
    """(exit code, stdout, stderr) of ``main(args)`` in the kept child; a call that kills it or
    takes more than ``timeout`` s gives (None, "", why), and the next call starts a new one."""
    import atexit
    import os
    import select
    if not _child or _child[0].poll() is not None:
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
        _child[:] = [subprocess.Popen([sys.executable, "-c", _SERVE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True, cwd=str(__import__("pathlib").Path(
                                          __file__).parent.parent), preexec_fn=_limit_memory, env=env)]
        atexit.register(_child[0].kill)
    child = _child[0]
    child.stdin.write(json.dumps(list(args)) + "\n")
    child.stdin.flush()
    if not select.select([child.stdout], [], [], timeout)[0]:
        child.kill()
        child.wait()
        return None, "", f"main{args} took more than {timeout} s"
    line = child.stdout.readline()
    if not line:
        return None, "", f"main{args} killed the process: exit {child.wait()}"
    code, out, err = json.loads(line)
    return code, out, err


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
    code, out, _ = cli("runtime", "--scheme", "sync", "--m", "4", "--delay", "pareto(xm=1, alpha=0.9)",
                       "--iterations", "1000", "--seed", "2", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["analytic"]["kind"] == "infinite" and d["analytic"]["value"] is None
    assert "note" in d["monte_carlo"]


def test_runtime_human_output_and_random_seed_is_printed():
    code, out, _ = cli("runtime", "--scheme", "async", "--m", "8", "--delay", "exp(rate=1)",
                       "--iterations", "5000")
    assert code == 0
    assert "analytic" in out and "monte carlo" in out and "seed" in out and "staleness" in out


def test_local_sgd_json_has_h():
    code, out, err = cli("runtime", "--scheme", "local-sgd", "--m", "4", "--H", "3", "--comm-delay", "0.5",
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
    # issue 7: these exited 1 (OverflowError, MemoryError) or printed NaN, or never returned
    (["--scheme", "sync", "--m", "1000", "--delay", "exp(rate=1e-300)", "--iterations", "2"], "rate"),
    (["--scheme", "sync", "--m", "1", "--delay", "weibull(shape=1e-300, scale=1)", "--iterations", "2"], "shape"),
    (["--scheme", "sync", "--m", "4", "--delay", "exp(rate=1)", "--iterations", "1"], "iterations"),
    (["--scheme", "local-sgd", "--m", "100000", "--H", "10000", "--delay", "weibull(shape=2, scale=1)",
      "--iterations", "2"], "H"),
    (["--scheme", "k-batch-async", "--m", "10", "--K", "1000", "--delay", "exp(rate=1)",
      "--iterations", "10000000"], "iterations"),
    (["--scheme", "k-async", "--m", "100000", "--K", "2", "--delay", "exp(rate=1)", "--iterations", "2"], "m"),
    (["--scheme", "sync", "--m", "4", "--delay", "empirical(file=/dev/zero)"], "regular file"),
    (["--scheme", "sync", "--m", "4", "--delay", "exp(rate=1)", "--seed", "9223372036854775808"], "seed"),
    (["--scheme", "sync", "--m", "4", "--delay", "exp(rate=1)", "--seed", "1.5"], "seed"),
])
def test_runtime_bad_input_exits_2_with_one_line(args, names):
    code, out, err = cli("runtime", *args)
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
    assert all(lo <= m <= hi for lo, m, hi in zip(s["ci95_low"], s["mean"], s["ci95_high"], strict=True))
    # the model curve says what it is: exact in the SGD noise, averaged over simulated N(t),
    # with its standard error (issue 7: it used to be called "exact")
    model = d["exact_model"]
    assert "exact" not in d
    assert len(model["mean"]) == len(model["stderr"]) == 11 and model["paths"] >= 16
    assert "simulated timing paths" in model["method"]
    assert all(se >= 0 for se in model["stderr"]) and model["stderr"][0] == 0  # at t = 0 nothing is random


def test_error_json_async_reports_staleness_and_uses_measured_p0():
    code, out, err = cli("error", "--scheme", "async", "--m", "4", "--delay", "exp(rate=1)",
                         *ERROR_ARGS, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["simulated"]["staleness_mean"] > 0
    assert d["bound_params"]["p0"] == pytest.approx(d["simulated"]["fresh_fraction"])
    assert d["exact_model"] is None


@pytest.mark.parametrize("change, name", [
    (("--eta", "0"), "eta"), (("--eta", "-1"), "eta"), (("--mu", "3"), "mu"), (("--sigma2", "-1"), "sigma2"),
    (("--dim", "0"), "dim"), (("--points", "1"), "points"), (("--replicas", "100000"), "replicas"),
    (("--time", "-2"), "time"), (("--b", "0"), "b"),
])
def test_error_bad_input_exits_2(change, name):
    args = list(ERROR_ARGS)
    i = args.index(change[0])
    args[i + 1] = change[1]
    code, out, err = cli("error", "--scheme", "sync", "--m", "4", "--delay", "exp(rate=1)", *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and name in err and "Traceback" not in err


def test_trace_with_huge_values_exits_2_naming_the_line(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("1\n2\n1e308\n")
    code, out, err = cli("runtime", "--scheme", "sync", "--m", "4", "--delay", f"empirical(file={p})")
    assert code == 2 and out == "" and "line 3" in err and len(err.strip().splitlines()) == 1


def test_the_largest_seed_is_printed_exactly():
    seed = 2**63 - 1  # float(seed) == 2**63, outside the domain: the old check refused it
    code, out, err = cli("runtime", "--scheme", "async", "--m", "3", "--delay", "exp(rate=1)",
                         "--iterations", "500", "--seed", str(seed), "--json")
    assert code == 0, err
    assert json.loads(out)["monte_carlo"]["seed"] == seed


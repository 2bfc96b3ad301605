"""Record the numbers of the CLI, the Dask sweep (serial), the what-if table and the chart rows for
fixed seeds, so that a refactor that must not change them (issue 21) is checked against the values
the code gave before it.  Run once at the commit named in the output file, never to "fix" a failing
comparison: ``python -m tests.golden.make_golden`` writes ``tests/golden/numbers.json``.

The cases call only the public entry points (``distsgd.cli.main``, ``distsgd.sweep``,
``distsgd.whatif.what_if``, the chart-row builders through their public module), so the same
script runs before and after the modules move; :func:`cases` is shared with the test.
"""
from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).parent
OUT = HERE / "numbers.json"

CLI = [
    ["runtime", "--scheme", "k-sync", "--m", "20", "--K", "10", "--delay", "pareto(xm=1, alpha=2.5)",
     "--iterations", "4000", "--seed", "1", "--json"],
    ["runtime", "--scheme", "async", "--m", "8", "--delay", "pareto(xm=1, alpha=1.5)",
     "--iterations", "4000", "--seed", "2", "--json"],
    ["runtime", "--scheme", "k-batch-async", "--m", "8", "--K", "3", "--delay", "exp(rate=1)",
     "--slow", "2", "--slowdown", "4", "--iterations", "3000", "--seed", "3", "--json"],
    ["runtime", "--scheme", "local-sgd", "--m", "6", "--H", "3", "--comm-delay", "0.5",
     "--delay", "shifted_exp(shift=0.5, rate=2)", "--iterations", "2000", "--seed", "4", "--json"],
    ["error", "--scheme", "k-async", "--m", "8", "--K", "2", "--delay", "exp(rate=1)", "--eta", "0.05",
     "--L", "2", "--mu", "0.5", "--sigma2", "1", "--b", "1", "--f0", "1", "--dim", "4", "--time", "20",
     "--points", "6", "--replicas", "20", "--seed", "5", "--json"],
    ["error", "--scheme", "sync", "--m", "4", "--delay", "exp(rate=2)", "--eta", "0.05",
     "--L", "2", "--mu", "0.5", "--sigma2", "1", "--b", "1", "--f0", "1", "--dim", "4", "--time", "20",
     "--points", "6", "--replicas", "20", "--seed", "6", "--json"],
]

GRID = {"seed": 7, "base": {"delay": "exp(rate=1)", "m": 6, "iterations": 2000},
        "grid": {"scheme": ["sync", "k-sync", "async", "k-batch-async"], "K": [2, 4]},
        "compute": {"runtime": True,
                    "error": {"eta": 0.05, "L": 2, "mu": 0.5, "sigma2": 1, "b": 1, "f0": 1, "dim": 4,
                              "time": 20, "replicas": 10, "eps": 0.3}}}


def _plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return _plain(x.tolist())
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, float) and x != x:
        return "nan"
    return x


def cli_case(argv: list[str]) -> Any:
    from distsgd.cli import main
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0
    return json.loads(buf.getvalue())


def sweep_case() -> Any:
    import distsgd
    df = distsgd.sweep(GRID, local_workers=0, yes=True)
    keep = [c for c in df.columns if c not in ("elapsed_s", "host", "started", "finished")]
    return _plain(df[keep].to_dict("records"))


def whatif_case(budget: float = 3e8) -> Any:
    from distsgd.error import Problem
    from distsgd.traces import trace_from_times
    from distsgd.whatif import what_if
    t = np.random.default_rng(3).uniform(0.5, 1.5, (4, 200))
    t[-1] *= 3.0
    trace = trace_from_times(t)
    rows, skipped = what_if(trace, ["sync", "k-sync", "async", "k-async"], 2, 1,
                            stragglers=trace.stragglers(), seed=1,
                            problem=Problem(eta=0.05, L=2.0, mu=0.5, sigma2=1.0, b=1, f0=1.0, dim=10),
                            eps=0.05, iterations=3000, budget=budget)
    return _plain({"rows": rows, "skipped": skipped})


def chart_rows_case() -> Any:
    import importlib

    import distsgd
    mod = importlib.import_module("distsgd.curves" if importlib.util.find_spec("distsgd.curves")
                                  else "distsgd.curves")
    delay = distsgd.parse_delay("pareto(xm=1, alpha=1.5)")
    rows = mod.runtime_vs_K(["sync", "k-sync", "async", "k-batch-async"], 8, delay, [1, 4, 8],
                            budget=2e6, seed=9)
    return _plain(rows)


def cases() -> dict[str, Any]:
    out: dict[str, Any] = {" ".join(a): cli_case(a) for a in CLI}
    out["sweep"] = sweep_case()
    out["what-if"] = whatif_case()
    out["what-if, tight budget"] = whatif_case(budget=5e7)  # the budget split decides the run lengths
    out["runtime_vs_K"] = chart_rows_case()
    return _plain(out)


if __name__ == "__main__":
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                            cwd=HERE).stdout.strip()
    OUT.write_text(json.dumps({"recorded_at_commit": commit, "cases": cases()}, indent=1,
                              sort_keys=True, ensure_ascii=False) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes) at {commit}", file=sys.stderr)

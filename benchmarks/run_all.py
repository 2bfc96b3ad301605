"""Run every benchmark and print its table.

    python -m benchmarks.run_all            # full runs, write benchmarks/results/<name>.md
    python -m benchmarks.run_all --quick    # smoke runs, write benchmarks/results/<name>-quick.md

Every ``benchmarks/bench_*.py`` that has a ``main(argv)`` or ``run(...)`` entry is run as
``python -m benchmarks.<name> [--quick]`` in its own subprocess, one after the other (so they
do not compete for the CPU), from the repository root.  One failing benchmark does not stop
the others; the exit status is non-zero if any failed.  Each benchmark's stdout (its Markdown
table) is printed as it comes; its stderr is shown for the ones that failed.
"""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
ENTRY_POINTS = ("main", "run")


def has_entry_point(path: Path) -> bool:
    """Whether the module defines a top-level ``main`` or ``run`` function (read, not imported)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return True  # let the subprocess report the problem rather than hide the module
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in ENTRY_POINTS
               for node in tree.body)


def discover(only: list[str] | None = None) -> list[str]:
    """Module names of the runnable benchmarks, sorted: ["bench_app", "bench_runtime", …]."""
    names = [p.stem for p in sorted(HERE.glob("bench_*.py")) if has_entry_point(p)]
    if only:
        wanted = {n if n.startswith("bench_") else f"bench_{n}" for n in only}
        unknown = wanted - set(names)
        if unknown:
            raise SystemExit(f"no such benchmark: {', '.join(sorted(unknown))} (have {', '.join(names)})")
        names = [n for n in names if n in wanted]
    return names


def run_one(name: str, quick: bool, timeout: float | None) -> tuple[int, float, str]:
    """Run ``python -m benchmarks.<name>``; its exit code (124 on timeout), seconds, stderr tail."""
    cmd = [sys.executable, "-m", f"benchmarks.{name}"] + (["--quick"] if quick else [])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, errors="replace", start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        import signal
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        code = 124
        err += f"\n[run_all] timed out after {timeout:.0f} s"
    seconds = time.perf_counter() - t0
    if out:
        print(out.rstrip("\n"), flush=True)
    return code, seconds, err


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.run_all", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="pass --quick to every benchmark (smoke run)")
    p.add_argument("--only", nargs="+", metavar="NAME", help="run only these (e.g. app runtime)")
    p.add_argument("--timeout", type=float, default=None, help="seconds allowed per benchmark (default none)")
    args = p.parse_args(argv)

    names = discover(args.only)
    if not names:
        print("no benchmarks found in benchmarks/bench_*.py", file=sys.stderr)
        return 1
    summary: list[tuple[str, int, float]] = []
    for name in names:
        print(f"\n{'=' * 8} {name}{' --quick' if args.quick else ''} {'=' * 8}\n", flush=True)
        code, seconds, err = run_one(name, args.quick, args.timeout)
        summary.append((name, code, seconds))
        if code != 0:
            tail = "\n".join(err.rstrip().splitlines()[-40:])
            print(f"\n[run_all] {name} FAILED with exit code {code}; last lines of its stderr:\n{tail}",
                  file=sys.stderr, flush=True)

    print("\n| benchmark | result | seconds |\n|---|---|---:|")
    for name, code, seconds in summary:
        print(f"| {name} | {'ok' if code == 0 else f'FAILED (exit {code})'} | {seconds:.0f} |")
    failed = [n for n, c, _ in summary if c != 0]
    if failed:
        print(f"\n{len(failed)} of {len(summary)} benchmarks failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

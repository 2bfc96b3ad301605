"""Command line: ``python -m distsgd runtime …`` and ``python -m distsgd error …`` (DESIGN §5).

Bad input exits with status 2 and one line on stderr naming the parameter; nothing
prints a traceback (set ``DISTSGD_DEBUG=1`` to see one for an internal error).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any, Sequence

import numpy as np

from .params import ParameterError

__all__ = ["main", "build_parser"]


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (``distsgd runtime: --m: invalid int value``)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(f"{self.prog}: {message}")


def _finite(x: Any) -> Any:
    """JSON has no NaN/inf: map them to null."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _seed(text: str) -> int:
    """--seed: an integer read exactly (int(), not through a float)."""
    from .random import SEED
    try:
        return int(SEED.check(text, "seed"))
    except ParameterError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_scheme_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scheme", required=True, help="sync, k-sync, k-batch-sync, async, k-async, "
                   "k-batch-async or local-sgd")
    p.add_argument("--m", type=int, required=True, help="number of workers")
    p.add_argument("--K", type=int, default=None, help="gradients per update (k-* schemes)")
    p.add_argument("--H", type=int, default=None, help="local steps per round (local-sgd)")
    p.add_argument("--comm-delay", type=float, default=0.0, dest="comm_delay",
                   help="averaging time per round D (local-sgd)")
    p.add_argument("--delay", required=True, help="delay spec, e.g. 'exp(rate=1)', "
                   "'pareto(xm=1, alpha=2.5)', 'empirical(file=trace.csv)'")
    p.add_argument("--seed", type=_seed, default=None, help="random seed in [0, 2**63 − 1] "
                   "(default: fresh, and printed)")
    p.add_argument("--json", action="store_true", help="print JSON")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="distsgd", description="Stragglers and staleness in distributed SGD: "
                     "runtime per iteration and error against wall-clock time.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    rt = sub.add_parser("runtime", help="expected runtime per iteration: analytic and Monte Carlo")
    _add_scheme_args(rt)
    rt.add_argument("--iterations", type=int, default=100_000, help="Monte Carlo iterations")
    _add_error_parser(sub)
    return parser


def _add_error_parser(sub: Any) -> None:
    """The ``error`` sub-command, when the error model is available."""
    try:
        from . import sgd
    except ImportError:  # pragma: no cover - the error model ships with the package
        return
    sgd.add_cli_arguments(sub, _add_scheme_args)


def _resolve_seed(seed: int | None) -> int:
    """The seed to use and print: exactly the one given (an int, never through a float), or a
    fresh one."""
    from .random import SEED
    if seed is None:
        return int(np.random.SeedSequence().entropy % (2**63 - 1))
    return int(SEED.check(seed, "seed"))


def run_runtime(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from .analytic import expected_runtime
    from .delays import parse_delay
    from .montecarlo import simulate_runtime
    from .schemes import make_scheme

    scheme = make_scheme(args.scheme, args.m, K=args.K, H=args.H, comm_delay=args.comm_delay)
    delay = parse_delay(args.delay)
    seed = _resolve_seed(args.seed)
    est = expected_runtime(scheme, delay)
    mc = simulate_runtime(scheme, delay, args.iterations, seed=seed, keep_times=False)
    d = scheme.as_dict()
    out: dict[str, Any] = {
        "scheme": d["scheme"], "m": d["m"], "K": d["K"], "H": d["H"], "delay": str(delay),
        "analytic": {"value": _finite(est.value), "kind": est.kind, "method": est.method},
        "monte_carlo": {"mean": _finite(mc.mean), "ci95": [_finite(mc.ci95[0]), _finite(mc.ci95[1])],
                        "iterations": mc.iterations, "seed": seed},
    }
    if "comm_delay" in d:
        out["comm_delay"] = d["comm_delay"]
    if mc.staleness_mean is not None:
        out["monte_carlo"]["staleness_mean"] = mc.staleness_mean
        out["monte_carlo"]["fresh_fraction"] = mc.fresh_fraction
    if mc.note:
        out["monte_carlo"]["note"] = mc.note
    analytic = ("—" if est.value is None else f"{est.value:.6g}") + f"  ({est.kind}: {est.method})"
    lines = [
        f"scheme       {scheme.label}",
        f"delay        {delay}   [{delay.label}, E[X] = {delay.mean:.6g}]",
        f"analytic     {analytic}",
        f"monte carlo  {mc.mean:.6g}  95% CI [{mc.ci95[0]:.6g}, {mc.ci95[1]:.6g}]  "
        f"({mc.iterations} iterations, seed {seed})",
    ]
    if mc.staleness_mean is not None:
        lines.append(f"staleness    mean {mc.staleness_mean:.4g}, fresh fraction {mc.fresh_fraction:.4g}")
    if mc.note:
        lines.append(f"note         {mc.note}")
    return out, "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command == "runtime":
            out, text = run_runtime(args)
        else:
            from . import sgd
            out, text = sgd.run_cli(args)
    except _UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ParameterError as exc:
        print(f"distsgd: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        return 130
    except Exception as exc:  # never a traceback for a user; DISTSGD_DEBUG shows it
        if os.environ.get("DISTSGD_DEBUG"):
            raise
        print(f"distsgd: internal error: {type(exc).__name__}: {exc} "
              "(set DISTSGD_DEBUG=1 for details)", file=sys.stderr)
        return 1
    try:
        print(json.dumps(out, allow_nan=False) if args.json else text)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`| head`): no traceback
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except OSError:  # pragma: no cover
            pass
    return 0

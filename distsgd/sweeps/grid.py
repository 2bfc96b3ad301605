"""A sweep's grid file (DESIGN §8): read, checked, and multiplied out into points.

The file is TOML (read with :mod:`tomllib`)::

    seed = 1
    [base]                 # one value per key: fixed for every point
    delay = "exp(rate=1)"
    iterations = 20000
    [grid]                 # lists: the points are their product
    scheme = ["sync", "k-sync"]
    m = [4, 8]
    K = [2, 4]
    [compute]
    runtime = true
    error = { eta = 0.05, L = 2, mu = 0.5, sigma2 = 1, b = 1, f0 = 1, dim = 10,
              time = 100, replicas = 200, eps = 0.05 }

The process, in order, before any point is computed:

1. every key is checked: known (:data:`PARAMETERS`: the CLI's parameters, plus ``replicate``),
   in ``[base]`` or in ``[grid]`` but not both, a non-empty list without repeats in ``[grid]``,
   and every value inside its parameter's domain (the library's own checks: the scheme
   registry, ``parse_delay``, ``parse_workers``, ``load_trace`` and the domains of
   ``distsgd.schemes``, ``distsgd.clusters`` and ``distsgd.montecarlo``), stored in its canonical
   form (``"exp( rate = 1 )"`` is ``"exp(rate=1)"``);
2. the points are counted exactly, before any is made: a parameter that a point's scheme does
   not take (K for sync and async, H and comm_delay outside local-sgd; ``iterations`` when no
   runtime is computed) is left empty on that scheme's points and does not multiply them.  A
   grid over :data:`distsgd.limits.SWEEP_CONFIRM_POINTS` needs ``yes``; none may exceed
   :data:`distsgd.limits.SWEEP_MAX_POINTS`;
3. the points are made in a fixed order — scheme-major (in the order listed), then the other
   ``[grid]`` keys in the order of the file, the last varying fastest — and point i's random
   stream is child i of ``SeedSequence(seed)`` (:func:`point_seed`), so a point's numbers do not
   depend on where, when or in which order it is computed.

Any failure is a :class:`~distsgd.params.ParameterError` naming the key (``K``, ``grid``,
``error.eta``, …).  Relative file names (a trace, an empirical delay) are read from the current
directory, as on the command line.
"""

from __future__ import annotations

import difflib
import itertools
import json
import math
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import limits
from ..clusters import PERSISTENCE, SLOW, SLOW_FRACTION, SLOWDOWN, TRACE_MODES, parse_workers
from ..delays import Delay, parse_delay
from ..error import BATCH, ETA, GAMMA, P0, POINTS, REPLICAS, TIME, LearningRate, Problem
from ..montecarlo import ITERATIONS
from ..params import Domain, ParameterError
from ..problems import BUILTIN_SETS, LAM, TARGET_ACCURACY, GradientProblem, builtin
from ..problems.base import DEFAULT_LAM
from ..problems.data import DataSet, prepared
from ..random import SEED
from ..reasons import Phrase
from ..schedules import schedule
from ..schemes import COMM_DELAY, H_DOMAIN, K_DOMAIN, M, scheme_class, scheme_parameters
from ..tables import read_source
from ..topology import canonical_spec
from ..traces import Trace, load_trace

__all__ = ["PARAMETERS", "SCHEME_KEYS", "DEFAULT_ITERATIONS", "Grid", "ErrorSpec", "Context", "load_grid",
           "point_seed", "REPLICATE", "EPS", "DEFAULT_POINTS", "ERROR_ONLY", "QUADRATIC_KEYS", "LOGREG_KEYS"]

#: Monte Carlo iterations per point when the grid does not say (the CLI's ``runtime`` default)
DEFAULT_ITERATIONS = 100_000
#: points on the time grid of an error curve when ``[compute].error`` does not say
DEFAULT_POINTS = 101
#: a repetition index: a grid key that changes nothing but the point (hence its seed)
REPLICATE = Domain("replicate", 0, 2**31 - 1, integer=True, doc="repetition of a point (a fresh seed)")
#: the error target ε (the range :func:`distsgd.error.bound_time_to_target` checks)
EPS = Domain("eps", 0.0, 1e12, low_open=True, symbol="ε", doc="target error")
#: the parameters a scheme may or may not take: left empty (and not multiplied) where it does not
SCHEME_KEYS = ("K", "H", "comm_delay", "topology")


def _scheme(v: object) -> str:
    if not isinstance(v, str):
        raise ParameterError("scheme", "expected_scheme_name", value=v)
    return scheme_class(v).name


def _text(name: str) -> Callable[[object], str]:
    def check(v: object) -> str:
        if not isinstance(v, str) or not v.strip():
            raise ParameterError(name, "expected_nonempty", value=v)
        return v.strip()
    return check


def _delay(v: object) -> str:
    if not isinstance(v, str):
        raise ParameterError("delay", "expected_spec_string", value=v)
    try:
        return str(parse_delay(v))
    except ParameterError as exc:
        if exc.parameter == "delay":
            raise
        raise ParameterError("delay", "in_spec", spec=v, error=exc) from None  # the key, then the part at fault


def _workers(v: object) -> str:
    if not isinstance(v, str):
        raise ParameterError("workers", "expected_groups_string", value=v)
    return str(parse_workers(v).as_dict()["workers"])


def _topology(v: object) -> str:
    """A graph's spec, checked as far as it can be without m (its name and parameters; a
    hypercube's m is checked when the point is built)."""
    if not isinstance(v, str) or not v.strip():
        raise ParameterError("topology", "topology_expected_spec", value=v)
    return canonical_spec(v)


def _schedule(v: object) -> str:
    """``none`` (K or H fixed) or a schedule's spec written one way (DESIGN §13); whether it
    schedules the K or H of a point's scheme, and K0 ≤ m, is checked when the point is built."""
    if not isinstance(v, str) or not v.strip():
        raise ParameterError("schedule", "schedule_expected_spec", value=v)
    if v.strip().lower() == "none":
        return "none"
    return schedule(v, "K" if v.strip().lower().startswith("steps") else None).spec


def _trace_mode(v: object) -> str:
    if v not in TRACE_MODES:
        raise ParameterError("trace_mode", "one_of_bare", choices=", ".join(TRACE_MODES), value=v)
    return str(v)


def _problem(v: object) -> str:
    """``quadratic`` or ``logreg:NAME`` (a bundled set or a file, read by :meth:`Grid.context`)."""
    if not isinstance(v, str) or not (v == "quadratic" or (v.startswith("logreg:") and len(v) > len("logreg:"))):
        raise ParameterError("problem", "problem_unknown", value=str(v)[:80])
    return v


def _domain(dom: Domain[Any], name: str) -> Callable[[object], object]:
    return lambda v: dom.check(v, name)


#: every parameter a point can have: name → (checker giving the canonical value, Parquet type)
PARAMETERS: dict[str, tuple[Callable[[object], object], str]] = {
    "scheme": (_scheme, "string"),
    "m": (_domain(M, "m"), "int64"),
    "K": (_domain(K_DOMAIN, "K"), "int64"),
    "H": (_domain(H_DOMAIN, "H"), "int64"),
    "comm_delay": (_domain(COMM_DELAY, "comm_delay"), "float64"),
    "topology": (_topology, "string"),
    "delay": (_delay, "string"),
    "slow": (_domain(SLOW, "slow"), "int64"),
    "slowdown": (_domain(SLOWDOWN, "slowdown"), "float64"),
    "slow_fraction": (_domain(SLOW_FRACTION, "slow_fraction"), "float64"),
    "persistence": (_domain(PERSISTENCE, "persistence"), "float64"),
    "workers": (_workers, "string"),
    "trace": (_text("trace"), "string"),
    "trace_mode": (_trace_mode, "string"),
    "trace_columns": (_text("trace_columns"), "string"),
    "iterations": (_domain(ITERATIONS, "iterations"), "int64"),
    "replicate": (_domain(REPLICATE, "replicate"), "int64"),
    # what the error part is about (DESIGN §9): ignored by the runtime part
    "problem": (_problem, "string"),
    "lam": (_domain(LAM, "lam"), "float64"),
    "schedule": (_schedule, "string"),
}
#: the parameters only the error part reads (left empty on every point when it is not computed)
ERROR_ONLY = ("problem", "lam", "schedule")
#: ``[compute].error``'s keys that are the quadratic's (DESIGN §3), and those of the logreg problems
QUADRATIC_KEYS = ("L", "mu", "sigma2", "f0", "dim")
LOGREG_KEYS = ("target_accuracy",)

#: the keys of ``[compute].error`` → (domain, required)
_ERROR_KEYS: dict[str, tuple[Domain[Any] | None, bool]] = {
    "eta": (ETA, True), "b": (BATCH, True), "time": (TIME, True), "replicas": (REPLICAS, True),
    "eps": (EPS, True), "points": (POINTS, False), "gamma": (GAMMA, False), "p0": (P0, False),
    "lr_rule": (None, False), "C": (None, False), "target_accuracy": (TARGET_ACCURACY, False),
    **{k: (None, False) for k in QUADRATIC_KEYS},  # required when a point is the quadratic
}


def point_seed(seed: int, index: int) -> np.random.SeedSequence:
    """Point ``index``'s stream: child ``index`` of ``SeedSequence(seed)``, which is what
    ``SeedSequence(seed).spawn(n)[index]`` gives for any n > index (numpy defines a child by
    its parent's entropy and spawn key), made without spawning the n − 1 others.

    >>> a = point_seed(1, 3)
    >>> b = np.random.SeedSequence(1).spawn(10)[3]
    >>> (a.entropy, a.spawn_key) == (b.entropy, b.spawn_key)
    True
    >>> bool((a.generate_state(4) == b.generate_state(4)).all())
    True
    """
    return np.random.SeedSequence(SEED.check(seed, "seed"), spawn_key=(int(index),))


@dataclass(frozen=True)
class ErrorSpec:
    """``[compute].error``: the model problem (None when no point is the quadratic), the SGD's
    η and b, the horizon and grid, replicas, the target ε (and test accuracy, for the logreg
    problems) and the bound's γ and p0 (None: measured in the simulation, as the CLI does)."""

    problem: Problem | None
    time: float
    points: int
    replicas: int
    eps: float
    gamma: float | None
    p0: float | None
    lr: LearningRate
    eta: float = 0.05
    b: int = 1
    target_accuracy: float | None = None


@dataclass(frozen=True)
class Context:
    """What the points' text names, read once up front: delays by canonical spec, worker groups
    by their text, traces by (path, columns).  Shipped once to every Dask worker."""

    delays: Mapping[str, Delay]
    workers: Mapping[str, Any]
    traces: Mapping[tuple[str, str | None], Trace]
    #: the logreg problems by (name, λ or None for its default), built once (f* solved here)
    problems: Mapping[tuple[str, float | None], GradientProblem] = field(default_factory=dict)
    #: the SHA-256 of each data file a problem reads
    data_digests: Mapping[str, str] = field(default_factory=dict)

    @property
    def contents(self) -> str:
        """What the files named hold (the laws' keys, the traces' and data files' digests): part
        of a results file's fingerprint, so a file changed since does not resume."""
        laws = [d.key for d in self.delays.values()]
        parts: list[Any] = [laws, [t.digest for t in self.traces.values()]]
        if self.data_digests:
            parts.append(dict(self.data_digests))
        return json.dumps(parts)


def _did_you_mean(key: str, known: list[str]) -> Phrase | str:
    close = difflib.get_close_matches(key.replace("-", "_"), known, n=1)
    return Phrase("did_you_mean", key=close[0]) if close else ""


def _table(doc: Mapping[str, Any], name: str) -> dict[str, Any]:
    v = doc.get(name, {})
    if not isinstance(v, dict):
        raise ParameterError(name, "grid_not_table", name=name)
    return v


def _check(key: str, value: object, where: str) -> object:
    if key not in PARAMETERS:
        if key == "seed":
            raise ParameterError("seed", "seed_at_top")
        raise ParameterError(key, "unknown_grid_parameter", where=where, known=", ".join(PARAMETERS),
                             hint=_did_you_mean(key, list(PARAMETERS)))
    if isinstance(value, (list, dict)):
        inside = where == "grid"
        raise ParameterError(key, ("list_in_list" if inside else "list_not_value") if isinstance(value, list)
                             else ("table_in_list" if inside else "table_not_value"))
    return PARAMETERS[key][0](value)


def _error_spec(raw: object, problems: list[str]) -> ErrorSpec:
    """``[compute].error`` for the grid's ``problems``: the quadratic's keys required when one
    of them is the quadratic and refused when none is, ``target_accuracy`` only with a logreg one."""
    if not isinstance(raw, dict):
        raise ParameterError("error", "error_not_table")
    for k in raw:
        if k not in _ERROR_KEYS:
            raise ParameterError(f"error.{k}", "unknown_error_key", known=", ".join(_ERROR_KEYS),
                                 hint=_did_you_mean(k, list(_ERROR_KEYS)))
    quadratic = "quadratic" in problems
    for k, (_, required) in _ERROR_KEYS.items():
        if k not in raw and (required or (quadratic and k in QUADRATIC_KEYS)):
            raise ParameterError(f"error.{k}", "error_key_missing")
        if k in raw and ((k in QUADRATIC_KEYS and not quadratic) or (k in LOGREG_KEYS and problems == ["quadratic"])):
            raise ParameterError(f"error.{k}", "grid_key_not_for_problem", problems=", ".join(problems))
    checked = {k: (dom.check(raw[k], f"error.{k}") if dom is not None else raw[k])
               for k, (dom, _) in _ERROR_KEYS.items() if k in raw}
    try:
        problem = Problem(**{k: checked[k] for k in ("eta", "b", *QUADRATIC_KEYS)}) if quadratic else None
        lr = LearningRate(checked.get("lr_rule", "constant"), checked.get("C", 0.01))
    except ParameterError as exc:
        raise ParameterError(f"error.{exc.parameter}", exc.reason, **exc.fields) from None
    return ErrorSpec(problem, float(checked["time"]), int(checked.get("points", DEFAULT_POINTS)),
                     int(checked["replicas"]), float(checked["eps"]), checked.get("gamma"), checked.get("p0"), lr,
                     float(checked["eta"]), int(checked["b"]), checked.get("target_accuracy"))


@dataclass(frozen=True)
class Grid:
    """A checked grid: the root seed, the fixed values, the lists (file order), what to compute.
    ``fingerprint`` is its canonical JSON text: a results file records it, and ``resume``
    continues only a file of the same grid."""

    seed: int
    base: dict[str, Any]
    lists: dict[str, list[Any]]
    runtime: bool
    error: ErrorSpec | None
    fingerprint: str

    def ignored(self, scheme: str) -> set[str]:
        """The parameters that do not change this scheme's points (left empty on them)."""
        out = {k for k in SCHEME_KEYS if k not in scheme_parameters(scheme)}
        if scheme_class(scheme).schedulable is None:
            out.add("schedule")
        if self.error is None:
            out |= set(ERROR_ONLY)
        return out if self.runtime else out | {"iterations"}

    @property
    def schemes(self) -> list[str]:
        return list(self.lists["scheme"]) if "scheme" in self.lists else [self.base["scheme"]]

    def count(self) -> int:
        """The number of points, exactly, without making them."""
        total = 0
        for s in self.schemes:
            ign = self.ignored(s)
            total += math.prod(len(v) for k, v in self.lists.items() if k != "scheme" and k not in ign)
        return total

    def check_size(self, yes: bool = False) -> int:
        """The point count, or a ParameterError naming ``grid`` past the caps of distsgd/limits.py."""
        n = self.count()
        if n > limits.SWEEP_MAX_POINTS:
            raise ParameterError("grid", "grid_points_cap", points=n, cap=limits.SWEEP_MAX_POINTS)
        if n > limits.SWEEP_CONFIRM_POINTS and not yes:
            raise ParameterError("grid", "grid_points_confirm", points=n, cap=limits.SWEEP_CONFIRM_POINTS)
        return n

    def points(self) -> Iterator[dict[str, Any]]:
        """Every point's parameters (only those it has), in the order of point indices."""
        keys = [k for k in self.lists if k != "scheme"]
        for s in self.schemes:
            ign = self.ignored(s)
            fixed = {k: v for k, v in self.base.items() if k not in ign and k != "scheme"}
            for combo in itertools.product(*([None] if k in ign else self.lists[k] for k in keys)):
                point = {"scheme": s, **fixed}
                point.update((k, v) for k, v in zip(keys, combo, strict=True) if v is not None)
                yield point

    def context(self) -> Context:
        """Read what the values name, once: every delay law, worker groups and trace file."""
        def values(key: str) -> list[Any]:
            return self.lists.get(key, [self.base[key]] if key in self.base else [])

        delays = {spec: parse_delay(spec) for spec in values("delay")}
        workers = {text: parse_workers(text) for text in values("workers")}
        traces: dict[tuple[str, str | None], Trace] = {}
        for path in values("trace"):
            for cols in values("trace_columns") or [None]:
                traces[(path, cols)] = load_trace(path, cols)
        problems: dict[tuple[str, float | None], GradientProblem] = {}
        digests: dict[str, str] = {}
        if self.error is not None:
            lams = values("lam") or [None]
            for name in values("problem"):
                source = name.removeprefix("logreg:")
                if name == "quadratic":
                    continue
                if source in BUILTIN_SETS:
                    problems.update({(name, lam): builtin(name, **({} if lam is None else {"lam": lam}))
                                     for lam in lams})
                    continue
                # a file: read and parsed once (within the caps) for every λ, known by its digest
                data = DataSet.read(read_source(source, None, parameter="problem",
                                                max_bytes=limits.PROBLEM_MAX_BYTES)[0], name=source)
                digests[name] = data.digest
                problems.update({(name, lam): prepared(data, DEFAULT_LAM if lam is None else lam) for lam in lams})
        return Context(delays, workers, traces, problems, digests)


def _read(source: Mapping[str, Any] | str | Path) -> dict[str, Any]:
    if isinstance(source, Mapping):
        return dict(source)
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ParameterError("grid", "grid_unreadable", path=str(path),
                             why=str(exc.strerror if isinstance(exc, OSError) else exc)) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ParameterError("grid", "grid_not_toml", path=str(path), why=str(exc)) from None


def _lists(grid_raw: dict[str, Any], base_raw: dict[str, Any]) -> dict[str, list[Any]]:
    lists: dict[str, list[Any]] = {}
    for k, vals in grid_raw.items():
        if k in base_raw:
            raise ParameterError(k, "base_and_grid")
        if not isinstance(vals, list):
            raise ParameterError(k, "grid_takes_lists", value=vals)
        if not vals:
            raise ParameterError(k, "empty_list")
        checked = [_check(k, v, "grid") for v in vals]
        seen: set[object] = set()
        for v in checked:
            if v in seen:
                raise ParameterError(k, "listed_twice", value=v)
            seen.add(v)
        lists[k] = checked
    return lists


def _compute(compute: dict[str, Any], problems: list[str]) -> tuple[bool, ErrorSpec | None]:
    for k in compute:
        if k not in ("runtime", "error"):
            raise ParameterError(k, "unknown_compute_key", hint=_did_you_mean(k, ["runtime", "error"]))
    runtime = compute.get("runtime", False)
    if not isinstance(runtime, bool):
        raise ParameterError("runtime", "true_or_false", value=runtime)
    error = _error_spec(compute["error"], problems) if "error" in compute else None
    if not runtime and error is None:
        raise ParameterError("compute", "compute_nothing")
    return runtime, error


def load_grid(source: Mapping[str, Any] | str | Path) -> Grid:
    """A checked :class:`Grid` from a TOML file's path or its parsed tables (the module's steps 1
    and, for the count, 2); a ParameterError names the first bad key."""
    doc = _read(source)
    for key in doc:
        if key not in ("seed", "base", "grid", "compute"):
            raise ParameterError(key, "unknown_top_key", hint=_did_you_mean(key, ["seed", "base", "grid", "compute"]))
    if "seed" not in doc:
        raise ParameterError("seed", "give_seed")
    seed = int(SEED.check(doc["seed"], "seed"))
    base_raw, grid_raw, compute = _table(doc, "base"), _table(doc, "grid"), _table(doc, "compute")
    base = {k: _check(k, v, "base") for k, v in base_raw.items()}
    lists = _lists(grid_raw, base_raw)
    if "scheme" not in base and "scheme" not in lists:
        raise ParameterError("scheme", "give_scheme")
    problems = lists.get("problem", [base.get("problem", "quadratic")])
    if ("lam" in base or "lam" in lists) and "quadratic" in problems:
        raise ParameterError("lam", "grid_lam_quadratic")
    runtime, error = _compute(compute, problems)
    if runtime and "iterations" not in base and "iterations" not in lists:
        base["iterations"] = DEFAULT_ITERATIONS
    fingerprint = json.dumps({"seed": seed, "base": base, "grid": lists, "compute": {
        "runtime": runtime, "error": compute.get("error")}}, default=str)
    return Grid(seed, base, lists, runtime, error, fingerprint)

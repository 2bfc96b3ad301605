"""Delay distributions: the random time X one worker needs for one mini-batch gradient.

Every distribution is a frozen dataclass whose parameters are declared once, with their
domains, in ``PARAMS``; every one takes an optional shift Δ ≥ 0 (the sample is Δ + Y).
Spec strings (DESIGN §2) such as ``pareto(xm=1, alpha=2.5)`` are read by :func:`parse_delay`
and written back by ``str(delay)``; the two round-trip.

>>> d = parse_delay("shifted-exp(rate=2, shift=0.5)")
>>> d.mean, str(d)
(1.0, 'shifted-exp(rate=2, shift=0.5)')

``base`` holds the generic machinery (validation, shift, sampling), ``families`` the
parametric families with their closed forms, ``empirical`` a measured trace.
"""

from __future__ import annotations

import re
from typing import Any

from .. import limits
from ..params import ParameterError
from .base import SHIFT, Delay, ParamView
from .empirical import EMPIRICAL_MAX_BYTES, EMPIRICAL_MAX_VALUES, Empirical
from .families import Exponential, LogNormal, Pareto, TruncatedNormal, Uniform, Weibull

__all__ = [
    "Delay", "Exponential", "Pareto", "LogNormal", "TruncatedNormal", "Weibull", "Uniform", "Empirical",
    "parse_delay", "check_delay", "DELAY_NAMES", "FAMILIES", "ParamView", "SHIFT", "EMPIRICAL_MAX_VALUES",
    "EMPIRICAL_MAX_BYTES",
]

# -- spec strings ------------------------------------------------------------------------

#: the registry: spec name → family class, in the order the dashboard lists them.  A new family is
#: one class and one entry here; what the dashboard shows of it (its label, its parameters'
#: controls) is declared on the class (``TITLES``, ``VIEWS``: :class:`~distsgd.delays.base.ParamView`)
FAMILIES: dict[str, type[Delay]] = {
    "exp": Exponential,
    "shifted-exp": Exponential,
    "pareto": Pareto,
    "lognormal": LogNormal,
    "normal": TruncatedNormal,
    "weibull": Weibull,
    "uniform": Uniform,
    "empirical": Empirical,
}
_FAMILIES = FAMILIES
_ALIASES = {"exponential": "exp", "shifted-exponential": "shifted-exp", "shifted_exp": "shifted-exp",
            "truncnorm": "normal", "truncated-normal": "normal", "trace": "empirical"}
DELAY_NAMES: tuple[str, ...] = tuple(_FAMILIES)


def _spec_keys(cls: type[Delay]) -> dict[str, str]:
    """Spec keyword → dataclass field name."""
    keys = {d.name: cls.FIELDS.get(d.name, d.name) for d in cls.PARAMS}
    if cls is Empirical:
        keys["file"] = "file"
    keys["shift"] = "shift"
    return keys


_SPEC_RE = re.compile(r"^\s*([A-Za-z][\w-]*)\s*(?:\((.*)\))?\s*$", re.S)


def check_delay(delay: object) -> Delay:
    """``delay`` itself if it is a Delay, else a ParameterError naming ``delay``."""
    if not isinstance(delay, Delay):
        raise ParameterError("delay", "expected_delay", type=type(delay).__name__)
    return delay


def _split_spec(spec: object) -> tuple[str, str, str | None]:
    """(family name, the name as written, the text between the parentheses) of a spec string."""
    if not isinstance(spec, str) or not spec.strip():
        raise ParameterError("delay", "expected_spec", value=spec)
    if len(spec) > limits.SPEC_MAX_CHARS:
        raise ParameterError("delay", "spec_too_long", cap=limits.SPEC_MAX_CHARS)
    m = _SPEC_RE.match(spec)
    if not m or spec.count("(") != spec.count(")"):
        raise ParameterError("delay", "spec_malformed", spec=spec.strip()[:80])
    raw_name = m.group(1).lower()
    name = _ALIASES.get(raw_name, raw_name)
    if name not in _FAMILIES:
        raise ParameterError("delay", "unknown_family", name=raw_name, choices=", ".join(DELAY_NAMES))
    return name, raw_name, m.group(2)


def _arguments(name: str, body: str | None, keys: dict[str, str]) -> dict[str, str]:
    """The ``key=value`` pairs of a spec's body: each key known to the family, once, with a value."""
    args: dict[str, str] = {}
    for part in body.split(",") if body and body.strip() else []:
        if "=" not in part:
            raise ParameterError("delay", "argument_malformed", argument=part.strip(), family=name)
        k, v = (s.strip() for s in part.split("=", 1))
        k = k.lower()
        if k not in keys:
            raise ParameterError(k or "delay", "not_a_family_parameter", family=name, keys=", ".join(keys))
        if k in args:
            raise ParameterError(k, "given_twice", family=name)
        if not v:
            raise ParameterError(k, "no_value", family=name)
        args[k] = v
    return args


def parse_delay(spec: str) -> Delay:
    """Read a spec string such as ``pareto(xm=1, alpha=2.5)`` (DESIGN §2).

    Raises :class:`ParameterError` naming the bad part: an unknown family, a missing,
    repeated or unknown parameter, a value outside its domain, or malformed text.

    >>> parse_delay("pareto(xm=1, alpha=2.5)").mean
    1.6666666666666667
    """
    if isinstance(spec, Delay):
        return spec
    name, _, body = _split_spec(spec)
    cls = _FAMILIES[name]
    keys = _spec_keys(cls)
    args = _arguments(name, body, keys)
    if name == "empirical":
        if "file" not in args:
            raise ParameterError("file", "empirical_needs_file")
        return Empirical.from_file(args["file"], shift=SHIFT.check(args.get("shift", 0.0), "shift"))
    required = [k for k in keys if k not in ("shift", "file")] + (["shift"] if name == "shifted-exp" else [])
    for k in required:
        if k not in args:
            raise ParameterError(k, "family_needs", family=name, keys=", ".join(required))
    domains = {d.name: d for d in cls.PARAMS + (SHIFT,)}
    values: dict[str, Any] = {keys[k]: domains[k].check(v, k) for k, v in args.items()}
    return cls(**values)

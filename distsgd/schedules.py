"""Adaptive schedules (DESIGN §13): K or H that change during training.

A :class:`Schedule` changes the wait-for count K of k-sync or k-async (or the local period H of local SGD) at
checkpoints in wall-clock time, each replica from its own training loss measured then; a change
takes effect at the replica's next iteration (round), never in the middle of one.  Three rules,
each one pure function of the loss ratio r = F(w_t)/F(w₀):

* ``adasync(K0=…, period=…)`` (Dutta, Wang, Joshi, JSAIT 2021): K the integer in [1, m] with
  K²/(m − K) closest to K0²/(m − K0) / r — K grows as the loss falls (:func:`adasync_K`);
* ``adacomm(H0=…, period=…)`` (Wang and Joshi, SysML 2019): H = ⌈√r · H0⌉ — H shrinks as the
  loss falls (:func:`adacomm_H`);
* ``steps(t1:v1, t2:v2, …)``: the value v_i from time t_i on (t1 = 0), whatever the loss.

>>> s = schedule("adasync(K0=2, period=20)")
>>> s.parameter, s.start, s.spec
('K', 2, 'adasync(K0=2, period=20)')
>>> adasync_K(0.25, 2, 8).tolist()  # K²/(8 − K) closest to (4/6)/0.25 ≈ 2.67: 9/5 = 1.8 (K = 3)
[3]
>>> adacomm_H(0.3, 8).tolist()  # ⌈√0.3 · 8⌉ = ⌈4.38⌉
[5]
>>> schedule("steps(0:2, 50:4)", "K").value_at(60.0)
4

Every refusal is one :class:`~distsgd.params.ParameterError` naming ``schedule`` (the part at fault
nested: ``K0``, ``period``, ``steps``), or the scheme's K or H when the scheme takes no schedule.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import limits
from .params import Domain, ParameterError, shortest

__all__ = ["Schedule", "schedule", "check_schedule", "adasync_K", "adacomm_H", "SCHEDULE_RULES", "PERIOD"]

#: rule → the parameter it schedules (None: given by the caller, ``--K-schedule`` or ``--H-schedule``)
SCHEDULE_RULES: dict[str, str | None] = {"adasync": "K", "adacomm": "H", "steps": None}
PERIOD = Domain("period", 0.0, 1e12, low_open=True, doc="wall-clock time between checkpoints")
_START = {"K": "K0", "H": "H0"}
_SPEC = re.compile(r"^\s*([A-Za-z][\w-]*)\s*\((.*)\)\s*$", re.S)


def adasync_K(loss_ratio: float | np.ndarray, K0: int, m: int) -> np.ndarray:
    """AdaSync's K for each loss ratio r = F(w_t)/F(w₀): the K in [1, m − 1] whose K²/(m − K) is
    closest to K0²/(m − K0) / r (ties to the smaller K); K0 = m (or r = 0) gives m."""
    r = np.atleast_1d(np.asarray(loss_ratio, dtype=np.float64))
    if K0 >= m:
        return np.full(r.shape, m, dtype=np.int64)
    Ks = np.arange(1, m, dtype=np.float64)
    g = Ks * Ks / (m - Ks)  # increasing in K
    with np.errstate(divide="ignore"):
        target = (K0 * K0 / (m - K0)) / r
    i = np.clip(np.searchsorted(g, target), 1, g.size - 1) if g.size > 1 else np.zeros(r.shape, dtype=np.int64)
    if g.size > 1:
        i = np.where(np.abs(g[i - 1] - target) <= np.abs(g[i] - target), i - 1, i)
    return np.where(np.isposinf(target), m, i + 1).astype(np.int64)


def adacomm_H(loss_ratio: float | np.ndarray, H0: int) -> np.ndarray:
    """AdaComm's H for each loss ratio r = F(x_l)/F(x₀): ⌈√r · H0⌉, within [1, H_MAX]."""
    r = np.atleast_1d(np.asarray(loss_ratio, dtype=np.float64))
    return np.clip(np.ceil(np.sqrt(np.maximum(r, 0.0)) * H0), 1, limits.H_MAX).astype(np.int64)


@dataclass(frozen=True)
class Schedule:
    """A checked schedule of ``parameter`` (K or H): ``rule``, the value it starts with, the
    checkpoint ``period`` (adasync, adacomm) or the ``steps`` ((time, value) pairs, from 0)."""

    rule: str
    parameter: str
    start: int
    period: float | None = None
    steps: tuple[tuple[float, int], ...] = ()

    @property
    def spec(self) -> str:
        """The spec written one way (what the CLI's JSON and a sweep's rows record)."""
        if self.rule == "steps":
            return "steps(" + ", ".join(f"{shortest(t)}:{v}" for t, v in self.steps) + ")"
        assert self.period is not None
        return f"{self.rule}({_START[self.parameter]}={self.start}, period={shortest(self.period)})"

    def checkpoints(self, horizon: float) -> np.ndarray:
        """The checkpoint times in (0, horizon): every ``period``, or the steps' times after 0."""
        if self.rule == "steps":
            return np.array([t for t, _ in self.steps[1:] if t < horizon])
        assert self.period is not None
        count = math.ceil(horizon / self.period) - 1
        if count > limits.SCHEDULE_MAX_CHECKPOINTS:
            raise ParameterError("schedule", "schedule_checkpoints", spec=self.spec, count=count,
                                 cap=limits.SCHEDULE_MAX_CHECKPOINTS, horizon=horizon)
        return self.period * np.arange(1, count + 1, dtype=np.float64)

    def value_at(self, t: float) -> int:
        """A step schedule's value at time t."""
        value = self.steps[0][1]
        for at, v in self.steps:
            if at <= t:
                value = v
        return value

    def after(self, t: float, loss_ratio: np.ndarray, m: int) -> np.ndarray:
        """The value each replica takes at the checkpoint t, from its loss ratio F(w_t)/F(w₀)."""
        if self.rule == "adasync":
            return adasync_K(loss_ratio, self.start, m)
        if self.rule == "adacomm":
            return adacomm_H(loss_ratio, self.start)
        return np.full(np.shape(loss_ratio), self.value_at(t), dtype=np.int64)

    def values(self) -> tuple[int, ...]:
        """The values a step schedule takes (its start for the others)."""
        return tuple(v for _, v in self.steps) if self.rule == "steps" else (self.start,)

    def as_dict(self) -> dict[str, Any]:
        return {"spec": self.spec, "rule": self.rule, "parameter": self.parameter}


@contextmanager
def _naming(shown: str) -> Iterator[None]:
    """A refusal of a part (``K0``, ``period``) re-raised as one naming ``schedule``, the part nested."""
    try:
        yield
    except ParameterError as exc:
        if exc.parameter == "schedule":
            raise
        raise ParameterError("schedule", "in_spec", spec=shown, error=exc) from None


def schedule(spec: str | Schedule, parameter: str | None = None) -> Schedule:
    """The schedule a spec names (``adasync(K0=2, period=20)``, ``adacomm(H0=8, period=10)``,
    ``steps(0:2, 50:4, 100:8)``); ``parameter`` ("K" or "H") is what a ``steps`` schedule changes and,
    when given, what the others must change.  Values are checked against a scheme by
    :func:`check_schedule` (K0 ≤ m needs m)."""
    if isinstance(spec, Schedule):
        if parameter is not None and spec.parameter != parameter:
            raise ParameterError("schedule", "schedule_parameter", spec=spec.spec, rule=spec.rule,
                                 wants=spec.parameter, parameter=parameter)
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise ParameterError("schedule", "schedule_expected_spec", value=spec)
    if len(spec) > limits.SPEC_MAX_CHARS:
        raise ParameterError("schedule", "spec_too_long", cap=limits.SPEC_MAX_CHARS)
    shown = spec.strip()[:80]
    match = _SPEC.match(spec)
    if not match:
        raise ParameterError("schedule", "schedule_malformed", spec=shown)
    rule, body = match.group(1).lower(), match.group(2).strip()
    if rule not in SCHEDULE_RULES:
        raise ParameterError("schedule", "schedule_unknown", name=rule, choices=", ".join(SCHEDULE_RULES))
    wants = SCHEDULE_RULES[rule]
    if wants is not None and parameter is not None and wants != parameter:
        raise ParameterError("schedule", "schedule_parameter", spec=shown, rule=rule, wants=wants,
                             parameter=parameter)
    with _naming(shown):
        if rule == "steps":
            if parameter not in ("K", "H"):
                raise ParameterError("schedule", "schedule_steps_parameter", spec=shown)
            steps = _steps(body)
            return Schedule("steps", parameter, steps[0][1], None, steps)
        assert wants is not None
        args = _arguments(body, rule, (_START[wants], "period"))
        start = Domain(_START[wants], 1, limits.K_BATCH_MAX if wants == "K" else limits.H_MAX,
                       integer=True).check(args[_START[wants]], _START[wants])
        return Schedule(rule, wants, start, PERIOD.check(args["period"], "period"))


def _arguments(body: str, rule: str, keys: tuple[str, ...]) -> dict[str, str]:
    args: dict[str, str] = {}
    for part in body.split(",") if body else []:
        if "=" not in part:
            raise ParameterError("schedule", "argument_malformed", argument=part.strip(), family=rule)
        key, value = (s.strip() for s in part.split("=", 1))
        canon = {k.lower(): k for k in keys}.get(key.lower())
        if canon is None:
            raise ParameterError(key or "schedule", "not_a_family_parameter", family=rule, keys=", ".join(keys))
        if canon in args:
            raise ParameterError(canon, "given_twice", family=rule)
        if not value:
            raise ParameterError(canon, "no_value", family=rule)
        args[canon] = value
    missing = [k for k in keys if k not in args]
    if missing:
        raise ParameterError(missing[0], "family_needs", family=rule, keys=", ".join(keys))
    return args


_STEP_VALUE = Domain("steps", 1, limits.K_BATCH_MAX, integer=True)
_STEP_TIME = Domain("steps", 0.0, 1e12)


def _steps(body: str) -> tuple[tuple[float, int], ...]:
    """``t1:v1, t2:v2, …`` as checked pairs: t1 = 0, times increasing, values integers ≥ 1."""
    parts = [p.strip() for p in body.split(",")] if body.strip() else []
    if not parts:
        raise ParameterError("steps", "schedule_steps_empty")
    if len(parts) > limits.SCHEDULE_MAX_STEPS:
        raise ParameterError("steps", "schedule_steps_cap", count=len(parts), cap=limits.SCHEDULE_MAX_STEPS)
    out: list[tuple[float, int]] = []
    for part in parts:
        if part.count(":") != 1:
            raise ParameterError("steps", "schedule_step_malformed", step=part[:40])
        t_text, v_text = part.split(":")
        t, v = _STEP_TIME.check(t_text, "steps"), _STEP_VALUE.check(v_text, "steps")
        if not out and t != 0:
            raise ParameterError("steps", "schedule_steps_start", time=shortest(t))
        if out and t <= out[-1][0]:
            raise ParameterError("steps", "schedule_steps_order", time=shortest(t), before=shortest(out[-1][0]))
        out.append((float(t), int(v)))
    return tuple(out)


def check_schedule(value: str | Schedule, scheme: Any) -> Schedule:
    """``value`` as a schedule of the K or H that ``scheme`` takes (its class's ``schedulable``),
    with every value it can take within the scheme's domain (K0 and K steps in [1, m])."""
    takes = getattr(type(scheme), "schedulable", None)
    if takes is None:
        raise ParameterError("schedule", "schedule_scheme", scheme=getattr(scheme, "name", str(scheme)))
    s = schedule(value, takes)
    name = "steps" if s.rule == "steps" else _START[takes]
    high = scheme.m if takes == "K" else limits.H_MAX
    with _naming(s.spec):
        for v in s.values():
            Domain(name, 1, high, integer=True).check(v, name)
    return s

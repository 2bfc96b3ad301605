"""Controls, their URL mirror, and presets — the only place the dashboard reads user input.

Every control is declared once here with a :class:`~distsgd.params.Domain` taken from the
library (narrowed by a cost cap for the shared host).  On the first run of a session each
control's value comes from the URL if present: a junk value is replaced by the default and an
out-of-range one clamped, each with a notice; after the widgets are drawn the current values
are written back to the URL, so a copied link reproduces the view.  A URL can never name a
file: a measured trace comes only from an upload.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Sequence

import streamlit as st

from ..delays import SHIFT, Exponential, LogNormal, Pareto, TruncatedNormal, Uniform, Weibull
from ..params import Domain, ParameterError, shortest
from ..schemes import SCHEME_NAMES, H_DOMAIN, K_DOMAIN, M, COMM_DELAY
from .. import sgd

__all__ = ["Control", "CONTROLS", "PRESETS", "value", "widget_args", "load", "sync_url", "notices",
           "notify", "apply_preset", "UI_M_MAX"]

UI_M_MAX = 1000
UI_H_MAX = 100


def _narrow(dom: Domain, low: float | None = None, high: float | None = None) -> Domain:
    """The library's domain, narrowed to what one request on a shared host may ask for."""
    lo = dom.low if low is None else max(dom.low, low)
    hi = dom.high if high is None else min(dom.high, high)
    return dataclasses.replace(dom, low=lo, high=hi, low_open=dom.low_open and lo == dom.low,
                               high_open=dom.high_open and hi == dom.high)


def _param(cls: type, name: str) -> Domain:
    return next(d for d in cls.PARAMS if d.name == name)


@dataclass(frozen=True)
class Control:
    key: str
    label: str
    default: Any
    domain: Domain | None = None
    options: tuple[str, ...] | None = None
    multi: bool = False
    step: float | None = None
    help: str = ""

    def parse(self, raw: Any) -> tuple[Any, str | None]:
        """(value, notice) for a raw URL value; the notice says what was clamped or replaced."""
        if self.options is not None:
            if self.multi:
                vals = [v for v in (raw if isinstance(raw, list) else [raw]) if v in self.options]
                bad = [v for v in (raw if isinstance(raw, list) else [raw]) if v not in self.options]
                if bad:
                    return (vals or list(self.default)), (f"{self.key}: ignored unknown value(s) "
                                                         f"{', '.join(map(repr, bad[:3]))}")
                return vals or list(self.default), None
            if raw in self.options:
                return raw, None
            return self.default, f"{self.key}: {str(raw)[:40]!r} is not one of {', '.join(self.options)}; using {self.default}"
        assert self.domain is not None
        try:
            x = float(str(raw).strip())
        except ValueError:
            x = math.nan
        if not math.isfinite(x):
            return self.default, f"{self.key}: {str(raw)[:40]!r} is not a number; using the default {self.default}"
        try:
            return self.domain.check(x, self.key), None
        except ParameterError as exc:
            if self.domain.integer and not float(x).is_integer():
                x = round(x)
            v = self.domain.clamp(x)
            if self.domain.integer:
                v = int(v)
            return v, f"{exc} — clamped to {v}"


def _num(key: str, label: str, default: float, dom: Domain, step: float | None = None, help: str = "") -> Control:
    return Control(key, label, default, domain=dom, step=step, help=help)


DELAY_CHOICES = ("exp", "shifted-exp", "pareto", "lognormal", "normal", "weibull", "uniform", "trace")

CONTROLS: dict[str, Control] = {c.key: c for c in [
    Control("delay", "Delay distribution", "shifted-exp", options=DELAY_CHOICES,
            help="The random time X a worker needs for one mini-batch gradient."),
    _num("lam", "rate λ", 1.0, _narrow(_param(Exponential, "rate"), 0.01, 100.0), 0.01),
    _num("delta", "shift Δ", 0.0, _narrow(SHIFT, 0.0, 100.0), 0.01, "constant part of every delay"),
    _num("xm", "Pareto scale x_m", 1.0, _narrow(_param(Pareto, "xm"), 0.01, 100.0), 0.01),
    _num("alpha", "Pareto tail α", 2.5, _narrow(_param(Pareto, "alpha"), 0.3, 20.0), 0.05,
         "smaller is heavier; mean infinite for α ≤ 1"),
    _num("ln_mu", "lognormal μ", 0.0, _narrow(_param(LogNormal, "mu"), -10.0, 10.0), 0.05),
    _num("ln_sigma", "lognormal σ", 1.0, _narrow(_param(LogNormal, "sigma"), 0.05, 3.0), 0.05),
    _num("n_mean", "normal mean μ", 1.0, _narrow(_param(TruncatedNormal, "mean"), -10.0, 100.0), 0.05),
    _num("n_std", "normal std σ", 0.5, _narrow(_param(TruncatedNormal, "std"), 0.01, 100.0), 0.01),
    _num("w_shape", "Weibull shape k", 1.5, _narrow(_param(Weibull, "shape"), 0.2, 20.0), 0.05),
    _num("w_scale", "Weibull scale s", 1.0, _narrow(_param(Weibull, "scale"), 0.01, 100.0), 0.01),
    _num("u_low", "uniform low a", 0.5, _narrow(_param(Uniform, "low"), 0.0, 100.0), 0.05),
    _num("u_high", "uniform high b", 1.5, _narrow(_param(Uniform, "high"), 0.01, 200.0), 0.05),
    _num("m", "workers m", 16, _narrow(M, 1, UI_M_MAX), 1),
    _num("K", "wait for K", 4, _narrow(K_DOMAIN, 1, UI_M_MAX), 1, "gradients per update (K ≤ m here)"),
    _num("H", "local steps H", 4, _narrow(H_DOMAIN, 1, UI_H_MAX), 1, "local SGD: steps between averaging"),
    Control("schemes", "Schemes to compare", ("sync", "k-sync", "async", "k-async"),
            options=SCHEME_NAMES, multi=True),
    _num("seed", "random seed", 1, Domain("seed", 0, 2**31 - 1, integer=True), 1),
    Control("budget", "Monte Carlo budget", "balanced", options=("fast", "balanced", "accurate"),
            help="work per chart: fast for a class, accurate for a closer look"),
    Control("rt_view", "Runtime against", "K", options=("K", "m")),
    # error page
    _num("eta", "learning rate η", 0.05, _narrow(sgd.ETA, 1e-4, 2.0), 0.005),
    _num("L", "smoothness L", 2.0, _narrow(sgd.L_SMOOTH, 0.01, 100.0), 0.1),
    _num("mu", "strong convexity μ", 0.5, _narrow(sgd.MU, 0.001, 100.0), 0.05),
    _num("sigma2", "gradient noise σ²", 1.0, _narrow(sgd.SIGMA2, 0.0, 100.0), 0.1),
    _num("b", "mini-batch b", 1, _narrow(sgd.BATCH, 1, 4096), 1),
    _num("f0", "initial error F₀", 1.0, _narrow(sgd.F0, 1e-3, 1e3), 0.1),
    _num("dim", "dimension d", 10, _narrow(sgd.DIM, 1, 50), 1),
    _num("gamma", "staleness factor γ", 0.5, sgd.GAMMA, 0.05),
    Control("p0_mode", "p₀ from", "measured", options=("measured", "input")),
    _num("p0", "p₀ (fresh-gradient probability)", 0.2, sgd.P0, 0.01),
    Control("lr_rule", "learning-rate rule (async)", "constant", options=sgd.LearningRate.RULES),
    _num("C", "adaptive-rule constant C", 0.01, _narrow(sgd.C_ADAPT, 1e-5, 10.0), 0.001),
    _num("eps", "target error ε", 0.05, Domain("eps", 1e-6, 1e3, symbol="ε"), 0.005),
    _num("horizon", "time horizon T", 50.0, _narrow(sgd.TIME, 0.1, 1e5), 1.0),
    _num("replicas", "SGD replicas", 40, _narrow(sgd.REPLICAS, 10, 400), 10),
    # local SGD / communication
    _num("D", "averaging time D", 0.5, _narrow(COMM_DELAY, 0.0, 1e3), 0.05),
    Control("comm_source", "D from", "slider", options=("slider", "network model")),
    Control("topology", "topology", "ring-allreduce", options=("parameter-server", "ring-allreduce")),
    _num("params_m", "model size (million parameters)", 25.0, Domain("params_m", 0.001, 1e5), 1.0),
    _num("gbps", "bandwidth (Gbit/s)", 10.0, Domain("gbps", 0.01, 1e4), 1.0),
    _num("latency_ms", "latency (ms)", 0.05, Domain("latency_ms", 0.0, 1e4), 0.01),
    # timeline
    _num("tl_iters", "updates shown", 6, Domain("tl_iters", 1, 30, integer=True), 1),
    Control("tl_scheme", "scheme", "k-sync", options=SCHEME_NAMES),
    # trade-offs
    Control("sweep", "sweep over", "K", options=("K", "m", "H")),
    Control("sweep_scheme", "scheme", "k-async", options=SCHEME_NAMES),
]}


PRESETS: dict[str, dict[str, Any]] = {
    "seed example: exponential delays": dict(
        delay="exp", lam=1.0, delta=0.0, m=20, K=10, H=4, schemes=["sync", "k-sync", "async", "k-async"],
        eta=0.05, L=2.0, mu=0.5, sigma2=1.0, horizon=60.0),
    "shifted exponential (Δ + Exp)": dict(
        delay="shifted-exp", lam=1.0, delta=1.0, m=16, K=4, schemes=["sync", "k-sync", "async", "k-async"]),
    "heavy-tailed stragglers": dict(
        delay="pareto", xm=1.0, alpha=1.5, delta=0.0, m=20, K=10,
        schemes=["sync", "k-sync", "async", "k-async", "k-batch-async"], sweep="K", sweep_scheme="k-sync"),
    "backup workers N + b": dict(
        delay="lognormal", ln_mu=0.0, ln_sigma=1.0, delta=0.0, m=20, K=16, schemes=["sync", "k-sync"],
        tl_scheme="k-sync"),
    "local SGD with slow network": dict(
        delay="shifted-exp", lam=2.0, delta=0.1, m=16, H=8, D=2.0, comm_source="network model",
        topology="parameter-server", params_m=25.0, gbps=1.0, latency_ms=0.5,
        schemes=["sync", "local-sgd"], tl_scheme="local-sgd"),
    "async wins early, loses late": dict(
        delay="exp", lam=1.0, delta=0.0, m=16, K=4, schemes=["sync", "k-sync", "async"], eta=0.05,
        L=2.0, mu=0.5, sigma2=1.0, b=1, f0=1.0, dim=10, eps=0.01, horizon=60.0),
}


def notify(message: str) -> None:
    st.session_state.setdefault("_notices", []).append(message)


def notices() -> list[str]:
    return list(st.session_state.get("_notices", []))


def clear_notices() -> None:
    st.session_state["_notices"] = []


def _url_raw(c: Control) -> Any:
    qp = st.query_params
    if c.key not in qp:
        return None
    return qp.get_all(c.key) if c.multi else qp.get(c.key)


def load(key: str, bounds: tuple[float, float] | None = None) -> Any:
    """Make sure ``st.session_state[key]`` holds a valid value before its widget is drawn.

    First time in a session: from the URL (clamped or defaulted with a notice) or the default.
    ``bounds`` narrows the range further for this run (K ≤ m), clamping with a notice.
    """
    c = CONTROLS[key]
    if key not in st.session_state:
        raw = _url_raw(c)
        if raw is None or raw == []:
            val = list(c.default) if c.multi else c.default
        else:
            val, note = c.parse(raw)
            if note:
                notify(note)
        st.session_state[key] = val
    if bounds is not None:
        lo, hi = bounds
        v = st.session_state[key]
        if v < lo or v > hi:
            new = type(v)(min(max(v, lo), hi))
            notify(f"{key} = {v} is outside [{lo:g}, {hi:g}] here; clamped to {new}")
            st.session_state[key] = new
    return st.session_state[key]


def value(key: str) -> Any:
    return st.session_state.get(key, CONTROLS[key].default)


def widget_args(key: str, bounds: tuple[float, float] | None = None) -> dict[str, Any]:
    """min/max/step/format for a number widget, from the control's domain (and bounds)."""
    c = CONTROLS[key]
    d = c.domain
    assert d is not None
    lo, hi = (d.low, d.high) if bounds is None else bounds
    if d.low_open and lo == d.low:
        lo = c.step or 1e-3
    if d.integer:
        return dict(min_value=int(lo), max_value=int(hi), step=int(c.step or 1))
    return dict(min_value=float(lo), max_value=float(hi), step=float(c.step or 0.01))


def sync_url(keys: Sequence[str]) -> None:
    """Write the current values of the given controls to the URL (non-defaults only)."""
    want: dict[str, Any] = {}
    for key in keys:
        c = CONTROLS[key]
        v = st.session_state.get(key)
        if v is None:
            continue
        default = list(c.default) if c.multi else c.default
        if v == default:
            continue
        want[key] = [str(x) for x in v] if c.multi else _fmt(v)
    current = {k: (st.query_params.get_all(k) if isinstance(want.get(k), list) else st.query_params.get(k))
               for k in st.query_params}
    if current != want:
        st.query_params.from_dict(want)


def _fmt(v: Any) -> str:
    return shortest(v) if isinstance(v, float) else str(v)


def apply_preset(name: str) -> None:
    """Set every control a preset names (a callback: runs before the widgets are drawn)."""
    for key, v in PRESETS[name].items():
        st.session_state[key] = list(v) if isinstance(v, list) else v
    notify(f"preset applied: {name}")

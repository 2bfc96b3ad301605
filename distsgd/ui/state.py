"""Controls, their URL mirror, and presets — the only place the dashboard reads user input.

Every control is declared once here with a :class:`~distsgd.params.Domain` taken from the
library (narrowed by a cost cap for the shared host).  Its value lives in a session store that
Streamlit never cleans (:func:`bind` gives each widget its value from there before it is drawn,
and its ``on_change`` hands a change back), so no control loses its value when another moves,
a run is interrupted, or the page changes.  On the first run of a session every control the
URL names is read (:func:`start`): a junk value is replaced by the default and an out-of-range
one clamped, each with a notice; after the page is drawn the values are written back to the
URL, so a copied link reproduces the view.  Notices are shown as plain text (:func:`plain`).
A URL can never name a file: a measured trace comes only from an upload.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import Any

import streamlit as st

from .. import error as sgd
from ..clusters import PERSISTENCE, SLOW, SLOW_FRACTION, SLOWDOWN
from ..clusters import TRACE_MODES as _TRACE_MODES
from ..delays import SHIFT, Delay, Exponential, LogNormal, Pareto, TruncatedNormal, Uniform, Weibull
from ..examples import EXAMPLES
from ..params import Domain, ParameterError, shortest
from ..random import SEED
from ..schemes import COMM_DELAY, H_DOMAIN, K_DOMAIN, SCHEME_NAMES, M
from ..traces import THRESHOLD
from .i18n import LANGUAGES, from_locale
from .limits import NOTICE_MAX_CHARS, QUOTE_MAX_CHARS, RANGES, UI_H_MAX, UI_M_MAX

__all__ = ["Control", "CONTROLS", "PRESETS", "start", "value", "set_value", "clamp", "bind",
           "widget_args", "sync_url", "url_values", "notices", "notify", "clear_notices", "apply_preset",
           "problem", "quote", "plain", "UI_M_MAX", "UI_H_MAX"]


def _narrow(dom: Domain, low: float | None = None, high: float | None = None) -> Domain:
    """The library's domain, narrowed to what one request on a shared host may ask for."""
    lo = dom.low if low is None else max(dom.low, low)
    hi = dom.high if high is None else min(dom.high, high)
    return dataclasses.replace(dom, low=lo, high=hi, low_open=dom.low_open and lo == dom.low,
                               high_open=dom.high_open and hi == dom.high)


def _param(cls: type[Delay], name: str) -> Domain:
    return next(d for d in cls.PARAMS if d.name == name)


def quote(text: Any, limit: int = QUOTE_MAX_CHARS) -> str:
    """User text for a message: quoted, one line, at most ``limit`` characters (then "…").

    Messages are shown as plain text (see :func:`plain`), so nothing in it is ever a link."""
    s = " ".join(str(text).split())
    return repr(s if len(s) <= limit else s[:limit] + "…")


#: characters with a meaning in Streamlit's Markdown (CommonMark, GFM autolinks, LaTeX, HTML)
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:/&@])")


def plain(text: str, limit: int = NOTICE_MAX_CHARS) -> str:
    """Text to show through a Markdown element as itself: every Markdown, HTML and LaTeX
    character backslash-escaped (so no link, image, tag or formula), truncated to ``limit``."""
    s = str(text)
    if len(s) > limit:
        s = s[:limit] + "…"
    return _MARKDOWN.sub(r"\\\1", s)


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

    def initial(self) -> Any:
        return list(self.default) if self.multi else self.default

    def parse(self, raw: Any) -> tuple[Any, str | None]:
        """(value, notice) for a raw URL value (a string, or a list when the key repeats);
        the notice says what was clamped, replaced or ignored."""
        values = [str(v) for v in (raw if isinstance(raw, list) else [raw])]
        if self.options is not None and self.multi:
            good = list(dict.fromkeys(v for v in values if v in self.options))
            bad = list(dict.fromkeys(v for v in values if v not in self.options))
            note = None
            if bad:
                note = (f"{self.key}: ignored unknown value(s) {', '.join(quote(b) for b in bad[:3])}"
                        + (f" and {len(bad) - 3} more" if len(bad) > 3 else ""))
            elif len(good) < len(values):
                note = f"{self.key}: ignored repeated values"
            return (good or self.initial()), note
        note_repeat = (f"{self.key} was given {len(values)} times; using the last valid value"
                       if len(values) > 1 else None)
        for raw_one in reversed(values):
            v, note = self._parse_one(raw_one)
            if note is None or raw_one == values[0]:
                return v, (note or note_repeat)
        return self.initial(), note_repeat  # pragma: no cover - the loop always returns

    def _parse_one(self, raw: str) -> tuple[Any, str | None]:
        if self.options is not None:
            if raw in self.options:
                return raw, None
            return self.default, (f"{self.key}: {quote(raw)} is not one of {', '.join(self.options)}; "
                                  f"using {self.default}")
        assert self.domain is not None
        try:
            return self.domain.check(raw.strip(), self.key), None
        except ParameterError:
            try:
                x = float(raw.strip())
            except ValueError:
                x = math.nan
            if not math.isfinite(x):
                return self.default, f"{self.key}: {quote(raw)} is not a number; using the default {self.default}"
            v = self.domain.clamp(round(x) if self.domain.integer else x)
            v = int(v) if self.domain.integer else float(v)
            return v, f"{self.key}: must be {self.domain.describe()} (got {quote(raw, 24)}) — clamped to {_fmt(v)}"


def _num(key: str, label: str, default: float, dom: Domain, step: float | None = None, help: str = "") -> Control:
    return Control(key, label, default, domain=dom, step=step, help=help)


DELAY_CHOICES = ("exp", "shifted-exp", "pareto", "lognormal", "normal", "weibull", "uniform", "trace")

CONTROLS: dict[str, Control] = {c.key: c for c in [
    Control("delay", "Delay distribution", "shifted-exp", options=DELAY_CHOICES,
            help="The random time X a worker needs for one mini-batch gradient."),
    _num("lam", "rate λ", 1.0, _narrow(_param(Exponential, "rate"), *RANGES["lam"]), 0.01),
    _num("delta", "shift Δ", 0.0, _narrow(SHIFT, *RANGES["delta"]), 0.01, "constant part of every delay"),
    _num("xm", "Pareto scale x_m", 1.0, _narrow(_param(Pareto, "xm"), *RANGES["xm"]), 0.01),
    _num("alpha", "Pareto tail α", 2.5, _narrow(_param(Pareto, "alpha"), *RANGES["alpha"]), 0.05,
         "smaller is heavier; mean infinite for α ≤ 1"),
    _num("ln_mu", "lognormal μ", 0.0, _narrow(_param(LogNormal, "mu"), *RANGES["ln_mu"]), 0.05),
    _num("ln_sigma", "lognormal σ", 1.0, _narrow(_param(LogNormal, "sigma"), *RANGES["ln_sigma"]), 0.05),
    _num("n_mean", "normal mean μ", 1.0, _narrow(_param(TruncatedNormal, "mean"), *RANGES["n_mean"]), 0.05),
    _num("n_std", "normal std σ", 0.5, _narrow(_param(TruncatedNormal, "std"), *RANGES["n_std"]), 0.01),
    _num("w_shape", "Weibull shape k", 1.5, _narrow(_param(Weibull, "shape"), *RANGES["w_shape"]), 0.05),
    _num("w_scale", "Weibull scale s", 1.0, _narrow(_param(Weibull, "scale"), *RANGES["w_scale"]), 0.01),
    _num("u_low", "uniform low a", 0.5, _narrow(_param(Uniform, "low"), *RANGES["u_low"]), 0.05),
    _num("u_high", "uniform high b", 1.5, _narrow(_param(Uniform, "high"), *RANGES["u_high"]), 0.05),
    _num("m", "workers m", 16, _narrow(M, *RANGES["m"]), 1),
    _num("K", "wait for K", 4, _narrow(K_DOMAIN, *RANGES["K"]), 1, "gradients per update (K ≤ m here)"),
    _num("H", "local steps H", 4, _narrow(H_DOMAIN, *RANGES["H"]), 1, "local SGD: steps between averaging"),
    Control("stragglers", "Who is slow", "none", options=("none", "static", "markov", "trace"),
            help="none: every mini-batch of every worker i.i.d. X. b slow workers: the first b always take s·X. "
                 "Slow spells: every worker turns slow (s·X) now and then; π is the long-run fraction of slow "
                 "mini-batches, ρ how long a spell lasts. Measured trace: each worker's own times."),
    _num("slow", "slow workers b", 1, _narrow(SLOW, *RANGES["slow"]), 1, "the first b workers are always slow"),
    _num("slowdown", "slowdown s", 4.0, _narrow(SLOWDOWN, *RANGES["slowdown"]), 0.5,
         "a slow mini-batch takes s·X (the shift Δ scaled too)"),
    _num("slow_fraction", "slow fraction π", 0.1, _narrow(SLOW_FRACTION, *RANGES["slow_fraction"]), 0.01,
         "long-run fraction of slow mini-batches (not of time: a slow one lasts s times longer)"),
    _num("persistence", "persistence ρ", 0.9, _narrow(PERSISTENCE, *RANGES["persistence"]), 0.01,
         "0: every mini-batch slow or not independently; 0.99: slow spells of 1/((1−π)(1−ρ)) mini-batches"),
    _num("threshold", "straggler threshold (× the step's median)", 1.2, _narrow(THRESHOLD, *RANGES["threshold"]), 0.05,
         "a worker whose median ratio to its step's median is at least this is a straggler"),
    Control("trace_mode", "use the trace as", "replay", options=_TRACE_MODES,
            help="replay: each worker's own times in order; per-worker: drawn from each worker's own times; "
                 "pooled: drawn from all times (the i.i.d. answer, who was slow forgotten)"),
    Control("schemes", "Schemes to compare", ("sync", "k-sync", "async", "k-async"),
            options=SCHEME_NAMES, multi=True),
    _num("seed", "random seed", 1, _narrow(SEED, *RANGES["seed"]), 1),
    Control("budget", "Monte Carlo budget", "balanced", options=("fast", "balanced", "accurate"),
            help="work per chart: fast for a class, accurate for a closer look"),
    Control("rt_view", "Runtime against", "K", options=("K", "m")),
    # error page
    _num("eta", "learning rate η", 0.05, _narrow(sgd.ETA, *RANGES["eta"]), 0.005),
    _num("L", "smoothness L", 2.0, _narrow(sgd.L_SMOOTH, *RANGES["L"]), 0.1),
    _num("mu", "strong convexity μ", 0.5, _narrow(sgd.MU, *RANGES["mu"]), 0.05),
    _num("sigma2", "gradient noise σ²", 1.0, _narrow(sgd.SIGMA2, *RANGES["sigma2"]), 0.1),
    _num("b", "mini-batch b", 1, _narrow(sgd.BATCH, *RANGES["b"]), 1),
    _num("f0", "initial error F₀", 1.0, _narrow(sgd.F0, *RANGES["f0"]), 0.1),
    _num("dim", "dimension d", 10, _narrow(sgd.DIM, *RANGES["dim"]), 1),
    _num("gamma", "staleness factor γ", 0.5, sgd.GAMMA, 0.05),
    Control("p0_mode", "p₀ from", "measured", options=("measured", "input")),
    _num("p0", "p₀ (fresh-gradient probability)", 0.2, sgd.P0, 0.01),
    Control("lr_rule", "learning-rate rule (async)", "constant", options=sgd.LearningRate.RULES),
    _num("C", "adaptive-rule constant C", 0.01, _narrow(sgd.C_ADAPT, *RANGES["C"]), 0.001),
    _num("eps", "target error ε", 0.05, Domain("eps", *RANGES["eps"], symbol="ε"), 0.005),
    _num("horizon", "time horizon T", 50.0, _narrow(sgd.TIME, *RANGES["horizon"]), 1.0),
    _num("replicas", "SGD replicas", 40, _narrow(sgd.REPLICAS, *RANGES["replicas"]), 10),
    # local SGD / communication
    _num("D", "averaging time D", 0.5, _narrow(COMM_DELAY, *RANGES["D"]), 0.05),
    Control("comm_source", "D from", "slider", options=("slider", "network model")),
    Control("topology", "topology", "ring-allreduce", options=("parameter-server", "ring-allreduce")),
    _num("params_m", "model size (million parameters)", 25.0, Domain("params_m", *RANGES["params_m"]), 1.0),
    _num("gbps", "bandwidth (Gbit/s)", 10.0, Domain("gbps", *RANGES["gbps"]), 1.0),
    _num("latency_ms", "latency (ms)", 0.05, Domain("latency_ms", *RANGES["latency_ms"]), 0.01),
    # timeline
    _num("tl_iters", "updates shown", 6, Domain("tl_iters", *RANGES["tl_iters"], integer=True), 1),
    Control("tl_scheme", "scheme", "k-sync", options=SCHEME_NAMES),
    # trade-offs
    Control("sweep", "sweep over", "K", options=("K", "m", "H")),
    Control("sweep_scheme", "scheme", "k-async", options=SCHEME_NAMES),
    Control("lang", "Language · 语言", "en", options=tuple(LANGUAGES)),
    # your cluster
    Control("trace_source", "Trace", "example", options=("example", "upload")),
    Control("trace_example", "example", next(iter(EXAMPLES)), options=tuple(EXAMPLES)),
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
    "one slow machine": dict(
        delay="shifted-exp", lam=1.0, delta=1.0, m=16, K=12, stragglers="static", slow=1, slowdown=4.0,
        schemes=["sync", "k-sync", "async", "k-async"], tl_scheme="sync"),
    "a straggler that comes and goes": dict(
        delay="shifted-exp", lam=2.0, delta=0.5, m=8, K=4, stragglers="markov", slow_fraction=0.1,
        persistence=0.95, slowdown=8.0, schemes=["sync", "k-sync", "async"], tl_scheme="async", tl_iters=60,
        horizon=60.0),
    "backup workers vs a persistent straggler": dict(
        delay="shifted-exp", lam=1.0, delta=1.0, m=18, K=16, stragglers="static", slow=2, slowdown=5.0,
        schemes=["sync", "k-sync"], tl_scheme="k-sync", rt_view="K"),
    "async wins early, loses late": dict(
        delay="exp", lam=1.0, delta=0.0, m=16, K=4, schemes=["sync", "k-sync", "async"], eta=0.05,
        L=2.0, mu=0.5, sigma2=1.0, b=1, f0=1.0, dim=10, eps=0.01, horizon=60.0),
}


# -- the store: every control's value, kept apart from the widgets ----------------------
#
# Streamlit forgets a widget's value when the widget's identity changes (a slider whose
# maximum follows another control), when a run is interrupted, or on a page switch.  So the
# truth lives in a plain session-state dict that Streamlit never cleans; each widget is given
# its value from there just before it is drawn, and hands a change back in its on_change.

_STORE = "_controls"
_STARTED = "_controls_started"


def _store() -> dict[str, Any]:
    return st.session_state.setdefault(_STORE, {})


def start() -> None:
    """Once per session, before anything is drawn: read every control the URL names (any
    page's), validated by its domain; junk is replaced by the default and an out-of-range
    value clamped, each with a notice shown on this very first run."""
    if st.session_state.get(_STARTED):
        return
    store = _store()
    qp = st.query_params
    for key, c in CONTROLS.items():
        if key not in qp:
            continue
        raw = qp.get_all(key)
        val, note = c.parse(raw if (c.multi or len(raw) > 1) else raw[0])
        if note:
            notify(note, once=True)
        store[key] = val
    if "lang" not in qp:  # the browser's language (st.context.locale), else English
        store["lang"] = from_locale(st.context.locale)
    unknown = [k for k in qp if k not in CONTROLS]
    if unknown:
        notify(f"ignored unknown URL parameter(s) {', '.join(quote(k, 24) for k in unknown[:3])}", once=True)
    st.session_state[_STARTED] = True


def value(key: str) -> Any:
    """The current value of a control (the stored one, else its default)."""
    v = _store().get(key)
    return CONTROLS[key].initial() if v is None else v


def set_value(key: str, v: Any) -> None:
    _store()[key] = list(v) if isinstance(v, (list, tuple)) else v


def clamp(key: str, lo: float, hi: float) -> Any:
    """Keep a control within [lo, hi] for this run (a bound set by another control, e.g.
    K ≤ m): clamped, with a notice, only when its value is no longer allowed."""
    v = value(key)
    if v < lo or v > hi:
        new = type(v)(min(max(v, lo), hi))
        notify(f"{key} = {_fmt(v)} is outside [{_fmt(lo)}, {_fmt(hi)}] now; clamped to {_fmt(new)}", once=True)
        set_value(key, new)
    return value(key)


def _changed(key: str) -> None:
    """on_change of a widget: the user's new value goes to the store."""
    v = st.session_state.get(key)
    if v is not None:
        set_value(key, v)


def bind(key: str, bounds: tuple[float, float] | None = None) -> dict[str, Any]:
    """Prepare the widget of ``key``: its value from the store (clamped to ``bounds``), and
    the keyword arguments that tie it to the store (``key``, ``on_change``, ``args``)."""
    v = clamp(key, *bounds) if bounds is not None else value(key)
    st.session_state[key] = list(v) if isinstance(v, list) else v
    return dict(key=key, on_change=_changed, args=(key,))


_ONCE, _RUN = "_notices_once", "_notices_run"


def notify(message: str, once: bool = False) -> None:
    """A notice shown as plain text at the top of the page.

    ``once``: about something that happened once (a URL value replaced, a value clamped, a
    preset applied) — kept until a run shows it, even if the run that raised it was interrupted.
    Otherwise it describes this run's state (e.g. "upload a trace") and an interrupted run's
    copy is dropped at the start of the next (:func:`begin_run`), which raises it again if
    it still holds."""
    box = st.session_state.setdefault(_ONCE if once else _RUN, [])
    if message not in box:
        box.append(message)


def begin_run() -> None:
    """At the start of every run: forget the per-run notices of an interrupted run."""
    st.session_state[_RUN] = []


def notices() -> list[str]:
    once, run = st.session_state.get(_ONCE, []), st.session_state.get(_RUN, [])
    return list(once) + [n for n in run if n not in once]


def clear_notices() -> None:
    st.session_state[_ONCE] = []
    st.session_state[_RUN] = []


def widget_args(key: str, bounds: tuple[float, float] | None = None) -> dict[str, Any]:
    """min/max/step for a number widget, from the control's domain (and bounds)."""
    c = CONTROLS[key]
    d = c.domain
    assert d is not None
    lo, hi = (d.low, d.high) if bounds is None else bounds
    if d.low_open and lo == d.low:
        lo = c.step or 1e-3
    if d.integer:
        return dict(min_value=int(lo), max_value=int(hi), step=int(c.step or 1))
    return dict(min_value=float(lo), max_value=float(hi), step=float(c.step or 0.01))


def url_values() -> dict[str, list[str]]:
    """What the URL should hold: every control that differs from its default, and the language
    always (a copied link opens in the language it was copied in)."""
    want: dict[str, list[str]] = {"lang": [value("lang")]}
    for key, v in _store().items():
        c = CONTROLS.get(key)
        if c is None or v == c.initial() or key == "lang":
            continue
        want[key] = [str(x) for x in v] if c.multi else [_fmt(v)]
    return want


def sync_url() -> None:
    """Write the controls to the URL (non-defaults only), so a copied link reproduces the view;
    anything else in the URL (unknown keys, repeats, junk) is dropped."""
    want = url_values()
    qp = st.query_params
    current = {k: qp.get_all(k) for k in qp}
    if current != want:
        qp.from_dict({k: (v if CONTROLS.get(k) is not None and CONTROLS[k].multi else v[0])
                      for k, v in want.items()})


def _fmt(v: Any) -> str:
    return shortest(v) if isinstance(v, float) else str(v)


def apply_preset(name: str) -> None:
    """Set every control a preset names (a callback: runs before the widgets are drawn); a
    preset that names no stragglers has none."""
    for key, v in {"stragglers": "none", **PRESETS[name]}.items():
        set_value(key, v)
    notify(f"preset applied: {name}", once=True)


PROBLEM_KEYS = ("eta", "L", "mu", "sigma2", "b", "f0", "dim")


def problem() -> sgd.Problem:
    """The SGD problem of the controls; μ ≤ L is kept by clamping μ, with a notice."""
    clamp("mu", CONTROLS["mu"].domain.low, value("L"))  # type: ignore[union-attr]
    return sgd.Problem(**{k: value(k) for k in PROBLEM_KEYS})

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

Labels, help texts, option words and preset names are English message ids (``N_``), shown
through ``tr`` where they are drawn (:mod:`distsgd.ui.sidebar`); keys and URL values stay English.
Notices are written in the language of the run (:func:`start` sets it from the URL first).
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
from .i18n import LANGUAGES, N_, from_locale, register_templates, set_language, tr, translate
from .rerun_caps import NOTICE_MAX_CHARS, QUOTE_MAX_CHARS, RANGES, UI_BUDGETS, UI_DEFAULT_BUDGET, UI_H_MAX, UI_M_MAX

__all__ = ["Control", "CONTROLS", "CHOICE_LABELS", "PRESETS", "start", "value", "set_value", "clamp", "bind",
           "widget_args", "sync_url", "url_values", "notices", "notify", "clear_notices", "apply_preset",
           "problem", "quote", "plain", "JOINER", "describe", "explain", "UI_M_MAX", "UI_H_MAX"]


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
#: where a GFM autolink literal would start (remark-gfm links ``http://``, ``https://``, ``www.``
#: and ``user@host.tld`` in the text *after* escapes are resolved, so escaping cannot stop it):
#: between a colon and a slash, between ``www`` and its dot, after every ``@``
_AUTOLINK = re.compile(r"(?<=:)(?=/)|(?<=www)(?=\.)|(?<=@)", re.IGNORECASE)
#: U+2060 WORD JOINER: invisible, not a space, punctuation or word character, so none of those
#: patterns matches across it (and copied text keeps it: not a URL either)
JOINER = "\u2060"


def plain(text: str, limit: int = NOTICE_MAX_CHARS) -> str:
    """Text to show through a Markdown element as itself, truncated to ``limit``: every Markdown,
    HTML and LaTeX character backslash-escaped (so no link, image, tag or formula), and a
    :data:`JOINER` inside every ``://``, ``www.`` and after every ``@`` (so no bare URL, host or
    e-mail address is autolinked)."""
    s = str(text)
    if len(s) > limit:
        s = s[:limit] + "…"
    return _MARKDOWN.sub(r"\\\1", _AUTOLINK.sub(JOINER, s))


def describe(dom: Domain) -> str:
    """:meth:`Domain.describe` in the current language ("an integer in [1, 1000]"), built from the
    same numbers; the library's English where its wording is not one of these forms."""
    text = dom.describe()
    kind = "an integer" if dom.integer else "a number"
    rest = text[len(kind):].strip() if text.startswith(kind) else None
    if rest == "":
        return tr("an integer") if dom.integer else tr("a number")
    if rest is not None and rest.startswith("in "):
        interval = rest[3:]
        return (tr("an integer in {interval}", interval=interval) if dom.integer
                else tr("a number in {interval}", interval=interval))
    op, _, bound = (rest or "").partition(" ")
    form = _BOUND_FORMS.get((op, dom.integer))
    return tr(form, bound=bound) if form and bound else text


#: one whole message per relation and kind of a one-sided domain
_BOUND_FORMS = {
    (">", True): N_("an integer > {bound}"), ("≥", True): N_("an integer ≥ {bound}"),
    ("<", True): N_("an integer < {bound}"), ("≤", True): N_("an integer ≤ {bound}"),
    (">", False): N_("a number > {bound}"), ("≥", False): N_("a number ≥ {bound}"),
    ("<", False): N_("a number < {bound}"), ("≤", False): N_("a number ≤ {bound}"),
}
#: the forms of the library's messages (:meth:`Domain.check`) that :func:`explain` translates,
#: with the forms of the range inside them (registered as templates of :func:`i18n.translate`)
LIBRARY_FORMS = (N_("{parameter}: must be {range} (got {value})"), N_("an integer in {interval}"),
                 N_("a number in {interval}"), *_BOUND_FORMS.values())
register_templates(LIBRARY_FORMS)


def explain(exc: Exception) -> str:
    """A library error (its message is English) in the current language where a catalogue has its
    form (e.g. "m: must be an integer in [1, 1000] (got 0)": :data:`LIBRARY_FORMS`, the range as
    :func:`describe` words it), else as it is."""
    return translate(str(exc))


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
                shown = ", ".join(quote(b) for b in bad[:3])
                note = (tr("{key}: ignored unknown value(s) {values} and {more} more", key=self.key, values=shown,
                           more=len(bad) - 3) if len(bad) > 3
                        else tr("{key}: ignored unknown value(s) {values}", key=self.key, values=shown))
            elif len(good) < len(values):
                note = tr("{key}: ignored repeated values", key=self.key)
            return (good or self.initial()), note
        note_repeat = (tr("{key} was given {count} times; using the last valid value", key=self.key,
                          count=len(values)) if len(values) > 1 else None)
        for raw_one in reversed(values):
            v, note = self._parse_one(raw_one)
            if note is None or raw_one == values[0]:
                return v, (note or note_repeat)
        return self.initial(), note_repeat  # pragma: no cover - the loop always returns

    def _parse_one(self, raw: str) -> tuple[Any, str | None]:
        if self.options is not None:
            if raw in self.options:
                return raw, None
            return self.default, tr("{key}: {value} is not one of {options}; using {default}", key=self.key,
                                    value=quote(raw), options=", ".join(self.options), default=self.default)
        assert self.domain is not None
        try:
            return self.domain.check(raw.strip(), self.key), None
        except ParameterError:
            try:
                x = float(raw.strip())
            except ValueError:
                x = math.nan
            if not math.isfinite(x):
                return self.default, tr("{key}: {value} is not a number; using the default {default}", key=self.key,
                                        value=quote(raw), default=self.default)
            v = self.domain.clamp(round(x) if self.domain.integer else x)
            v = int(v) if self.domain.integer else float(v)
            return v, tr("{key}: must be {range} (got {value}) — clamped to {clamped}", key=self.key,
                         range=describe(self.domain), value=quote(raw, 24), clamped=_fmt(v))


def _num(key: str, label: str, default: float, dom: Domain, step: float | None = None, help: str = "") -> Control:
    return Control(key, label, default, domain=dom, step=step, help=help)


DELAY_CHOICES = ("exp", "shifted-exp", "pareto", "lognormal", "normal", "weibull", "uniform", "trace")

CONTROLS: dict[str, Control] = {c.key: c for c in [
    Control("delay", N_("Delay distribution"), "shifted-exp", options=DELAY_CHOICES,
            help=N_("The random time X a worker needs for one mini-batch gradient.")),
    _num("lam", N_("rate λ"), 1.0, _narrow(_param(Exponential, "rate"), *RANGES["lam"]), 0.01),
    _num("delta", N_("shift Δ"), 0.0, _narrow(SHIFT, *RANGES["delta"]), 0.01, N_("constant part of every delay")),
    _num("xm", N_("Pareto scale x_m"), 1.0, _narrow(_param(Pareto, "xm"), *RANGES["xm"]), 0.01),
    _num("alpha", N_("Pareto tail α"), 2.5, _narrow(_param(Pareto, "alpha"), *RANGES["alpha"]), 0.05,
         N_("smaller is heavier; mean infinite for α ≤ 1")),
    _num("ln_mu", N_("lognormal μ"), 0.0, _narrow(_param(LogNormal, "mu"), *RANGES["ln_mu"]), 0.05),
    _num("ln_sigma", N_("lognormal σ"), 1.0, _narrow(_param(LogNormal, "sigma"), *RANGES["ln_sigma"]), 0.05),
    _num("n_mean", N_("normal mean μ"), 1.0, _narrow(_param(TruncatedNormal, "mean"), *RANGES["n_mean"]), 0.05),
    _num("n_std", N_("normal std σ"), 0.5, _narrow(_param(TruncatedNormal, "std"), *RANGES["n_std"]), 0.01),
    _num("w_shape", N_("Weibull shape k"), 1.5, _narrow(_param(Weibull, "shape"), *RANGES["w_shape"]), 0.05),
    _num("w_scale", N_("Weibull scale s"), 1.0, _narrow(_param(Weibull, "scale"), *RANGES["w_scale"]), 0.01),
    _num("u_low", N_("uniform low a"), 0.5, _narrow(_param(Uniform, "low"), *RANGES["u_low"]), 0.05),
    _num("u_high", N_("uniform high b"), 1.5, _narrow(_param(Uniform, "high"), *RANGES["u_high"]), 0.05),
    _num("m", N_("workers m"), 16, _narrow(M, *RANGES["m"]), 1),
    _num("K", N_("wait for K"), 4, _narrow(K_DOMAIN, *RANGES["K"]), 1, N_("gradients per update (K ≤ m here)")),
    _num("H", N_("local steps H"), 4, _narrow(H_DOMAIN, *RANGES["H"]), 1, N_("local SGD: steps between averaging")),
    Control("stragglers", N_("Who is slow"), "none", options=("none", "static", "markov", "trace"),
            help=N_("none: every mini-batch of every worker i.i.d. X. b slow workers: the first b always take "
                    "s·X. Slow spells: every worker turns slow (s·X) now and then; π is the long-run fraction of "
                    "slow mini-batches, ρ how long a spell lasts. Measured trace: each worker's own times.")),
    _num("slow", N_("slow workers b"), 1, _narrow(SLOW, *RANGES["slow"]), 1, N_("the first b workers are always slow")),
    _num("slowdown", N_("slowdown s"), 4.0, _narrow(SLOWDOWN, *RANGES["slowdown"]), 0.5,
         N_("a slow mini-batch takes s·X (the shift Δ scaled too)")),
    _num("slow_fraction", N_("slow fraction π"), 0.1, _narrow(SLOW_FRACTION, *RANGES["slow_fraction"]), 0.01,
         N_("long-run fraction of slow mini-batches (not of time: a slow one lasts s times longer)")),
    _num("persistence", N_("persistence ρ"), 0.9, _narrow(PERSISTENCE, *RANGES["persistence"]), 0.01,
         N_("0: every mini-batch slow or not independently; 0.99: slow spells of 1/((1−π)(1−ρ)) mini-batches")),
    _num("threshold", N_("straggler threshold (× the step's median)"), 1.2,
         _narrow(THRESHOLD, *RANGES["threshold"]), 0.05,
         N_("a worker whose median ratio to its step's median is at least this is a straggler")),
    Control("trace_mode", N_("use the trace as"), "replay", options=_TRACE_MODES,
            help=N_("replay: each worker's own times in order; per-worker: drawn from each worker's own times; "
                    "pooled: drawn from all times (the i.i.d. answer, who was slow forgotten)")),
    Control("schemes", N_("Schemes to compare"), ("sync", "k-sync", "async", "k-async"),
            options=SCHEME_NAMES, multi=True),
    _num("seed", N_("random seed"), 1, _narrow(SEED, *RANGES["seed"]), 1),
    Control("budget", N_("Monte Carlo budget"), UI_DEFAULT_BUDGET, options=tuple(UI_BUDGETS),
            help=N_("work per chart: fast for a class, accurate for a closer look")),
    Control("rt_view", N_("Runtime against"), "K", options=("K", "m")),
    # error page
    _num("eta", N_("learning rate η"), 0.05, _narrow(sgd.ETA, *RANGES["eta"]), 0.005),
    _num("L", N_("smoothness L"), 2.0, _narrow(sgd.L_SMOOTH, *RANGES["L"]), 0.1),
    _num("mu", N_("strong convexity μ"), 0.5, _narrow(sgd.MU, *RANGES["mu"]), 0.05),
    _num("sigma2", N_("gradient noise σ²"), 1.0, _narrow(sgd.SIGMA2, *RANGES["sigma2"]), 0.1),
    _num("b", N_("mini-batch b"), 1, _narrow(sgd.BATCH, *RANGES["b"]), 1),
    _num("f0", N_("initial error F₀"), 1.0, _narrow(sgd.F0, *RANGES["f0"]), 0.1),
    _num("dim", N_("dimension d"), 10, _narrow(sgd.DIM, *RANGES["dim"]), 1),
    _num("gamma", N_("staleness factor γ"), 0.5, sgd.GAMMA, 0.05),
    Control("p0_mode", N_("p₀ from"), "measured", options=("measured", "input")),
    _num("p0", N_("p₀ (fresh-gradient probability)"), 0.2, sgd.P0, 0.01),
    Control("lr_rule", N_("learning-rate rule (async)"), "constant", options=sgd.LearningRate.RULES),
    _num("C", N_("adaptive-rule constant C"), 0.01, _narrow(sgd.C_ADAPT, *RANGES["C"]), 0.001),
    _num("eps", N_("target error ε"), 0.05, Domain("eps", *RANGES["eps"], symbol="ε"), 0.005),
    _num("horizon", N_("time horizon T"), 50.0, _narrow(sgd.TIME, *RANGES["horizon"]), 1.0),
    _num("replicas", N_("SGD replicas"), 40, _narrow(sgd.REPLICAS, *RANGES["replicas"]), 10),
    # local SGD / communication
    _num("D", N_("averaging time D"), 0.5, _narrow(COMM_DELAY, *RANGES["D"]), 0.05),
    Control("comm_source", N_("D from"), "slider", options=("slider", "network model")),
    Control("topology", N_("topology"), "ring-allreduce", options=("parameter-server", "ring-allreduce")),
    _num("params_m", N_("model size (million parameters)"), 25.0, Domain("params_m", *RANGES["params_m"]), 1.0),
    _num("gbps", N_("bandwidth (Gbit/s)"), 10.0, Domain("gbps", *RANGES["gbps"]), 1.0),
    _num("latency_ms", N_("latency (ms)"), 0.05, Domain("latency_ms", *RANGES["latency_ms"]), 0.01),
    # timeline
    _num("tl_iters", N_("updates shown"), 6, Domain("tl_iters", *RANGES["tl_iters"], integer=True), 1),
    Control("tl_scheme", N_("scheme"), "k-sync", options=SCHEME_NAMES),
    # trade-offs
    Control("axis", N_("sweep over"), "K", options=("K", "m", "H")),
    Control("axis_scheme", N_("scheme"), "k-async", options=SCHEME_NAMES),
    Control("lang", "Language · 语言", "en", options=tuple(LANGUAGES)),
    # your cluster
    Control("trace_source", N_("Trace"), "example", options=("example", "upload")),
    Control("trace_example", N_("example"), next(iter(EXAMPLES)), options=tuple(EXAMPLES)),
]}

#: what a choice shows for options that are words (the same words in English, translated where
#: shown); a page may pass its own labels instead, and symbols and scheme names show as they are
CHOICE_LABELS: dict[str, dict[str, str]] = {
    "budget": {"fast": N_("fast"), "balanced": N_("balanced"), "accurate": N_("accurate")},
    "trace_mode": {"replay": N_("replay"), "per-worker": N_("per-worker"), "pooled": N_("pooled")},
    "p0_mode": {"measured": N_("measured"), "input": N_("input")},
    "lr_rule": {"constant": N_("constant"), "adaptive": N_("adaptive"), "staleness": N_("staleness")},
    "comm_source": {"slider": N_("slider"), "network model": N_("network model")},
    "topology": {"parameter-server": N_("parameter-server"), "ring-allreduce": N_("ring-allreduce")},
}

PRESETS: dict[str, dict[str, Any]] = {
    N_("seed example: exponential delays"): dict(
        delay="exp", lam=1.0, delta=0.0, m=20, K=10, H=4, schemes=["sync", "k-sync", "async", "k-async"],
        eta=0.05, L=2.0, mu=0.5, sigma2=1.0, horizon=60.0),
    N_("shifted exponential (Δ + Exp)"): dict(
        delay="shifted-exp", lam=1.0, delta=1.0, m=16, K=4, schemes=["sync", "k-sync", "async", "k-async"]),
    N_("heavy-tailed stragglers"): dict(
        delay="pareto", xm=1.0, alpha=1.5, delta=0.0, m=20, K=10,
        schemes=["sync", "k-sync", "async", "k-async", "k-batch-async"], axis="K", axis_scheme="k-sync"),
    N_("backup workers N + b"): dict(
        delay="lognormal", ln_mu=0.0, ln_sigma=1.0, delta=0.0, m=20, K=16, schemes=["sync", "k-sync"],
        tl_scheme="k-sync"),
    N_("local SGD with slow network"): dict(
        delay="shifted-exp", lam=2.0, delta=0.1, m=16, H=8, D=2.0, comm_source="network model",
        topology="parameter-server", params_m=25.0, gbps=1.0, latency_ms=0.5,
        schemes=["sync", "local-sgd"], tl_scheme="local-sgd"),
    N_("one slow machine"): dict(
        delay="shifted-exp", lam=1.0, delta=1.0, m=16, K=12, stragglers="static", slow=1, slowdown=4.0,
        schemes=["sync", "k-sync", "async", "k-async"], tl_scheme="sync"),
    N_("a straggler that comes and goes"): dict(
        delay="shifted-exp", lam=2.0, delta=0.5, m=8, K=4, stragglers="markov", slow_fraction=0.1,
        persistence=0.95, slowdown=8.0, schemes=["sync", "k-sync", "async"], tl_scheme="async", tl_iters=60,
        horizon=60.0),
    N_("backup workers vs a persistent straggler"): dict(
        delay="shifted-exp", lam=1.0, delta=1.0, m=18, K=16, stragglers="static", slow=2, slowdown=5.0,
        schemes=["sync", "k-sync"], tl_scheme="k-sync", rt_view="K"),
    N_("async wins early, loses late"): dict(
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


#: URL keys of earlier versions → the control's key now, so that an old link still works
RENAMED_URL_KEYS = {"sweep": "axis", "sweep_scheme": "axis_scheme"}


def start() -> None:
    """Once per session, before anything is drawn: read every control the URL names (any
    page's), validated by its domain; junk is replaced by the default and an out-of-range
    value clamped, each with a notice shown on this very first run."""
    if st.session_state.get(_STARTED):
        return
    store = _store()
    qp = st.query_params
    # the language first, so that every notice below is written in it
    lang = qp.get_all("lang")
    set_language(CONTROLS["lang"].parse(lang if len(lang) > 1 else lang[0])[0] if lang
                 else from_locale(st.context.locale))
    for key, c in CONTROLS.items():
        old = None if key in qp else next((o for o, k in RENAMED_URL_KEYS.items() if k == key and o in qp), None)
        if key not in qp and old is None:
            continue
        raw = qp.get_all(old or key)
        val, note = c.parse(raw if (c.multi or len(raw) > 1) else raw[0])
        if note:
            notify(note, once=True)
        store[key] = val
    if "lang" not in qp:  # the browser's language (st.context.locale), else English
        store["lang"] = from_locale(st.context.locale)
    unknown = [k for k in qp if k not in CONTROLS and k not in RENAMED_URL_KEYS]
    if unknown:
        notify(tr("ignored unknown URL parameter(s) {names}", names=", ".join(quote(k, 24) for k in unknown[:3])),
               once=True)
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
        notify(tr("{key} = {value} is outside [{low}, {high}] now; clamped to {new}", key=key, value=_fmt(v),
                  low=_fmt(lo), high=_fmt(hi), new=_fmt(new)), once=True)
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
    # always, even when the query already matches: with clicks 100 ms apart a page's run and an
    # earlier page's new session can each set the browser's URL without it after this run saw it
    # intact (the browser drops a message that changes nothing)
    want = url_values()
    st.query_params.from_dict({k: (v if CONTROLS.get(k) is not None and CONTROLS[k].multi else v[0])
                               for k, v in want.items()})


def _fmt(v: Any) -> str:
    return shortest(v) if isinstance(v, float) else str(v)


def apply_preset(name: str) -> None:
    """Set every control a preset names (a callback: runs before the widgets are drawn); a
    preset that names no stragglers has none."""
    for key, v in {"stragglers": "none", **PRESETS[name]}.items():
        set_value(key, v)
    notify(tr("preset applied: {name}", name=tr(name)), once=True)


PROBLEM_KEYS = ("eta", "L", "mu", "sigma2", "b", "f0", "dim")


def problem() -> sgd.Problem:
    """The SGD problem of the controls; μ ≤ L is kept by clamping μ, with a notice."""
    clamp("mu", CONTROLS["mu"].domain.low, value("L"))  # type: ignore[union-attr]
    return sgd.Problem(**{k: value(k) for k in PROBLEM_KEYS})

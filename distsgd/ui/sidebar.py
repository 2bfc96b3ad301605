"""The shared sidebar: delay distribution and its parameters, m, K, H, schemes, seed, budget.

Drawn by ``app.py`` on every page; returns a :class:`Selection` the pages read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from ..delays import Delay, Empirical, Exponential, LogNormal, Pareto, TruncatedNormal, Uniform, Weibull
from ..params import ParameterError
from . import state

SIDEBAR_KEYS = ("delay", "lam", "delta", "xm", "alpha", "ln_mu", "ln_sigma", "n_mean", "n_std",
                "w_shape", "w_scale", "u_low", "u_high", "m", "K", "H", "schemes", "seed", "budget")
BUDGETS = {"fast": 1.5e7, "balanced": 4e7, "accurate": 4e8}  # per chart, ≈ ns of Monte Carlo
TRACE_MAX_BYTES = 5 * 2**20

FAMILY_PARAMS = {
    "exp": ("lam",), "shifted-exp": ("lam", "delta"), "pareto": ("xm", "alpha", "delta"),
    "lognormal": ("ln_mu", "ln_sigma", "delta"), "normal": ("n_mean", "n_std", "delta"),
    "weibull": ("w_shape", "w_scale", "delta"), "uniform": ("u_low", "u_high", "delta"),
    "trace": ("delta",),
}
FAMILY_LABELS = {
    "exp": "exponential", "shifted-exp": "shifted exponential Δ + Exp(λ)", "pareto": "Pareto (heavy tail)",
    "lognormal": "lognormal", "normal": "normal, truncated at 0", "weibull": "Weibull",
    "uniform": "uniform", "trace": "measured trace (upload)",
}


@dataclass(frozen=True)
class Selection:
    delay: Delay
    m: int
    K: int
    H: int
    schemes: tuple[str, ...]
    seed: int
    budget: float


def number(key: str, where: Any = None, bounds: tuple[float, float] | None = None,
           slider: bool = True, help: str | None = None) -> Any:
    """A slider or number box bound to a declared control (value from state/URL)."""
    c = state.CONTROLS[key]
    state.load(key, bounds)
    where = where or st
    args = state.widget_args(key, bounds)
    if args["min_value"] >= args["max_value"]:
        where.markdown(f"{c.label}: **{st.session_state[key]}**")
        return st.session_state[key]
    f = where.slider if slider else where.number_input
    return f(c.label, key=key, help=help or c.help or None, **args)


def choice(key: str, where: Any = None, labels: dict[str, str] | None = None, radio: bool = False) -> Any:
    c = state.CONTROLS[key]
    state.load(key)
    where = where or st
    fmt = (lambda v: labels.get(v, v)) if labels else str
    if c.multi:
        return where.multiselect(c.label, options=list(c.options), key=key, help=c.help or None)
    f = where.radio if radio else where.selectbox
    kw = {"horizontal": True} if radio else {}
    return f(c.label, options=list(c.options), key=key, format_func=fmt, help=c.help or None, **kw)


def _build_delay(family: str) -> Delay:
    v = state.value
    shift = v("delta") if "delta" in FAMILY_PARAMS[family] else 0.0
    if family in ("exp", "shifted-exp"):
        return Exponential(rate=v("lam"), shift=shift)
    if family == "pareto":
        return Pareto(xm=v("xm"), alpha=v("alpha"), shift=shift)
    if family == "lognormal":
        return LogNormal(mu=v("ln_mu"), sigma=v("ln_sigma"), shift=shift)
    if family == "normal":
        return TruncatedNormal(mean_=v("n_mean"), std_=v("n_std"), shift=shift)
    if family == "weibull":
        return Weibull(shape=v("w_shape"), scale=v("w_scale"), shift=shift)
    if family == "uniform":
        return Uniform(low=v("u_low"), high=v("u_high"), shift=shift)
    raise AssertionError(family)  # pragma: no cover


DEFAULT_DELAY = Exponential(rate=1.0, shift=0.0)


def _trace_delay(where: Any) -> Delay:
    up = where.file_uploader("measured gradient times (CSV/text, one number per line; first column)",
                             type=["csv", "txt", "tsv"], key="trace")
    if up is None:
        state.notify("Upload a trace of measured times to use it; showing exp(rate=1) meanwhile.")
        return DEFAULT_DELAY
    if up.size > TRACE_MAX_BYTES:
        state.notify(f"trace: the file is larger than {TRACE_MAX_BYTES // 2**20} MiB; showing exp(rate=1).")
        return DEFAULT_DELAY
    try:
        return Empirical.from_text(up.getvalue().decode("utf-8", errors="replace"), name=up.name,
                                   shift=state.value("delta"))
    except ParameterError as exc:
        state.notify(f"trace: {exc}; showing exp(rate=1).")
        return DEFAULT_DELAY


def sidebar() -> Selection:
    sb = st.sidebar
    sb.selectbox("Preset", ["—"] + list(state.PRESETS), key="preset",
                 on_change=lambda: st.session_state["preset"] != "—" and state.apply_preset(st.session_state["preset"]),
                 help="Set every control at once to a classroom example.")
    sb.subheader("Delay X of one gradient")
    family = choice("delay", sb, FAMILY_LABELS)
    for key in FAMILY_PARAMS[family]:
        number(key, sb)
    if family == "trace":
        delay = _trace_delay(sb)
    else:
        try:
            delay = _build_delay(family)
        except ParameterError as exc:
            state.notify(f"{exc}; showing exp(rate=1) instead.")
            delay = DEFAULT_DELAY
    sb.caption(f"X ~ {delay.label}, E[X] = {delay.mean:.4g}" + (" (NLU)" if delay.is_nlu else ""))
    sb.subheader("Workers and schemes")
    m = number("m", sb)
    K = number("K", sb, bounds=(1, m))
    H = number("H", sb)
    schemes = choice("schemes", sb)
    if not schemes:
        state.notify("No scheme selected: showing sync.")
        schemes = ["sync"]
    with sb.expander("Simulation"):
        seed = number("seed", st, slider=False)
        budget = choice("budget", st)
    return Selection(delay=delay, m=int(m), K=int(K), H=int(H), schemes=tuple(schemes),
                     seed=int(seed), budget=BUDGETS[budget])


def url_keys() -> list[str]:
    """Every declared control currently in the session (the sidebar's and this page's)."""
    return [k for k in state.CONTROLS if k in st.session_state]


def current() -> Selection:
    """The selection the sidebar made in this run (pages call this)."""
    sel = st.session_state.get("_selection")
    if sel is None:  # a page run on its own (AppTest.switch_page): draw the sidebar here
        sel = sidebar()
        st.session_state["_selection"] = sel
    return sel

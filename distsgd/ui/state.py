"""Where the controls' values live, and their URL mirror — the only place the dashboard reads
user input.

The controls themselves (key, label, domain, default, how a raw value is parsed) are declared in
:mod:`distsgd.ui.controls`.  A control's value lives in a session store that Streamlit never
cleans (:func:`bind` gives each widget its value from there before it is drawn, and its
``on_change`` hands a change back), so no control loses its value when another moves, a run is
interrupted, or the page changes. On the first run of a session every control the URL names is
read (:func:`start`): a junk value is replaced by the default and an out-of-range one clamped,
each with a notice; after the page is drawn the values are written back to the URL, so a copied
link reproduces the view. Notices are shown as plain text (:func:`distsgd.ui.plain_text.plain`).
A URL can never name a file: a measured trace comes only from an upload.

Notices are written in the language of the run (:func:`start` sets it from the URL first).
"""

from __future__ import annotations

from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.state.common import user_key_from_element_id

from .. import error as sgd
from ..error.general import RealProblem
from ..problems.data import DataSet
from .controls import CONTROLS, UPLOAD_PROBLEM, refresh, url_text
from .i18n import from_locale, set_language, tr
from .plain_text import quote

__all__ = ["start", "value", "set_value", "clamp", "bind", "drawn", "widget_args", "sync_url", "url_values", "notices",
           "notify", "begin_run", "clear_notices", "problem", "PROBLEM_KEYS", "RENAMED_URL_KEYS", "WHOLE_RUNS"]


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
    refresh()  # every run: a family or scheme registered since (a test's) reaches the controls
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
    st.session_state[_FROM_BROWSER] = _sent_by_browser()
    unknown = [k for k in qp if k not in CONTROLS and k not in RENAMED_URL_KEYS]
    if unknown:
        notify(tr("ignored unknown URL parameter(s) {names}", names=", ".join(quote(k, 24) for k in unknown[:3])),
               once=True)
    st.session_state[_STARTED] = True


_FROM_BROWSER = "_controls_from_browser"


def _sent_by_browser() -> dict[str, str]:
    """The controls whose widget value came from the browser with a session's first run, and
    the widget id it came for.  A tab that spoke to another server process (restarted, or the
    other one behind nginx) sends its widgets' values with its next move: the user's latest,
    newer than the URL the app last wrote.  Streamlit holds them by widget id
    (``$$ID-<hash>-<key>``) until that widget is drawn; reading them is reading its session
    state's internals (Streamlit 1.67, pinned; the reconnection is tested over the protocol in
    tests/test_ui_workers.py)."""
    ctx = get_script_run_ctx()
    if ctx is None:  # (bare mode: no browser)
        return {}
    incoming = ctx.session_state._state._new_widget_state.states
    return {key: wid for wid in incoming if (key := user_key_from_element_id(wid) or "") in CONTROLS}


def _drawn_id(key: str) -> str | None:
    """The id of the widget this run drew for ``key`` (Streamlit's internals, as above)."""
    ctx = get_script_run_ctx()
    return None if ctx is None else ctx.session_state._state._key_id_mapper.get_id_from_key(key)


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
        notify(tr("{key} = {value} is outside [{low}, {high}] now; clamped to {new}", key=key, value=url_text(v),
                  low=url_text(lo), high=url_text(hi), new=url_text(new)), once=True)
        set_value(key, new)
    return value(key)


def _changed(key: str) -> None:
    """on_change of a widget: the user's new value goes to the store."""
    v = st.session_state.get(key)
    if v is not None:
        set_value(key, v)


def bind(key: str, bounds: tuple[float, float] | None = None) -> dict[str, Any]:
    """Prepare the widget of ``key``: its value from the store (clamped to ``bounds``), and
    the keyword arguments that tie it to the store (``key``, ``on_change``, ``args``).  On a
    session's first run a value the browser sent for it is left to the widget (:func:`drawn`)."""
    v = clamp(key, *bounds) if bounds is not None else value(key)
    if key not in st.session_state.get(_FROM_BROWSER, ()):
        st.session_state[key] = list(v) if isinstance(v, list) else v
    return dict(key=key, on_change=_changed, args=(key,))


def drawn(key: str, v: Any) -> Any:
    """The value the widget of ``key`` returned; the store takes it if it was the browser's
    (:func:`bind`: no ``on_change`` fires on a session's first run).  If the widget drawn is not
    the one the browser sent a value for (a slider whose bounds follow a control just moved has
    another id), it holds its default instead: the page is drawn again, from the store."""
    sent = st.session_state.get(_FROM_BROWSER)
    if not sent or key not in sent:
        return v
    if _drawn_id(key) != sent.pop(key):
        st.rerun()
    set_value(key, v)
    return v


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


#: session key: set (by distsgd.ui.lessons) while a lesson's step is shown above its page, whose
#: answer, drawn outside the page's fragments, follows every control of the page
WHOLE_RUNS = "_whole_runs"


def begin_run() -> None:
    """At the start of every run: forget the per-run notices of an interrupted run.  A run of a
    fragment alone while a lesson's answer is shown above the page (:data:`WHOLE_RUNS`) becomes a
    run of the whole app, so that the answer follows the control just moved."""
    st.session_state[_RUN] = []
    st.session_state.pop(_FROM_BROWSER, None)  # the browser's values are a first run's only
    ctx = get_script_run_ctx()
    if st.session_state.get(WHOLE_RUNS) and ctx is not None and ctx.fragment_ids_this_run:
        st.rerun(scope="app")


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
        want[key] = [str(x) for x in v] if c.multi else [url_text(v)]
    if value("lesson") != "none":  # a running lesson's link names its step, the first one too
        want["step"] = [value("step")]
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


PROBLEM_KEYS = ("eta", "L", "mu", "sigma2", "b", "f0", "dim")


#: the bundled set shown while the problem control asks for an uploaded file and none is read
UPLOAD_STAND_IN = "breast_cancer"


def problem(real: bool = False, data: DataSet | None = None) -> sgd.Problem | RealProblem:
    """The SGD problem of the controls: the quadratic (μ ≤ L kept by clamping μ, with a notice),
    or with ``real`` and a data set chosen, logistic regression on it with λ, η and b — on the
    uploaded ``data`` when the choice is a file (:data:`UPLOAD_STAND_IN` until one is read)."""
    if real and (choice := value("problem")) != "quadratic":
        if choice == UPLOAD_PROBLEM:
            if data is not None:
                return RealProblem(data.name, value("l2"), value("eta"), value("b"), data=data)
            choice = f"logreg:{UPLOAD_STAND_IN}"
        return RealProblem(choice.removeprefix("logreg:"), value("l2"), value("eta"), value("b"))
    clamp("mu", CONTROLS["mu"].domain.low, value("L"))  # type: ignore[union-attr]
    return sgd.Problem(**{k: value(k) for k in PROBLEM_KEYS})

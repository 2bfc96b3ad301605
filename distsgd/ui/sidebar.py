"""The shared sidebar: delay distribution and its parameters, m, K, H, schemes, seed, budget.

Drawn by ``app.py`` on every page; returns a :class:`Selection` the pages read.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ..clusters import Stragglers
from ..delays import Delay, Empirical, Exponential
from ..params import ParameterError
from ..problems.data import DataSet
from ..topology import graph_fits, topology
from ..traces import Trace, load_trace
from . import controls, plain_text, presets, state
from .i18n import LANGUAGES, N_, tr
from .rerun_caps import NORMAL_MEAN_MIN_STDS, TRACE_MAX_BYTES, UI_BUDGETS

#: the words of the Stragglers choices (the library's cluster kinds; a kind not here shows as itself)
STRAGGLER_LABELS = {"none": N_("none (i.i.d. workers)"), "static": N_("b slow workers"),
                    "markov": N_("slow spells (random)"), "trace": N_("measured per-worker trace")}
#: each Stragglers choice's controls, each delay choice's controls and label: derived from the
#: library's registries by :mod:`distsgd.ui.controls` (the same dicts, kept up to date by ``controls.refresh``)
STRAGGLER_PARAMS = controls.KIND_PARAMS
FAMILY_PARAMS = controls.FAMILY_PARAMS
FAMILY_LABELS = controls.FAMILY_LABELS

#: the selects that show labels instead of their raw options (the browser test reads this; the
#: labels are English message ids, shown through ``tr``)
OPTION_LABELS = {"delay": FAMILY_LABELS, "stragglers": STRAGGLER_LABELS, "lang": LANGUAGES}


@dataclass(frozen=True)
class Selection:
    """What the sidebar chose: ``delay`` is the law X of one mini-batch, ``workers`` who is slow
    (built into a cluster at each chart point's m: :class:`~distsgd.clusters.Stragglers`)."""

    delay: Delay
    workers: Stragglers
    m: int
    K: int
    H: int
    schemes: tuple[str, ...]
    seed: int
    budget: float
    #: the decentralised schemes' graph (a spec of DESIGN §12, built on each point's m)
    graph: str = "ring"


class _Unseen:
    """Where the controls of a closed settings box go (:func:`settings`): nowhere — :func:`number`
    and :func:`choice` give the stored value, and columns and captions are not drawn."""

    def columns(self, spec: Any, **_: Any) -> list[_Unseen]:
        return [self] * (spec if isinstance(spec, int) else len(spec))

    def caption(self, *_: Any, **__: Any) -> None:
        return None


UNSEEN = _Unseen()


def settings(label: str, key: str, open_now: bool = False) -> Any:
    """A page's box of settings (its problem, learning rate, horizon…), drawn only while open: the
    container to draw the controls in, or :data:`UNSEEN` when closed — then the controls keep their
    stored values, drawn by nobody (each widget costs the shared server ≈ 0.3 ms a rerun; a box
    held ten, with their columns).  Opening or closing it reruns the page.  ``open_now``: open it
    (a file the page waits for is uploaded in it)."""
    full = f"settings_{key}"
    if open_now:
        st.session_state[full] = True
    box = st.expander(label, key=full, on_change="rerun")
    return box if box.open else UNSEEN


def number(key: str, where: Any = None, bounds: tuple[float, float] | None = None,
           slider: bool = True, help: str | None = None) -> Any:
    """A slider or number box bound to a declared control (its value kept in the store); its label
    and help in the current language (``help`` given here is shown as it is).  In :data:`UNSEEN`
    the stored value, clamped to the bounds as the widget would be."""
    c = controls.CONTROLS[key]
    where = where or st
    args = state.widget_args(key, bounds)
    if where is UNSEEN:
        return state.clamp(key, args["min_value"], args["max_value"])
    bind = state.bind(key, (args["min_value"], args["max_value"]))
    if args["min_value"] >= args["max_value"]:  # one value allowed: no widget, but the key holds it
        v = state.value(key)
        where.markdown(tr("{label}: **{value}**", label=tr(c.label), value=v))
        return v
    f = where.slider if slider else where.number_input
    return state.drawn(key, f(tr(c.label), help=help or (tr(c.help) if c.help else None), **args, **bind))


def _formatter(texts: dict[str, str]) -> Callable[[Any], str]:
    """A format_func showing texts translated now, in this run: Streamlit may call it outside the
    run (AppTest does, where the language is unknown), so it must not call ``tr`` itself."""
    return lambda v: texts.get(v, str(v))


def choice(key: str, where: Any = None, labels: dict[str, str] | None = None, radio: bool = False) -> Any:
    """A select (radio, multiselect) bound to a declared control; each option shown by its label
    (``labels``, else :data:`controls.CHOICE_LABELS`, else the option itself) in the current language."""
    c = controls.CONTROLS[key]
    assert c.options is not None
    if where is UNSEEN:
        return state.value(key)
    where = where or st
    bind = state.bind(key)
    shown = labels if labels is not None else controls.CHOICE_LABELS.get(key, {})
    help = tr(c.help) if c.help else None
    fmt = _formatter({v: tr(shown[v]) if v in shown else str(v) for v in c.options})
    if c.multi:
        return state.drawn(key, where.multiselect(tr(c.label), options=list(c.options), help=help, **bind))
    f = where.radio if radio else where.selectbox
    kw = {"horizontal": True} if radio else {}
    return state.drawn(key, f(tr(c.label), options=list(c.options), format_func=fmt, help=help, **kw, **bind))


DEFAULT_DELAY = Exponential(rate=1.0, shift=0.0)


_TRACE = "_trace"  # session key of the parsed upload: (file id, Empirical or None, message)


def read_upload(up: Any, parse: Callable[[Any], Any], what: str = "") -> tuple[Any, str]:
    """(the parsed upload, "") or (None, why): over TRACE_MAX_BYTES, or the ParameterError
    ``parse`` raises (``what`` prefixes the size message)."""
    if up.size > TRACE_MAX_BYTES:
        return None, tr("{prefix}the file is larger than {size} MiB", prefix=tr(what) if what else "",
                        size=TRACE_MAX_BYTES // 2**20)
    try:
        return parse(up), ""
    except ParameterError as exc:
        return None, controls.explain(exc)


def _uploaded(widget: str, store: str, parse: Callable[[Any], Any], what: str = "") -> None:
    """on_change of an uploader: parse the new file once (not on every rerun) into
    ``st.session_state[store]`` = (file id, parsed or None, message); nothing when removed."""
    up = st.session_state.get(widget)
    if up is None:
        st.session_state.pop(store, None)
        return
    st.session_state[store] = (up.file_id, *read_upload(up, parse, what))


def _trace_uploaded() -> None:
    """on_change of the delay's uploader: the times as an empirical law."""
    _uploaded("trace", _TRACE, lambda up: Empirical.from_text(up.getvalue().decode("utf-8", errors="replace"),
                                                              name=up.name))


def _trace_delay(where: Any) -> Delay:
    where.file_uploader(tr("measured gradient times (CSV/text, one number per line; first column)"),
                        type=["csv", "txt", "tsv"], key="trace", on_change=_trace_uploaded)
    got = st.session_state.get(_TRACE)
    if got is None:
        state.notify(tr("Upload a trace of measured times to use it; showing exp(rate=1) meanwhile."))
        return DEFAULT_DELAY
    file_id, emp, why = got
    if emp is None:
        state.notify(tr("trace: {why}; showing exp(rate=1).", why=why))
        return DEFAULT_DELAY
    shift = float(state.value("delta"))
    if shift == emp.shift:
        return emp
    # the shifted law, made once per (file, Δ) and kept, so its caches (digest, NLU) survive
    kept = st.session_state.get("_trace_shifted")
    if kept is None or kept[:2] != (file_id, shift):
        kept = (file_id, shift, dataclasses.replace(emp, shift=shift))
        st.session_state["_trace_shifted"] = kept
    return kept[2]


CLUSTER_TRACE = "_cluster_trace"  # session key of the parsed per-worker trace: (file id, Trace or None, message)


def _cluster_trace_uploaded() -> None:
    """on_change of the per-worker trace uploader (Stragglers)."""
    _uploaded("cluster_trace", CLUSTER_TRACE, lambda up: load_trace(up.getvalue(), name=up.name), N_("trace: "))


def _stragglers(where: Any, delay: Delay) -> Stragglers:
    """The Stragglers section: who is slow, and for how long (DESIGN §7)."""
    kind = choice("stragglers", where, STRAGGLER_LABELS)
    trace: Trace | None = None
    if kind == "trace":
        where.file_uploader(tr("per-worker step times (CSV, TSV or Parquet: worker, step, duration; or one "
                               "column per worker)"), type=["csv", "tsv", "parquet"], key="cluster_trace",
                            on_change=_cluster_trace_uploaded)
        got = st.session_state.get(CLUSTER_TRACE)
        if got is None or got[1] is None:
            state.notify(tr("Upload a per-worker trace to use it; showing i.i.d. workers meanwhile.") if got is None
                         else tr("{error}; showing i.i.d. workers.", error=got[2]))
            return Stragglers(delay)
        trace = got[1]
        if trace.layout == "column":
            state.notify(tr("This file has times only (no worker column): use it as the delay law X "
                            "(Delay distribution → measured trace); showing i.i.d. workers."))
            return Stragglers(delay)
    for key in STRAGGLER_PARAMS[kind]:
        if key == "trace_mode":
            choice(key, where)
        elif key == "slow":  # up to m, never clamped (b > m means all m: the caption says so)
            number(key, where, bounds=(0, max(int(state.value("m")), int(state.value("slow")), 1)))
        else:
            number(key, where)
    shown = {key: state.value(key) for key in STRAGGLER_PARAMS[kind]}  # only what this kind shows
    try:
        return Stragglers(delay, kind, trace=trace, **shown)
    except ParameterError as exc:  # e.g. s·X outside the law's domain: say so, and draw i.i.d. workers
        state.notify(tr("{error}; showing i.i.d. workers.", error=controls.explain(exc)))
        return Stragglers(delay)


def _stragglers_caption(w: Stragglers, m: int) -> str:
    """One true sentence about the stragglers chosen, at the sidebar's m."""
    if w.kind == "static":
        b = min(w.slow, m)
        return (tr("workers 1–{b} of {m} take {s:g}·X every mini-batch", b=b, m=m, s=w.slowdown) if b
                else tr("no slow worker (b = 0)"))
    if w.kind == "markov":
        if w.slow_fraction == 0 or w.slowdown == 1:
            return tr("no slow mini-batch (π = 0 or s = 1): i.i.d. workers")
        spell = 1 / ((1 - w.slow_fraction) * (1 - w.persistence))
        return tr("a mini-batch is slow ({s:g}·X) with long-run probability π = {pi:g}; a slow spell lasts "
                  "{spell:.3g} mini-batches on average", s=w.slowdown, pi=w.slow_fraction, spell=spell)
    if w.kind == "trace":
        label = controls.CHOICE_LABELS["trace_mode"].get(w.trace_mode, w.trace_mode)
        t, mode = w.trace, tr(label)
        if t.layout == "column":  # (such a file is refused above; Trace.describe's words, from its numbers)
            return tr("{name}: {n} times in one column (pooled use only); {mode}", name=plain_text.plain(t.name),
                      n=t.pooled.size,
                      mode=mode)
        return tr("{name}: {m} workers × {steps} complete steps ({dropped} dropped, {duplicates} duplicates, "
                  "{missing} missing); {mode}", name=plain_text.plain(t.name), m=t.m, steps=len(t.complete_steps),
                  dropped=t.dropped_steps, duplicates=t.duplicates, missing=t.missing, mode=mode)
    return tr("every mini-batch of every worker i.i.d. X")


def _delay_text(delay: Delay) -> str:
    """The law's label (a formula, as it is), with a measured trace's words in the current language."""
    label = delay.label
    if isinstance(delay, Empirical):
        name, n = os.path.basename(delay.file), delay.values.size
        label = label.replace(f"trace {name} (n={n})", tr("trace {name} (n={n})", name=name, n=n))
    return label


#: what each schedule choice changes: (the parameter it sweeps against, the scheme it runs, its start's
#: control, the rule of its spec)
SCHEDULED = {"adasync": ("K", "k-sync", "K0", "adasync"), "adasync-k-async": ("K", "k-async", "K0", "adasync"),
             "adacomm": ("H", "local-sgd", "H0", "adacomm")}


def schedule_controls(m: int) -> str | None:
    """The adaptive schedule's controls in one row (off, AdaSync of k-sync's or k-async's K from
    K₀ ≤ m, AdaComm from H₀; the checkpoint period): the spec they make (DESIGN §13), or None when off."""
    c1, c2, c3 = st.columns([2, 1, 1])
    rule = choice("schedule", c1, radio=True)
    if rule not in SCHEDULED:
        return None
    key, name = SCHEDULED[rule][2:]
    start = number(key, c2, bounds=(1, m) if key == "K0" else None, slider=False)
    period = number("period", c3, slider=False)
    return f"{name}({key}={start}, period={controls.url_text(float(period))})"


def problem_controls(real: bool = False, where: Any = None) -> Any:
    """The problem and SGD hyper-parameters (η, L, μ ≤ L, σ², b, F₀, d) as number boxes in four
    columns of ``where``, bound to the same store on every page that uses them; returns the Problem.
    With ``real`` (the Error page) the problem is chosen first: for a data set, λ, η and b only, and
    the returned value is a :class:`~distsgd.error.general.RealProblem`."""
    where = where or st
    if real:
        choice("problem", where)
        if state.value("problem") != "quadratic":
            data = _problem_data(where) if state.value("problem") == controls.UPLOAD_PROBLEM else None
            c1, c2, c3 = where.columns(3)
            number("l2", c1, slider=False)
            number("eta", c2, slider=False)
            number("b", c3, slider=False)
            return state.problem(real=True, data=data)
    c1, c2, c3, c4 = where.columns(4)
    number("eta", c1, slider=False)
    L = number("L", c1, slider=False)
    mu_dom = controls.CONTROLS["mu"].domain
    assert mu_dom is not None
    number("mu", c2, slider=False, bounds=(mu_dom.low, min(L, mu_dom.high)))  # μ ≤ L
    number("sigma2", c2, slider=False)
    number("b", c3, slider=False)
    number("f0", c3, slider=False)
    number("dim", c4, slider=False)
    return state.problem()


PROBLEM_DATA = "_problem_data"  # session key of the read data file: (file id, DataSet or None, message)


def _problem_file_uploaded() -> None:
    """on_change of the data file's uploader: read once, within the upload and the file caps."""
    _uploaded("problem_file", PROBLEM_DATA, lambda up: DataSet.read(up.getvalue(), name=up.name), N_("data file: "))
    st.session_state[_PROBLEM_DATA_CHANGED] = True


_PROBLEM_DATA_CHANGED = "_problem_data_changed"


def _problem_data(where: Any) -> DataSet | None:
    """The problem control's uploader (in ``where``) and the data set read from it; None (with a
    notice saying which bundled set is shown instead) until a file is read.  A new file reruns the
    whole page: the uploader sits in a fragment, and a run of the fragment alone would leave the
    page's notices (at its top, outside the fragment) as the last full run left them."""
    if where is not UNSEEN:
        where.file_uploader(tr("your data: CSV or TSV with one example per row and the class label in the last "
                               "column, or a LIBSVM file"), type=["csv", "tsv", "txt", "svm", "libsvm", "svmlight"],
                            key="problem_file", on_change=_problem_file_uploaded)
    got = st.session_state.get(PROBLEM_DATA)
    label = controls.CHOICE_LABELS["problem"][f"logreg:{state.UPLOAD_STAND_IN}"]
    stand_in = tr(label)
    ctx = get_script_run_ctx()
    if st.session_state.pop(_PROBLEM_DATA_CHANGED, False) and ctx is not None and ctx.fragment_ids_this_run:
        st.rerun(scope="app")
    if got is None:
        state.notify(tr("Upload a data file to use it; showing {problem} meanwhile.", problem=stand_in))
        return None
    if got[1] is None:
        state.notify(tr("{error}; showing {problem}.", error=got[2], problem=stand_in))
        return None
    return got[1]


def awaits_upload() -> bool:
    """True when the problem is the user's data set and no file has been read yet (the page opens
    the box its uploader is in)."""
    got = st.session_state.get(PROBLEM_DATA)
    return state.value("problem") == controls.UPLOAD_PROBLEM and (got is None or got[1] is None)


def _joint_bounds(key: str) -> tuple[float, float] | None:
    """Bounds one family parameter takes from another (each valid alone, not together):
    uniform b > a, and a truncated normal with mean/std ≥ −30 (so P(N ≥ 0) is representable)."""
    c = controls.CONTROLS[key]
    assert c.domain is not None
    if key == "u_high":
        return (max(c.domain.low, state.value("u_low") + (c.step or 0.01)), c.domain.high)
    if key == "n_mean":
        return (max(c.domain.low, NORMAL_MEAN_MIN_STDS * state.value("n_std")), c.domain.high)
    return None


NO_PRESET = "—"  # the preset box's first entry: no preset


def _preset_chosen() -> None:
    """on_change of the preset box: apply the chosen preset."""
    if st.session_state["preset"] != NO_PRESET:
        presets.apply_preset(st.session_state["preset"])


def sidebar() -> Selection:
    controls.refresh()  # a family or scheme registered since the last run is a choice now
    sb = st.sidebar
    choice("lang", sb, LANGUAGES, radio=True)  # first: every other string depends on it
    sb.selectbox(tr("Preset"), [NO_PRESET, *presets.PRESETS],
                 format_func=_formatter({n: tr(n) for n in presets.PRESETS}), key="preset",
                 on_change=_preset_chosen, help=tr("Set every control at once to a classroom example."))
    sb.subheader(tr("Delay X of one gradient"))
    family = choice("delay", sb, FAMILY_LABELS)
    for key in FAMILY_PARAMS[family]:
        number(key, sb, bounds=_joint_bounds(key))
    if controls.FAMILIES[family].uploaded:
        delay = _trace_delay(sb)
    else:
        try:
            delay = controls.FAMILIES[family].build(state.value)
        except ParameterError as exc:
            state.notify(tr("{error}; showing exp(rate=1) instead.", error=controls.explain(exc)))
            delay = DEFAULT_DELAY
    sb.caption(f"X ~ {_delay_text(delay)}, E[X] = {delay.mean:.4g}" + (" (NLU)" if delay.is_nlu else ""))
    sb.subheader(tr("Stragglers"))
    workers = _stragglers(sb, delay)
    sb.subheader(tr("Workers and schemes"))
    if workers.m is not None:  # a trace fixes m (the slider's own value is kept for later)
        m = workers.m
        sb.markdown(tr("workers m: **{m}** (the trace's)", m=m))
    else:
        m = number("m", sb)
    sb.caption(_stragglers_caption(workers, int(m)))
    K = number("K", sb, bounds=(1, m))  # K ≤ m: clamped (with a notice) only when m falls below K
    H = number("H", sb)
    schemes = choice("schemes", sb)
    if not schemes:
        state.notify(tr("No scheme selected: showing sync."))
        schemes = ["sync"]
    graph = _graph(sb, int(m))
    with sb.expander(tr("Simulation")):
        seed = number("seed", st, slider=False)
        budget = choice("budget", st)
    return Selection(delay=delay, workers=workers, m=int(m), K=int(K), H=int(H), schemes=tuple(schemes),
                     seed=int(seed), budget=UI_BUDGETS[budget], graph=graph)


def _graph(sb: Any, m: int) -> str:
    """The graph of d-psgd and ad-psgd (and of the graph page); one m nodes cannot form (a
    hypercube on m not a power of 2) is replaced by the ring, with a notice."""
    graph = str(choice("graph", sb))
    if not graph_fits(graph, m):
        try:
            topology(graph, m, seed=0)
        except ParameterError as exc:  # why (graph_fits said it cannot be built)
            state.notify(tr("{error}; showing the ring instead.", error=controls.explain(exc)))
        return "ring"
    return graph


def current() -> Selection:
    """The selection the sidebar made in this run (pages call this)."""
    sel = st.session_state.get("_selection")
    if sel is None and PagesManager.uses_pages_directory:
        # the server's first session opened a page by its URL before app.py ever ran, so Streamlit
        # ran the page the old way (the pages/ directory, without app.py: no URL, no navigation);
        # app.py's st.navigation is what clears this flag — clear it and run the app instead
        PagesManager.uses_pages_directory = False
        st.rerun()
    if sel is None:  # a page run on its own (AppTest.switch_page): draw the sidebar here
        sel = sidebar()
        st.session_state["_selection"] = sel
    return sel

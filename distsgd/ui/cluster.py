"""The "Your cluster" page's input: a bundled example or an upload, parsed once and kept by its
digest, with a column mapping when the layout cannot be detected; and "Use this cluster", which
hands the trace to the sidebar's Stragglers section (so every page replays it)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ..examples import EXAMPLES, example_trace
from ..params import ParameterError
from ..traces import Trace, load_trace, trace_columns
from . import controls, plain_text, state
from .i18n import N_, tr
from .rerun_caps import TRACE_MAX_BYTES
from .sidebar import CLUSTER_TRACE, choice, read_upload

__all__ = ["choose_trace", "use_cluster", "describe"]

_PARSED = "_page_trace"  # session key: (file id, mapping, Trace or None, message, columns)
_ROLES = {"worker": N_("worker"), "step": N_("step"), "duration": N_("duration")}  # role → its box's label
_NONE = "—"
#: the bundled examples' titles and descriptions (distsgd.examples), marked for translation
_EXAMPLE_TEXTS = frozenset({
    N_("One persistent slow machine"),
    N_("Eight workers of which gpu-06 takes about 1.8 times its step's median at every step: the summary "
       "flags it as a persistent straggler, it is the last to finish every step, so sync always waits "
       "for it and K-sync with K = 7 never does."),
    N_("A straggler emerges mid-run"),
    N_("Ten workers of which gpu-04 and gpu-09 run normally for five sixths of the run and about five "
       "times slower from step 500: their slowdown over the whole run is about 1, the summary's "
       "windows flag them from about step 470 (a window starts before the change), and a sync "
       "iteration of the last sixth takes more than four times as long as one before it."),
    N_("A heterogeneous cluster"),
    N_("Ten workers of two hardware generations, five at about 0.45 times the step median and five at "
       "1.5–2 times, with occasional random slow steps: the old generation is flagged as persistent "
       "stragglers, and K-sync with K = 5, which waits for the new generation only, runs about four "
       "times faster than sync."),
})


def _example_text(text: str) -> str:
    """An example's title or description in the current language (as it is if not marked above)."""
    return tr(text) if text in _EXAMPLE_TEXTS else text


def describe(trace: Trace) -> str:
    """:meth:`Trace.describe` in the current language (the same line in English)."""
    if trace.layout == "column":
        return tr("{name}: {n} times in one column (pooled use only)", name=trace.name, n=trace.pooled.size)
    return tr("{name}: {m} workers × {steps} complete steps ({dropped} dropped, {duplicates} duplicates, "
              "{missing} missing)", name=trace.name, m=trace.m, steps=len(trace.complete_steps),
              dropped=trace.dropped_steps, duplicates=trace.duplicates, missing=trace.missing)


def _columns(data: bytes, name: str) -> list[str]:
    """The file's column names (its header or footer only, bounded: traces.trace_columns), for the
    mapping boxes; none when that is refused too (the loader's message, shown, says why)."""
    try:
        return trace_columns(data, name)
    except ParameterError:
        return []


def _parse(up: Any, mapping: dict[str, str] | None) -> tuple[Trace | None, str, list[str]]:
    """The trace, or None with why and (for a mapping) the file's columns."""
    trace, why = read_upload(up, lambda u: load_trace(u.getvalue(), mapping, name=u.name), "trace: ")
    return trace, why, ([] if trace is not None or up.size > TRACE_MAX_BYTES else _columns(up.getvalue(), up.name))


def _uploaded() -> Trace | None:
    up = st.file_uploader(tr("per-worker step times (CSV, TSV or Parquet)"), type=["csv", "tsv", "parquet"],
                          key="page_trace")
    if up is None:  # back on the page after another: the file last parsed, if it was a trace
        got = st.session_state.get(_PARSED)
        if got is not None and got[2] is not None:
            st.caption(tr("Showing {name}, uploaded earlier; upload a file to replace it.", name=got[2].name))
            return got[2]
        return None
    mapping = {r: v for r in _ROLES if (v := st.session_state.get(f"map_{r}", _NONE)) != _NONE} or None
    got = st.session_state.get(_PARSED)
    if got is None or got[:2] != (up.file_id, mapping):  # parsed once per file and mapping
        got = (up.file_id, mapping, *_parse(up, mapping))
        st.session_state[_PARSED] = got
    _, _, trace, why, cols = got
    if trace is None:
        st.error(plain_text.plain(why), icon=":material/error:")
        if cols:
            st.caption(tr("Say which column is what (a wide file: map only the step column, if any):"))
            for c, (role, label) in zip(st.columns(3), _ROLES.items(), strict=True):
                c.selectbox(tr(label), [_NONE, *cols], key=f"map_{role}")
    return trace


def choose_trace() -> Trace | None:
    """A bundled example or an upload (``trace_source``), or None when nothing is chosen yet."""
    if choice("trace_source", labels={"example": tr("bundled example"), "upload": tr("upload")},
              radio=True) == "upload":
        return _uploaded()
    name = choice("trace_example", labels={n: _example_text(e.title) for n, e in EXAMPLES.items()})
    st.caption(_example_text(EXAMPLES[name].description))
    return example_trace(name)


def use_cluster(trace: Trace) -> None:
    """on_click of "Use this cluster": the sidebar's Stragglers section replays this trace."""
    st.session_state[CLUSTER_TRACE] = (f"page:{trace.digest}", trace, "")
    state.set_value("stragglers", "trace")
    mode = state.value("trace_mode")
    label = controls.CHOICE_LABELS["trace_mode"].get(mode, mode)  # the mode's name, as the sidebar shows it
    state.notify(tr("Every page now uses {name} ({m} workers, {mode}): see Stragglers in the sidebar.",
                    name=trace.name, m=trace.m, mode=tr(label)), once=True)

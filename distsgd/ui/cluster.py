"""The "Your cluster" page's input: a bundled example or an upload, parsed once and kept by its
digest, with a column mapping when the layout cannot be detected; and "Use this cluster", which
hands the trace to the sidebar's Stragglers section (so every page replays it)."""

from __future__ import annotations

import io
from typing import Any

import pandas as pd  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import streamlit as st

from ..examples import EXAMPLES, example_trace
from ..traces import Trace, load_trace
from . import state
from .limits import TRACE_MAX_BYTES
from .sidebar import CLUSTER_TRACE, choice, read_upload

__all__ = ["choose_trace", "use_cluster"]

_PARSED = "_page_trace"  # session key: (file id, mapping, Trace or None, message, columns)
_ROLES = ("worker", "step", "duration")
_NONE = "—"


def _columns(data: bytes, name: str) -> list[str]:
    """The file's column names (the header only: cheap), for the mapping boxes."""
    try:
        if data.startswith(b"PAR1") or name.lower().endswith((".parquet", ".pq")):
            return [str(c) for c in pq.read_schema(io.BytesIO(data)).names]
        sep = "\t" if b"\t" in data.split(b"\n", 1)[0] else ","
        return [str(c) for c in pd.read_csv(io.BytesIO(data), sep=sep, nrows=0).columns]
    except (ValueError, OSError, pd.errors.ParserError):  # unreadable: the loader's message says why
        return []


def _parse(up: Any, mapping: dict[str, str] | None) -> tuple[Trace | None, str, list[str]]:
    """The trace, or None with why and (for a mapping) the file's columns."""
    trace, why = read_upload(up, lambda u: load_trace(u.getvalue(), mapping, name=u.name), "trace: ")
    return trace, why, ([] if trace is not None or up.size > TRACE_MAX_BYTES else _columns(up.getvalue(), up.name))


def _uploaded() -> Trace | None:
    up = st.file_uploader("per-worker step times (CSV, TSV or Parquet)", type=["csv", "tsv", "parquet"],
                          key="page_trace")
    if up is None:  # back on the page after another: the file last parsed, if it was a trace
        got = st.session_state.get(_PARSED)
        if got is not None and got[2] is not None:
            st.caption(f"Showing {got[2].name}, uploaded earlier; upload a file to replace it.")
            return got[2]
        return None
    mapping = {r: v for r in _ROLES if (v := st.session_state.get(f"map_{r}", _NONE)) != _NONE} or None
    got = st.session_state.get(_PARSED)
    if got is None or got[:2] != (up.file_id, mapping):  # parsed once per file and mapping
        got = (up.file_id, mapping, *_parse(up, mapping))
        st.session_state[_PARSED] = got
    _, _, trace, why, cols = got
    if trace is None:
        st.error(state.plain(why), icon=":material/error:")
        if cols:
            st.caption("Say which column is what (a wide file: map only the step column, if any):")
            for c, role in zip(st.columns(3), _ROLES, strict=True):
                c.selectbox(role, [_NONE, *cols], key=f"map_{role}")
    return trace


def choose_trace() -> Trace | None:
    """A bundled example or an upload (``trace_source``), or None when nothing is chosen yet."""
    if choice("trace_source", labels={"example": "bundled example", "upload": "upload"}, radio=True) == "upload":
        return _uploaded()
    name = choice("trace_example", labels={n: e.title for n, e in EXAMPLES.items()})
    st.caption(EXAMPLES[name].description)
    return example_trace(name)


def use_cluster(trace: Trace) -> None:
    """on_click of "Use this cluster": the sidebar's Stragglers section replays this trace."""
    st.session_state[CLUSTER_TRACE] = (f"page:{trace.digest}", trace, "")
    state.set_value("stragglers", "trace")
    state.notify(f"Every page now uses {trace.name} ({trace.m} workers, "
                 f"{state.value('trace_mode')}): see Stragglers in the sidebar.", once=True)

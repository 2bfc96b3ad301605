"""Helpers every page uses: header with the formula, notices, charts with CSV and captions,
and a guard that turns any error into a message (never a traceback)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from .. import curves
from ..params import ParameterError
from . import controls, figure_text, i18n, plain_text, state, views, warmup
from .i18n import tr
from .rerun_caps import LOCAL_SGD_FREE_D

_BOX = "_notice_box"
_IN_FRAGMENT = "_in_fragment"


def header(title: str, intro: str, latex: str | Sequence[str] = ()) -> None:
    """Title, a sentence, the formulas; under them a place for this run's notices (filled by
    :func:`show_notices` at the end of the run, so notices raised anywhere in it appear).
    ``title`` and ``intro`` come translated (``tr("…")`` at the call); formulas are not."""
    st.title(title)
    st.markdown(intro)
    for f in [latex] if isinstance(latex, str) else latex:
        st.latex(f)
    st.session_state[_BOX] = st.container()


def show_notices(box: Any = None) -> None:
    """Notices about clamped or replaced inputs (URL or widgets) of this run, as plain text
    (user text in them is escaped and truncated: never a link, an image or a formula)."""
    box = box or st.session_state.pop(_BOX, None) or st.container()
    for note in state.notices():
        box.warning(plain_text.plain(note), icon=":material/warning:")
    state.clear_notices()


def fragment(body: Callable[..., None], *args: Any) -> None:
    """Draw ``body(*args)`` as an ``st.fragment``: moving a control drawn inside it reruns only
    this function (with the same ``args``: the sidebar's selection of the last full run), not the
    sidebar, the header or the page's other charts.  A sidebar change still reruns everything.

    On a run of the fragment alone ``app.py`` does not run, so the fragment does the end of a run
    itself: it shows the notices its controls raised (a clamped value) at its top and writes the
    controls to the URL.  Fragments nest; the outermost one that runs does this."""
    st.fragment(_fragment_body)(body, *args)


def _fragment_body(body: Callable[..., None], *args: Any) -> None:
    ctx = get_script_run_ctx()
    alone = bool(ctx is not None and ctx.fragment_ids_this_run) and not st.session_state.get(_IN_FRAGMENT)
    if not alone:
        body(*args)
        return
    state.begin_run()
    box = st.container()
    st.session_state[_IN_FRAGMENT] = True
    try:
        body(*args)
    finally:
        st.session_state.pop(_IN_FRAGMENT, None)
    show_notices(box)
    state.sync_url()


def chart(fig: Any, rows: Sequence[dict[str, Any]] | Callable[[], Sequence[dict[str, Any]]], name: str,
          notice: str = "") -> None:
    """A plotly chart, a CSV download of its data, and a 'what to notice' caption.

    ``rows`` (or a function that gives them, for a large table) become CSV only when the
    button is clicked, never on a rerun."""
    # a cached figure is shared by every session: i18n.shown translates a copy, kept on the figure
    st.plotly_chart(i18n.shown(fig, figure_text.FIGURE_TEXT), width="stretch", key=f"chart-{name}")
    if not callable(rows):  # a Monte Carlo warning is said where its numbers are drawn
        mc_warnings(rows)
    if notice:
        st.caption(tr("**What to notice.** {notice}", notice=notice))
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")

    def csv() -> str:
        return curves.to_csv(rows() if callable(rows) else rows)

    st.download_button(tr("Download the data (CSV)"), csv, file_name=f"distsgd-{slug}.csv",
                       mime="text/csv", key=f"csv-{slug}", on_click="ignore")


def theory_first(view: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """``view(*args)``: a runtime chart's rows and figure.  While the server's kernels are not yet
    loaded (:func:`distsgd.ui.warmup.pending`: a few seconds after a start, longer on the first start
    after an install, which compiles them), the chart's analytic curves, ``view(*args, simulate=False)``,
    are drawn at once in its place with a caption saying that the markers follow; both go when the
    chart itself (or an error) is drawn."""
    if not warmup.pending():
        return view(*args)
    slot = st.empty()
    with slot.container():
        theory = view(*args, simulate=False)["figure"]
        st.plotly_chart(i18n.shown(theory, figure_text.FIGURE_TEXT), width="stretch", key="chart-theory-first")
        st.caption(tr("Theory only for now: the Monte Carlo markers follow as soon as the kernels are loaded "
                      "(after an install, the server's first start compiles them first)."))
    try:
        return view(*args)
    finally:  # the chart, or the page's error message, in their place
        slot.empty()


def mc_warnings(rows: Sequence[dict[str, Any]]) -> None:
    """A warning per distinct Monte Carlo note among the rows (:func:`views.mc_notes`)."""
    for line in views.mc_notes(rows):
        st.warning(plain_text.plain(line), icon=":material/warning:")


def simulated(summary: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A warning for each scheme a chart could not simulate (with the reason), and for each
    Monte Carlo note of the E[T] its time axis used; the others."""
    for s in summary:
        if "skipped" in s:
            st.warning(plain_text.plain(tr("{scheme}: not simulated — {why}", scheme=s.get("scheme", "?"),
                                           why=s["skipped"])), icon=":material/warning:")
    mc_warnings(summary)
    return [s for s in summary if "skipped" not in s]


def free_averaging_note(schemes: Sequence[str]) -> None:
    """Say the value of D this page uses for local SGD (it has no D control)."""
    if "local-sgd" in schemes:
        st.caption(tr("Local SGD here averages for free (D = {D}); its averaging time D is set on "
                      "the *Local SGD and communication* page.", D=f"{LOCAL_SGD_FREE_D:g}"))


def cell(v: Any) -> str:
    """One table cell as text: numbers to 4 significant digits, None as '—' (a column must not
    mix text and numbers, or Arrow cannot serialise it)."""
    if v is None:
        return "—"
    if isinstance(v, float):
        return "∞" if v == float("inf") else f"{v:.4g}"
    return str(v)


def table(rows: Sequence[dict[str, Any]], **column_config: Any) -> None:
    """A read-only table of dicts, every cell formatted by :func:`cell` (headers as given: a
    ``column_config`` names a column by its header in the current language)."""
    st.dataframe([{k: cell(v) for k, v in r.items()} for r in rows], hide_index=True, width="stretch",
                 column_config=column_config or None)


@contextlib.contextmanager
def guard() -> Iterator[None]:
    """Show bad input as an error message and anything unexpected as a short apology."""
    try:
        yield
    except ParameterError as exc:
        st.error(_cannot(exc), icon=":material/block:")
    except Exception as exc:  # the hosted app never shows a traceback
        st.error(tr("Something went wrong computing this view ({error}). "
                    "Try other settings; the issue has been logged.", error=type(exc).__name__),
                 icon=":material/block:")
        import logging
        logging.getLogger("distsgd").exception("page error")


def _cannot(exc: ParameterError) -> str:
    """The message for bad input: the library's refusal in the reader's language
    (:func:`controls.explain`: from its reason code and fields, the parameter named by its control)."""
    return tr("Cannot compute this view: {why}", why=plain_text.plain(controls.explain(exc)))


def m_values(fixed: int | None, grid: Sequence[int]) -> tuple[int, ...]:
    """The m values of a chart over m: the grid, or only the m a measured trace fixes (with a note)."""
    if fixed is None:
        return tuple(grid)
    st.info(tr("A measured trace fixes m = {m}: this chart shows that m only.", m=fixed))
    return (fixed,)


def stragglers_note(workers: Any) -> None:
    """Under a page's i.i.d. formulas: which formulas hold for the stragglers chosen (DESIGN §7)."""
    if workers.kind == "none":
        return
    st.latex(views.tex_words(tr("with stragglers:")) + r"\ \mathbb{E}[T_{K\text{-sync}}]=\int_0^\infty "
             r"P\big(\#\{i: X_i\le x\}<K\big)\,dx,\quad "
             r"\mathbb{E}[T_{K\text{-batch-async}}]=\frac{K}{\sum_i 1/\mathbb{E}[X_i]}")
    st.caption(tr("The workers are not identical here: K-sync (and sync, K = m) is the K-th of independent, "
                  "non-identical times, a Poisson-binomial integral (for slow spells, a mixture over how many "
                  "workers are slow, exact whatever ρ; for a replayed trace, the mean over its steps); async and "
                  "K-batch-async run at the sum of the workers' rates; K-async has a bound only when every worker's "
                  "law is new-longer-than-used; K-batch-sync is the K-th point of the superposed renewal processes "
                  "and local SGD the largest of the workers' sums of H times, each with one law per group of "
                  "workers (under slow spells both have Monte Carlo only; a replayed trace gives local SGD "
                  "exactly)."))

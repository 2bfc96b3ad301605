"""Sweep results: a results file of ``python -m distsgd sweep`` charted — any result against any
swept parameter, one line per value of another."""

import streamlit as st

from distsgd.ui import page, sidebar, sweep_results
from distsgd.ui.i18n import tr

sidebar.current()
page.header(
    tr("Sweep results"),
    tr("Open the Parquet file a sweep wrote (`python -m distsgd sweep GRID.toml --out RESULTS.parquet`, on this "
       "machine or on a Dask cluster) — or look at the bundled example — and chart any result against any "
       "parameter the grid varied, one line per value of another; the other varied parameters are held at the "
       "values you pick."),
    [],
)
_KEYS = ("sw_x", "sw_y", "sw_group")  # the page's choices, kept across pages in this dict
_KEPT = "_sweep_choices"


def _pick(label: str, options: list, key: str, where=st, default: object = None) -> object:
    """A selectbox whose choice survives a page switch (options depend on the file)."""
    kept = st.session_state.setdefault(_KEPT, {})
    want = kept[key] if key in kept and kept[key] in options else default
    index = options.index(want) if want in options else 0
    value = where.selectbox(label, options, index=index, key=key, format_func=sweep_results.option)
    kept[key] = value
    return value


def body() -> None:
    source = st.radio(tr("Results"), ["example", "upload"], horizontal=True, key="sw_source",
                      format_func=lambda v: tr("bundled example") if v == "example" else tr("upload"))
    with page.guard():
        if source == "upload":
            up = st.file_uploader(tr("results file (Parquet)"), type=["parquet"], key="sw_file")
            if up is None:
                st.info(tr("Upload a results file, or look at the bundled example."))
                return
            frame = sweep_results.Frame(sweep_results.read_results(up.getvalue(), up.name))
        else:
            frame = sweep_results.example_results()
            st.caption(tr("The bundled example: `examples/sweep-example.toml` — four schemes × m × K on exponential "
                          "delays, with and without two slow workers."))
        varied, outputs, failed = frame.varied, frame.outputs, frame.failed
        st.caption(tr("{n} points, {k} with an error; varied: {varied}.", n=len(frame.df), k=len(failed),
                      varied=", ".join(sweep_results.code(v) for v in varied) or "—"))
        if not varied or not outputs:
            st.info(tr("This file varies no parameter or holds no result to chart."))
            return
        c1, c2, c3 = st.columns(3)
        x = _pick(tr("against"), varied, "sw_x", c1, next((v for v in varied if v != "scheme"), None))
        y = _pick(tr("result"), outputs, "sw_y", c2, "mc_mean")
        group = _pick(tr("one line per"), [None, *[v for v in varied if v != x]], "sw_group", c3, "scheme")
        rest = [v for v in varied if v not in (x, group)]
        fixed: tuple[tuple[str, object], ...] = ()
        if rest:
            cols = st.columns(min(4, len(rest)))
            for i, v in enumerate(rest):
                values = frame.values(x, v, fixed)
                if values:  # a point without the parameter (K of sync) stays: it does not depend on it
                    chosen = cols[i % len(cols)].selectbox(sweep_results.label(v), values, key=f"sw_fix_{v}",
                                                           index=len(values) // 2, format_func=sweep_results.show)
                    fixed += ((v, chosen),)
        fig, rows = frame.chart(x, y, group, fixed, log_y=st.toggle(tr("logarithmic y axis"), key="sw_logy"))
        page.chart(fig, rows, "sweep-results",
                   tr("Each line holds the other varied parameters at the values chosen above; error bars are "
                      "95% intervals where the file has them (Monte Carlo E[T], simulated time to ε)."))
        if len(failed):
            st.subheader(tr("Points with an error"))
            page.table(failed[["point", *varied, "error"]].to_dict("records"))


page.fragment(body)

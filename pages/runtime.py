"""Runtime per iteration: analytic E[T] against Monte Carlo, for every chosen scheme."""

import streamlit as st

from distsgd import curves
from distsgd.analytic import VALUE_KINDS
from distsgd.ui import cached, claims, page, sidebar, views
from distsgd.ui import rerun_caps as caps
from distsgd.ui.i18n import N_, tr

sel = sidebar.current()
page.header(
    tr("Runtime per iteration"),
    tr("The expected wall-clock time between two updates, **E[T]**, for each scheme: theory as lines "
       "(solid where exact or numerical, dashed where only a bound is known, dotted where an approximation) "
       "and Monte Carlo means with 95% error bars as markers."),
    [(r"\mathbb{E}[T_{\mathrm{sync}}]=\mathbb{E}[X_{m:m}],\quad \mathbb{E}[T_{K\text{-sync}}]=\mathbb{E}[X_{K:m}],"
      r"\quad \mathbb{E}[T_{\mathrm{async}}]=\frac{\mathbb{E}[X]}{m},"
      r"\quad \mathbb{E}[T_{K\text{-batch-async}}]=\frac{K\,\mathbb{E}[X]}{m}")],
)
def body(sel: sidebar.Selection) -> None:
    """Everything below the header: the view control reruns only this (a fragment)."""
    with page.guard():
        page.stragglers_note(sel.workers)
        view = sidebar.choice("rt_view", radio=True)  # one chart per run: only the visible one is computed
        if view == "K":
            Ks = tuple(sorted(set(curves.k_grid(sel.m, caps.RUNTIME_K_POINTS)) | {sel.K}))
            chart = page.theory_first(cached.runtime_vs_K_view, sel.schemes, sel.m, sel.workers, Ks, sel.H, sel.budget,
                                      sel.seed, N_("wait-for count K"), N_("E[T] against K (m = {m})").format(m=sel.m),
                                      sel.graph)
            rows = chart["rows"]
            here = [r for r in rows if r["x_K"] == sel.K]
            page.chart(chart["figure"], rows, "runtime-vs-K",
                       tr("K-sync at K = m is sync and at K = 1 waits for the fastest worker; K-async at K = 1 is "
                          "async and at K = m is sync. Compare the two below."))
        else:
            ms = page.m_values(sel.workers.m, curves.m_grid(max(sel.m, 2), caps.RUNTIME_M_POINTS))
            chart = page.theory_first(cached.runtime_vs_m_view, sel.schemes, ms, sel.workers, sel.K, sel.H,
                                      caps.LOCAL_SGD_FREE_D, sel.budget, sel.seed, N_("workers m (log scale)"),
                                      N_("E[T] against m (K = {K}, clamped to m)").format(K=sel.K), sel.graph)
            rows = chart["rows"]
            here = [r for r in rows if r["m"] == sel.m]
            page.chart(chart["figure"], rows, "runtime-vs-m",
                       tr("Waiting for the slowest of m grows like log m for exponential delays and much "
                          "faster for heavy tails, while async's E[X]/m falls."))
        page.free_averaging_note(sel.schemes)
        if any("mc_skipped" in r for r in rows):
            st.caption(tr("Points without a marker were not simulated: their shortest run exceeds the chart's "
                          "Monte Carlo budget (raise it under Simulation, or lower m)."))
        # K-sync against K-async at this (m, K): the chart's own points when it has both, so every
        # number on the page for one point is the same result
        pair = {r["scheme"]: r for r in here if r["scheme"] in ("k-sync", "k-async")}
        if len(pair) < 2 and sel.m > 1:
            schemes = tuple(curves.build(n, sel.m, sel.K) for n in ("k-sync", "k-async"))
            pair = {r["scheme"]: r for r in cached.runtime_points(schemes, sel.workers, sel.budget, sel.seed)}
        st.subheader(tr("K-sync or K-async?"))
        st.markdown(claims.ksync_vs_kasync(sel.workers, sel.m, min(sel.K, sel.m), pair.get("k-sync"),
                                           pair.get("k-async")))
        st.subheader(tr("The numbers at m = {m}, K = {K}", m=sel.m, K=sel.K))
        page.table(views.runtime_table(here), **{tr("method"): st.column_config.TextColumn(width="medium")})
        sp = cached.async_speedup(sel.m, sel.workers)
        kind = f" ({views.word(sp['kind'])})" if sp["kind"] not in VALUE_KINDS else ""
        st.metric(tr("Speed-up of async over sync per iteration, {formula}",
                     formula="m·E[X₍ₘ:ₘ₎] / E[X]" if sel.workers.kind == "none" else "E[T_sync] · Σᵢ 1/E[Xᵢ]"),
                  tr("undefined: E[X] is infinite") if sp["value"] is None else f"{sp['value']:.3g}×{kind}")


page.fragment(body, sel)

"""Runtime per iteration: analytic E[T] against Monte Carlo, for every chosen scheme."""

import streamlit as st

from distsgd import plots, sweeps
from distsgd.ui import cached, page, sidebar

sel = sidebar.current()
page.header(
    "Runtime per iteration",
    "The expected wall-clock time between two updates, **E[T]**, for each scheme: theory as lines "
    "(solid where exact or numerical, dashed where only a bound is known) and Monte Carlo means "
    "with 95% error bars as markers.",
    [r"\mathbb{E}[T_{\mathrm{sync}}]=\mathbb{E}[X_{m:m}],\quad \mathbb{E}[T_{K\text{-sync}}]=\mathbb{E}[X_{K:m}],"
     r"\quad \mathbb{E}[T_{\mathrm{async}}]=\frac{\mathbb{E}[X]}{m},\quad \mathbb{E}[T_{K\text{-batch-async}}]=\frac{K\,\mathbb{E}[X]}{m}"],
)
with page.guard():
    view = sidebar.choice("rt_view", radio=True)  # one chart per run: only the visible one is computed
    if view == "K":
        Ks = tuple(sorted(set(sweeps.k_grid(sel.m)) | {sel.K}))
        rows = cached.runtime_vs_K(sel.schemes, sel.m, sel.delay, Ks, sel.H, sel.budget, sel.seed)
        page.chart(plots.runtime_figure(rows, "x_K", "wait-for count K", f"E[T] against K (m = {sel.m})"),
                   rows, "runtime-vs-K",
                   "K-sync at K = m is sync and at K = 1 waits for the fastest worker. K-async never waits "
                   "longer than K-sync (no work is thrown away); for exponential delays the two coincide — "
                   "pick a lognormal or Pareto delay to see them part, and K-async's theory become a bound.")
    else:
        ms = tuple(sweeps.m_grid(max(sel.m, 2)))
        rows = cached.runtime_vs_m(sel.schemes, ms, sel.delay, sel.K, sel.H, 0.0, sel.budget, sel.seed)
        page.chart(plots.runtime_figure(rows, "m", "workers m (log scale)",
                                        f"E[T] against m (K = {sel.K}, clamped to m)", log_x=True),
                   rows, "runtime-vs-m",
                   "Waiting for the slowest of m grows like log m for exponential delays and much "
                   "faster for heavy tails, while async's E[X]/m falls.")
    if any("mc_skipped" in r for r in rows):
        st.caption("Points without a marker were not simulated: their shortest run exceeds the chart's "
                   "Monte Carlo budget (raise it under Simulation, or lower m).")
    st.subheader(f"The numbers at m = {sel.m}, K = {sel.K}")
    here = cached.runtime_vs_K(sel.schemes, sel.m, sel.delay, (sel.K,), sel.H, sel.budget, sel.seed + 1)
    page.table([{"scheme": r["label"], "analytic E[T]": r["analytic"], "kind": r["kind"],
                 "method": r["method"], "Monte Carlo mean": r.get("mc_mean"),
                 "95% CI": (f"[{r['mc_low']:.4g}, {r['mc_high']:.4g}]" if "mc_low" in r
                            else f"not simulated: {r.get('mc_skipped', '')}"),
                 "iterations": r.get("mc_iterations"),
                 "mean staleness": r.get("staleness_mean")} for r in here],
               method=st.column_config.TextColumn(width="medium"))
    sp = cached.async_speedup(sel.m, sel.delay)
    st.metric("Speed-up of async over sync per iteration, m·E[X₍ₘ:ₘ₎] / E[X]",
              "∞" if sp["value"] is None else f"{sp['value']:.3g}×")

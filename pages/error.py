"""Error against wall-clock time: bound, exact model curve and simulated SGD for each scheme."""

import math

import streamlit as st

from distsgd import plots, sgd, sweeps
from distsgd.ui import cached, claims, page, sidebar, state

sel = sidebar.current()
page.header(
    "Error against wall-clock time",
    "Each scheme runs SGD on the model problem f(w) = ½ Σ hᵢ wᵢ² (curvatures from μ to L, gradient "
    "noise σ²/b) with the timing of the sidebar's delays. Shown: the simulated mean error with its 95% "
    "band; for fresh gradients and local SGD the model's exact expected error after n updates, averaged "
    "over simulated update counts N(t) (dotted); and the bound of Dutta et al. with J(t) = t / E[T] "
    "iterations (dashed).",
    [r"\text{fresh: } \mathbb{E}[f(w_J)]-f^* \le F_K + (1-\eta\mu)^J (F_0 - F_K),\quad F_K=\frac{\eta L\sigma^2}{2\mu b K}",
     r"\text{stale: } \mathbb{E}[f(w_J)]-f^* \le F'_K + (1-\eta\mu\gamma')^J (F_0 - F'_K),\quad "
     r"\gamma' = 1-\gamma+\tfrac{p_0}{2},\ F'_K=\frac{\eta L\sigma^2}{2\mu\gamma' b K}"],
)
with st.expander("Problem and learning rate", expanded=False):
    problem = sidebar.problem_controls()
    c4 = st.columns(4)[3]
    lr_rule = sidebar.choice("lr_rule", c4)
    C = sidebar.number("C", c4, slider=False) if lr_rule == "adaptive" else state.value("C")
    c5, c6, c7 = st.columns(3)
    gamma = sidebar.number("gamma", c5)
    p0_mode = sidebar.choice("p0_mode", c6, radio=True)
    p0 = sidebar.number("p0", c6) if p0_mode == "input" else None
    replicas = sidebar.number("replicas", c7)
c1, c2 = st.columns(2)
horizon = sidebar.number("horizon", c1, slider=False)
eps = sidebar.number("eps", c2, slider=False)

with page.guard():
    schemes = tuple(sweeps.build(n, sel.m, sel.K, sel.H) for n in sel.schemes)
    lr = sgd.LearningRate(lr_rule, C)
    rows, summary = cached.error_rows(schemes, sel.delay, problem, horizon, 101, replicas, sel.seed,
                                      gamma, p0, lr)
    for s in summary:
        if "skipped" in s:
            st.warning(state.plain(f"Not simulated — {s['skipped']}"), icon="⚠️")
    summary = [s for s in summary if "skipped" not in s]
    schemes = tuple(x for x in schemes if any(s["scheme"] == x.label for s in summary))
    targets = {}
    for s in schemes:
        mean = [r["simulated_mean"] for r in rows if r["scheme"] == s.label]
        t = [r["time"] for r in rows if r["scheme"] == s.label]
        targets[s.label] = sgd.time_to_target(t, mean, eps)
    page.chart(plots.error_figure(rows, eps, targets), rows, "error-vs-time", claims.error_race(rows, targets, eps))
    st.subheader("Per scheme")
    page.table([{
        "scheme": s["scheme"],
        "time to ε (simulated mean)": ("never within T" if math.isinf(targets[s["scheme"]])
                                       else targets[s["scheme"]]),
        "bound": s["bound_kind"] if not s["bound_note"] else f"{s['bound_kind']}: {s['bound_note']}",
        "bound floor": s["floor"], "E[T] used": s["runtime"], "E[T] from": s["runtime_kind"],
        "γ used": s["gamma"] if s["staleness_mean"] is not None else None,
        "p₀ used": s["p0"], "mean staleness": s["staleness_mean"],
        "fresh fraction": s["fresh_fraction"]} for s in summary])
    st.caption("For the asynchronous schemes γ is the input above and p₀ the measured fraction of fresh "
               "gradients unless you enter one; the bound is drawn only where its step-size condition holds.")

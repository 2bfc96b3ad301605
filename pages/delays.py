"""The delay distribution: pdf and cdf, the K-th order statistic, and the fan-out of the maximum."""

import numpy as np
import streamlit as st

from distsgd import plots, sweeps
from distsgd.ui import cached, page, sidebar

sel = sidebar.current()
d = sel.delay
page.header(
    "The delay distribution",
    f"X ~ **{d.label}**: the time one worker needs for one mini-batch gradient. A synchronous step waits "
    "for the K-th fastest of m copies, X₍K:m₎, whose law follows from F alone.",
    [d.latex, r"P(X_{K:m} \le x) = I_{F(x)}(K,\, m-K+1)",
     r"\mathbb{E}[X_{K:m}] = \int_{0}^{\infty} P\big(\mathrm{Bin}(m, F(x)) < K\big)\,\mathrm{d}x"],
)
with page.guard():
    c = st.columns(4)
    c[0].metric("E[X]", f"{d.mean:.4g}")
    c[1].metric("sd(X)", "∞" if not np.isfinite(d.var) else f"{np.sqrt(d.var):.4g}")
    c[2].metric("new-longer-than-used", "yes" if d.is_nlu else "no")
    c[3].metric("median", f"{float(d.ppf(0.5)):.4g}")
    sample = cached.delay_sample(d, sel.seed)
    q = np.linspace(0.005, 0.995, 199)
    page.chart(plots.delay_figure(d, sample),
               [{"quantile": float(a), "x": float(b), "cdf": float(c)}
                for a, b, c in zip(q, d.ppf(q), d.cdf(d.ppf(q)))], "delay-quantiles",
               "A long right tail is what makes stragglers: the mean hides it, the maximum of many does not.")
    kth = cached.order_statistic(d, sel.K, sel.m, sel.seed)
    page.chart(plots.order_statistic_figure(kth["samples"], kth["edges"], kth["theory"], sel.K, sel.m, kth["mean"]),
               [{"quantile": float(a), "x": float(b)} for a, b in zip(q, np.quantile(kth["samples"], q))],
               "order-statistic",
               f"The time one K-sync iteration waits (K = {sel.K}, m = {sel.m}): the K-th fastest of m, drawn "
               "exactly as F⁻¹(Beta(K, m−K+1))"
               + ("." if sel.K == sel.m else "; it finishes before the slowest, whose law is the fan-out below.")
               + (" A trace is a discrete law: the theory line is each bin's exact probability over its width."
                  if kth["theory"]["kind"] == "bins" else ""))
    ms = tuple(sorted(set(sweeps.m_grid(1000, 13)) | {10, 100, 1000}))
    fan = cached.fanout(d, ms, 4000, sel.seed)["rows"]
    page.chart(plots.fanout_figure([r["m"] for r in fan], [r["analytic"] for r in fan],
                                   [r["mc_mean"] for r in fan], [r["mc_low"] for r in fan],
                                   [r["mc_high"] for r in fan], d.mean), fan, "fan-out",
               "For exponential delays the slowest of m grows like log m; for lognormal and Pareto "
               "much faster — this fan-out is why synchronous SGD stops scaling.")

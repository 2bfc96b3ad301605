"""The delay distribution: pdf and cdf, the K-th order statistic, and the fan-out of the maximum."""

import numpy as np
import streamlit as st

from distsgd import sweeps
from distsgd.ui import cached, limits, page, sidebar

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
    info = cached.delay_summary(d)
    c = st.columns(4)
    c[0].metric("E[X]", f"{d.mean:.4g}")
    c[1].metric("sd(X)", "∞" if not np.isfinite(d.var) else f"{np.sqrt(d.var):.4g}")
    c[2].metric("new-longer-than-used", "yes" if d.is_nlu else "no")
    c[3].metric("median", f"{info['median']:.4g}")
    page.chart(cached.delay_chart(d, sel.seed), info["quantiles"], "delay-quantiles",
               "A long right tail is what makes stragglers: the mean hides it, the maximum of many does not.")
    kth = cached.order_statistic_chart(d, sel.K, sel.m, sel.seed)
    page.chart(kth["figure"], kth["quantiles"], "order-statistic",
               f"The time one K-sync iteration waits (K = {sel.K}, m = {sel.m}): the K-th fastest of m, drawn "
               f"exactly as F⁻¹(Beta(K, m−K+1)) ({limits.SAMPLES:,} draws)"
               + ("." if sel.K == sel.m else "; it finishes before the slowest, whose law is the fan-out below.")
               + (" A trace is a discrete law: the theory line is each bin's exact probability over its width."
                  if kth["theory_kind"] == "bins" else ""))
    ms = tuple(sorted(set(sweeps.m_grid(limits.FANOUT_M_MAX, limits.FANOUT_M_POINTS)) | set(limits.FANOUT_M_EXTRA)))
    fan = cached.fanout(d, ms, limits.FANOUT_ITERATIONS, sel.seed)
    page.chart(fan["figure"], fan["rows"], "fan-out",
               "For exponential delays the slowest of m grows like log m; for lognormal and Pareto "
               "much faster — this fan-out is why synchronous SGD stops scaling. "
               f"(Monte Carlo: {limits.FANOUT_ITERATIONS:,} iterations per m.)")

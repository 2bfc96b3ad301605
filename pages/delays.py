"""The delay distribution: pdf and cdf, the K-th order statistic, and the fan-out of the maximum."""

import numpy as np
import streamlit as st

from distsgd import curves
from distsgd.ui import cached, page, sidebar
from distsgd.ui import rerun_caps as caps
from distsgd.ui.i18n import tr

sel = sidebar.current()
d = sel.delay
page.header(
    tr("The delay distribution"),
    tr("X ~ **{law}**: the time one worker needs for one mini-batch gradient. A synchronous step waits "
       "for the K-th fastest of m copies, X₍K:m₎, whose law follows from F alone.", law=d.label),
    [d.latex, r"P(X_{K:m} \le x) = I_{F(x)}(K,\, m-K+1)",
     r"\mathbb{E}[X_{K:m}] = \int_{0}^{\infty} P\big(\mathrm{Bin}(m, F(x)) < K\big)\,\mathrm{d}x"],
)
with page.guard():
    info = cached.delay_summary(d)
    c = st.columns(4)
    c[0].metric("E[X]", f"{d.mean:.4g}")
    c[1].metric("sd(X)", "∞" if not np.isfinite(d.var) else f"{np.sqrt(d.var):.4g}")
    c[2].metric(tr("new-longer-than-used"), tr("yes") if d.is_nlu else tr("no"))
    c[3].metric(tr("median"), f"{info['median']:.4g}")
    page.chart(cached.delay_chart(d, sel.seed), info["quantiles"], "delay-quantiles",
               tr("A long right tail is what makes stragglers: the mean hides it, the maximum of many does not."))
    kth = cached.order_statistic_chart(d, sel.K, sel.m, sel.seed)
    waits = (tr("The time one K-sync iteration waits (K = {K}, m = {m}): the K-th fastest of m, drawn exactly as "
                "F⁻¹(Beta(K, m−K+1)) ({draws} draws).", K=sel.K, m=sel.m, draws=f"{caps.SAMPLES:,}") if sel.K == sel.m
             else tr("The time one K-sync iteration waits (K = {K}, m = {m}): the K-th fastest of m, drawn exactly as "
                     "F⁻¹(Beta(K, m−K+1)) ({draws} draws); it finishes before the slowest, whose law is the fan-out "
                     "below.", K=sel.K, m=sel.m, draws=f"{caps.SAMPLES:,}"))
    if kth["theory_kind"] == "bins":
        waits = tr("{before} A trace is a discrete law: the theory line is each bin's exact probability over its "
                   "width.", before=waits)
    page.chart(kth["figure"], kth["quantiles"], "order-statistic", waits)
    ms = tuple(sorted(set(curves.m_grid(caps.FANOUT_M_MAX, caps.FANOUT_M_POINTS)) | set(caps.FANOUT_M_EXTRA)))
    fan = cached.fanout(d, ms, caps.FANOUT_ITERATIONS, sel.seed)
    page.chart(fan["figure"], fan["rows"], "fan-out",
               tr("For exponential delays the slowest of m grows like log m; for lognormal and Pareto "
                  "much faster — this fan-out is why synchronous SGD stops scaling. "
                  "(Monte Carlo: {iterations} iterations per m.)", iterations=f"{caps.FANOUT_ITERATIONS:,}"))

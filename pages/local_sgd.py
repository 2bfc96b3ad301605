"""Local SGD: runtime per step and error as H varies; the communication model; speed-up in m."""

import streamlit as st

from distsgd import comm, plots, sgd, sweeps
from distsgd.ui import cached, page, sidebar, state

sel = sidebar.current()
page.header(
    "Local SGD and communication",
    "Each worker takes H local steps, then all wait for the slowest and spend D averaging their models. "
    "Larger H spreads the waiting and the communication over more steps but lets the models drift apart.",
    [r"\mathbb{E}[T_{\text{per step}}] = \frac{\mathbb{E}[\max_i \sum_{h=1}^{H} X_{ih}] + D}{H}",
     r"D_{\mathrm{PS}} = \frac{2\,m\cdot 4d}{B} + 2\ell,\qquad D_{\mathrm{ring}} = \frac{2(m-1)}{m}\cdot\frac{4d}{B} + 2(m-1)\ell"],
)
source = sidebar.choice("comm_source", radio=True)
with page.guard():
    if source == "slider":
        D = sidebar.number("D")
        net = None
    else:
        c1, c2, c3, c4 = st.columns(4)
        topology = sidebar.choice("topology", c1)
        params_m = sidebar.number("params_m", c2, slider=False)
        gbps = sidebar.number("gbps", c3, slider=False)
        latency_ms = sidebar.number("latency_ms", c4, slider=False)
        net = comm.CommModel(params=params_m * 1e6, bandwidth=gbps * 1.25e8, latency=latency_ms * 1e-3,
                             topology=topology)
        D = net.time(sel.m)
        st.info(f"{topology}: one averaging round with m = {sel.m} takes D = {D:.4g} s "
                "(time units are seconds here).")
    Hs = tuple(sorted({1, 2, 4, 8, 16, 32, sel.H, 2 * sel.H}))
    rows = cached.runtime_vs_H(sel.m, Hs, sel.delay, float(D), sel.budget, sel.seed)
    page.chart(plots.runtime_figure(rows, "H", "local steps H", f"Runtime per local step (m = {sel.m}, D = {D:.3g})",
                                    y_title="E[T] per local step (time units)"), rows, "local-runtime-vs-H",
               "The per-step cost falls like (slowest sum + D)/H: the straggler's delay averages out over H "
               "steps and D is paid once per round.")
    with st.expander("Problem and horizon of the error chart below", expanded=False):
        problem = sidebar.problem_controls()
        horizon = sidebar.number("horizon", st.columns(4)[0], slider=False)
    Hcmp = tuple(sorted({1, sel.H, min(4 * sel.H, state.UI_H_MAX)}))
    schemes = tuple(sweeps.build("local-sgd", sel.m, None, h, float(D)) for h in Hcmp)
    erows, esum = cached.error_rows(schemes, sel.delay, problem, float(horizon), 81, 40,
                                    sel.seed, None, None, sgd.LearningRate())
    for s in esum:
        if "skipped" in s:
            st.warning(state.plain(f"Not simulated — {s['skipped']}"), icon="⚠️")
    page.chart(plots.error_figure(erows, None, None), erows, "local-error-vs-time",
               "Larger H pays the waiting and D once per H steps but averages less often, so its models drift "
               "apart between averages: compare where each curve starts to fall and where it levels off.")
    ms = tuple(sweeps.m_grid(1000, 12))
    ps = [comm.CommModel(**({} if net is None else dict(params=net.params, bandwidth=net.bandwidth,
                                                          latency=net.latency)),
                         topology="parameter-server").time(m) for m in ms]
    ring = [comm.CommModel(**({} if net is None else dict(params=net.params, bandwidth=net.bandwidth,
                                                            latency=net.latency)),
                           topology="ring-allreduce").time(m) for m in ms]
    page.chart(plots.comm_figure(ms, ps, ring),
               [{"m": m, "parameter_server": a, "ring_allreduce": b} for m, a, b in zip(ms, ps, ring)],
               "communication", "The parameter server's link carries all m workers' traffic, so its time grows "
               "linearly in m; ring all-reduce is bandwidth-optimal but pays 2(m−1) latencies.")
    srows = cached.runtime_vs_m(("sync", "async", "local-sgd"), tuple(sweeps.m_grid(max(sel.m, 2), 10)),
                                sel.delay, sel.K, sel.H, float(D), sel.budget, sel.seed)
    page.chart(plots.speedup_figure(srows), srows, "speedup-vs-m",
               "Throughput of m workers relative to one: async is exactly m× (no worker ever waits), sync falls "
               "below m× as the slowest worker dominates, and local SGD pays (slowest sum of H + D)/H per step: "
               "above sync where spreading the wait over H steps outweighs D/H, below it where it does not.")

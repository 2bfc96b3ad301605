"""Local SGD: runtime per step and error as H varies; the communication model; speed-up in m."""

import streamlit as st

from distsgd import curves
from distsgd import error as sgd
from distsgd.ui import cached, controls, page, sidebar, views
from distsgd.ui import rerun_caps as caps
from distsgd.ui.i18n import N_, tr

sel = sidebar.current()
page.header(
    tr("Local SGD and communication"),
    tr("Each worker takes H local steps, then all wait for the slowest and spend D averaging their models. "
       "Larger H spreads the waiting and the communication over more steps but lets the models drift apart."),
    [r"\mathbb{E}[T_{" + views.tex_words(tr("per step")) + r"}] = "
     r"\frac{\mathbb{E}[\max_i \sum_{h=1}^{H} X_{ih}] + D}{H}",
     (r"D_{\mathrm{PS}} = \frac{2\,m\cdot 4d}{B} + 2\ell,\qquad "
      r"D_{\mathrm{ring}} = \frac{2(m-1)}{m}\cdot\frac{4d}{B} + 2(m-1)\ell")],
)


def error_chart(sel: sidebar.Selection, D: float) -> None:
    """The error chart and its problem controls: moving one of them reruns only this (a fragment)."""
    box = sidebar.settings(tr("Problem and horizon of the error chart below"), "local_sgd")
    problem = sidebar.problem_controls(where=box)
    horizon = sidebar.number("horizon", box.columns(4)[0], slider=False)
    box.caption(tr("Simulated SGD: {replicas} replicas, constant learning rate η, {points} points from 0 to T.",
                   replicas=caps.replicas_at(sel.budget, caps.LOCAL_ERROR_REPLICAS),
                   points=caps.LOCAL_ERROR_POINTS))
    with page.guard():
        Hcmp = tuple(sorted({1, sel.H, min(caps.LOCAL_H_COMPARE_FACTOR * sel.H, caps.UI_H_MAX)}))
        schemes = tuple(curves.build("local-sgd", sel.m, None, h, D) for h in Hcmp)
        view = cached.error_view(schemes, sel.workers, problem, float(horizon), caps.LOCAL_ERROR_POINTS,
                                 caps.replicas_at(sel.budget, caps.LOCAL_ERROR_REPLICAS), sel.seed, None, None,
                                 sgd.LearningRate(), None, sel.budget)
        page.simulated(view["summary"])
        page.chart(view["figure"], view["rows"], "local-error-vs-time",
                   tr("Larger H pays the waiting and D once per H steps but averages less often, so its models "
                      "drift apart between averages: compare where each curve starts to fall and where it levels "
                      "off."))


def body(sel: sidebar.Selection) -> None:
    """The communication controls and every chart (they all use D): moving one of them reruns
    only this (a fragment); the error chart's own controls rerun only that chart."""
    source = sidebar.choice("comm_source", radio=True)
    with page.guard():
        D = sidebar.number("D") if source == "slider" else None
        with st.expander(tr("Network model: D and the communication chart below") if D is None
                         else tr("Network model: the communication chart below"), expanded=D is None):
            c1, c2, c3, c4 = st.columns(4)
            topology = sidebar.choice("topology", c1) if D is None else None
            net = cached.network(topology or "ring-allreduce", sidebar.number("params_m", c2, slider=False),
                                 sidebar.number("gbps", c3, slider=False),
                                 sidebar.number("latency_ms", c4, slider=False),
                                 sel.m, tuple(curves.m_grid(caps.UI_M_MAX, caps.COMM_M_POINTS)))
        if D is None:
            D = net["D"]
            label = controls.CHOICE_LABELS["topology"].get(topology, topology)  # the topology's name, as shown
            st.info(tr("{topology}: one averaging round with m = {m} takes D = {D} s (time units are seconds "
                       "here).", topology=tr(label), m=sel.m, D=f"{D:.4g}"))
        Hs = tuple(sorted({*caps.LOCAL_H_GRID, sel.H, 2 * sel.H}))
        rt = cached.runtime_vs_H_view(sel.m, Hs, sel.workers, float(D), sel.budget, sel.seed,
                                      N_("Runtime per local step (m = {m}, D = {D})").format(m=sel.m, D=f"{D:.3g}"),
                                      N_("E[T] per local step (time units)"))
        page.chart(rt["figure"], rt["rows"], "local-runtime-vs-H",
                   tr("The per-step cost falls like (slowest sum + D)/H: the straggler's delay averages out over H "
                      "steps and D is paid once per round."))
        page.fragment(error_chart, sel, float(D))
        page.chart(net["figure"], net["rows"], "communication",
                   tr("The parameter server's link carries all m workers' traffic, so its time grows "
                      "linearly in m; ring all-reduce is bandwidth-optimal but pays 2(m−1) latencies."))
        sp = cached.speedup_view(("sync", "async", "local-sgd"),
                                 page.m_values(sel.workers.m, curves.m_grid(max(sel.m, 2), caps.SPEEDUP_M_POINTS)),
                                 sel.workers, sel.K, sel.H, float(D), sel.budget, sel.seed)
        page.chart(sp["figure"], sp["rows"], "speedup-vs-m",
                   tr("Throughput of m workers relative to one: async is exactly m× (no worker ever waits), sync "
                      "falls below m× as the slowest worker dominates, and local SGD pays (slowest sum of H + D)/H "
                      "per step: above sync where spreading the wait over H steps outweighs D/H, below it where it "
                      "does not."))


page.fragment(body, sel)

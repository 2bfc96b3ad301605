"""Decentralised SGD on a graph: the graph, its spectral gap, E[T] against m, error and consensus."""

import streamlit as st

from distsgd import curves
from distsgd import error as sgd
from distsgd.ui import cached, claims, page, sidebar, views
from distsgd.ui import rerun_caps as caps
from distsgd.ui.i18n import N_, tr

sel = sidebar.current()
page.header(
    tr("Decentralised SGD on a graph"),
    tr("No parameter server: m nodes on a graph, each with its own model. In d-psgd a node starts its next "
       "iteration once it and its neighbours have finished this one, then averages their models; in ad-psgd "
       "no node waits, and each finished gradient comes with an averaging with one random neighbour. A slow "
       "node delays its neighbourhood, not the whole cluster; how well the graph mixes (its spectral gap δ) "
       "decides how far the models drift apart."),
    [r"t_i(k+1) = \max_{j \in N(i) \cup \{i\}} t_j(k) + X_i(k),\qquad "
     r"x_i(k+1) = \sum_j w_{ij}\, x_j(k) - \eta\, g_i(x_i(k))",
     r"\mathbb{E}[X] \le \gamma \le \mathbb{E}[X_{m:m}],\qquad \delta = 1 - \max(|\lambda_2(W)|, |\lambda_m(W)|)"],
)


def error_chart(sel: sidebar.Selection, graph: str) -> None:
    """d-psgd and ad-psgd on the graph beside sync: the error of the average model and the
    consensus distance against time (a fragment: its controls rerun only this)."""
    box = sidebar.settings(tr("Problem and horizon of the error charts below"), "graph")
    problem = sidebar.problem_controls(where=box)
    c1, c2 = box.columns(2)
    horizon = sidebar.number("horizon", c1, slider=False)
    eps = sidebar.number("eps", c2, slider=False)
    with page.guard():
        schemes = tuple(curves.build(n, sel.m, graph=graph) for n in ("d-psgd", "ad-psgd", "sync"))
        view = cached.error_view(schemes, sel.workers, problem, float(horizon), caps.ERROR_POINTS,
                                 caps.replicas_at(sel.budget, caps.LOCAL_ERROR_REPLICAS), sel.seed, None, None,
                                 sgd.LearningRate(), float(eps), sel.budget)
        page.simulated(view["summary"])
        page.chart(view["figure"], view["rows"], "graph-error-vs-time",
                   claims.error_race(view["rows"], view["targets"], float(eps), fresh_floor=False))
        if "consensus_figure" in view:
            page.chart(view["consensus_figure"], view["rows"], "graph-consensus",
                       tr("How far the nodes' models are from their average, (1/m) Σᵢ‖xᵢ − x̄‖² (mean and 95% band): "
                          "the gradient noise pushes them apart, the averaging pulls them together. Sync has one "
                          "model and no such curve."))


def body(sel: sidebar.Selection) -> None:
    """The drawing of the sidebar's graph, E[T] at this m and against m, and the error charts."""
    graph = sel.graph  # the sidebar's graph control (the ring where its graph cannot be built on m nodes)
    with page.guard():
        slow = tuple(range(min(sel.workers.slow, sel.m))) if sel.workers.kind == "static" else ()
        view = cached.graph_view(graph, sel.m, slow, sel.workers, sel.budget, sel.seed)
        facts = view["facts"]
        c1, c2 = st.columns([3, 2])
        with c1:
            if view["figure"] is not None:
                page.chart(view["figure"], lambda: [{"node_a": int(a), "node_b": int(b)} for a, b in view["edges"]],
                           "graph", tr("Red: the {b} slow nodes of the sidebar's stragglers.", b=len(slow))
                           if slow else "")
            else:
                st.info(tr("The graph is drawn for m ≤ {cap} nodes.", cap=caps.GRAPH_DRAWN_NODES))
        with c2:
            st.metric(tr("spectral gap δ"), f"{facts['spectral_gap']:.4g}")
            st.metric(tr("degrees (smallest – largest)"), f"{facts['min_degree']} – {facts['max_degree']}")
            st.markdown(claims.graph_runtime(view["rows"], view["lower"], view["upper"], facts, sel.m))
        st.subheader(tr("The numbers at m = {m}", m=sel.m))
        page.table(views.runtime_table(view["rows"]), **{tr("method"): st.column_config.TextColumn(width="medium")})
        ms = page.m_values(sel.workers.m, curves.m_grid(max(sel.m, 2), caps.RUNTIME_M_POINTS))
        chart = cached.graph_runtime_view(caps.GRAPH_PAGE_GRAPHS, ms, sel.workers, sel.budget, sel.seed,
                                          N_("E[T] per iteration against m on each graph"))
        page.chart(chart["figure"], chart["rows"], "graph-runtime-vs-m", claims.graph_vs_m(chart["rows"]))
    page.fragment(error_chart, sel, graph)


page.fragment(body, sel)

"""Timeline: what every worker does over a few updates — busy, waiting, cancelled, stale."""

import streamlit as st

from distsgd import curves
from distsgd.montecarlo import timeline_max_iterations
from distsgd.topology import graph_fits
from distsgd.ui import cached, page, sidebar, views
from distsgd.ui import rerun_caps as caps
from distsgd.ui.i18n import tr

sel = sidebar.current()
page.header(
    tr("Timeline of the workers"),
    tr("A Gantt chart of one run: green bars are gradients used fresh, orange ones used stale, red ones "
       "cancelled at an update, grey is waiting idle, dark blue is communication (local SGD), light blue is "
       "work still running when the window ends; hatched bars are mini-batches that ran slow (a slow worker, a "
       "slow spell, a slow time of a replayed trace: see Stragglers in the sidebar); the dotted lines u1, u2, … "
       "are the updates, when the server publishes new parameters. This is where stragglers become visible."),
)


def body(sel: sidebar.Selection) -> None:
    """The timeline's controls and its chart: moving one of them reruns only this (a fragment)."""
    c1, c2 = st.columns(2)
    name = sidebar.choice("tl_scheme", c1)
    iters = sidebar.number("tl_iters", c2)
    with page.guard():
        m = min(sel.m, caps.TIMELINE_WORKERS)
        if sel.m > m:
            st.info(tr("The timeline draws at most {m} workers; showing m = {m} (the sidebar has m = {chosen}).",
                       m=m, chosen=sel.m))
        D = (float(sidebar.number("D", st.columns(2)[0])),) if name == "local-sgd" else ()  # the local SGD page's D
        graph = sel.graph if not curves.needs_graph(name) or graph_fits(sel.graph, m) else "ring"
        scheme = curves.build(name, m, sel.K, sel.H, *D, graph=graph)
        fit = timeline_max_iterations(scheme)
        if iters > fit:
            st.info(tr("{scheme}: at most {fit} updates fit the timeline's limit on drawn jobs; showing {fit}.",
                       scheme=scheme.label, fit=fit))
            iters = fit
        view = cached.timeline(scheme, sel.workers, iters, sel.seed)
        page.chart(view["figure"], view["timeline"].rows, f"timeline-{name}",
                   tr("Sync: finished workers wait (grey) for the slowest. K-sync: the first K wait for the K-th "
                      "and the other m − K are cancelled (red). K-async: the K pushers wait for the update while the "
                      "others keep computing, and push stale (orange) gradients. Async and K-batch-async: nobody "
                      "waits, at the price of stale gradients. Local SGD: everyone waits for the slowest sum of H "
                      "steps, then communicates. D-PSGD: a node waits only for itself and its neighbours to finish "
                      "the iteration. AD-PSGD: nobody waits; a bar is stale when a neighbour averaged with the node "
                      "while it computed."))
        for col, (o, v) in zip(st.columns(len(view["shares"])), view["shares"].items(), strict=True):
            col.metric(views.word(o), f"{100 * v:.0f}%")
        st.caption(tr("Share of worker-time up to the last update ({scheme}, {workers}).", scheme=scheme.label,
                      workers=views.workers_label(sel.workers)))


page.fragment(body, sel)

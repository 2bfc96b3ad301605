"""Timeline: what every worker does over a few updates — busy, waiting, cancelled, stale."""

import streamlit as st

from distsgd import plots, sweeps
from distsgd.ui import cached, page, sidebar

sel = sidebar.current()
page.header(
    "Timeline of the workers",
    "A Gantt chart of one run: green bars are gradients used fresh, orange ones used stale, red ones "
    "cancelled at an update, grey is waiting idle, blue is communication (local SGD); the dotted lines "
    "u1, u2, … are the updates, when the server publishes new parameters. This is where stragglers "
    "become visible.",
)
c1, c2 = st.columns(2)
name = sidebar.choice("tl_scheme", c1)
iters = sidebar.number("tl_iters", c2)
with page.guard():
    m = min(sel.m, 40)
    if sel.m > m:
        st.info(f"The timeline draws at most 40 workers; showing m = {m} (the sidebar has m = {sel.m}).")
    scheme = sweeps.build(name, m, sel.K, sel.H, 0.5 if name == "local-sgd" else 0.0)
    tl = cached.timeline(scheme, sel.delay, iters, sel.seed)
    page.chart(plots.timeline_figure(tl), tl.rows(), f"timeline-{name}",
               "Sync wastes the grey time waiting for the slowest; K-sync turns it into red cancelled work; "
               "async keeps everyone busy, at the price of orange stale gradients.")
    total = float(tl.update_times[-1]) * m
    dur = tl.end - tl.start
    share = {o: float(dur[tl.outcome == o].sum()) / total for o in plots.OUTCOME_COLORS}
    cols = st.columns(len(share))
    for col, (o, v) in zip(cols, share.items()):
        col.metric(f"{o}", f"{100 * v:.0f}%")
    st.caption(f"Share of worker-time up to the last update ({scheme.label}, {sel.delay.label}).")

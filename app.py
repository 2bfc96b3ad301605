"""distsgd dashboard: stragglers and staleness in distributed SGD.

Run with ``streamlit run app.py`` (or ``make run``).  The sidebar is shared by every page and
mirrored in the URL; the pages live in ``pages/``.
"""

import streamlit as st

from distsgd.ui import lessons, sidebar, state
from distsgd.ui import page as page_ui
from distsgd.ui.i18n import set_language, tr

state.begin_run()
state.start()  # once per session: every control the URL names, validated, before anything is drawn
set_language(state.value("lang"))
st.set_page_config(page_title=tr("distsgd — stragglers and staleness"), page_icon="⏱️", layout="wide")

PAGES = [
    st.Page("pages/runtime.py", title=tr("Runtime per iteration"), icon=":material/timer:", default=True),
    st.Page("pages/error.py", title=tr("Error vs wall-clock time"), icon=":material/trending_down:"),
    st.Page("pages/delays.py", title=tr("Delay distribution"), icon=":material/casino:"),
    st.Page("pages/timeline.py", title=tr("Timeline of workers"), icon=":material/view_timeline:"),
    st.Page("pages/local_sgd.py", title=tr("Local SGD and communication"), icon=":material/sync_alt:"),
    st.Page("pages/tradeoffs.py", title=tr("Trade-offs: best K, m, H"), icon=":material/balance:"),
    st.Page("pages/graph.py", title=tr("Decentralised: the graph"), icon=":material/hub:"),
    st.Page("pages/cluster.py", title=tr("Your cluster"), icon=":material/dns:"),
    st.Page("pages/sweep.py", title=tr("Sweep results"), icon=":material/grid_on:"),
    st.Page("pages/lessons.py", title=tr("Lessons"), icon=":material/school:"),
]

page = st.navigation(PAGES)
st.session_state["_selection"] = sidebar.sidebar()
try:
    if lessons.banner(page):  # a running lesson's step above its page: the prediction first, then the page
        page.run()
finally:
    # the selection belongs to this run only: a page run on its own draws the sidebar itself
    st.session_state.pop("_selection", None)
page_ui.show_notices()
state.sync_url()

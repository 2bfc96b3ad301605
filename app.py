"""distsgd dashboard: stragglers and staleness in distributed SGD.

Run with ``streamlit run app.py`` (or ``make run``).  The sidebar is shared by every page and
mirrored in the URL; the pages live in ``pages/``.
"""

import streamlit as st

from distsgd.ui import page as page_ui
from distsgd.ui import sidebar, state

st.set_page_config(page_title="distsgd — stragglers and staleness", page_icon="⏱️", layout="wide")

PAGES = [
    st.Page("pages/runtime.py", title="Runtime per iteration", icon=":material/timer:", default=True),
    st.Page("pages/error.py", title="Error vs wall-clock time", icon=":material/trending_down:"),
    st.Page("pages/delays.py", title="Delay distribution", icon=":material/casino:"),
    st.Page("pages/timeline.py", title="Timeline of workers", icon=":material/view_timeline:"),
    st.Page("pages/local_sgd.py", title="Local SGD and communication", icon=":material/sync_alt:"),
    st.Page("pages/tradeoffs.py", title="Trade-offs: best K, m, H", icon=":material/balance:"),
    st.Page("pages/cluster.py", title="Your cluster", icon=":material/dns:"),
]

page = st.navigation(PAGES)
state.begin_run()
state.start()  # once per session: every control the URL names, validated, before anything is drawn
st.session_state["_selection"] = sidebar.sidebar()
try:
    page.run()
finally:
    # the selection belongs to this run only: a page run on its own draws the sidebar itself
    st.session_state.pop("_selection", None)
page_ui.show_notices()
state.sync_url()

"""A class of 30 on one server (DESIGN §11, issue 9): a page control reruns its fragment only,
and a view one session has computed costs the next session nothing.

A control drawn on a page (not in the sidebar) lives in an ``st.fragment``: moving it reruns
that fragment alone, as a browser asks (``apptest_support.fragment_rerun``; AppTest itself always
reruns the whole script).  The tests clear the caches before the move, so a rerun of anything
outside the fragment would show up as core work; the sidebar's widgets are watched through
``control_use`` (every widget of ``distsgd.ui`` binds its key when drawn).
"""

import json

import pytest
import streamlit as st

from apptest_support import (
    assert_clean,
    control_use,
    core_calls,
    fragment_rerun,
    fragment_runs,
    navigation_only,
    open_app,
)

PAGES = ["pages/runtime.py", "pages/error.py", "pages/delays.py", "pages/timeline.py",
         "pages/local_sgd.py", "pages/tradeoffs.py"]
SIDEBAR = {"delay", "lam", "delta", "m", "K", "H", "schemes", "seed", "budget"}
LOCAL_OUTER = {"comm_source", "D", "topology", "params_m", "gbps", "latency_ms"}
#: core entry points of the local SGD page's charts outside its error chart
LOCAL_OTHER_CHARTS = {"distsgd.curves.runtime_vs_H", "distsgd.curves.runtime_vs_m", "CommModel.time"}

#: (page, widget kind, key, new value, keys that must not be drawn again, core calls that must not happen)
MOVES = [
    ("pages/runtime.py", "radio", "rt_view", "m", SIDEBAR, set()),
    ("pages/error.py", "number_input", "eta", 0.02, SIDEBAR, set()),
    ("pages/error.py", "slider", "replicas", 50, SIDEBAR, set()),
    ("pages/timeline.py", "slider", "tl_iters", 9, SIDEBAR, set()),
    ("pages/local_sgd.py", "slider", "D", 1.5, SIDEBAR, set()),
    ("pages/local_sgd.py", "number_input", "eta", 0.02, SIDEBAR | LOCAL_OUTER, LOCAL_OTHER_CHARTS),
    ("pages/local_sgd.py", "number_input", "horizon", 30.0, SIDEBAR | LOCAL_OUTER, LOCAL_OTHER_CHARTS),
    ("pages/tradeoffs.py", "number_input", "eps", 0.2, SIDEBAR, set()),
    ("pages/tradeoffs.py", "radio", "axis", "H", SIDEBAR, set()),
]


@pytest.fixture(autouse=True, scope="module")
def _fragments():
    with navigation_only(), fragment_runs():
        yield


def clear_caches() -> None:
    st.cache_data.clear()
    st.cache_resource.clear()


def titles(at) -> list[str]:
    return [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]


@pytest.mark.parametrize("page, kind, key, value, not_drawn, not_called", MOVES,
                         ids=[f"{p[6:-3]}-{k}" for p, _, k, *_ in MOVES])
def test_a_page_control_reruns_only_its_fragment(page, kind, key, value, not_drawn, not_called):
    at = open_app(page)
    assert_clean(at)
    charts = len(at.get("plotly_chart"))
    clear_caches()  # anything rerun outside the fragment would now do core work
    with control_use() as use, core_calls() as calls:
        fragment_rerun(at, kind, key, value)
    assert_clean(at)
    redrawn = use["drawn"] & not_drawn
    assert not redrawn, f"{page}: moving {key} redrew {sorted(redrawn)} (outside its fragment)"
    wrong = {c for c in calls if c in not_called}
    assert not wrong, f"{page}: moving {key} recomputed other charts: {sorted(wrong)}"
    assert key in use["drawn"]
    assert len(at.get("plotly_chart")) == charts  # the charts outside the fragment are still shown
    assert at.session_state["_controls"][key] == value
    written = f"{value:g}" if isinstance(value, float) else str(value)
    assert at.query_params[key] == written  # the fragment writes the URL itself


def test_a_sidebar_move_still_reruns_every_chart():
    at = open_app("pages/local_sgd.py")
    fragment_rerun(at, "number_input", "eta", 0.02)
    with control_use() as use:
        fragment_rerun(at, "slider", "m", 20)  # a sidebar widget: in no fragment, the whole script reruns
    assert_clean(at)
    assert {"m", "comm_source", "D", "eta"} <= use["drawn"]
    assert "Runtime per local step (m = 20, D = 0.5)" in titles(at)
    assert at.session_state["_controls"]["eta"] == 0.02


def test_values_moved_in_a_fragment_survive_page_switches_and_sidebar_moves():
    at = open_app("pages/local_sgd.py")
    fragment_rerun(at, "number_input", "eta", 0.03)
    fragment_rerun(at, "slider", "D", 2.0)
    at.sidebar.slider(key="K").set_value(3).run()
    at.switch_page("pages/error.py").run()
    assert_clean(at)
    assert at.number_input(key="eta").value == 0.03
    fragment_rerun(at, "number_input", "horizon", 20.0)
    at.switch_page("pages/local_sgd.py").run()
    assert at.slider(key="D").value == 2.0 and at.number_input(key="horizon").value == 20.0
    assert at.sidebar.slider(key="K").value == 3
    assert at.query_params["eta"] == "0.03" and at.query_params["D"] == "2"


def test_a_fragment_shows_the_notices_its_controls_raise():
    at = open_app("pages/local_sgd.py")
    assert not at.warning
    fragment_rerun(at, "number_input", "L", 0.3)  # μ = 0.5 > L now: μ is clamped, with a notice
    assert_clean(at)
    assert at.session_state["_controls"]["mu"] == 0.3
    assert any("mu" in w.value for w in at.warning), [w.value for w in at.warning]


def test_a_second_session_computes_nothing_for_the_default_views():
    """st.cache_data and st.cache_resource are process-wide: when one student has opened every
    page at the defaults, the next student's session does no core work at all."""
    clear_caches()
    first = open_app()
    for page in PAGES[1:]:
        first.switch_page(page).run()
        assert_clean(first)
    with core_calls() as calls:
        second = open_app()
        for page in PAGES[1:]:
            second.switch_page(page).run()
            assert_clean(second)
            assert second.get("plotly_chart"), page
    assert not calls, f"a second session recomputed the default views: {dict(calls)}"


@pytest.mark.parametrize("page", ["pages/runtime.py", "pages/cluster.py"])
def test_a_sidebar_value_no_shown_scheme_reads_recomputes_nothing(page):
    """K and H reach a chart only through the schemes that read them (a class moves both on every
    page): with sync and async shown, moving H finds the cached charts; with local SGD shown, it
    recomputes them."""
    clear_caches()
    at = open_app(page, {"schemes": ["sync", "async"]})
    assert_clean(at)
    with core_calls() as calls:
        at.sidebar.slider(key="H").set_value(7).run()
    assert_clean(at)
    assert not calls, f"{page}: moving H recomputed {dict(calls)}"
    at = open_app(page, {"schemes": ["sync", "local-sgd"]})
    with core_calls() as calls:
        at.sidebar.slider(key="H").set_value(7).run()
    assert_clean(at)
    assert calls, f"{page}: moving H with local SGD shown recomputed nothing"

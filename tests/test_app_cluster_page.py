"""The "Your cluster" page (issue 11) under AppTest: every bundled example draws without error,
its stragglers table lists exactly the planted stragglers, the what-if chart has every reading,
and "Use this cluster" sends the trace to the other pages."""

from __future__ import annotations

import json

import pytest

from apptest_support import navigation_only, open_app
from distsgd.examples import EXAMPLES, example_trace
from test_app_pages import assert_clean, control


@pytest.fixture(autouse=True, scope="module")
def _navigation_only():
    with navigation_only():
        yield


def _names(at) -> list[str]:
    return [t.get("name", "") for c in at.get("plotly_chart") for t in json.loads(c.proto.spec)["data"]]


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_each_example_draws_and_names_its_stragglers(name: str) -> None:
    at = open_app("pages/cluster.py", {"schemes": ["sync", "k-sync", "async"], "K": "4"})
    at.selectbox(key="trace_example").set_value(name).run()
    assert_clean(at)
    planted = set(example_trace(name).stragglers(1.2))
    tables = [t.value for t in at.dataframe]
    shown = {str(w) for t in tables if "since step" in t.columns for w in t["worker"]}
    assert shown == planted, (shown, planted)
    names = _names(at)
    for reading in ("replay", "per-worker laws", "i.i.d. fit"):
        assert f"analytic: {reading}" in names, names
    assert any(n.startswith("theory: ") for n in names)  # the fitted laws on the histogram and Q–Q plot


def test_use_this_cluster_sends_the_trace_to_every_page() -> None:
    at = open_app("pages/cluster.py")
    name = at.selectbox(key="trace_example").value
    m = example_trace(name).m
    at.button[0].click().run()
    assert_clean(at)
    assert control(at, "stragglers") == "trace"
    at.switch_page("pages/runtime.py").run()
    assert_clean(at)
    assert any(f"{m} workers, replayed" in c.value or "the trace's" in c.value for c in at.sidebar.markdown) or \
        any(f"m = {m}" in s for s in (json.loads(c.proto.spec)["layout"]["title"]["text"]
                                       for c in at.get("plotly_chart")))


def test_the_page_s_choices_survive_a_page_switch_and_come_from_the_url() -> None:
    names = list(EXAMPLES)
    at = open_app("pages/cluster.py", {"trace_example": names[-1]})
    assert_clean(at)  # a known control: no "ignored unknown URL parameter" notice
    assert at.selectbox(key="trace_example").value == names[-1]
    at.selectbox(key="trace_example").set_value(names[1]).run()
    at.switch_page("pages/runtime.py").run()
    at.switch_page("pages/cluster.py").run()
    assert_clean(at)
    assert at.selectbox(key="trace_example").value == names[1]
    assert at.query_params.get("trace_example") in (names[1], [names[1]])


def test_the_what_if_table_has_the_time_to_target_and_a_sentence_from_its_numbers() -> None:
    at = open_app("pages/cluster.py", {"schemes": ["sync", "async"], "eps": "0.2"})
    at.selectbox(key="trace_example").set_value("persistent-slow").run()
    assert_clean(at)
    table = next(t.value for t in at.dataframe if "time to ε (bound)" in t.value.columns)
    sync = table[table["scheme"].str.startswith("sync")]
    assert set(sync["reading"]) >= {"replay", "i.i.d. fit", "stragglers dropped"}
    assert all(float(v) > 0 for v in sync["time to ε (bound)"])  # ε = 0.2 is above sync's floor
    notice = [c.value for c in at.caption if c.value.startswith("**What to notice.**") and "i.i.d. fit says" in c.value]
    assert notice and "For sync" in notice[0], [c.value for c in at.caption]

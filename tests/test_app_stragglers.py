"""The dashboard's Stragglers section (issue 10): every page on every kind, the URL mirror, the
presets, the timeline's slow mini-batches and the error page's persistence section."""

from __future__ import annotations

import json

import pytest

from apptest_support import navigation_only, open_app
from test_app_pages import PAGES, assert_clean, control, fresh, shown

STATIC = {"stragglers": "static", "slow": "2", "slowdown": "3", "m": "10", "K": "6"}
MARKOV = {"stragglers": "markov", "slow_fraction": "0.2", "persistence": "0.9", "slowdown": "4", "m": "8", "K": "4",
          "schemes": ["sync", "k-sync", "async"]}


@pytest.fixture(autouse=True, scope="module")
def _navigation_only():
    with navigation_only():
        yield


def _charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


@pytest.mark.parametrize("query", [STATIC, MARKOV], ids=["static", "markov"])
@pytest.mark.parametrize("page", PAGES)
def test_every_page_draws_on_stragglers(page: str, query: dict) -> None:
    at = open_app(page, query)
    assert_clean(at)
    assert not at.warning, [shown(w) for w in at.warning]
    assert at.get("plotly_chart")
    assert control(at, "stragglers") == query["stragglers"]


def test_the_url_mirrors_the_stragglers_and_the_caption_says_who_is_slow() -> None:
    at = fresh(STATIC)
    assert_clean(at)
    assert any("workers 1–2 of 10 take 3·X" in c.value for c in at.sidebar.caption)
    at.sidebar.slider(key="slowdown").set_value(5.0).run()
    assert at.query_params["stragglers"] == "static" and at.query_params["slowdown"] == "5"
    assert at.query_params["slow"] == "2"
    # b above m is all m workers slow (never clamped: the value is kept for a larger m)
    at.sidebar.slider(key="m").set_value(2).run()
    assert_clean(at)
    assert control(at, "slow") == 2 and any("workers 1–2 of 2" in c.value for c in at.sidebar.caption)
    at.sidebar.selectbox(key="stragglers").set_value("none").run()
    assert "stragglers" not in at.query_params  # the default: i.i.d. workers (b and s are kept for later)
    assert_clean(at)


def test_a_bad_url_value_is_clamped_with_a_notice() -> None:
    at = fresh({**MARKOV, "slow_fraction": "2", "persistence": "junk"})
    assert_clean(at)
    notes = [shown(w) for w in at.warning]
    assert any("slow_fraction" in n and "clamped" in n for n in notes), notes
    assert any("persistence" in n and "not a number" in n for n in notes), notes
    assert control(at, "slow_fraction") == 0.9 and control(at, "persistence") == 0.9


def test_the_runtime_page_shows_theory_and_monte_carlo_on_a_cluster() -> None:
    at = open_app("pages/runtime.py", STATIC)
    names = [t.get("name", "") for c in _charts(at) for t in c["data"]]
    assert any(n.startswith("analytic") for n in names) and any("Monte Carlo" in n for n in names), names
    assert any("E[X_{K:m}]" in m.value or "new-longer-than-used" in m.value for m in at.markdown)


@pytest.mark.parametrize("preset, kind", [("one slow machine", "static"), ("a straggler that comes and goes", "markov"),
                                          ("backup workers vs a persistent straggler", "static")])
def test_straggler_presets(preset: str, kind: str) -> None:
    from distsgd.ui.presets import PRESETS
    at = fresh()
    at.sidebar.selectbox(key="preset").set_value(preset).run()
    assert_clean(at)
    for key, v in PRESETS[preset].items():
        assert control(at, key) == v, key
    assert control(at, "stragglers") == kind
    at.sidebar.selectbox(key="preset").set_value("seed example: exponential delays").run()
    assert control(at, "stragglers") == "none"  # a preset without stragglers has none


def test_the_timeline_hatches_exactly_the_slow_workers_mini_batches() -> None:
    at = open_app("pages/timeline.py", {**STATIC, "tl_scheme": "sync"})
    assert_clean(at)
    bars = [t for c in _charts(at) for t in c["data"] if t.get("type") == "bar"]
    slow = [t for t in bars if t["name"].endswith("· slow")]
    assert slow and all(t["marker"].get("pattern", {}).get("shape") == "/" for t in slow)
    slow_rows = {y for t in slow for y in t["y"]}
    assert slow_rows == {"worker 1", "worker 2"}, slow_rows


def test_the_error_page_shows_what_persistence_does() -> None:
    at = open_app("pages/error.py", {**MARKOV, "persistence": "0.95", "schemes": ["sync", "async"]})
    assert_clean(at)
    assert "What persistence does (async)" in [s.value for s in at.subheader]
    text = " ".join(m.value for m in at.markdown)
    assert "Mean staleness" in text and "with ρ = 0.95" in text and "with ρ = 0" in text
    titles = [c["layout"]["title"]["text"] for c in _charts(at)]
    assert any(t.startswith("Staleness of the gradients used") for t in titles), titles
    # the section is about persistence: without it (ρ = 0) there is nothing to compare
    at = open_app("pages/error.py", {**MARKOV, "persistence": "0"})
    assert "What persistence does (async)" not in [s.value for s in at.subheader]

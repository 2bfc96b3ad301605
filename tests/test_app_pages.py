"""The dashboard under streamlit.testing.v1.AppTest: every page, every control, hostile URLs."""

import json

import pytest
from streamlit.testing.v1 import AppTest

from apptest_support import assert_clean, control_use, core_calls, navigation_only, open_app

PAGES = ["pages/runtime.py", "pages/error.py", "pages/delays.py", "pages/timeline.py",
         "pages/local_sgd.py", "pages/tradeoffs.py", "pages/graph.py"]
THEORY = ("analytic", "bound", "theory")
SIMULATION = ("simulated", "Monte Carlo")


@pytest.fixture(autouse=True, scope="module")
def _navigation_only():
    with navigation_only():
        yield


def fresh(query: dict | None = None) -> AppTest:
    return open_app(query=query)


def trace_names(at: AppTest) -> list[list[str]]:
    return [[t.get("name", "") for t in json.loads(c.proto.spec)["data"]] for c in at.get("plotly_chart")]


def control(at: AppTest, key: str):
    """A control's current value: the dashboard keeps every control's value in its store
    (the widgets are given theirs from it), whether or not its widget is drawn on this page."""
    from distsgd.ui.controls import CONTROLS
    return at.session_state["_controls"].get(key, CONTROLS[key].initial())


def shown(w) -> str:
    """The text a notice shows (its Markdown with the escapes removed)."""
    import re
    return re.sub(r"\\(.)", r"\1", w.value)


@pytest.fixture(scope="module")
def app() -> AppTest:
    return fresh()


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_at_defaults(app, page):
    app.switch_page(page)
    app.run()
    assert_clean(app)
    assert app.title and app.get("plotly_chart"), page
    assert len(app.get("download_button")) >= len(app.get("plotly_chart"))


@pytest.mark.parametrize("page", ["pages/runtime.py", "pages/error.py"])
def test_runtime_and_error_charts_show_theory_and_simulation(app, page):
    app.switch_page(page)
    app.run()
    for names in trace_names(app):
        assert any(any(w in n for w in THEORY) for n in names), names
        assert any(any(w in n for w in SIMULATION) for n in names), names


def test_bounds_are_dashed_and_exact_lines_solid(app):
    app.switch_page("pages/runtime.py")
    app.run()
    app.sidebar.selectbox(key="delay").set_value("weibull").run()  # NLU, not memoryless
    app.sidebar.multiselect(key="schemes").set_value(["k-sync", "k-async"]).run()
    spec = json.loads(app.get("plotly_chart")[0].proto.spec)
    dashes = {t["name"]: t.get("line", {}).get("dash") for t in spec["data"] if t.get("mode") == "lines"}
    assert any(n.startswith("bound: k-async") and d == "dash" for n, d in dashes.items()), dashes
    assert any(n.startswith("analytic: k-sync") and d == "solid" for n, d in dashes.items()), dashes


SIDEBAR_MOVES = {"m": 24, "K": 7, "H": 3, "lam": 2.5, "delta": 0.3}
# every family on every page; of their parameters, the two values that change what a page can say
# (a Pareto tail of infinite variance, α < 2; a Weibull of decreasing hazard, shape < 1) — each family
# parameter is moved one by one in the browser (tests/test_browser.py, part 2) and fuzzed through URLs
FAMILY_MOVES = {"pareto": {"alpha": 1.8}, "lognormal": {}, "normal": {}, "weibull": {"w_shape": 0.7},
                "uniform": {}, "exp": {}}


@pytest.mark.parametrize("page", PAGES)
def test_every_sidebar_control_moves_without_error(page):
    at = fresh()
    at.switch_page(page)
    at.run()
    # the fast budget first: the moves below check that every control reruns the page cleanly,
    # which does not depend on the Monte Carlo's size (a third of the time at the default)
    at.sidebar.selectbox(key="budget").set_value("fast").run()
    for key, v in SIDEBAR_MOVES.items():
        at.sidebar.slider(key=key).set_value(v).run()
        assert_clean(at)
    for family, moves in FAMILY_MOVES.items():
        at.sidebar.selectbox(key="delay").set_value(family).run()
        for key, v in moves.items():
            at.sidebar.slider(key=key).set_value(v).run()
        assert_clean(at)
        assert at.get("plotly_chart")
    at.sidebar.multiselect(key="schemes").set_value(
        ["sync", "k-sync", "k-batch-sync", "async", "k-async", "k-batch-async", "local-sgd", "d-psgd", "ad-psgd"]).run()
    at.sidebar.selectbox(key="graph").set_value("torus").run()
    assert_clean(at)
    at.sidebar.number_input(key="seed").set_value(7).run()
    at.sidebar.selectbox(key="budget").set_value("balanced").run()
    assert_clean(at)


PAGE_MOVES = {
    "pages/error.py": [("number_input", "eta", 0.02), ("number_input", "L", 3.0), ("number_input", "mu", 0.3),
                       ("number_input", "sigma2", 2.0), ("number_input", "b", 4), ("number_input", "f0", 2.0),
                       ("number_input", "dim", 5), ("selectbox", "lr_rule", "adaptive"), ("number_input", "C", 0.02),
                       ("selectbox", "lr_rule", "staleness"), ("slider", "gamma", 0.3), ("radio", "p0_mode", "input"),
                       ("slider", "p0", 0.4), ("slider", "replicas", 50), ("number_input", "horizon", 30.0),
                       ("number_input", "eps", 0.1), ("selectbox", "problem", "logreg:breast_cancer"),
                       ("number_input", "l2", 0.02)],
    "pages/timeline.py": [("selectbox", "tl_scheme", "k-async"), ("slider", "tl_iters", 9),
                          ("selectbox", "tl_scheme", "local-sgd"), ("selectbox", "tl_scheme", "k-batch-sync")],
    "pages/local_sgd.py": [("slider", "D", 1.5), ("radio", "comm_source", "network model"),
                           ("selectbox", "topology", "parameter-server"), ("number_input", "params_m", 5.0),
                           ("number_input", "gbps", 1.0), ("number_input", "latency_ms", 1.0)],
    "pages/tradeoffs.py": [("radio", "axis", "m"), ("selectbox", "axis_scheme", "k-sync"), ("radio", "axis", "H"),
                           ("radio", "axis", "K"), ("number_input", "eps", 0.2), ("number_input", "horizon", 40.0)],
}


@pytest.mark.parametrize("page", list(PAGE_MOVES))
def test_every_page_control_moves_without_error(page):
    at = fresh()
    at.switch_page(page)
    at.run()
    for kind, key, v in PAGE_MOVES[page]:
        getattr(at, kind)(key=key).set_value(v).run()
        assert_clean(at)
        assert at.get("plotly_chart"), (key, v)


@pytest.mark.parametrize("query, expect", [
    ({"m": "-5", "K": "1000"}, {"m": 1, "K": 1}),
    ({"m": "abc", "lam": "0", "delay": "nonsense"}, {"m": 16, "lam": 0.01, "delay": "shifted-exp"}),
    ({"m": "100000000"}, {"m": 1000}),
    ({"K": "2.5", "schemes": ["sync", "bogus"], "seed": "-1"}, {"K": 2, "schemes": ["sync"], "seed": 0}),
    ({"alpha": "inf", "delay": "pareto"}, {"alpha": 2.5, "delay": "pareto"}),
    ({"delay": "trace"}, {"delay": "trace"}),
])
def test_hostile_urls_render_with_a_notice_and_clamped_values(query, expect):
    at = fresh(query)
    assert_clean(at)
    assert at.warning, "expected a visible notice"
    for key, v in expect.items():
        assert control(at, key) == v, (key, control(at, key))
    assert at.get("plotly_chart")


def test_url_reproduces_the_view():
    at = fresh({"m": "32", "K": "5", "delay": "lognormal", "ln_sigma": "1.5", "schemes": ["sync", "async"]})
    assert_clean(at)
    assert not at.warning
    assert at.sidebar.slider(key="m").value == 32 and at.sidebar.slider(key="K").value == 5
    assert at.sidebar.slider(key="ln_sigma").value == 1.5
    at.sidebar.slider(key="m").set_value(40).run()
    assert at.query_params["m"] == "40"
    assert at.query_params["delay"] == "lognormal"
    assert at.query_params["schemes"] == ["sync", "async"]


def test_k_is_clamped_when_m_shrinks():
    at = fresh({"m": "20", "K": "15"})
    at.sidebar.slider(key="m").set_value(8).run()
    assert_clean(at)
    assert at.sidebar.slider(key="K").value == 8


@pytest.mark.parametrize("preset", ["seed example: exponential delays", "heavy-tailed stragglers",
                                    "backup workers N + b", "local SGD with slow network",
                                    "async wins early, loses late"])
def test_presets_set_the_controls(preset):
    from distsgd.ui.presets import PRESETS
    at = fresh()
    at.sidebar.selectbox(key="preset").set_value(preset).run()
    assert_clean(at)
    for key, v in PRESETS[preset].items():
        if key in ("m", "K", "delay", "lam", "delta", "alpha", "schemes"):
            assert control(at, key) == v, key


# -- controls keep their values (issue 7) ---------------------------------------------------

def test_moving_m_keeps_k():
    """K's slider maximum follows m, so Streamlit re-creates the widget when m moves; K must
    keep its value (it used to fall back to 1)."""
    at = fresh({"m": "20", "K": "7"})
    at.sidebar.slider(key="m").set_value(21).run()
    assert_clean(at)
    assert at.sidebar.slider(key="K").value == 7
    assert at.query_params["K"] == "7" and at.query_params["m"] == "21"
    at.sidebar.slider(key="m").set_value(5).run()  # now K = 7 is no longer allowed
    assert at.sidebar.slider(key="K").value == 5
    assert any("K = 7" in shown(w) and "clamped to 5" in shown(w) for w in at.warning)
    at.sidebar.slider(key="m").set_value(30).run()  # clamped once; stays 5
    assert at.sidebar.slider(key="K").value == 5 and not at.warning


def test_moving_one_family_parameter_keeps_the_others():
    at = fresh({"delay": "uniform", "u_low": "1", "u_high": "3"})
    at.sidebar.slider(key="u_low").set_value(2.0).run()  # u_high's minimum follows u_low
    assert at.sidebar.slider(key="u_high").value == 3.0
    at.sidebar.slider(key="u_low").set_value(3.5).run()  # now b > a forces a clamp
    assert at.sidebar.slider(key="u_high").value > 3.5
    assert at.warning


def test_switching_pages_keeps_every_control():
    query = {"m": "37", "K": "9", "delay": "lognormal", "ln_sigma": "1.3", "budget": "fast", "seed": "5",
             "eta": "0.02", "tl_iters": "4", "schemes": ["sync", "k-async"]}
    at = fresh(query)
    for page in PAGES + PAGES[:1]:
        at.switch_page(page)
        at.run()
        assert_clean(at)
        for key, v in (("m", 37), ("K", 9), ("delay", "lognormal"), ("ln_sigma", 1.3), ("budget", "fast"),
                       ("seed", 5), ("eta", 0.02), ("tl_iters", 4), ("schemes", ["sync", "k-async"])):
            assert control(at, key) == v, (page, key)
        assert at.query_params["m"] == "37" and at.query_params["eta"] == "0.02", page


def test_page_key_notice_shows_on_the_first_run():
    at = fresh({"eta": "junk", "tl_iters": "999"})  # keys of the error and timeline pages
    assert any("eta" in shown(w) for w in at.warning)
    assert any("tl_iters" in shown(w) for w in at.warning)
    assert "eta" not in at.query_params  # junk replaced by the default, which is not written


def test_mu_above_l_is_clamped_with_a_notice():
    for page in ("pages/error.py", "pages/local_sgd.py", "pages/tradeoffs.py"):
        at = fresh({"mu": "5", "L": "2"})
        at.switch_page(page)
        at.run()
        assert_clean(at)
        assert control(at, "mu") == 2.0, page
        assert any("mu" in shown(w) for w in at.warning), page


def test_repeated_url_values_are_deduplicated_and_cleaned():
    at = fresh({"schemes": ["sync", "sync", "async"], "m": ["abc", "12"], "zzz": "1"})
    assert_clean(at)
    assert control(at, "schemes") == ["sync", "async"]
    table = at.dataframe[0].value
    assert list(table["scheme"]).count(table["scheme"][0]) == 1
    assert control(at, "m") == 12
    assert at.query_params["schemes"] == ["sync", "async"] and at.query_params["m"] == "12"
    assert "zzz" not in at.query_params
    at2 = fresh({"lam": ["junk", "junk"]})
    assert "lam" not in at2.query_params and control(at2, "lam") == 1.0


@pytest.mark.parametrize("query", [{"schemes": "[click](https://example.org/x)"},
                                   {"delta": "![i](http://host/x.png)"},
                                   {"schemes": ["x" * 10_000, "<b>bold</b>", "$\\frac{1}{0}$"]}])
def test_url_text_in_notices_is_plain_and_short(query):
    at = fresh(query)
    assert_clean(at)
    assert at.warning
    for w in at.warning:
        body = w.proto.body  # the Markdown Streamlit renders
        assert len(body) < 400, len(body)
        for raw in ("](", "![", "<b>", "$\\frac", "https://"):
            assert raw not in body, (raw, body)


# -- a rerun does no uncached core work; a page reads only controls it shows -----------------

#: views whose second run must do no core work: (page, moves before it)
VIEWS = [
    ("pages/runtime.py", []), ("pages/runtime.py", [("radio", "rt_view", "m")]),
    ("pages/error.py", []), ("pages/delays.py", []),
    ("pages/timeline.py", []), ("pages/timeline.py", [("selectbox", "tl_scheme", "local-sgd")]),
    ("pages/local_sgd.py", []), ("pages/local_sgd.py", [("radio", "comm_source", "network model")]),
    ("pages/tradeoffs.py", []), ("pages/tradeoffs.py", [("radio", "axis", "H")]),
]


@pytest.mark.parametrize("page, moves", VIEWS, ids=[f"{p[6:-3]}-{len(m)}" for p, m in VIEWS])
def test_a_rerun_of_the_same_view_does_no_core_work(page, moves):
    """Every call into the library's working entry points goes through a cache: running the same
    view again calls none of them (the delay page drew 20 000 samples and sorted them on every
    rerun, local SGD built its communication models per m, every chart wrote its CSV)."""
    at = fresh()
    at.switch_page(page)
    at.run()
    for kind, key, v in moves:
        getattr(at, kind)(key=key).set_value(v).run()
    assert_clean(at)
    with core_calls() as calls:
        at.run()
    assert_clean(at)
    assert at.get("plotly_chart")
    assert not calls, f"{page} after {moves}: uncached core work on a rerun: {dict(calls)}"


EXTRA_MOVES = {
    "pages/tradeoffs.py": [("radio", "axis", "K"), ("selectbox", "axis_scheme", "local-sgd"),
                           ("selectbox", "axis_scheme", "sync")],
    "pages/error.py": [("selectbox", "lr_rule", "constant"), ("radio", "p0_mode", "measured")],
}


#: a lesson's own state (DESIGN §14), read on every run to know whether a step's banner is due
#: above the page: no chart's input (tests/test_app_lessons.py checks the lessons)
LESSON_KEYS = {"lesson", "step", "answers"}


@pytest.mark.parametrize("page", PAGES)
def test_a_page_reads_only_the_controls_it_shows(page):
    """Every control a page's charts depend on is drawn on that page or in the sidebar (the
    trade-offs page used γ and D, the error page C, set on other pages and invisible there)."""
    at = fresh()
    at.switch_page(page)
    with control_use() as use:
        for kind, key, v in [(None, None, None)] + PAGE_MOVES.get(page, []) + EXTRA_MOVES.get(page, []):
            use["read"].clear()
            use["drawn"].clear()
            if kind is None:
                at.run()
            else:
                getattr(at, kind)(key=key).set_value(v).run()
            assert_clean(at)
            hidden = use["read"] - use["drawn"] - LESSON_KEYS
            assert not hidden, f"{page} after {key} = {v!r}: reads {sorted(hidden)} without showing them"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_error_page_runs_a_bundled_data_set(lang):
    """Logistic regression on breast cancer from a link (DESIGN §9): the error chart, the test
    accuracy chart under it, the constants with their kinds, and the sentence on the bound's gap
    from the numbers drawn; the quadratic's controls are not drawn, λ is."""
    at = open_app("pages/error.py", {"problem": "logreg:breast_cancer", "lang": lang, "schemes": ["sync", "async"]})
    assert_clean(at)
    charts = at.get("plotly_chart")
    assert len(charts) == 2
    names = [t.get("meta", {}).get("name") or t.get("name") for t in json.loads(charts[1].proto.spec)["data"]]
    assert "simulated mean: sync (m=16)" in names and "simulated mean: async (m=16)" in names
    keys = {w.key for w in at.number_input}
    assert "l2" in keys and not keys & {"L", "mu", "sigma2", "f0", "dim"}
    table = at.dataframe[-1].value
    assert len(table) == 6 + 2  # the six constants, a floor per scheme
    assert table.iloc[0, 2] == ("exact" if lang == "en" else "精确")  # f*: certified
    assert dict(at.query_params)["problem"] == "logreg:breast_cancer"


def test_the_trade_offs_page_on_a_data_set_gives_the_time_to_a_test_accuracy():
    """Trade-offs on breast cancer from a link: the K sweep's table has the simulated time to the
    target test accuracy beside the times to ε, and the constants the bound used follow it."""
    at = open_app("pages/tradeoffs.py", {"problem": "logreg:breast_cancer", "acc_target": "0.9", "m": "8"})
    assert_clean(at)
    tables = [d.value for d in at.dataframe]
    times = tables[0]
    column = "time to test accuracy 0.9 (simulated)"
    assert column in times.columns and times[column].notna().any()
    assert list(tables[-1].iloc[:, 0]) == ["f*", "L", "μ", "σ²* (at the optimum)", "σ² bound (everywhere)",
                                           "F₀ = f(w₀) − f*"]
    assert {w.key for w in at.number_input} >= {"l2", "acc_target"}
    assert dict(at.query_params)["acc_target"] == "0.9"


def test_a_data_file_problem_asks_for_its_file_then_uses_it():
    """problem=logreg:upload (a link cannot name a file): breast cancer meanwhile, with a notice
    saying so; once a file is read (what the uploader's callback stores), the constants are the
    file's."""
    from distsgd.problems.data import DataSet
    from distsgd.ui.sidebar import PROBLEM_DATA
    at = open_app("pages/error.py", {"problem": "logreg:upload", "schemes": ["sync"]})
    assert_clean(at)
    assert any("Upload a data file" in shown(w) and "breast cancer" in shown(w) for w in at.warning)
    rows = "\n".join(f"{i % 5},{(i * 7) % 3},{int(i % 5 > 1)}" for i in range(80))
    at.session_state[PROBLEM_DATA] = ("id", DataSet.read(rows.encode(), name="mine.csv"), "")
    at.run()
    assert_clean(at)
    assert not any("Upload a data file" in shown(w) for w in at.warning)
    assert any("20 held-out rows" in c.value for c in at.caption)  # 25 % of the file's 80 rows


@pytest.mark.parametrize("page, box, moved", [
    ("pages/error.py", "error", {"eta": "0.02", "gamma": "0.3", "replicas": "20"}),
    ("pages/graph.py", "graph", {"eta": "0.02", "eps": "0.1"}),
])
def test_a_closed_settings_box_draws_nothing_and_its_values_still_hold(page: str, box: str, moved: dict) -> None:
    """A page's settings box is drawn only while open (its ten widgets cost the shared server on
    every rerun): closed, none of its controls is drawn and the charts use their stored values —
    the same charts as with the box open; opened, the controls show those values."""
    query = {**moved, "schemes": ["sync", "async"]}
    shut = open_app(page, query, boxes_open=False)
    assert_clean(shut)
    assert not {w.key for w in [*shut.number_input, *shut.slider]} & set(moved)
    opened = open_app(page, query)
    assert_clean(opened)
    assert [c.proto.spec for c in shut.get("plotly_chart")] == [c.proto.spec for c in opened.get("plotly_chart")]
    shut.session_state[f"settings_{box}"] = True  # the reader opens it
    shut.run()
    for key, v in moved.items():
        assert control(shut, key) == type(control(shut, key))(float(v)), key
        widget = next(w for w in [*shut.number_input, *shut.slider] if w.key == key)
        assert widget.value == control(shut, key), key


def test_a_settings_box_waiting_for_a_data_file_is_open() -> None:
    at = open_app("pages/error.py", {"problem": "logreg:upload"}, boxes_open=False)
    assert_clean(at)
    assert [u.key for u in at.get("file_uploader")] == ["problem_file"]

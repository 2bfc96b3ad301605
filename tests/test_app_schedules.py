"""The schedule on the dashboard (issue 25): the Trade-offs page compares it with every fixed K
(or H) and says which wins from the numbers in its table (checked here against a judge of those
numbers, for a preset and for moved values, in both languages); the Error page draws it like a
scheme, with the value in force below; a preset that names no schedule turns it off."""

from __future__ import annotations

import base64
import json
import math
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from apptest_support import assert_clean, core_calls, navigation_only, open_app
from test_app_i18n import _texts, english_left
from test_ui_schedules import check_sentence

BAND = "95% band of the time to ε"


@pytest.fixture(autouse=True, scope="module")
def _navigation_only():
    with navigation_only():
        yield


def charts(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def values(y: list | dict) -> np.ndarray:
    """A trace's numbers from its JSON (plotly writes an array as base64 with its dtype)."""
    return np.asarray(y) if isinstance(y, list) else np.frombuffer(base64.b64decode(y["bdata"]), dtype=y["dtype"])


def number(cell: object) -> float:
    return math.inf if str(cell).strip() in ("never", "达不到") else float(cell)  # type: ignore[arg-type]


def comparison_table(at: AppTest) -> tuple[list[dict], dict, int | None]:
    """The fixed rows, the schedule's row and the starred row of the comparison table shown."""
    df = next(d.value for d in at.dataframe if {BAND, "达到 ε 的时间的 95% 置信带"} & set(d.value.columns))
    rows, run, star = [], None, None
    for i, r in enumerate(df.itertuples(index=False)):
        what, t, band, best = str(r[0]), number(r[1]), str(r[2]), str(r[3])
        lo, hi = (number(x) for x in band.strip("[]").split(", "))
        if re.fullmatch(r"[KH] = \d+", what):
            rows.append({"x": int(what.split(" = ")[1]), "time_to_target": t, "time_to_target_low": lo,
                         "time_to_target_high": hi})
            star = i if best == "★" else star
        else:
            run = {"label": re.sub(r"^(schedule: |调度：)", "", what), "time_to_target": t, "time_to_target_low": lo,
                   "time_to_target_high": hi}
    assert run is not None
    return rows, run, star


def verdict(at: AppTest, label: str) -> str:
    texts = [c.value for c in at.caption if label in c.value]
    assert len(texts) == 1, texts
    return texts[0].split("** ", 1)[1] if "** " in texts[0] else texts[0].split("**", 2)[2].strip()


def check_page(at: AppTest, eps: float, horizon: float) -> str:
    """The verdict is the judge's for the numbers in the table; the chart stars the table's best."""
    rows, run, star = comparison_table(at)
    text = verdict(at, run["label"])
    assert text == check_sentence(rows, run, eps, horizon)
    names = [t.get("name", "") for c in charts(at) for t in c["data"]]
    starred = [n for n in names if n.startswith("simulated mean:") and n.endswith("★")]
    finite = [i for i, r in enumerate(rows) if math.isfinite(r["time_to_target"])]
    best = min(finite, key=lambda i: rows[i]["time_to_target"]) if finite else None
    assert star == best
    assert len(starred) == (best is not None) and (best is None or starred[0].endswith(f"={rows[best]['x']}) ★"))
    assert f"simulated mean: {run['label']}" in names
    return text


def with_preset(preset: str, page: str, **query: str) -> AppTest:
    """The app opened with ``query`` (and the fast budget), the sidebar's ``preset`` applied, then
    ``page`` drawn, cleanly."""
    at = open_app(query={"budget": "fast", **query})
    at.sidebar.selectbox(key="preset").set_value(preset).run()
    at.switch_page(page)
    at.run()
    assert_clean(at)
    return at


def test_tradeoffs_compares_the_adasync_preset_and_moved_values():
    at = with_preset("AdaSync on a heavy tail", "pages/tradeoffs.py")
    titles = [c["layout"].get("title", {}).get("text", "") for c in charts(at)]
    assert "K in force against wall-clock time" in titles
    first = check_page(at, 0.01, 100.0)
    assert "adasync(K0=1, period=10)" in first
    at.number_input(key="K0").set_value(8).run()  # moved: a larger start, shorter period, a looser target
    at.number_input(key="period").set_value(5.0).run()
    at.number_input(key="eps").set_value(0.03).run()
    assert_clean(at)
    moved = check_page(at, 0.03, 100.0)
    assert "adasync(K0=8, period=5)" in moved and moved != first
    with core_calls() as calls:  # the same view again: everything from the caches
        at.run()
    assert_clean(at)
    assert not calls, dict(calls)


def test_tradeoffs_in_chinese():
    at = with_preset("AdaComm with expensive communication", "pages/tradeoffs.py", lang="zh")
    rows, run, _ = comparison_table(at)
    text = verdict(at, run["label"])
    assert "置信带" in text and "H" in text, text
    titles = [c["layout"].get("title", {}).get("text", "") for c in charts(at)]
    assert "生效的 H 与墙钟时间" in titles, titles
    assert len(rows) == 7
    left = {text[:90]: words for _, text in _texts(at) if (words := english_left(text))}
    assert not left, left


def test_error_page_draws_the_schedule_and_a_preset_without_one_turns_it_off():
    at = with_preset("AdaComm with expensive communication", "pages/error.py", replicas="20")
    label = "local-sgd, adacomm(H0=32, period=10)"
    error, value = charts(at)[:2]
    names = [t.get("name", "") for t in error["data"]]
    assert f"simulated mean: {label}" in names and not any(n.startswith(f"bound: {label}") for n in names)
    assert value["layout"]["title"]["text"] == "H in force against wall-clock time"
    assert values(value["data"][1]["y"])[0] == 32  # the value in force starts at H₀
    table = next(d.value for d in at.dataframe if "scheme" in d.value.columns)
    assert label in list(table["scheme"])
    at.sidebar.selectbox(key="preset").set_value("seed example: exponential delays").run()
    assert_clean(at)
    names = [t.get("name", "") for c in charts(at) for t in c["data"]]
    assert not any("adacomm" in n for n in names) and at.session_state["_controls"]["schedule"] == "off"

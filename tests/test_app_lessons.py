"""The Lessons page under AppTest (issue 26): every step in both languages — the step on the
Lessons page, "Set it up" landing on the step's page with its preset in the URL, the page held
until the prediction is made, then the page and the answer; the answer follows a moved slider
and the page's own numbers; the step and the answers survive page switches; a teacher's link."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from apptest_support import APP, assert_clean, fragment_rerun, fragment_runs, navigation_only, open_app
from distsgd.ui import lesson_steps, lessons
from distsgd.ui.controls import CONTROLS, url_text

STEPS = lesson_steps.STEPS
VERDICT = {"en": "You predicted", "zh": "你的预测是"}
SETUP = {"en": "Set it up", "zh": "设置好"}


@pytest.fixture(autouse=True, scope="module")
def _navigation_only():
    with navigation_only():
        yield


def said(at: AppTest, lang: str = "en") -> str:
    """The answer's paragraph (the verdict and the sentence), or ""."""
    return next((m.value for m in at.markdown if m.value.startswith(VERDICT[lang])), "")


def set_up(n: int, lang: str) -> AppTest:
    """A fresh session on the Lessons page at step n, "Set it up" pressed, on the step's page."""
    at = open_app("pages/lessons.py", {"lesson": "seeds", "step": str(n), "lang": lang})
    assert_clean(at)
    at.button(key="lesson_setup").click().run()
    assert_clean(at)
    return at


def url(at: AppTest) -> dict[str, list[str]]:
    """The URL's query: key → its values."""
    return {k: v if isinstance(v, list) else [v] for k, v in dict(at.query_params).items()}


def preset_in_url(at: AppTest, step: lesson_steps.Step, n: int) -> None:
    q = url(at)
    assert q["lesson"] == ["seeds"] and q["step"] == [str(n)], q
    for key, v in step.preset.items():
        c = CONTROLS[key]
        if v == c.initial() or (c.multi and list(v) == c.initial()):
            assert key not in q, key
        else:
            assert q[key] == ([str(x) for x in v] if c.multi else [url_text(v)]), (key, q[key])


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("n", range(1, len(STEPS) + 1))
def test_every_step_predict_then_reveal(n: int, lang: str) -> None:
    step = STEPS[n - 1]
    at = open_app("pages/lessons.py", {"lesson": "seeds", "step": str(n), "lang": lang})
    assert_clean(at)
    assert SETUP[lang] in at.button(key="lesson_setup").label
    at.button(key="lesson_setup").click().run()
    assert_clean(at)
    preset_in_url(at, step, n)
    # the run went on on the step's page: the banner is drawn only there (and nothing of the page yet)
    head = {"en": f"**Lesson · step {n} of", "zh": f"**课程 · 第 {n} 步"}[lang]
    assert any(m.value.startswith(head) for m in at.markdown) and not at.title, [m.value for m in at.markdown][:3]
    at.switch_page(step.page).run()  # the browser stays on the page st.switch_page opened
    assert_clean(at)
    assert not at.get("plotly_chart"), "the page is drawn before the prediction"
    assert not said(at, lang)
    at.radio(key=f"lesson_pick_{n}").set_value(0).run()
    assert_clean(at)
    assert at.get("plotly_chart"), "no chart after the prediction"
    text = said(at, lang)
    assert text, [m.value for m in at.markdown][:5]
    if lang == "zh":  # the question and the answer in Chinese, not only the verdict
        assert "You predicted" not in text and "answer (" not in text and "Here" not in text, text
        assert any(m.value.startswith("**预测**：") for m in at.markdown)
    if lang == "en":  # the banner says what the step's answer says at the preset's values
        get = lessons.preset_getter(step)
        want = step.answer(lessons.selection_of(get), get)
        assert want.sentence in text
        assert text.startswith("You predicted (a): right." if want.choice == 0 else "You predicted (a)")
    assert url(at)["answers"] == [f"{n}a"]


def test_the_answer_follows_a_moved_slider() -> None:
    at = set_up(1, "en")
    at.switch_page("pages/runtime.py").run()
    at.radio(key="lesson_pick_1").set_value(1).run()
    assert "E[X₍ₘ:ₘ₎] = 3.381" in said(at) and "right" in said(at)
    at.sidebar.slider(key="m").set_value(2).run()  # E[X_{2:2}] = 1.5 = 1.5 × E[X]: (c), not (b)
    assert_clean(at)
    text = said(at)
    assert "m = 2" in text and "E[X₍ₘ:ₘ₎] = 1.5," in text and "answer (c)" in text and "the numbers say (c)" in text


def test_the_answer_is_the_page_s_own_numbers_also_after_a_fragment_control_moved() -> None:
    """Step 4 cites K-async's Monte Carlo mean: the one the page's chart shows, which changes with
    the page's view control (drawn in a fragment: the whole app reruns, so the banner follows)."""
    n = 4
    with fragment_runs():
        at = set_up(n, "en")
        at.switch_page("pages/runtime.py").run()
        at.radio(key=f"lesson_pick_{n}").set_value(0).run()
        for view in ("K", "m", "K-async not drawn"):
            if view == "m":
                fragment_rerun(at, "radio", "rt_view", "m")
            elif view != "K":  # the page then takes both from a call of its own
                at.sidebar.multiselect(key="schemes").set_value(["k-sync"]).run()
            assert_clean(at)
            page_says = next(m.value for m in at.markdown if m.value.startswith("This law is not"))
            assert page_says in said(at), (view, page_says, said(at))


def test_the_race_follows_the_error_page_s_horizon() -> None:
    """Step 5 reads the Error page's horizon T, drawn in that page's fragment: moved there, the
    banner's T follows (and its values are those of the page's chart at the new T)."""
    with fragment_runs():
        at = set_up(5, "en")
        at.switch_page("pages/error.py").run()
        at.radio(key="lesson_pick_5").set_value(1).run()
        assert "at T = 60 it is" in said(at)
        fragment_rerun(at, "number_input", "horizon", 20.0)
        assert_clean(at)
        assert "at T = 20 it is" in said(at), said(at)
        get = lessons.preset_getter(STEPS[4])
        want = STEPS[4].answer(lessons.selection_of(get), lambda k: 20.0 if k == "horizon" else get(k))
        assert want.sentence in said(at)


def test_step_and_answers_survive_page_switches_and_leave() -> None:
    at = set_up(2, "en")
    at.switch_page("pages/runtime.py").run()
    at.radio(key="lesson_pick_2").set_value(1).run()
    at.switch_page("pages/delays.py").run()  # another page: no banner there
    assert_clean(at)
    assert not said(at) and at.get("plotly_chart")
    at.switch_page("pages/lessons.py").run()
    assert_clean(at)
    assert at.radio(key="lesson_steps").value == 2
    assert "right" in said(at) and "✓" in at.radio(key="lesson_steps").options[1]
    at.button(key="lesson_next_False").click().run()
    assert at.radio(key="lesson_steps").value == 3 and url(at)["step"] == ["3"]
    at.switch_page("pages/runtime.py").run()  # step 3 is on this page too: held until predicted
    assert not at.get("plotly_chart")
    at.button(key="lesson_leave").click().run()
    at.switch_page("pages/runtime.py").run()
    assert_clean(at)
    assert at.get("plotly_chart") and "lesson" not in url(at)
    assert url(at)["answers"] == ["2b"]  # the predictions stay


def test_the_banner_s_next_step_leads_to_the_lessons_page_also_when_that_step_is_on_another_page() -> None:
    at = set_up(4, "en")  # step 4 is on the runtime page, step 5 on the error page
    at.switch_page("pages/runtime.py").run()
    at.radio(key="lesson_pick_4").set_value(0).run()
    at.button(key="lesson_next_True").click().run()
    assert_clean(at)
    assert at.title and at.title[0].value.startswith("Lessons"), [t.value for t in at.title]
    assert at.radio(key="lesson_steps").value == 5 and url(at)["step"] == ["5"]


def test_a_teacher_s_link_opens_the_step() -> None:
    at = open_app("pages/lessons.py", {"lesson": "seeds", "step": "5", "lang": "zh"})
    assert_clean(at)
    assert at.radio(key="lesson_steps").value == 5
    assert any("第 5 步" in s.value for s in at.subheader)
    assert any("lessons?lesson=seeds&amp;step=5&amp;lang=zh" in m.value or "lessons?lesson=seeds&step=5&lang=zh"
               in m.value for m in at.markdown)
    bad = AppTest.from_file(APP, default_timeout=120)  # the link is the session's first request
    bad.query_params.update({"lesson": "nonsense", "step": "99"})
    bad.switch_page("pages/lessons.py").run()  # each value replaced, with a notice
    assert not bad.exception and bad.radio(key="lesson_steps").value == 1
    notes = " ".join(w.value for w in bad.warning)
    assert "lesson" in notes and "step" in notes, notes

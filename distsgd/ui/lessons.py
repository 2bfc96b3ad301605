"""Lessons (DESIGN §14): the Lessons page, the banner a lesson's step shows above its page, and a
printable summary.

A lesson is a sequence of steps (:mod:`distsgd.ui.lesson_steps`).  The Lessons page shows one
step: a few sentences, the formula, the question and its choices, and "Set it up", which applies
the step's preset, starts the lesson (controls ``lesson`` and ``step``) and opens the step's page.
There, above the page, the banner asks for the prediction before the page is drawn; once it is made
(kept in the control ``answers``, like every control: across pages and in the URL), the banner
shows the answer computed from the numbers the page draws, at the controls' values now — a slider
moved, the sentence follows.  The page's own controls sit in fragments; while the banner is shown a
move of one of them reruns the whole app (:data:`distsgd.ui.state.WHOLE_RUNS`), so the answer
follows them too.  Nothing is kept across sessions: a teacher cannot see the class's answers here,
and gets a printable summary of the steps instead.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from ..clusters import Stragglers
from ..params import ParameterError
from ..topology import graph_fits
from . import claims, controls, page, sidebar, state
from .i18n import N_, language, tr
from .lesson_steps import LETTERS, STEPS, Answer, Getter, Step, fields
from .rerun_caps import UI_BUDGETS

__all__ = ["LESSONS", "show", "banner", "summary_markdown", "summary_html", "selection_of", "preset_getter",
           "link", "answers"]

#: the lessons by their URL value (``?lesson=…``): a title and the steps
LESSONS: dict[str, tuple[str, tuple[Step, ...]]] = {
    "seeds": (N_("Stragglers and staleness, step by step"), STEPS),
}
DEFAULT_LESSON = "seeds"
#: the pages a step may open, by file, with their titles as the navigation shows them
PAGE_TITLES = {"pages/runtime.py": N_("Runtime per iteration"), "pages/error.py": N_("Error vs wall-clock time"),
               "pages/delays.py": N_("Delay distribution"), "pages/timeline.py": N_("Timeline of workers"),
               "pages/local_sgd.py": N_("Local SGD and communication"),
               "pages/tradeoffs.py": N_("Trade-offs: best K, m, H"), "pages/graph.py": N_("Decentralised: the graph"),
               "pages/cluster.py": N_("Your cluster")}
LESSONS_PAGE = "pages/lessons.py"


# -- where a lesson stands: the controls lesson, step, answers ------------------------------------

def _lesson() -> str:
    """The lesson shown: the one running, else the default."""
    name = state.value("lesson")
    return name if name in LESSONS else DEFAULT_LESSON


def _steps(name: str | None = None) -> tuple[Step, ...]:
    return LESSONS[name or _lesson()][1]


def _number() -> int:
    """The step shown (1-based), within the lesson's steps."""
    return min(max(int(state.value("step")), 1), len(_steps()))  # a step past the lesson's end: its last


def answers() -> dict[int, int]:
    """The predictions made: step number → the index of the choice."""
    out: dict[int, int] = {}
    for a in state.value("answers"):
        out[int(a[:-1])] = LETTERS.index(a[-1])
    return out


def _record(n: int, choice: int | None) -> None:
    rest = [a for a in state.value("answers") if int(a[:-1]) != n]
    state.set_value("answers", rest + ([f"{n}{LETTERS[choice]}"] if choice is not None else []))


def _go(n: int) -> None:
    state.set_value("step", str(n))


def _picked(n: int) -> None:
    """on_change of a prediction: recorded as this step's answer."""
    v = st.session_state.get(f"lesson_pick_{n}")
    if v is not None:
        _record(n, int(v))


def _again(n: int) -> None:
    """'Predict again': the prediction is forgotten, and the page waits for a new one."""
    _record(n, None)
    st.session_state.pop(f"lesson_pick_{n}", None)


def _set_up(name: str, n: int) -> None:
    """on_click of "Set it up": the step's preset (no stragglers unless it names them), the lesson started."""
    step = _steps(name)[n - 1]
    for key, v in {"stragglers": "none", **step.preset}.items():
        state.set_value(key, v)
    state.set_value("lesson", name)
    state.set_value("step", str(n))
    state.notify(tr("Lesson step {n} set up: {title}", n=n, title=tr(step.title)), once=True)


def _leave() -> None:
    state.set_value("lesson", "none")


def link(name: str, n: int, lang: str) -> str:
    """The link of a step, relative to the app's address (a teacher puts it on a slide)."""
    return f"lessons?lesson={name}&step={n}&lang={lang}"


# -- the answer, shown ----------------------------------------------------------------------------

def _answer(step: Step, sel: sidebar.Selection, get: Getter) -> Answer | None:
    """The step's answer at these values; None (with the page's error message) when they cannot be computed."""
    with page.guard():
        return step.answer(sel, get)
    return None


def _verdict(predicted: int, ans: Answer) -> str:
    if ans.choice is None:
        return tr("You predicted ({you}).", you=LETTERS[predicted])
    if ans.choice == predicted:
        return tr("You predicted ({you}): right.", you=LETTERS[predicted])
    return tr("You predicted ({you}); the numbers say ({right}).", you=LETTERS[predicted], right=LETTERS[ans.choice])


def _prediction(step: Step, n: int, sel: sidebar.Selection, where: Any) -> int | None:
    """The question, its choices as a radio (locked once chosen), and the prediction made."""
    f = fields(sel)
    where.markdown(tr("**Predict.** {question}", question=tr(step.question, **f)))
    predicted = answers().get(n)
    key = f"lesson_pick_{n}"
    st.session_state[key] = predicted
    texts = {i: f"({LETTERS[i]}) {tr(c, **f)}" for i, c in enumerate(step.choices)}
    where.radio(tr("Your prediction"), list(texts), index=None, format_func=lambda i: texts.get(i, str(i)), key=key,
                on_change=_picked, args=(n,), disabled=predicted is not None, label_visibility="collapsed")
    return predicted


_TO_LESSONS = "_lesson_to_lessons"  # session key: a button of the banner asked for the Lessons page


def _go_lessons(n: int) -> None:
    """on_click of the banner's buttons: step n, on the Lessons page (switched to at the start of
    the next run: the banner that drew the button may not be drawn in it, its step on another page)."""
    _go(n)
    st.session_state[_TO_LESSONS] = True


def _nav(name: str, n: int, total: int, where: Any, to_lessons: bool) -> None:
    """Previous / next (on the step's page they lead back to the Lessons page)."""
    go = _go_lessons if to_lessons else _go
    cols = where.columns(3)
    cols[0].button(tr("← Previous step"), key=f"lesson_prev_{to_lessons}", disabled=n <= 1, on_click=go, args=(n - 1,))
    cols[1].button(tr("Next step →"), key=f"lesson_next_{to_lessons}", disabled=n >= total, on_click=go,
                   args=(n + 1,), type="primary" if answers().get(n) is not None else "secondary")
    if to_lessons:
        cols[2].button(tr("Back to the lesson"), key="lesson_back", on_click=go, args=(n,))


def _page_file(pg: Any) -> str:
    """The file of a page of st.navigation ("pages/runtime.py")."""
    path = getattr(pg, "_page", None)
    return f"pages/{Path(str(path)).name}" if path is not None else ""


def banner(pg: Any) -> bool:
    """Above a page: the running lesson's step, when this is its page — the question, the
    prediction, and once it is made the answer from the numbers at the controls' values now.
    Returns whether to draw the page (not before the prediction: the page is the reveal)."""
    st.session_state[state.WHOLE_RUNS] = False
    if st.session_state.pop(_TO_LESSONS, False) and _page_file(pg) != LESSONS_PAGE:
        st.switch_page(LESSONS_PAGE)
    name = state.value("lesson")
    if name not in LESSONS:
        return True
    steps, n = _steps(name), _number()
    step = steps[n - 1]
    if _page_file(pg) != step.page:
        return True
    sel = sidebar.current()
    notes = st.container()  # this run's notices (the page may not run: its header would hold them)
    box = st.container(border=True)
    box.markdown(tr("**Lesson · step {n} of {total}: {title}**", n=n, total=len(steps), title=tr(step.title)))
    predicted = _prediction(step, n, sel, box)
    if predicted is None:
        box.info(tr("Predict first: the page appears below once you have chosen."), icon=":material/lightbulb:")
    else:
        st.session_state[state.WHOLE_RUNS] = True
        with box:
            ans = _answer(step, sel, state.value)
        if ans is not None:
            box.markdown(claims._join(_verdict(predicted, ans), ans.sentence))
        box.button(tr("Predict again"), key="lesson_again", on_click=_again, args=(n,))
    _nav(name, n, len(steps), box, to_lessons=True)
    box.button(tr("Leave the lesson"), key="lesson_leave", on_click=_leave, type="tertiary")
    # shown here, not in a notice box an earlier run left behind when st.switch_page ended it
    page.show_notices(notes)
    return predicted is not None


# -- the Lessons page ------------------------------------------------------------------------------

def _step_list(name: str, n: int) -> None:
    steps, done = _steps(name), answers()
    key = "lesson_steps"
    st.session_state[key] = n
    labels = {i + 1: f"{i + 1}. {tr(s.title)}" + (" ✓" if i + 1 in done else "") for i, s in enumerate(steps)}
    st.radio(tr("Steps"), list(labels), format_func=lambda i: labels.get(i, str(i)), key=key,
             on_change=lambda: _go(int(st.session_state[key])))


def show() -> None:
    """The Lessons page: the step list, the step, its set-up, navigation, the link and the summary."""
    name = _lesson()
    title, steps = LESSONS[name]
    n = _number()
    step = steps[n - 1]
    sel = sidebar.current()
    page.header(tr("Lessons: {title}", title=tr(title)),
                tr("One idea per step: read it, press **Set it up** to open the page it is about with its "
                   "settings, predict the answer there before the page is drawn, then check it against the numbers. "
                   "Every control stays live: move a slider, and the answer follows the numbers."))
    left, right = st.columns([1, 3])
    with left:
        _step_list(name, n)
    with right:
        st.subheader(tr("Step {n} of {total}: {title}", n=n, total=len(steps), title=tr(step.title)))
        st.markdown(tr(step.text))
        for formula in step.formulas:
            st.latex(formula)
        f = fields(selection_of(preset_getter(step)))  # the question as "Set it up" will pose it
        st.markdown(tr("**Question.** {question}", question=tr(step.question, **f)))
        st.markdown("\n".join(f"- ({LETTERS[i]}) {tr(c, **f)}" for i, c in enumerate(step.choices)))
        target = tr(PAGE_TITLES[step.page])
        if st.button(tr("Set it up: open {page} with this step's settings", page=target), type="primary",
                     key="lesson_setup", on_click=_set_up, args=(name, n)):
            st.switch_page(step.page)
        predicted = answers().get(n)
        if predicted is None:
            st.caption(tr("The page asks for your prediction before it shows its charts."))
        else:
            ans = _answer(step, sel, state.value)
            if ans is not None:
                st.markdown(claims._join(_verdict(predicted, ans), ans.sentence))
                st.caption(tr("Computed at the values now in the sidebar: {workers}, m = {m}, K = {K}.",
                              workers=fields(sel)["workers"], m=sel.m, K=sel.K))
        _nav(name, n, len(steps), st, to_lessons=False)
        url = link(name, n, language())
        st.markdown(tr("Link to this step: [{url}]({url})", url=url))
    with st.expander(tr("For the teacher"), expanded=False):
        st.markdown(tr("Nothing is shared between sessions, so this page cannot count how the class answered: ask "
                       "for a show of hands. The summary lists every step with its question and the answer at the "
                       "step's settings, to print or to share."))
        c1, c2 = st.columns(2)
        c1.download_button(tr("Summary (Markdown)"), lambda: summary_markdown(name), file_name=f"lesson-{name}.md",
                           mime="text/markdown", on_click="ignore", key="lesson_md")
        c2.download_button(tr("Summary (HTML, to print)"), lambda: summary_html(name),
                           file_name=f"lesson-{name}.html", mime="text/html", on_click="ignore", key="lesson_html")


# -- the summary: every step at its preset -----------------------------------------------------------

def preset_getter(step: Step) -> Getter:
    """The controls' values a class sees after "Set it up": the preset's, the defaults elsewhere."""
    values = {"stragglers": "none", **step.preset}
    return lambda key: values[key] if key in values else controls.CONTROLS[key].initial()


def selection_of(get: Getter) -> sidebar.Selection:
    """The sidebar's selection for these controls' values (as the sidebar makes it, without drawing)."""
    delay = controls.FAMILIES[get("delay")].build(get)
    kind = get("stragglers")
    workers = Stragglers(delay, kind, **{k: get(k) for k in controls.KIND_PARAMS[kind]})
    m = int(get("m"))
    graph = get("graph") if graph_fits(get("graph"), m) else "ring"
    return sidebar.Selection(delay=delay, workers=workers, m=m, K=min(int(get("K")), m), H=int(get("H")),
                             schemes=tuple(get("schemes")), seed=int(get("seed")), budget=UI_BUDGETS[get("budget")],
                             graph=graph)


def _at_preset(step: Step) -> tuple[dict[str, Any], Answer | None]:
    get = preset_getter(step)
    sel = selection_of(get)
    try:
        return fields(sel), step.answer(sel, get)
    except ParameterError:
        return fields(sel), None


def _summary(name: str, write: Callable[[int, Step, dict[str, Any], Answer | None], str]) -> list[str]:
    return [write(i + 1, s, *_at_preset(s)) for i, s in enumerate(_steps(name))]


def _words() -> tuple[str, str]:
    return tr("Question."), tr("Link:")


def _at_settings(step: Step) -> str:
    return tr("At the step's settings ({page}):", page=tr(PAGE_TITLES[step.page]))


def summary_markdown(name: str) -> str:
    """Every step of the lesson: its text, formula, question, choices, link, and the answer a class
    sees at the step's settings, in Markdown (formulas between $$)."""
    title, _ = LESSONS[name]
    lang = language()
    question, link_word = _words()

    def write(n: int, s: Step, f: dict[str, Any], ans: Answer | None) -> str:
        choices = "\n".join(f"- ({LETTERS[i]}) {tr(c, **f)}" for i, c in enumerate(s.choices))
        said = ans.sentence if ans is not None else "—"
        formulas = "".join(f"$$\n{f}\n$$\n\n" for f in s.formulas)
        return (f"## {n}. {tr(s.title)}\n\n{tr(s.text)}\n\n{formulas}"
                f"**{question}** {tr(s.question, **f)}\n\n{choices}\n\n"
                f"**{_at_settings(s)}** {said}\n\n{link_word} `{link(name, n, lang)}`\n")

    return f"# {tr(title)}\n\n" + "\n".join(_summary(name, write))


def summary_html(name: str) -> str:
    """The summary as one HTML page to print (formulas as LaTeX, typeset by MathJax when online)."""
    title, _ = LESSONS[name]
    lang = language()
    e = html.escape
    question, link_word = (e(w) for w in _words())

    def write(n: int, s: Step, f: dict[str, Any], ans: Answer | None) -> str:
        choices = "".join(f"<li>({LETTERS[i]}) {e(tr(c, **f))}</li>" for i, c in enumerate(s.choices))
        said = e(ans.sentence) if ans is not None else "—"
        formulas = "".join(f"<p>\\[{e(f)}\\]</p>" for f in s.formulas)
        return (f"<section><h2>{n}. {e(tr(s.title))}</h2><p>{e(tr(s.text))}</p>{formulas}"
                f"<p><b>{question}</b> {e(tr(s.question, **f))}</p><ul>{choices}</ul>"
                f"<p><b>{e(_at_settings(s))}</b> {said}</p>"
                f"<p>{link_word} <code>{e(link(name, n, lang))}</code></p></section>")

    return (f"<!doctype html><html lang=\"{lang}\"><head><meta charset=\"utf-8\"><title>{e(tr(title))}</title>"
            "<script defer src=\"https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js\"></script>"
            "<style>body{font-family:sans-serif;max-width:50em;margin:2em auto;line-height:1.45}"
            "section{page-break-inside:avoid;border-top:1px solid #ccc;margin-top:1.5em}</style></head><body>"
            f"<h1>{e(tr(title))}</h1>" + "".join(_summary(name, write)) + "</body></html>")

r"""The dashboard in English and Chinese (DESIGN §10): message catalogues and their use.

Every visible string is written in English in the code, as the message id of a call
``tr("… {name} …", name=value)`` (or marked ``N_("…")`` where it is translated later, e.g. a
control's label declared in :mod:`distsgd.ui.controls`), and looked up in the current language's
catalogue: gettext ``.po`` files under ``locales/<lang>/LC_MESSAGES/`` (one per part of the app,
so each can be edited alone), read with Babel when first needed.  English needs no catalogue:
the id is the text.  Placeholders are ``str.format`` fields; a translation must use the same set
(tests/test_ui_catalogues.py checks it, and that every id Babel's extractor finds has a translation).
A message with fields is filled by ``str.format``, so LaTeX in it (``\mathbb{E}``) would read as
a field: pass a formula as a field's value instead.

Why gettext ``.po`` and not a plain dict: it is the format translators' tools (Poedit, Weblate)
read and that ``pybabel extract`` produces from the code, with room for translator comments;
reading the ``.po`` directly (no compiled ``.mo``) keeps one source of truth in the repository.

Figures are built in English by :mod:`distsgd.plots` (the library has no languages);
:func:`figure` translates a finished figure's titles, axis titles and legend names, matching each
against the catalogue's ids — exactly, or as one of the templates it is given
(:data:`distsgd.ui.figure_text.FIGURE_TEXT`): ids with ``{fields}`` whose values are translated
in turn; only those, so a sentence template elsewhere never rewrites a chart — and keeps the
English name of each trace in its ``meta`` (``{"name": …}``), so tests tell theory from
simulation in every language (DESIGN §5).

The library's refusals are not matched at all: a :class:`~distsgd.params.ParameterError` carries
its reason code and fields, and :func:`phrase` looks the code's English template
(:data:`distsgd.reasons.REASONS`) up in the catalogue as an id, filling it with its fields, each
translated in turn (a Domain's range, a place in a file, a nested refusal).

>>> fill("{a} and {b}", {"a": 1, "b": 2})
'1 and 2'
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import streamlit as st
from babel.messages.pofile import read_po
from streamlit.runtime.scriptrunner import get_script_run_ctx

from .. import plots
from ..params import ParameterError, from_jsonable
from ..reasons import REASONS, Phrase, Text

__all__ = ["LANGUAGES", "LOCALES", "tr", "N_", "language", "set_language", "catalogue", "figure",
           "translate", "fill", "fields", "from_locale", "phrase"]

#: the languages, code → its own name (the selector shows these)
LANGUAGES = {"en": "English", "zh": "中文"}
LOCALES = Path(__file__).resolve().parent / "locales"
_LANG = "_lang"  # session key: the language of this run (set by state.start / the selector)
_CTX_LANG = "_distsgd_language"  # the same, kept on the run's ScriptRunContext
_SPEC = re.compile(r"\{[A-Za-z_]\w*(?:![rsa])?:[^{}]*\}")
_FIELD = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)(?:![rsa])?(?::[^{}]*)?\}(?!\})")


def N_(msgid: str) -> str:  # noqa: N802 - gettext's name for "mark for translation, translate later"
    """Mark a message for extraction; it is translated where it is shown (``tr(label)``)."""
    return msgid


def fields(text: str) -> set[str]:
    """The ``str.format`` field names of a message (``{{`` and ``}}`` are literal braces)."""
    return set(_FIELD.findall(text))


def fill(text: str, values: dict[str, Any]) -> str:
    """``text.format(**values)``, for a message with fields (a message without any is returned
    as it is, so LaTeX braces in it need no doubling)."""
    return text.format(**values) if values else text


def from_locale(locale: str | None) -> str:
    """The language for a browser locale (``zh-CN``, ``zh_TW``, ``en-US`` …): Chinese for any
    ``zh``, else English."""
    return "zh" if locale and locale.lower().replace("_", "-").split("-")[0] == "zh" else "en"


@functools.cache
def catalogue(lang: str) -> dict[str, str]:
    """Message id → translation, from every ``.po`` file of the language (empty for English;
    untranslated and fuzzy entries left out, so they show in English and the test finds them)."""
    out: dict[str, str] = {}
    for path in sorted((LOCALES / lang / "LC_MESSAGES").glob("*.po")):
        with path.open("rb") as f:
            for msg in read_po(f, locale=lang):
                if msg.id and isinstance(msg.id, str) and isinstance(msg.string, str) and msg.string \
                        and not msg.fuzzy:
                    out[msg.id] = msg.string
    return out


def language() -> str:
    """The language of this run (English outside a Streamlit session).  Read from the run's context,
    where :func:`set_language` also puts it (a page asks hundreds of times a rerun, and each read of
    the session state takes its lock), else from the session state (a new runner's first run)."""
    lang = getattr(get_script_run_ctx(suppress_warning=True), _CTX_LANG, None) or st.session_state.get(_LANG, "en")
    return lang if lang in LANGUAGES else "en"


def set_language(lang: str) -> None:
    """The language of this session from now on (every full run sets it, app.py's first lines)."""
    lang = lang if lang in LANGUAGES else "en"
    st.session_state[_LANG] = lang
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is not None:
        setattr(ctx, _CTX_LANG, lang)  # a ScriptRunContext is one session's (a dataclass: it takes the attribute)


def tr(msgid: str, /, **values: Any) -> str:
    """The message in the current language, its fields filled from ``values``."""
    lang = language()
    text = msgid if lang == "en" else catalogue(lang).get(msgid, msgid)
    return fill(text, values)


#: how a refusal reads: the parameter, then the reason's text (:func:`phrase`)
_REFUSAL = N_("{parameter}: {detail}")


def phrase(value: Any, lang: str | None = None, parameter: str | None = None) -> Any:
    """A library refusal or a part of one in the language: a :class:`~distsgd.params.ParameterError`
    as "parameter: detail" (``parameter`` replaces its name, e.g. by a control's label), a
    :class:`~distsgd.reasons.Phrase` as its template's translation (the template of
    :data:`~distsgd.reasons.REASONS` is the catalogue's id) filled with its fields, each field
    translated in turn; either in its JSON form (:func:`distsgd.params.jsonable`, as chart rows
    carry it) likewise; any other value as it is (numbers, names, the text of an OS error).
    In English this is the library's own text."""
    lang = lang or language()
    value = from_jsonable(value)
    if isinstance(value, Text):
        value = value.phrase
    if isinstance(value, ParameterError):
        detail = phrase(Phrase(value.reason, **value.fields), lang)
        text = _REFUSAL if lang == "en" else catalogue(lang).get(_REFUSAL, _REFUSAL)
        return text.format(parameter=value.parameter if parameter is None else parameter, detail=detail)
    if isinstance(value, Phrase):
        template = REASONS[value.code]
        text = template if lang == "en" else catalogue(lang).get(template, template)
        return text.format(**{k: phrase(v, lang) for k, v in value.fields.items()})
    return value


@functools.cache
def _templates(lang: str, ids: frozenset[str]) -> list[tuple[re.Pattern[str], str]]:
    """The template ids ``ids`` with fields, as patterns that capture the fields' values
    (longest literal text first, so the most specific template wins)."""
    out = []
    for msgid, text in catalogue(lang).items():
        names = _FIELD.findall(msgid)
        if msgid not in ids or not names or len(set(names)) != len(names) or _SPEC.search(text):
            continue  # a field with a format spec (:.3g) cannot be filled with the text it matched
        parts = _FIELD.split(msgid)  # literal, name, literal, name, …
        rx = "".join(re.escape(p.replace("{{", "{").replace("}}", "}")) if i % 2 == 0 else f"(?P<{p}>.+?)"
                     for i, p in enumerate(parts))
        literal = sum(len(p) for p in parts[::2])
        out.append((literal, re.compile(rx + r"\Z", re.DOTALL), text))
    out.sort(key=lambda x: -x[0])
    return [(rx, text) for _, rx, text in out]


def translate(text: str, lang: str | None = None, templates: Iterable[str] = ()) -> str:
    """A string made by code that knows no language (a chart's title, a trace name): its
    translation if the catalogue has it, else the first of ``templates`` it matches with its
    fields' values translated, else the text unchanged."""
    lang = lang or language()
    if lang == "en" or not text:
        return text
    cat = catalogue(lang)
    if text in cat:
        return cat[text]
    ids = templates if isinstance(templates, frozenset) else frozenset(templates)
    for rx, target in _templates(lang, ids):
        m = rx.match(text)
        if m:
            return target.format(**{k: translate(v, lang, ids) for k, v in m.groupdict().items()})
    return text


class _Figure:
    """The translation of one figure: the language, the templates its texts may be instances
    of, and each distinct text translated once."""

    def __init__(self, lang: str, templates: Iterable[str]) -> None:
        self.lang, self.ids, self.memo = lang, frozenset(templates), dict[str, str]()

    def text(self, s: str) -> str:
        if s not in self.memo:
            self.memo[s] = translate(s, self.lang, self.ids)
        return self.memo[s]

    def title(self, obj: Any) -> None:
        """Translate ``obj.title.text`` in place, if ``obj`` has one."""
        title = getattr(obj, "title", None) if obj is not None else None
        if title is not None and title.text:
            title.text = self.text(title.text)

    def words(self, values: Any) -> Any:
        """A trace's category labels or bar texts translated (strings only; numbers, arrays of
        numbers and None as they are)."""
        if not isinstance(values, (list, tuple)) or not any(isinstance(v, str) for v in values):
            return values
        return [self.text(v) if isinstance(v, str) and v else v for v in values]

    def trace(self, trace: Any) -> None:
        """One trace: its English name kept in ``meta["name"]``; in another language its name,
        category labels, bar texts, legend-group and colour-bar titles translated."""
        name = getattr(trace, "name", None)
        if name:
            meta = trace.meta if isinstance(trace.meta, dict) else {}
            trace.meta = {**meta, "name": meta.get("name", name)}
            if self.lang != "en":
                trace.name = self.text(name)
        if self.lang == "en":
            return
        for attr in ("x", "y", "text"):
            if attr in trace:
                trace[attr] = self.words(trace[attr])
        group = getattr(trace, "legendgrouptitle", None)
        if group is not None and group.text:
            group.text = self.text(group.text)
        self.title(getattr(trace, "colorbar", None))

    def layout(self, layout: Any) -> None:
        """The figure's title, legend and axis titles, axis category labels, annotations."""
        axes = [layout[k] for k in layout if re.match(r"[xy]axis\d*$", k)]
        for obj in [layout, layout.legend, *axes]:
            self.title(obj)
        for axis in axes:
            if axis.categoryarray is not None:
                axis.categoryarray = self.words(list(axis.categoryarray))
            if axis.ticktext is not None:
                axis.ticktext = self.words(list(axis.ticktext))
        for ann in layout.annotations or ():
            if ann.text:
                ann.text = self.text(ann.text)
        if layout.coloraxis is not None:
            self.title(layout.coloraxis.colorbar)


def shown(fig: Any, templates: Iterable[str] = ()) -> Any:
    """``fig`` as the reader sees it: :func:`figure` of it in English (in place: only each trace's
    ``meta``), of a copy in another language — each made once per figure and language and kept on
    the figure.  A cached view's figure is shared by every session and never changed, and copying
    it with plotly's own copy then translating cost a Chinese page ≈ 25 ms a chart on every rerun."""
    lang = language()
    kept = getattr(fig, "_shown", None)
    if kept is None:
        kept = fig._shown = {}
    if lang not in kept:
        kept[lang] = figure(fig if lang == "en" else _copy(fig), templates)
    return kept[lang]


def _copy(fig: Any) -> Any:
    """What ``type(fig)(fig)`` gives (the same JSON), built as the figure was: from its plain
    properties, checked only where :data:`distsgd.plots.VALIDATE` says (plotly's own copy checks
    every property again: 10–40 ms a figure against 1–2 ms)."""
    return type(fig)(data=copy.deepcopy(fig._data), layout=copy.deepcopy(fig._layout), _validate=plots.VALIDATE)


def figure(fig: Any, templates: Iterable[str] = ()) -> Any:
    """Translate a plotly figure's visible text in place (title, axis and legend titles, trace
    names, annotations, category labels such as "worker 3" and bar texts): each text the
    catalogue has as an id, or an instance of one of ``templates`` (the charts':
    :data:`distsgd.ui.figure_text.FIGURE_TEXT`) with its fields translated in turn; each trace
    keeps its English name in ``meta["name"]``."""
    tx = _Figure(language(), templates)
    for trace in fig.data:
        tx.trace(trace)
    if tx.lang != "en":
        tx.layout(fig.layout)
    return fig


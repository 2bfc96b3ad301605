"""The message catalogues (issue 12, DESIGN §10): every message the code marks has a Chinese
translation with the same fields, the catalogues hold nothing the code no longer says, every
marked message is a literal Babel can extract, and the figure translator keeps English names
in each trace's metadata."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import plotly.graph_objects as go
import pytest
from babel.messages.extract import extract

from distsgd.ui import figure_text, i18n  # noqa: F401 - figure_text registers the chart templates

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "distsgd" / "ui").glob("*.py")])
KEYWORDS = {"tr": None, "N_": None}


def extracted() -> dict[str, list[str]]:
    """msgid → where it is used, by Babel's own Python extractor (what ``pybabel extract -k tr
    -k N_`` would put in a .pot)."""
    out: dict[str, list[str]] = {}
    for path in SOURCES:
        with path.open("rb") as f:
            for lineno, message, _comments, _context in extract("python", f, keywords=KEYWORDS):
                if isinstance(message, str):
                    out.setdefault(message, []).append(f"{path.relative_to(ROOT)}:{lineno}")
    return out


MESSAGES = extracted()
ZH = i18n.catalogue("zh")


def test_the_code_marks_messages_at_all() -> None:
    assert len(MESSAGES) > 300, len(MESSAGES)  # every page, the sidebar, the claims and the figures


def test_every_message_has_a_chinese_translation() -> None:
    missing = {m: where for m, where in MESSAGES.items() if m not in ZH}
    assert not missing, "untranslated (add them to a .po under distsgd/ui/locales/zh):\n" + "\n".join(
        f"{where[0]}: {m!r}" for m, where in list(missing.items())[:40])


def test_every_translation_has_the_same_fields() -> None:
    bad = [(m, ZH[m]) for m in MESSAGES if m in ZH and i18n.fields(m) != i18n.fields(ZH[m])]
    assert not bad, "\n".join(f"{m!r} has {sorted(i18n.fields(m))}, its translation {sorted(i18n.fields(t))}"
                              for m, t in bad[:20])


def test_every_translation_formats() -> None:
    """A stray brace or a bad format spec would raise when the app fills it."""
    for m, t in ZH.items():
        names = i18n.fields(m)
        if names:
            t.format(**{n: 1.5 for n in names})


def test_the_catalogues_hold_nothing_the_code_does_not_say() -> None:
    stale = sorted(set(ZH) - set(MESSAGES))
    assert not stale, f"translations of messages no code marks (remove them): {stale[:20]}"


def test_every_marked_message_is_a_literal() -> None:
    """tr(f"…") would escape the extractor and never be translated; tr(expression) is allowed for
    text marked N_ where it was declared (a label shown through tr), but then the expression must
    hold no string literal, which Babel would take for the message (tr(d["key"]) extracts "key")."""
    bad = []
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in KEYWORDS \
                    and node.args:
                arg = node.args[0]
                literal = isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                if not literal and any(isinstance(n, (ast.Constant, ast.JoinedStr)) and isinstance(
                        getattr(n, "value", ""), str) for n in ast.walk(arg)):
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(arg)[:60]}")
    assert not bad, "message ids that are not literals but hold one:\n" + "\n".join(bad)


def test_the_catalogue_files_are_valid_po() -> None:
    from babel.messages.pofile import read_po
    files = sorted((i18n.LOCALES / "zh" / "LC_MESSAGES").glob("*.po"))
    assert files
    for path in files:
        cat = read_po(io.BytesIO(path.read_bytes()), locale="zh")
        dup = [m.id for m in cat if m.id and not m.string]
        assert not dup, f"{path.name}: empty translations {dup[:5]}"


# -- the translator itself ------------------------------------------------------------------------

def test_languages_from_the_browser_locale() -> None:
    assert [i18n.from_locale(x) for x in ("zh-CN", "zh_TW", "ZH", "en-US", "fr", "", None)] == \
        ["zh", "zh", "zh", "en", "en", "en", "en"]


def test_templates_match_and_translate_their_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = {"analytic: {scheme}": "解析：{scheme}", "exact": "精确",
            "E[T] against K (m = {m})": "E[T] 随 K 变化（m = {m}）", "{a} ({b})": "{a}（{b}）"}
    i18n._templates.cache_clear()
    monkeypatch.setattr(i18n, "catalogue", lambda lang: {**fake, "{a}: {b}": "{a}：{b}", "{v} s": "{v:.3g} 秒"}
                        if lang == "zh" else {})
    monkeypatch.setattr(i18n, "_TEMPLATE_IDS", set(fake) | {"{v} s"})
    try:
        assert i18n.translate("zzz: y", "zh") == "zzz: y"  # a template not registered for figures is not tried
        assert i18n.translate("2.5 s", "zh") == "2.5 s"  # nor one whose translation formats a number
        assert i18n.translate("analytic: sync", "zh") == "解析：sync"
        assert i18n.translate("E[T] against K (m = 16)", "zh") == "E[T] 随 K 变化（m = 16）"
        assert i18n.translate("analytic: exact", "zh") == "解析：精确"  # a field's value is translated too
        assert i18n.translate("nothing like it", "zh") == "nothing like it"
        assert i18n.translate("exact", "en") == "exact"
    finally:
        i18n._templates.cache_clear()


def test_a_figure_keeps_each_trace_s_english_name_in_meta(monkeypatch: pytest.MonkeyPatch) -> None:
    fig = go.Figure([go.Scatter(x=[1], y=[1], name="analytic: sync"), go.Bar(x=[1], y=[1], name="Monte Carlo: sync")])
    fig.update_layout(title="E[T] against K (m = 4)", xaxis_title="wait-for count K")
    monkeypatch.setattr(i18n, "language", lambda: "zh")
    i18n.figure(fig)
    assert [t.meta["name"] for t in fig.data] == ["analytic: sync", "Monte Carlo: sync"]
    if "analytic: {scheme}" in ZH or "analytic: sync" in ZH:
        assert fig.data[0].name != "analytic: sync"
    i18n.figure(fig)  # translating twice keeps the English original
    assert fig.data[0].meta["name"] == "analytic: sync"


def test_each_message_is_translated_in_one_place() -> None:
    """One message, one translation: the same id in two .po files could be translated two ways."""
    from babel.messages.pofile import read_po
    seen: dict[str, str] = {}
    twice = []
    for path in sorted((i18n.LOCALES / "zh" / "LC_MESSAGES").glob("*.po")):
        for m in read_po(io.BytesIO(path.read_bytes()), locale="zh"):
            if m.id:
                if m.id in seen:
                    twice.append(f"{m.id!r} in {seen[m.id]} and {path.name}")
                seen[m.id] = path.name
    assert not twice, twice[:20]


def test_the_library_s_range_errors_are_shown_in_chinese(monkeypatch: pytest.MonkeyPatch) -> None:
    from distsgd.params import ParameterError
    from distsgd.schemes import M
    from distsgd.ui import state

    with pytest.raises(ParameterError) as info:
        M.check(0, "m")
    english = str(info.value)
    monkeypatch.setattr(i18n, "language", lambda: "zh")
    shown = state.explain(info.value)
    assert shown != english and "m" in shown and "0" in shown
    assert not any(w in shown for w in ("must be", "integer", "got")), shown


def test_the_library_s_skip_reasons_are_shown_in_chinese() -> None:
    """Each form of cached.SKIP_REASONS, filled as the library fills it, comes out translated."""
    from distsgd.ui import cached

    for form in cached.SKIP_REASONS:
        text = form.format(**{name: "7" for name in i18n.fields(form)})
        shown = i18n.translate(text, "zh")
        assert shown != text and "shorten" not in shown and "replicas:" not in shown, (text, shown)

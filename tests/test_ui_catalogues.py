"""The message catalogues (issue 12, DESIGN §10): every message the code marks has a Chinese
translation with the same fields, the catalogues hold nothing the code no longer says, every
marked message is a literal Babel can extract, and the figure translator keeps English names
in each trace's metadata."""

from __future__ import annotations

import ast
import io
import re
from pathlib import Path

import plotly.graph_objects as go
import pytest
from babel.messages.extract import extract

from distsgd.reasons import REASONS
from distsgd.ui import controls, figure_text, i18n

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
# and what the registries declare for the dashboard: each delay family's label and its parameters'
# labels and help texts (on the family's class, shown through tr; tests/test_app_registry.py)
for _msg, _where in controls.registry_messages().items():
    MESSAGES.setdefault(_msg, []).append(_where)
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
    stale = sorted(set(ZH) - set(MESSAGES) - set(REASONS.values()))  # (the library's refusals: below)
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
    given = [*fake, "{v} s"]
    try:
        assert i18n.translate("zzz: y", "zh", given) == "zzz: y"  # a template not given is not tried
        assert i18n.translate("2.5 s", "zh", given) == "2.5 s"  # nor one whose translation formats a number
        assert i18n.translate("analytic: sync", "zh", given) == "解析：sync"
        assert i18n.translate("analytic: sync", "zh") == "analytic: sync"  # no templates given: exact ids only
        assert i18n.translate("E[T] against K (m = 16)", "zh", given) == "E[T] 随 K 变化（m = 16）"
        assert i18n.translate("analytic: exact", "zh", given) == "解析：精确"  # a field's value is translated too
        assert i18n.translate("nothing like it", "zh", given) == "nothing like it"
        assert i18n.translate("exact", "en", given) == "exact"
    finally:
        i18n._templates.cache_clear()


def test_a_figure_keeps_each_trace_s_english_name_in_meta(monkeypatch: pytest.MonkeyPatch) -> None:
    fig = go.Figure([go.Scatter(x=[1], y=[1], name="analytic: sync"), go.Bar(x=[1], y=[1], name="Monte Carlo: sync")])
    fig.update_layout(title="E[T] against K (m = 4)", xaxis_title="wait-for count K")
    monkeypatch.setattr(i18n, "language", lambda: "zh")
    i18n.figure(fig, figure_text.FIGURE_TEXT)
    assert [t.meta["name"] for t in fig.data] == ["analytic: sync", "Monte Carlo: sync"]
    assert fig.data[0].name == ZH["analytic: {scheme}"].format(scheme="sync")
    assert fig.layout.title.text == ZH["E[T] against K (m = {m})"].format(m=4)
    i18n.figure(fig, figure_text.FIGURE_TEXT)  # translating twice keeps the English original
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


# -- the library's refusals (distsgd/reasons.py): translated from their reason code and fields -------

def test_every_reason_has_a_translation_with_the_same_fields() -> None:
    """Each template of distsgd.reasons.REASONS is a message id of the catalogue, translated with the
    same fields, each with the same conversion and format spec ({value!r}, {seconds:.3g})."""
    spec = re.compile(r"(?<!\{)\{[A-Za-z_][^{}]*\}")
    missing = sorted(code for code, t in REASONS.items() if t not in ZH)
    assert not missing, f"reasons without a Chinese translation (add them to locales/zh/.../reasons.po): {missing}"
    bad = [(code, t, ZH[t]) for code, t in REASONS.items() if sorted(spec.findall(t)) != sorted(spec.findall(ZH[t]))]
    assert not bad, "\n".join(f"{code}: {t!r} → {z!r}" for code, t, z in bad)


#: a Latin word (letters, digits, inner hyphens): what an explained refusal may keep is only what
#: the user or the file gave (names, numbers), scheme names and symbols, listed by each test
LATIN = re.compile(r"(?<![\w.])[A-Za-z]\w*(?:-[A-Za-z]\w*)*")  # (not the e of 5.5e-05)


def _english_left(text: str, kept: set[str]) -> list[str]:
    return [w for w in LATIN.findall(text) if w not in kept]


def test_the_library_s_range_errors_are_shown_in_chinese(monkeypatch: pytest.MonkeyPatch) -> None:
    from distsgd.params import ParameterError
    from distsgd.schemes import M

    with pytest.raises(ParameterError) as info:
        M.check(0, "m")
    english = str(info.value)
    monkeypatch.setattr(i18n, "language", lambda: "zh")
    shown = controls.explain(info.value)
    assert shown != english and "m" in shown and "0" in shown
    assert not _english_left(shown, {"m"}), shown
    assert shown.startswith(ZH["workers m"] + "：")  # the parameter named by its control's label
    assert controls.describe(M) == ZH["an integer in {interval}"].format(interval="[1, 100000]")


def test_an_error_chart_s_skip_reasons_are_shown_in_chinese(monkeypatch: pytest.MonkeyPatch) -> None:
    """The three caps of simulate_error, as error_rows reports them (its rows carry the refusal's
    reason and fields) and as the error page shows them (views.skipped_why)."""
    from distsgd import curves
    from distsgd.delays import parse_delay
    from distsgd.error import Problem
    from distsgd.ui import views

    schemes = [curves.build("sync", 4), curves.build("async", 4)]
    exp = parse_delay("exp(rate=1)")
    seen = set()
    for time, cap in ((5000.0, {"max_updates": 1}), (50.0, {"max_timing_cost": 1.0}), (50.0, {"max_work": 1.0})):
        _, summary = curves.error_rows(schemes, exp, Problem(), time, 5, 4, 1, **cap)
        for row in summary:
            assert "skipped" in row, (cap, row)
            seen.add(row["skipped_reason"]["reason"])
            with monkeypatch.context() as mp:
                mp.setattr(i18n, "language", lambda: "zh")
                shown = views.skipped_why(row)
            assert shown != row["skipped"] and not _english_left(shown, {"sync", "async", "m", "T", "K", "SGD"}), shown
    assert seen == {"too_many_updates", "timing_too_costly", "sgd_work_cap"}


def test_a_trace_upload_refusal_is_shown_in_chinese(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bad cell of an uploaded file: its place, the column, what is wrong, the range and the
    count are phrases inside the refusal, each translated; and a file whose columns say nothing."""
    from distsgd.params import ParameterError
    from distsgd.traces import load_trace

    with pytest.raises(ParameterError) as info:
        load_trace(b"worker,step,duration\n1,1,0.5\n2,1,abc\n1,2,-1\n", name="steps.csv")
    assert str(info.value).startswith("trace: steps.csv: line 3, column 'duration': 'abc' is not a number")
    monkeypatch.setattr(i18n, "language", lambda: "zh")
    shown = controls.explain(info.value)
    assert "steps.csv" in shown and "'abc'" in shown
    assert not _english_left(shown, {"trace", "steps", "csv", "duration", "abc"}), shown
    with pytest.raises(ParameterError) as info:
        load_trace(b"worker,step,x\n1,1,2\n", name="steps.csv")  # no duration column
    assert info.value.reason == "layout_unclear" and info.value.fields["why"].code == "no_role_column"
    shown = controls.explain(info.value)
    kept = {"trace", "steps", "csv", "x", "worker", "step", "duration", "COL", "Python", "columns",
            "trace-columns", "batch_time", "elapsed", "seconds", "step_time", "time_s"}  # (names it looks for)
    assert not _english_left(shown, kept), shown

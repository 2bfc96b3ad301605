"""Structured refusals (issue 21): every ``ParameterError`` is a reason code of
:data:`distsgd.reasons.REASONS` with the fields of its template; its English is made from them,
it pickles as its parts and its JSON form rebuilds it."""

from __future__ import annotations

import ast
import functools
import json
import pickle
from pathlib import Path

import pytest

from distsgd.params import Domain, ParameterError, from_jsonable, jsonable
from distsgd.reasons import REASONS, Phrase, Text
from distsgd.schemes import M

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = sorted((ROOT / "distsgd").rglob("*.py"))
#: the calls that make a refusal: (function name, index of the reason argument, its fixed fields)
MAKERS = {"ParameterError": (1, set()), "Phrase": (0, set()), "_Corrupt": (0, set()),
          "_error": (1, {"file"}), "_refuse": (2, {"file"}), "of": (0, set()),
          "then": (0, set())}  # Text.of(code, …), text.then(code, …)


def _codes(node: ast.expr) -> list[str] | None:
    """The reason codes a call's argument can be: a literal, or literals chosen by ``… if … else …``;
    None when it is computed (checked when it runs: an unknown code raises KeyError)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        a, b = _codes(node.body), _codes(node.orelse)
        return None if a is None or b is None else a + b
    return None


@functools.cache
def sites() -> list[tuple[str, list[str], set[str] | None]]:
    """Every call making a refusal or a phrase in the library: (where, its codes, its keyword
    names, None when it passes ``**fields`` on)."""
    out = []
    for path in LIBRARY:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name not in MAKERS:
                continue
            index, fixed = MAKERS[name]
            if isinstance(f, ast.Attribute) and name == "_refuse":  # ParquetTable._refuse(reason, …)
                index = 0
            if len(node.args) <= index:
                continue
            codes = _codes(node.args[index])
            if codes is None:
                continue
            kw = None if any(k.arg is None for k in node.keywords) else {k.arg for k in node.keywords if k.arg} | fixed
            out.append((f"{path.relative_to(ROOT)}:{node.lineno}", codes, kw))
    return out


def test_the_library_makes_its_refusals_from_reason_codes() -> None:
    # every raise site of the library (issue 21: 159 ParameterError( and helpers)
    assert len(sites()) > 200, len(sites())
    assert len({c for _, codes, _ in sites() for c in codes}) > 150


def test_every_site_names_a_known_code_with_the_fields_of_its_template() -> None:
    from distsgd.ui.i18n import fields

    bad = []
    for where, codes, kw in sites():
        for code in codes:
            if code not in REASONS:
                bad.append(f"{where}: unknown reason {code!r}")
            elif kw is not None and kw != fields(REASONS[code]):
                bad.append(f"{where}: {code} takes {sorted(fields(REASONS[code]))}, the site gives {sorted(kw)}")
    assert not bad, "\n".join(bad)


def test_every_reason_is_used_somewhere() -> None:
    used = {c for _, codes, _ in sites() for c in codes}
    dynamic = {"role_worker", "role_step", "role_duration",  # Phrase(f"role_{role}") in distsgd/traces.py
               *(f"{kind}_{op}" for kind in ("number", "integer")  # Domain.phrase
                 for op in ("in", "gt", "ge", "lt", "le"))}
    assert not set(REASONS) - used - dynamic, sorted(set(REASONS) - used - dynamic)


def test_every_template_formats_with_its_fields() -> None:
    from distsgd.ui.i18n import fields

    for template in REASONS.values():
        template.format(**{name: 1.5 for name in fields(template)})


def test_the_english_is_made_from_the_code_and_fields() -> None:
    with pytest.raises(ParameterError) as info:
        Domain("m", 1, 1000, integer=True).check(0)
    exc = info.value
    assert str(exc) == "m: must be an integer in [1, 1000] (got 0)"
    assert (exc.parameter, exc.reason, exc.detail) == ("m", "out_of_domain", "must be an integer in [1, 1000] (got 0)")
    assert exc.fields == {"range": Phrase("integer_in", interval="[1, 1000]"), "value": "0"}
    assert M.phrase() == Phrase("integer_in", interval=f"[1, {M.high:g}]") and M.describe() == str(M.phrase())
    with pytest.raises(KeyError):
        ParameterError("m", "no_such_reason")


def test_a_refusal_pickles_and_goes_through_json_as_its_parts() -> None:
    inner = ParameterError("rate", "out_of_domain", range=Phrase("number_gt", bound="0"), value="-1")
    exc = ParameterError("workers", "in_group", n=2, error=inner)
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is ParameterError and str(back) == str(exc) == \
        "workers: group #2: rate: must be a number > 0 (got -1)"
    assert (back.reason, back.fields["error"].fields) == ("in_group", inner.fields)
    data = json.loads(json.dumps(exc.as_dict()))
    assert data == {"parameter": "workers", "reason": "in_group", "fields": {"n": 2, "error": {
        "parameter": "rate", "reason": "out_of_domain",
        "fields": {"range": {"reason": "number_gt", "fields": {"bound": "0"}}, "value": "-1"}}}}
    again = from_jsonable(data)
    assert isinstance(again, ParameterError) and str(again) == str(exc)
    assert jsonable((1, Phrase("a_number"))) == [1, {"reason": "a_number", "fields": {}}]


def test_a_text_pickles_as_its_english_and_its_phrase() -> None:
    text = Text.of("method_then", method=Text.of("method_pb_sum_one", atoms=3, groups=1), then=Phrase("a_number"))
    back = pickle.loads(pickle.dumps(text))
    assert type(back) is Text and str(back) == str(text) and back.phrase == text.phrase
    assert type(back.phrase.fields["method"]) is Text

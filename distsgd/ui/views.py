"""What the pages show beside their charts, made from the cached results: the tables, and the
numbers derived from a chart's rows.  Plain Python on a few hundred rows (no widgets and no
core work beyond a search of one curve), so the pages stay short and a rerun stays cheap.
Tables come with their headers and words in the current language (:func:`distsgd.ui.i18n.tr`):
build them at display, never inside a cached call."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..error import time_to_target
from ..params import from_jsonable
from ..reasons import Phrase
from ..records import note_parts
from ..schemes import scheme_class
from . import controls, plain_text
from .i18n import N_, phrase, tr

__all__ = ["times_to_target", "error_table", "runtime_table", "target_table", "target_formula", "error_formulas",
           "tex_words", "whatif_table", "stragglers_sentence", "word", "workers_label", "schedule_summary",
           "schedule_table", "skipped_why"]

#: fixed words and phrases of the library that the tables and pages show (an analytic result's
#: kind, a what-if reading, why a point was not simulated, where a time to ε came from), marked
#: here so the extractor finds them; :func:`word` shows one in the current language, and any
#: other text of the library (a free-form reason, a method) as it is
_WORDS = frozenset({
    N_("exact"), N_("numerical"), N_("upper bound"), N_("lower bound"), N_("approximation"), N_("infinite"),
    N_("unavailable"),
    N_("replay"), N_("per-worker laws"), N_("i.i.d. fit"), N_("stragglers dropped"), N_("backup workers"),
    N_("its shortest run exceeds this chart's Monte Carlo budget"), N_("over this table's Monte Carlo budget"),
    N_("no straggler in this trace"), N_("every worker is a straggler"),
    N_("bound"), N_("bound (ε is below its floor)"), N_("E[T] unknown"), N_("E[T] unknown (not simulated)"),
    N_("p₀ unknown (not simulated)"),
    # what a worker's time is spent on in a timeline (the keys of its shares)
    N_("used"), N_("stale"), N_("cancelled"), N_("waiting"), N_("communicating"), N_("in flight"),
})


#: an analytic result's kinds as the library spells them (estimate.KINDS) → as a reader reads them
_KINDS = {"upper_bound": "upper bound", "lower_bound": "lower bound"}


def word(text: Any) -> Any:
    """One of the library's fixed words (:data:`_WORDS`) in the current language; ``bound
    unavailable: …`` with its prefix translated; any other text (or None) unchanged."""
    if not isinstance(text, str):
        return text
    text = _KINDS.get(text, text)
    if text in _WORDS:
        return tr(text)
    head, sep, rest = text.partition(": ")
    if sep and head == "bound unavailable":
        return tr("bound unavailable: {why}", why=rest)
    return text


def phrases(parts: Sequence[Phrase]) -> str:
    """Phrases of the library (e.g. how a law was fitted) in the current language, one after
    another ('' for none)."""
    return tr("; ").join(str(phrase(p)) for p in parts)


def bound_note(r: dict[str, Any]) -> Any:
    """A row's ``bound_note`` in the current language: from its reason (``bound_why``, a
    :class:`~distsgd.reasons.Phrase`) when the bound gives nothing, else as :func:`word`."""
    why, note = r.get("bound_why"), r.get("bound_note")
    if why is None:
        return word(note)
    text = phrase(why)
    return tr("bound unavailable: {why}", why=text) if str(note).startswith("bound unavailable: ") else text


def times_to_target(rows: Sequence[dict[str, Any]], labels: Sequence[str], eps: float) -> dict[str, float]:
    """For each scheme, the first time its simulated mean error is ≤ ε (inf if never)."""
    out = {}
    for label in labels:
        mine = [r for r in rows if r["scheme"] == label]
        out[label] = time_to_target(np.array([r["time"] for r in mine], dtype=float),
                                    np.array([r["simulated_mean"] for r in mine], dtype=float), eps)
    return out


def error_table(summary: Sequence[dict[str, Any]], targets: dict[str, float]) -> list[dict[str, Any]]:
    """The error page's table: one row per simulated scheme (headers and words in the current
    language)."""
    return [{
        tr("scheme"): s["scheme"],
        tr("time to ε (simulated mean)"): (tr("never within T") if math.isinf(targets[s["scheme"]])
                                           else targets[s["scheme"]]),
        tr("bound"): word(s["bound_kind"]) if not s["bound_note"] else f"{word(s['bound_kind'])}: {bound_note(s)}",
        tr("bound floor"): s["floor"], tr("E[T] used"): s["runtime"],
        tr("E[T] from"): word(s["runtime_kind"]),
        tr("γ used"): s["gamma"] if s["staleness_mean"] is not None else None,
        tr("p₀ used"): s["p0"], tr("mean staleness"): s["staleness_mean"],
        tr("fresh fraction"): s["fresh_fraction"]} for s in summary]


#: the constants of a real problem in the order of DESIGN §9, each with its name on the page
CONSTANT_NAMES = (("f_star", "f*"), ("L", "L"), ("mu", "μ"), ("sigma2", N_("σ²* (at the optimum)")),
                  ("sigma2_bound", N_("σ² bound (everywhere)")), ("F0", N_("F₀ = f(w₀) − f*")))
#: the kinds of a constant (problems.base.KINDS) on the page
CONSTANT_KINDS = {"exact": N_("exact"), "bound": N_("a bound that holds"), "estimated": N_("estimated"),
                  "given": N_("given"), "unknown": N_("unknown")}


def problem_table(facts: dict[str, Any], summary: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A real problem's constants with their kinds (f*'s certified gap beside it), then each
    simulated scheme's linearised floor η·σ²*/(4bK) (headers and kinds in the current language)."""
    c = facts["constants"]
    kinds = {key: CONSTANT_KINDS[c[key]["kind"]] for key, _ in CONSTANT_NAMES}
    rows = [{tr("constant"): tr(label), tr("value"): c[key]["value"], tr("kind"): tr(kinds[key]),
             tr("certified gap"): c[key].get("gap")} for key, label in CONSTANT_NAMES]
    rows += [{tr("constant"): tr("linearised floor η·σ²*/(4bK): {scheme}", scheme=s["scheme"]),
              tr("value"): s.get("linearised_floor"), tr("kind"): tr("approximation"), tr("certified gap"): None}
             for s in summary if "skipped" not in s]
    return rows


def _ci(r: dict[str, Any]) -> str:
    """A row's 95% confidence interval, or why it was not simulated."""
    if "mc_low" in r:
        return f"[{r['mc_low']:.4g}, {r['mc_high']:.4g}]"
    return tr("not simulated: {why}", why=word(r.get("mc_skipped", "")))


def mc_note(r: dict[str, Any]) -> str:
    """A row's Monte Carlo warning in the current language ('' when it has none): from its
    phrases (a chart's row: Phrases; a results file's row: their JSON, :func:`records.note_parts`),
    else its English text as it is."""
    parts = r.get("mc_note_parts")
    if isinstance(parts, str):
        parts = note_parts(parts)
    if isinstance(parts, tuple) and all(isinstance(p, Phrase) for p in parts):
        return "".join(str(phrase(p)) for p in parts)
    note = r.get("mc_note")
    return note if isinstance(note, str) else ""


def mc_notes(rows: Sequence[dict[str, Any]]) -> list[str]:
    """One line per distinct Monte Carlo warning among the rows, in the current language, naming
    what it is about: a scheme when every one of its points carries it, else those points by
    their labels (e.g. K-sync only at K = m)."""
    notes: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        note = mc_note(r)
        if note:
            notes.setdefault(note, []).append(r)
    out = []
    for note, noted in notes.items():
        names: list[str] = []
        for scheme in dict.fromkeys(str(r.get("scheme", "")) for r in noted):
            mine = [r for r in noted if str(r.get("scheme", "")) == scheme]
            every = sum(str(r.get("scheme", "")) == scheme for r in rows)
            labels = list(dict.fromkeys(str(r.get("label") or scheme) for r in mine))
            names += [scheme] if len(mine) == every or len(labels) == 1 and labels[0] == scheme else labels
        out.append(tr("Monte Carlo, {schemes}: {note}", schemes="; ".join(names), note=note))
    return out


def runtime_table(here: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runtime page's table: every scheme at the sidebar's (m, K)."""
    return [{tr("scheme"): r["label"], tr("analytic E[T]"): r["analytic"], tr("kind"): word(r["kind"]),
             tr("method"): phrase(r["method"]), tr("Monte Carlo mean"): r.get("mc_mean"),
             tr("95% CI"): _ci(r), tr("iterations"): r.get("mc_iterations"),
             tr("mean staleness"): r.get("staleness_mean"), tr("Monte Carlo note"): mc_note(r)} for r in here]


def _time(v: float | None) -> float | str | None:
    return None if v is None else (tr("never") if math.isinf(v) else v)


def _not_simulated(r: dict[str, Any]) -> str:
    """"not simulated: …" for a row whose simulation was refused ('' otherwise), translated from the
    refusal's reason code and fields."""
    if "simulated_skipped" not in r:
        return ""
    return tr("not simulated: {why}", why=controls.explain(from_jsonable(r["simulated_skipped_reason"])))


def _why(r: dict[str, Any]) -> str:
    """Why a cell is empty: the simulation's reason, or the bound's."""
    notes = [n] if (n := _not_simulated(r)) else []
    if r["bound_time_to_target"] is None:
        notes.append(bound_note(r))
    return tr("; ").join(notes)


def target_table(rows: Sequence[dict[str, Any]], ref: Sequence[dict[str, Any]], best: Sequence[int | None],
                 accuracy: float | None = None) -> list[dict[str, Any]]:
    """The trade-offs page's table: each swept point (★ at the best ones), then the references;
    with a target ``accuracy`` (a real problem) the simulated time to reach it too."""
    def row(r: dict[str, Any], scheme: str, star: str) -> dict[str, Any]:
        out = {tr("scheme"): scheme, tr("time to ε (bound)"): _time(r.get("bound_time_to_target")),
               tr("time to ε (simulated)"): _time(r.get("time_to_target"))}
        if accuracy is not None:
            out[tr("time to test accuracy {a:g} (simulated)", a=accuracy)] = _time(r.get("time_to_accuracy"))
        return {**out, tr("best"): star, tr("note"): _why(r)}

    return ([row(r, r["label"], "★" if i in best else "") for i, r in enumerate(rows)]
            + [row(r, tr("reference: {scheme}", scheme=r["label"]), "") for r in ref])


def schedule_summary(run: dict[str, Any]) -> dict[str, Any]:
    """A scheduled run (:func:`distsgd.curves.schedule_run`) as a row of the error chart's summary:
    no bound and no E[T] of its own (K or H changes), or skipped with its reason."""
    if "skipped" in run:
        return {"scheme": run["label"], "skipped": run["skipped"], "skipped_reason": run["skipped_reason"]}
    return {"scheme": run["label"], "bound_kind": "unavailable", "bound_note": "", "floor": None, "runtime": None,
            "runtime_kind": None, "gamma": None, "p0": None, "staleness_mean": None, "fresh_fraction": None,
            "replicas": run["replicas"], "staleness_counts": None}


def skipped_why(row: dict[str, Any]) -> str:
    """Why a scheme or a scheduled run was not simulated (the ``ParameterError`` of the simulation's
    caps), in the reader's language: from its reason code and fields, which the row carries as
    ``skipped_reason`` (:meth:`~distsgd.params.ParameterError.as_dict`), never from its English."""
    return controls.explain(from_jsonable(row["skipped_reason"]))


def time_text(v: float) -> str:
    """A simulated time to ε as text: three significant digits, or "never"."""
    return f"{v:.3g}" if math.isfinite(v) else tr("never")


def band_text(r: dict[str, Any]) -> str:
    """The 95% band of a simulated time to ε as text ('' when not simulated), as the tables and
    the sentences made from them write it."""
    lo, hi = r.get("time_to_target_low"), r.get("time_to_target_high")
    if lo is None or hi is None:
        return ""
    return f"[{time_text(lo)}, {time_text(hi)}]"


def schedule_table(rows: Sequence[dict[str, Any]], best: int | None, run: dict[str, Any],
                   parameter: str) -> list[dict[str, Any]]:
    """The schedule's comparison table: each fixed value of ``parameter`` (★ at the best by the
    simulated mean), then the schedule: the simulated time to ε and its 95% band."""
    def row(what: str, r: dict[str, Any], star: str) -> dict[str, Any]:
        return {tr("run"): what, tr("time to ε (simulated mean)"): _time(r.get("time_to_target")),
                tr("95% band of the time to ε"): band_text(r), tr("best"): star, tr("note"): _not_simulated(r)}

    return ([row(f"{parameter} = {r['x']}", r, "★" if i == best else "") for i, r in enumerate(rows)]
            + [row(tr("schedule: {spec}", spec=run["label"]), run, "")])


#: how ``\text{…}`` writes LaTeX's special characters
_TEX = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#", "%": r"\%",
        "_": r"\_", "^": r"\^{}", "~": r"\~{}"}


def tex_words(text: str) -> str:
    r"""Words inside a formula: ``\text{…}`` of ``text`` (translated by the caller, ``tr("…")``:
    the message id holds words only, never LaTeX), its LaTeX characters escaped.

    >>> tex_words("p₀ = 50% of {x}")
    '\\text{p₀ = 50\\% of \\{x\\}}'
    """
    return r"\text{" + "".join(_TEX.get(c, c) for c in text) + "}"


def error_formulas() -> list[str]:
    """The error page's bounds (LaTeX): fresh gradients, then stale ones, their words in the
    current language."""
    return [tex_words(tr("fresh:")) + r"\ \mathbb{E}[f(w_J)]-f^* \le F_K + (1-\eta\mu)^J (F_0 - F_K),\quad "
            r"F_K=\frac{\eta L\sigma^2}{2\mu b K}",
            tex_words(tr("stale:")) + r"\ \mathbb{E}[f(w_J)]-f^* \le F'_K + (1-\eta\mu\gamma')^J (F_0 - F'_K),\quad "
            r"\gamma' = 1-\gamma+\tfrac{p_0}{2},\ F'_K=\frac{\eta L\sigma^2}{2\mu\gamma' b K}"]


def target_formula(scheme: str) -> list[str]:
    """The time-to-target formula (LaTeX) the trade-offs chart uses for the swept scheme, its
    words in the current language."""
    if scheme == "local-sgd":
        return [tex_words(tr("local SGD: no bound is drawn; the time to ε comes from simulated SGD"))]
    if scheme_class(scheme).fresh:
        return [r"t^*(K) = \mathbb{E}[T_K]\,\frac{\log\big((\varepsilon - F_K)/(F_0 - F_K)\big)}{\log(1-\eta\mu)},"
                r"\quad F_K=\frac{\eta L\sigma^2}{2\mu b K}"]
    return [r"t^*(K) = \mathbb{E}[T_K]\,\frac{\log\big((\varepsilon - F'_K)/(F_0 - F'_K)\big)}"
            r"{\log(1-\eta\mu\gamma')},"
            r"\quad F'_K=\frac{\eta L\sigma^2}{2\mu\gamma' b K},\quad \gamma' = 1-\gamma+\tfrac{p_0}{2}",
            r"p_0 = " + tex_words(tr("the measured fraction of fresh gradients at each point"))]


def whatif_table(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The cluster page's what-if table: one row per (reading, scheme), E[T] and time to ε (in
    the current language: build it at display, not inside a cached call)."""
    return [{tr("reading"): word(r["reading"]), tr("scheme"): r["label"], tr("analytic E[T]"): r["analytic"],
             tr("kind"): word(r["kind"]), tr("Monte Carlo mean"): r.get("mc_mean"), tr("95% CI"): _ci(r),
             tr("Monte Carlo note"): mc_note(r),
             tr("time to ε (bound)"): _time(r.get("bound_time_to_target")),
             tr("note"): "" if r.get("bound_note") in (None, "bound") else bound_note(r)} for r in rows]


def stragglers_sentence(slow: Sequence[dict[str, Any]], threshold: float) -> str:
    """The flagged workers of a trace summary in one line (Markdown: the file's worker ids and step
    labels quoted as plain text), persistent ones with their slowdown, emerging ones with the step
    they start from."""
    def one(r: dict[str, Any]) -> str:
        worker = plain_text.plain(r["worker"])
        if r["from_step"] is None:
            return tr("{worker} (persistent, slowdown {slowdown})", worker=worker, slowdown=f"{r['slowdown']:.3g}")
        return tr("{worker} (from step {step})", worker=worker, step=plain_text.plain(r["from_step"]))
    return tr("Stragglers at θ = {theta}: {names}.", theta=f"{threshold:g}", names=tr(", ").join(one(r) for r in slow))


def workers_label(w: Any) -> str:
    """The label of the sidebar's workers (:attr:`distsgd.clusters.Stragglers.label`, the same
    words in English) in the current language, for Markdown (a trace's file name quoted as plain
    text); the law's label is a formula and stays."""
    law = w.delay.label
    if w.kind == "none":
        return tr("i.i.d. {law}", law=law)
    if w.kind == "static":
        s = f"{w.slowdown:g}"
        return (tr("{b} slow worker × {s}, {law}", b=w.slow, s=s, law=law) if w.slow == 1
                else tr("{b} slow workers × {s}, {law}", b=w.slow, s=s, law=law))
    if w.kind == "markov":
        return tr("slow spells: π = {pi}, ρ = {rho}, s = {s}, {law}", pi=f"{w.slow_fraction:g}",
                  rho=f"{w.persistence:g}", s=f"{w.slowdown:g}", law=law)
    mode = controls.CHOICE_LABELS["trace_mode"].get(w.trace_mode, w.trace_mode)
    return tr("trace {name} ({mode})", name=plain_text.plain(w.trace.name), mode=tr(mode))

"""What the pages show beside their charts, made from the cached results: the tables, and the
numbers derived from a chart's rows.  Plain Python on a few hundred rows (no Streamlit and no
core work beyond a search of one curve), so the pages stay short and a rerun stays cheap."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..error import time_to_target
from ..schemes import scheme_class

__all__ = ["times_to_target", "error_table", "runtime_table", "target_table", "target_formula", "whatif_table",
           "stragglers_sentence"]


def times_to_target(rows: Sequence[dict[str, Any]], labels: Sequence[str], eps: float) -> dict[str, float]:
    """For each scheme, the first time its simulated mean error is ≤ ε (inf if never)."""
    out = {}
    for label in labels:
        mine = [r for r in rows if r["scheme"] == label]
        out[label] = time_to_target(np.array([r["time"] for r in mine], dtype=float),
                                    np.array([r["simulated_mean"] for r in mine], dtype=float), eps)
    return out


def error_table(summary: Sequence[dict[str, Any]], targets: dict[str, float]) -> list[dict[str, Any]]:
    """The error page's table: one row per simulated scheme."""
    return [{
        "scheme": s["scheme"],
        "time to ε (simulated mean)": ("never within T" if math.isinf(targets[s["scheme"]])
                                       else targets[s["scheme"]]),
        "bound": s["bound_kind"] if not s["bound_note"] else f"{s['bound_kind']}: {s['bound_note']}",
        "bound floor": s["floor"], "E[T] used": s["runtime"], "E[T] from": s["runtime_kind"],
        "γ used": s["gamma"] if s["staleness_mean"] is not None else None,
        "p₀ used": s["p0"], "mean staleness": s["staleness_mean"],
        "fresh fraction": s["fresh_fraction"]} for s in summary]


def runtime_table(here: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runtime page's table: every scheme at the sidebar's (m, K)."""
    return [{"scheme": r["label"], "analytic E[T]": r["analytic"], "kind": r["kind"],
             "method": r["method"], "Monte Carlo mean": r.get("mc_mean"),
             "95% CI": (f"[{r['mc_low']:.4g}, {r['mc_high']:.4g}]" if "mc_low" in r
                        else f"not simulated: {r.get('mc_skipped', '')}"),
             "iterations": r.get("mc_iterations"),
             "mean staleness": r.get("staleness_mean")} for r in here]


def _time(v: float | None) -> float | str | None:
    return None if v is None else ("never" if math.isinf(v) else v)


def _why(r: dict[str, Any]) -> str:
    """Why a cell is empty: the simulation's reason, or the bound's."""
    notes = [f"not simulated: {r['simulated_skipped']}"] if "simulated_skipped" in r else []
    if r["bound_time"] is None:
        notes.append(r["bound_source"])
    return "; ".join(notes)


def target_table(rows: Sequence[dict[str, Any]], ref: Sequence[dict[str, Any]], best: Sequence[int | None]
                 ) -> list[dict[str, Any]]:
    """The trade-offs page's table: each swept point (★ at the best ones), then the references."""
    return ([{"scheme": r["label"], "time to ε (bound)": _time(r["bound_time"]),
              "time to ε (simulated)": _time(r.get("simulated_time")),
              "best": "★" if i in best else "", "note": _why(r)} for i, r in enumerate(rows)]
            + [{"scheme": f"reference: {r['label']}", "time to ε (bound)": _time(r["bound_time"]),
                "time to ε (simulated)": _time(r.get("simulated_time")), "best": "", "note": _why(r)}
               for r in ref])


def target_formula(scheme: str) -> list[str]:
    """The time-to-target formula (LaTeX) the trade-offs chart uses for the swept scheme."""
    if scheme == "local-sgd":
        return [r"\text{local SGD: no bound is drawn; the time to } \varepsilon \text{ comes from simulated SGD}"]
    if scheme_class(scheme).fresh:
        return [r"t^*(K) = \mathbb{E}[T_K]\,\frac{\log\big((\varepsilon - F_K)/(F_0 - F_K)\big)}{\log(1-\eta\mu)},"
                r"\quad F_K=\frac{\eta L\sigma^2}{2\mu b K}"]
    return [r"t^*(K) = \mathbb{E}[T_K]\,\frac{\log\big((\varepsilon - F'_K)/(F_0 - F'_K)\big)}"
            r"{\log(1-\eta\mu\gamma')},"
            r"\quad F'_K=\frac{\eta L\sigma^2}{2\mu\gamma' b K},\quad \gamma' = 1-\gamma+\tfrac{p_0}{2}",
            r"p_0 = \text{the measured fraction of fresh gradients at each point}"]


def whatif_table(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The cluster page's what-if table: one row per (reading, scheme), E[T] and time to ε."""
    return [{"reading": r["reading"], "scheme": r["label"], "analytic E[T]": r["analytic"], "kind": r["kind"],
             "Monte Carlo mean": r.get("mc_mean"),
             "95% CI": (f"[{r['mc_low']:.4g}, {r['mc_high']:.4g}]" if "mc_low" in r
                        else f"not simulated: {r.get('mc_skipped', '')}"),
             "time to ε (bound)": _time(r.get("target_time")),
             "note": "" if r.get("target_source") in (None, "bound") else r["target_source"]} for r in rows]


def stragglers_sentence(slow: Sequence[dict[str, Any]], threshold: float) -> str:
    """The flagged workers of a trace summary in one line: persistent ones with their slowdown,
    emerging ones with the step they start from."""
    def one(r: dict[str, Any]) -> str:
        if r["from_step"] is None:
            return f"{r['worker']} (persistent, slowdown {r['slowdown']:.3g})"
        return f"{r['worker']} (from step {r['from_step']})"
    return f"Stragglers at θ = {threshold:g}: " + ", ".join(one(r) for r in slow) + "."

"""The sentences the dashboard states about its numbers, made from those numbers.

A "what to notice" sentence is a claim: each function here returns text that is true for the
inputs it is given — a general fact only under the condition that makes it one (memoryless,
new-longer-than-used, …), and a comparison only when the numbers' uncertainties separate.
No Streamlit here, so the tests can check every claim against the numbers it cites.
"""

from __future__ import annotations

import math
from typing import Any

from ..analytic import VALUE_KINDS
from ..clusters import Cluster, Stragglers
from ..delays import Delay, Exponential

__all__ = ["interval", "ksync_vs_kasync", "error_race", "best_choice", "persistence", "whatif"]

def interval(row: dict[str, Any] | None) -> tuple[float, float, str] | None:
    """What a runtime row says E[T] is: (low, high, source) — the analytic value when exact or
    numerical (± its numerical error), else the Monte Carlo 95% interval; None if neither."""
    if row is None:
        return None
    if row.get("kind") in VALUE_KINDS and row.get("analytic") is not None:
        err = float(row.get("analytic_error") or 0.0)
        return row["analytic"] - err, row["analytic"] + err, "analytic"
    if row.get("mc_mean") is not None and math.isfinite(row.get("mc_low", math.nan)) \
            and math.isfinite(row.get("mc_high", math.nan)):
        return float(row["mc_low"]), float(row["mc_high"]), "Monte Carlo"
    return None


def _show(iv: tuple[float, float, str]) -> str:
    lo, hi, src = iv
    mid = (lo + hi) / 2
    return f"{mid:.4g}" if src == "analytic" else f"{mid:.4g} (Monte Carlo, 95% CI ±{(hi - lo) / 2:.2g})"


def ksync_vs_kasync(delay: Delay | Stragglers, m: int, K: int, ksync: dict[str, Any] | None,
                    kasync: dict[str, Any] | None) -> str:
    """How K-sync and K-async compare: the general fact for this law, then what the numbers at
    (m, K) show.

    Facts (DESIGN §2): with memoryless delays (exponential, no shift) the two have the same
    E[T] = (H_m − H_{m−K})/λ; for new-longer-than-used laws E[X_{K:m}] = E[T_K-sync] bounds
    K-async's E[T] from above (Dutta et al. 2018); otherwise neither is ahead in general —
    cancelling a long job and restarting it is a fresh draw, so K-sync can win with heavy tails.
    """
    src = delay.at(m) if isinstance(delay, Stragglers) else delay
    if K == m:
        law = "At K = m both wait for every worker: K-sync and K-async are sync."
    elif isinstance(src, Cluster):
        law = _cluster_law(src)
    elif isinstance(src, Exponential) and src.shift == 0:
        law = ("With exponential delays (memoryless) K-sync and K-async have the same "
               "$\\mathbb{E}[T] = (H_m - H_{m-K})/\\lambda$.")
    elif src.is_nlu:
        law = ("This law is new-longer-than-used, so K-sync's $\\mathbb{E}[X_{K:m}]$ is an upper bound on "
               "K-async's $\\mathbb{E}[T]$: on average K-async never waits longer.")
    else:
        law = ("This law is not new-longer-than-used, so neither scheme is ahead in general: cancelling a "
               "long job and restarting it is a fresh draw, and K-sync can beat K-async (heavy tails, "
               "Weibull k < 1).")
    a, b = interval(ksync), interval(kasync)
    if a is None or b is None:
        return law
    here = f"Here (m = {m}, K = {K}): K-sync {_show(a)}, K-async {_show(b)}"
    if a[1] < b[0]:
        return f"{law} {here}: K-sync is {((b[0] + b[1]) / (a[0] + a[1])):.3g}× faster."
    if b[1] < a[0]:
        return f"{law} {here}: K-async is {((a[0] + a[1]) / (b[0] + b[1])):.3g}× faster."
    if a[2] == b[2] == "analytic":
        return f"{law} {here}: equal."
    return f"{law} {here}: equal within the Monte Carlo error."


def _cluster_law(c: Cluster) -> str:
    """The general fact on K-sync against K-async for workers that are not i.i.d. (DESIGN §7)."""
    groups = c.groups
    if groups is not None and all(g.delay.is_nlu for g in groups):
        return ("Every worker's law is new-longer-than-used, so K-sync's $\\mathbb{E}[X_{K:m}]$ over these "
                "non-identical workers is an upper bound on K-async's $\\mathbb{E}[T]$.")
    if c.kind == "markov":
        return ("Under slow spells one mini-batch's law is the mixture $(1-\\pi)F(x) + \\pi F(x/s)$, which is not "
                "new-longer-than-used: neither scheme is ahead in general.")
    return "These workers' laws are not all new-longer-than-used: neither scheme is ahead in general."


def error_race(rows: list[dict[str, Any]], targets: dict[str, float], eps: float) -> str:
    """Who reaches ε first and who is lowest at the horizon, from the simulated means shown."""
    if not rows:
        return ""
    horizon = max(r["time"] for r in rows)
    final = {r["scheme"]: r["simulated_mean"] for r in rows if r["time"] == horizon}
    reached = {k: t for k, t in targets.items() if t is not None and math.isfinite(t)}
    parts = []
    if reached:
        first = min(reached, key=reached.__getitem__)
        parts.append(f"Here {first} reaches ε = {eps:g} first (simulated mean, t ≈ {reached[first]:.3g})")
    else:
        parts.append(f"No scheme's simulated mean reaches ε = {eps:g} within T = {horizon:g}")
    low = min(final, key=final.__getitem__)
    parts.append(f"at T = {horizon:g} the lowest simulated mean error is {low}'s ({final[low]:.3g})")
    text = "; ".join(parts) + "."
    if reached and low != min(reached, key=reached.__getitem__):
        text += " Getting there first and levelling off lowest are different things: fewer gradients per " \
                "update are quicker, more gradients average out more noise."
    return text + " With fresh gradients the bound's floor F_K = ηLσ²/(2μbK) falls as 1/K."


def best_choice(rows: list[dict[str, Any]], x_name: str, best_bound: int | None, best_sim: int | None,
                eps: float) -> str:
    """Which value of the swept parameter reaches ε first, by the bound and by the simulation."""
    def at(i: int, key: str) -> str:
        return f"{x_name} = {rows[i]['x']} (t ≈ {rows[i][key]:.3g})"

    parts = []
    if best_sim is not None:
        parts.append(f"the simulated mean reaches ε = {eps:g} first at {at(best_sim, 'simulated_time')}")
    if best_bound is not None:
        parts.append(f"the bound at {at(best_bound, 'bound_time')}")
    if not parts:
        return (f"No point reaches ε = {eps:g}: lengthen the horizon T or raise ε. The best value balances "
                "time per update against the error floor.")
    text = "Here " + ", and ".join(parts) + "."
    if best_sim is not None and best_bound is not None and rows[best_sim]["x"] != rows[best_bound]["x"]:
        text += " The bound and the simulation disagree on the best value: the bound is loose."
    return text + (" The best value balances time per update (fewer gradients are quicker) against the "
                   "error floor (more gradients average out noise).")


def _tail(counts: list[int], x: int) -> float:
    total = sum(counts)
    return sum(counts[x:]) / total if total else math.nan


def persistence(m: int, rho: float, runs: dict[str, dict[str, Any]]) -> str:
    """What persistence did in the two async runs shown (chosen ρ, and ρ = 0): the mean
    staleness, the far tail P(staleness ≥ 10(m − 1)) as measured, and the error at the horizon
    with its 95% intervals — each a measurement of these runs, compared only where the
    intervals separate."""
    (a_label, a), (b_label, b) = list(runs.items())[:2]
    if not a.get("counts") or not b.get("counts"):
        return ""
    x = max(1, 10 * (m - 1))
    ta, tb = _tail(a["counts"], x), _tail(b["counts"], x)
    text = (f"Mean staleness: {a['staleness_mean']:.3g} with {a_label}, {b['staleness_mean']:.3g} with {b_label} "
            f"(the long-run mean is m − 1 = {m - 1} whatever ρ; these runs start with every worker on a fresh "
            f"mini-batch, which keeps the early staleness lower). ")
    if ta == tb == 0:
        text += f"No gradient reached staleness {x} = 10(m − 1) in these runs."
    else:
        text += (f"Share of gradients with staleness ≥ {x} = 10(m − 1): {ta:.3%} against {tb:.3%} in these runs"
                 + (": heavier with persistence here (a long slow spell leaves its worker's gradient many updates "
                    "behind)." if ta > tb else "."))
    fa, fb = a.get("final"), b.get("final")
    if fa and fb:
        (ma, la, ha), (mb, lb, hb) = fa, fb
        verdict = ("higher with persistence" if la > hb else "lower with persistence" if ha < lb
                   else "equal within the 95% intervals")
        text += (f" Error at the horizon: {ma:.3g} [{la:.3g}, {ha:.3g}] with {a_label} against {mb:.3g} "
                 f"[{lb:.3g}, {hb:.3g}] with {b_label}: {verdict}.")
    return text


def _compare(a: tuple[float, float, str], b: tuple[float, float, str]) -> str | None:
    """'x% higher' / 'x% lower' of a against b when their intervals separate, else None."""
    if a[0] > b[1] or a[1] < b[0]:
        ratio = (a[0] + a[1]) / (b[0] + b[1])
        return f"{abs(ratio - 1):.0%} {'higher' if ratio > 1 else 'lower'}"
    return None


def whatif(rows: list[dict[str, Any]]) -> str:
    """How far the i.i.d. fit is from the replay, and what removing the stragglers buys — for
    the first scheme that has both, from the numbers shown (separated intervals only)."""
    by = {(r["reading"], r["scheme"]): interval(r) for r in rows if r["reading"] != "backup workers"}
    backup = next((interval(r) for r in rows if r["reading"] == "backup workers"), None)
    schemes = list(dict.fromkeys(r["scheme"] for r in rows))
    for s in schemes:
        replay, iid = by.get(("replay", s)), by.get(("i.i.d. fit", s))
        if replay is None or iid is None:
            continue
        diff = _compare(iid, replay)
        text = (f"For {s}, the i.i.d. fit says E[T] = {_show(iid)} and the replay {_show(replay)}: "
                + (f"the textbook model is {diff} than this cluster." if diff else
                   "within their uncertainty, the textbook model gets this cluster right."))
        dropped = by.get(("stragglers dropped", s))
        if dropped is not None:
            d = _compare(dropped, replay)
            text += (f" Without its stragglers it would take {_show(dropped)}"
                     + (f" ({d})." if d else ", no clear change."))
        if backup is not None and s == "sync":
            b = _compare(backup, replay)
            text += f" Keeping them as backup workers: {_show(backup)}" + (f" ({b})." if b else ", no clear change.")
        return text
    return "Compare the i.i.d. fit's bars with the replay's: the difference is what the textbook model gets wrong."

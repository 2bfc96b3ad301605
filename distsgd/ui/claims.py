"""The sentences the dashboard states about its numbers, made from those numbers.

A "what to notice" sentence is a claim: each function here returns text that is true for the
inputs it is given — a general fact only under the condition that makes it one (memoryless,
new-longer-than-used, …), and a comparison only when the numbers' uncertainties separate.
No Streamlit calls here (only :func:`distsgd.ui.i18n.tr`, English outside a session), so the
tests can check every claim against the numbers it cites.  Each sentence is one message with
fields, whole, so a translator can reorder it (DESIGN §10).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..analytic import VALUE_KINDS
from ..clusters import Cluster, Stragglers
from ..delays import Delay, Exponential
from .i18n import N_, tr
from .views import band_text, time_text

__all__ = ["interval", "ksync_vs_kasync", "error_race", "best_choice", "persistence", "whatif", "graph_runtime",
           "graph_vs_m", "schedule_winner", "schedule_verdict"]

#: the formulas in the sentences (LaTeX, the same in every language: fields of the messages)
_FORMULAS = {"order_statistic": r"$\mathbb{E}[X_{K:m}]$", "runtime": r"$\mathbb{E}[T]$"}
#: a sentence that ends with one of these (Chinese full-width punctuation) is followed by the
#: next one without a space; English sentences are separated by one
_CJK_END = "。！？；：）」"


def _join(*sentences: str) -> str:
    """Sentences as one paragraph: a space after an English sentence, none after a Chinese one."""
    out = ""
    for s in sentences:
        if s:
            out += s if not out or out.endswith(tuple(_CJK_END)) else " " + s
    return out


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
    return f"{mid:.4g}" if src == "analytic" else tr("{value:.4g} (Monte Carlo, 95% CI ±{half:.2g})",
                                                      value=mid, half=(hi - lo) / 2)


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
        law = tr("At K = m both wait for every worker: K-sync and K-async are sync.")
    elif isinstance(src, Cluster):
        law = _cluster_law(src)
    elif isinstance(src, Exponential) and src.shift == 0:
        law = tr("With exponential delays (memoryless) K-sync and K-async have the same {formula}.",
                 formula=r"$\mathbb{E}[T] = (H_m - H_{m-K})/\lambda$")
    elif src.is_nlu:
        law = tr("This law is new-longer-than-used, so K-sync's {order_statistic} is an upper bound on "
                 "K-async's {runtime}: on average K-async never waits longer.", **_FORMULAS)
    else:
        law = tr("This law is not new-longer-than-used, so neither scheme is ahead in general: cancelling a "
                 "long job and restarting it is a fresh draw, and K-sync can beat K-async (heavy tails, "
                 "Weibull k < 1).")
    a, b = interval(ksync), interval(kasync)
    if a is None or b is None:
        return law
    here = {"law": law, "m": m, "K": K, "ksync": _show(a), "kasync": _show(b)}
    if a[1] < b[0]:
        return tr("{law} Here (m = {m}, K = {K}): K-sync {ksync}, K-async {kasync}: K-sync is {ratio:.3g}× faster.",
                  ratio=(b[0] + b[1]) / (a[0] + a[1]), **here)
    if b[1] < a[0]:
        return tr("{law} Here (m = {m}, K = {K}): K-sync {ksync}, K-async {kasync}: K-async is {ratio:.3g}× faster.",
                  ratio=(a[0] + a[1]) / (b[0] + b[1]), **here)
    if a[2] == b[2] == "analytic":
        return tr("{law} Here (m = {m}, K = {K}): K-sync {ksync}, K-async {kasync}: equal.", **here)
    return tr("{law} Here (m = {m}, K = {K}): K-sync {ksync}, K-async {kasync}: equal within the Monte Carlo error.",
              **here)


def _cluster_law(c: Cluster) -> str:
    """The general fact on K-sync against K-async for workers that are not i.i.d. (DESIGN §7)."""
    groups = c.groups
    if groups is not None and all(g.delay.is_nlu for g in groups):
        return tr("Every worker's law is new-longer-than-used, so K-sync's {order_statistic} over these "
                  "non-identical workers is an upper bound on K-async's {runtime}.", **_FORMULAS)
    if c.kind == "markov":
        return tr("Under slow spells one mini-batch's law is the mixture {mixture}, which is not "
                  "new-longer-than-used: neither scheme is ahead in general.", mixture=r"$(1-\pi)F(x) + \pi F(x/s)$")
    return tr("These workers' laws are not all new-longer-than-used: neither scheme is ahead in general.")


def error_race(rows: list[dict[str, Any]], targets: dict[str, float], eps: float, fresh_floor: bool = True) -> str:
    """Who reaches ε first and who is lowest at the horizon, from the simulated means shown (and,
    with ``fresh_floor``, how the fresh schemes' bound floor depends on K)."""
    if not rows:
        return ""
    horizon = max(r["time"] for r in rows)
    final = {r["scheme"]: r["simulated_mean"] for r in rows if r["time"] == horizon}
    reached = {k: t for k, t in targets.items() if t is not None and math.isfinite(t)}
    low = min(final, key=final.__getitem__)
    if reached:
        first = min(reached, key=reached.__getitem__)
        text = tr("Here {first} reaches ε = {eps:g} first (simulated mean, t ≈ {t:.3g}); at T = {horizon:g} the "
                  "lowest simulated mean error is {low}'s ({error:.3g}).",
                  first=first, eps=eps, t=reached[first], horizon=horizon, low=low, error=final[low])
    else:
        text = tr("No scheme's simulated mean reaches ε = {eps:g} within T = {horizon:g}; at T = {horizon:g} the "
                  "lowest simulated mean error is {low}'s ({error:.3g}).",
                  eps=eps, horizon=horizon, low=low, error=final[low])
    if reached and low != min(reached, key=reached.__getitem__):
        text = _join(text, tr("Getting there first and levelling off lowest are different things: fewer gradients "
                              "per update are quicker, more gradients average out more noise."))
    if not fresh_floor:
        return text
    return _join(text, tr("With fresh gradients the bound's floor F_K = ηLσ²/(2μbK) falls as 1/K."))


def best_choice(rows: list[dict[str, Any]], x_name: str, best_bound: int | None, best_sim: int | None,
                eps: float) -> str:
    """Which value of the swept parameter reaches ε first, by the bound and by the simulation."""
    def at(i: int, key: str) -> str:
        return f"{x_name} = {rows[i]['x']} (t ≈ {rows[i][key]:.3g})"

    if best_sim is not None and best_bound is not None:
        text = tr("Here the simulated mean reaches ε = {eps:g} first at {simulated}, and the bound at {bound}.",
                  eps=eps, simulated=at(best_sim, "time_to_target"), bound=at(best_bound, "bound_time_to_target"))
    elif best_sim is not None:
        text = tr("Here the simulated mean reaches ε = {eps:g} first at {simulated}.",
                  eps=eps, simulated=at(best_sim, "time_to_target"))
    elif best_bound is not None:
        text = tr("Here the bound at {bound}.", bound=at(best_bound, "bound_time_to_target"))
    else:
        return tr("No point reaches ε = {eps:g}: lengthen the horizon T or raise ε. The best value balances "
                  "time per update against the error floor.", eps=eps)
    if best_sim is not None and best_bound is not None and rows[best_sim]["x"] != rows[best_bound]["x"]:
        text = _join(text, tr("The bound and the simulation disagree on the best value: the bound is loose."))
    return _join(text, tr("The best value balances time per update (fewer gradients are quicker) against the "
                          "error floor (more gradients average out noise)."))


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
    text = tr("Mean staleness: {mean_a:.3g} with {a}, {mean_b:.3g} with {b} (the long-run mean is m − 1 = {mean} "
              "whatever ρ; these runs start with every worker on a fresh mini-batch, which keeps the early "
              "staleness lower).", mean_a=a["staleness_mean"], a=a_label, mean_b=b["staleness_mean"], b=b_label,
              mean=m - 1)
    if ta == tb == 0:
        text = _join(text, tr("No gradient reached staleness {x} = 10(m − 1) in these runs.", x=x))
    elif ta > tb:
        text = _join(text, tr("Share of gradients with staleness ≥ {x} = 10(m − 1): {share_a:.3%} against "
                              "{share_b:.3%} in these runs: heavier with persistence here (a long slow spell "
                              "leaves its worker's gradient many updates behind).", x=x, share_a=ta, share_b=tb))
    else:
        text = _join(text, tr("Share of gradients with staleness ≥ {x} = 10(m − 1): {share_a:.3%} against "
                              "{share_b:.3%} in these runs.", x=x, share_a=ta, share_b=tb))
    fa, fb = a.get("final"), b.get("final")
    if fa and fb:
        (ma, la, ha), (mb, lb, hb) = fa, fb
        values = {"error_a": ma, "low_a": la, "high_a": ha, "a": a_label,
                  "error_b": mb, "low_b": lb, "high_b": hb, "b": b_label}
        if la > hb:
            verdict = tr("Error at the horizon: {error_a:.3g} [{low_a:.3g}, {high_a:.3g}] with {a} against "
                         "{error_b:.3g} [{low_b:.3g}, {high_b:.3g}] with {b}: higher with persistence.", **values)
        elif ha < lb:
            verdict = tr("Error at the horizon: {error_a:.3g} [{low_a:.3g}, {high_a:.3g}] with {a} against "
                         "{error_b:.3g} [{low_b:.3g}, {high_b:.3g}] with {b}: lower with persistence.", **values)
        else:
            verdict = tr("Error at the horizon: {error_a:.3g} [{low_a:.3g}, {high_a:.3g}] with {a} against "
                         "{error_b:.3g} [{low_b:.3g}, {high_b:.3g}] with {b}: equal within the 95% intervals.",
                         **values)
        text = _join(text, verdict)
    return text


def _compare(a: tuple[float, float, str], b: tuple[float, float, str]) -> tuple[str, bool] | None:
    """How much a differs from b when their intervals separate: ('x%', a is higher), else None."""
    if a[0] > b[1] or a[1] < b[0]:
        ratio = (a[0] + a[1]) / (b[0] + b[1])
        return f"{abs(ratio - 1):.0%}", ratio > 1
    return None


def _verdict(diff: tuple[str, bool] | None, same: str, higher: str, lower: str, **values: Any) -> str:
    """One of three whole sentences (marked N_ by the caller) as :func:`_compare` says: no clear
    difference, or ``{change}`` higher or lower."""
    if diff is None:
        return tr(same, **values)
    return tr(higher if diff[1] else lower, change=diff[0], **values)


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
        text = _verdict(diff, N_("For {scheme}, the i.i.d. fit says E[T] = {fit} and the replay {replay}: within "
                                 "their uncertainty, the textbook model gets this cluster right."),
                        N_("For {scheme}, the i.i.d. fit says E[T] = {fit} and the replay {replay}: the textbook "
                           "model is {change} higher than this cluster."),
                        N_("For {scheme}, the i.i.d. fit says E[T] = {fit} and the replay {replay}: the textbook "
                           "model is {change} lower than this cluster."),
                        scheme=s, fit=_show(iid), replay=_show(replay))
        dropped = by.get(("stragglers dropped", s))
        if dropped is not None:
            text = _join(text, _verdict(_compare(dropped, replay),
                                        N_("Without its stragglers it would take {time}, no clear change."),
                                        N_("Without its stragglers it would take {time} ({change} higher)."),
                                        N_("Without its stragglers it would take {time} ({change} lower)."),
                                        time=_show(dropped)))
        if backup is not None and s == "sync":
            text = _join(text, _verdict(_compare(backup, replay),
                                        N_("Keeping them as backup workers: {time}, no clear change."),
                                        N_("Keeping them as backup workers: {time} ({change} higher)."),
                                        N_("Keeping them as backup workers: {time} ({change} lower)."),
                                        time=_show(backup)))
        return text
    return tr("Compare the i.i.d. fit's bars with the replay's: the difference is what the textbook model gets wrong.")


def real_problem(spec: Any, facts: dict[str, Any], rows: Sequence[dict[str, Any]],
                    summary: Sequence[dict[str, Any]], replicas: int, points: int) -> str:
    """What the problem is, how far the bound lies from the simulated mean at the horizon (said
    for the schemes whose bound is drawn, or that none is), and which schemes ran fewer replicas
    or grid points than asked (the page's work budget), all from the numbers drawn."""
    c, info = facts["constants"], facts["info"]
    text = tr("Logistic regression on {name}: {train} training rows, {classes} classes, d = {dim}, λ = {lam}; "
              "features standardised with the training mean and standard deviation ({dropped} constant columns "
              "dropped). The bound takes L, μ and the σ² bound, which holds everywhere and is {ratio:.0f} times σ²* "
              "at the optimum; L/μ = {cond:.0f}. The linearised floor is an approximation for small η·L and fresh "
              "gradients.", name=spec.name, train=info["n_train"], classes=facts["classes"], dim=facts["dim"],
              lam=spec.lam, dropped=info["dropped_columns"], ratio=c["sigma2_bound"]["value"] / c["sigma2"]["value"],
              cond=c["L"]["value"] / c["mu"]["value"])
    last: dict[str, dict[str, Any]] = {}
    for r in rows:
        last[r["scheme"]] = r
    ratios = [r["bound"] / r["simulated_mean"] for r in last.values()
              if r.get("bound") is not None and r["simulated_mean"] > 0 and math.isfinite(r["bound"])]
    if not ratios:
        text = _join(text, tr("The bound is drawn for no scheme here (the table says why)."))
    else:
        lo, hi = (f"{x:.3g}" if x < 1000 else f"{x:,.0f}" for x in (min(ratios), max(ratios)))
        text = _join(text, tr("At the horizon the bound is {span} times the simulated mean error.",
                              span=lo if lo == hi else f"{lo}–{hi}"))
    grid: dict[str, set[float]] = {}
    for r in rows:
        grid.setdefault(r["scheme"], set()).add(r["time"])
    ran = [(s["scheme"], s["replicas"], len(grid.get(s["scheme"], ()))) for s in summary if "skipped" not in s]
    fewer = [tr("{scheme}: {replicas} replicas, {points} points", scheme=name, replicas=r, points=p)
             for name, r, p in ran if r < replicas or p < points]
    if fewer:
        text = _join(text, tr("Within the page's work budget (each recorded model is evaluated on all {rows} rows, d = "
                              "{d}) fewer replicas or grid points ran: {which}.", rows=info["n_train"] + info["n_test"],
                              d=facts["dim"], which="; ".join(fewer)))
    return text


def _value(row: dict[str, Any] | None) -> str:
    """An analytic E[T] as the sentences show it: the number, "at most"/"at least" for a bound, or
    why there is none."""
    if row is None or row.get("analytic") is None:
        return tr("none ({kind})", kind=str(row["kind"]) if row else "unavailable")
    v = f"{row['analytic']:.4g}"
    kind = row["kind"]
    return tr("at most {v}", v=v) if kind == "upper_bound" else tr("at least {v}", v=v) if kind == "lower_bound" else v


def graph_runtime(rows: Sequence[dict[str, Any]], lower: Any, upper: Any, facts: dict[str, Any], m: int) -> str:
    """d-psgd's time per iteration on this graph against sync's (DESIGN §12.3), from the analytic
    values shown: the cycle time γ (exact, or its upper bound), its bounds, sync's E[X_{m:m}], and
    what async and ad-psgd take per gradient.  A ratio is stated only when γ is exact or an upper
    bound and sync's value is exact or numerical."""
    by = {r["scheme"]: r for r in rows}
    d, s, a = by.get("d-psgd"), by.get("sync"), by.get("async")
    text = tr("On this graph of m = {m} nodes a d-psgd iteration (every node one gradient) takes γ = {g}; sync, "
              "which waits for the slowest of all m, takes {s}.", m=m, g=_value(d), s=_value(s))
    if lower is not None and lower.value is not None and upper is not None and upper.value is not None:
        text = _join(text, tr("Bounds: {low:.4g} ≤ γ ≤ {high:.4g} (degrees {d} to {D}).",
                              low=lower.value, high=upper.value, d=facts["min_degree"], D=facts["max_degree"]))
    if d and s and d.get("analytic") and s.get("analytic") and d["kind"] in (*VALUE_KINDS, "upper_bound") \
            and s["kind"] in VALUE_KINDS:
        ratio = s["analytic"] / d["analytic"]
        if d["kind"] == "upper_bound" and ratio > 1:
            text = _join(text, tr("So d-psgd's iteration is at least {r:.3g}× as fast as sync's.", r=ratio))
        elif d["kind"] != "upper_bound" and ratio >= 1:
            text = _join(text, tr("So d-psgd's iteration is {r:.3g}× as fast as sync's.", r=ratio))
    if a and a.get("analytic") is not None:
        text = _join(text, tr("Async and ad-psgd wait for nobody: {v:.4g} per gradient (E[X]/m), one model "
                              "change per gradient instead of m.", v=a["analytic"]))
    return text


def graph_vs_m(rows: Sequence[dict[str, Any]]) -> str:
    """d-psgd on the ring against sync at the smallest and largest m ≥ 3 of the chart where both
    have an analytic value (the numbers on the chart; below 3 nodes a ring is complete)."""
    ring = {r["m"]: r for r in rows if r.get("graph") == "ring" and r.get("analytic") is not None and r["m"] >= 3}
    sync = {r["m"]: r for r in rows if r["scheme"] == "sync" and r.get("graph") is None and r.get("analytic")}
    both = sorted(set(ring) & set(sync))
    if len(both) < 2:
        return tr("Sync waits for the slowest of all m; a node of d-psgd waits only for its neighbours.")
    lo, hi = both[0], both[-1]
    return tr("At m = {lo}, d-psgd on the ring takes {r_lo} per iteration and sync {s_lo}; at m = {hi}, {r_hi} "
              "and {s_hi}. Sync waits for the slowest of all m; a ring's node waits only for its two "
              "neighbours.", lo=lo, hi=hi, r_lo=_value(ring[lo]), s_lo=_value(sync[lo]), r_hi=_value(ring[hi]),
              s_hi=_value(sync[hi]))


def schedule_winner(rows: Sequence[dict[str, Any]], run: dict[str, Any]) -> tuple[str | None, int | None]:
    """Who reaches ε first, a schedule's ``run`` or the fixed values' simulated ``rows``, by the
    95% bands of the times to ε (``time_to_target_low``/``_high``: when the band's edges reach ε):
    ``("fixed", i)`` when row i's band ends before the schedule's begins (of those, the soonest by
    the simulated mean); ``("schedule", None)`` when the schedule's band ends before every row's
    begins; else ``(None, j)``: j the soonest row (by the mean) whose band overlaps the schedule's
    (two bands that never reach ε overlap), None only when no row was simulated."""
    fixed = [(i, r) for i, r in enumerate(rows) if r.get("time_to_target") is not None]
    s_lo, s_hi = run["time_to_target_low"], run["time_to_target_high"]
    ahead = [(r["time_to_target"], i) for i, r in fixed if r["time_to_target_high"] < s_lo]
    if ahead:
        return "fixed", min(ahead)[1]
    if fixed and s_hi < min(r["time_to_target_low"] for _, r in fixed):
        return "schedule", None
    overlap = [(r["time_to_target"], i) for i, r in fixed
               if r["time_to_target_low"] <= s_hi and r["time_to_target_high"] >= s_lo]
    return None, (min(overlap)[1] if overlap else None)


def schedule_verdict(rows: Sequence[dict[str, Any]], run: dict[str, Any], parameter: str, eps: float,
                     horizon: float) -> str:
    """Whether a schedule beats every fixed value of its ``parameter`` at reaching ε, is beaten by
    one, or neither (:func:`schedule_winner`), and by how much (the ratio of the simulated means'
    times to ε), from the numbers in the comparison's table."""
    who, i = schedule_winner(rows, run)
    best = min(((r["time_to_target"], j) for j, r in enumerate(rows)
                if r.get("time_to_target") is not None and math.isfinite(r["time_to_target"])), default=None)
    name, t = run["label"], run["time_to_target"]
    if who == "schedule" and best is not None:
        b = rows[best[1]]
        return tr("{schedule} reaches ε = {eps:g} at t ≈ {t} (95% band {band}), {factor:.3g}× sooner than the best "
                  "fixed {p}, {p} = {x} (t ≈ {t_best}, band {band_best}): its band ends before any fixed {p}'s "
                  "begins.", schedule=name, eps=eps, t=time_text(t), band=band_text(run),
                  factor=b["time_to_target"] / t, p=parameter, x=b["x"], t_best=time_text(b["time_to_target"]),
                  band_best=band_text(b))
    if who == "schedule":
        return tr("{schedule} reaches ε = {eps:g} at t ≈ {t} (95% band {band}) and no fixed {p}'s simulated mean "
                  "does within T = {T:g}: the schedule's band ends before any fixed {p}'s begins.",
                  schedule=name, eps=eps, t=time_text(t), band=band_text(run), p=parameter, T=horizon)
    if who == "fixed":
        assert i is not None
        r = rows[i]
        if math.isfinite(t):
            return tr("The fixed {p} = {x} reaches ε = {eps:g} at t ≈ {t_fixed} (95% band {band_fixed}), "
                      "{factor:.3g}× sooner than {schedule} (t ≈ {t}, band {band}): the bands do not overlap.",
                      p=parameter, x=r["x"], eps=eps, t_fixed=time_text(r["time_to_target"]), band_fixed=band_text(r),
                      factor=t / r["time_to_target"], schedule=name, t=time_text(t), band=band_text(run))
        return tr("The fixed {p} = {x} reaches ε = {eps:g} at t ≈ {t_fixed} (95% band {band_fixed}), and the "
                  "simulated mean of {schedule} does not within T = {T:g} (band {band}): the bands do not overlap.",
                  p=parameter, x=r["x"], eps=eps, t_fixed=time_text(r["time_to_target"]), band_fixed=band_text(r),
                  schedule=name, T=horizon, band=band_text(run))
    if i is None:
        return tr("No fixed {p} was simulated here (the table says why): there is nothing to compare {schedule} "
                  "with.", p=parameter, schedule=name)
    if best is None and not math.isfinite(t):
        return tr("Neither the simulated mean of {schedule} nor that of any fixed {p} reaches ε = {eps:g} within "
                  "T = {T:g}: lengthen T or raise ε to compare them.", schedule=name, p=parameter, eps=eps, T=horizon)
    r = rows[i]
    return tr("{schedule} (t ≈ {t}, 95% band {band}) and the fixed {p} = {x} (t ≈ {t_fixed}, band {band_fixed}) "
              "reach ε = {eps:g} at times whose 95% bands overlap: neither wins here.", schedule=name, t=time_text(t),
              band=band_text(run), p=parameter, x=r["x"], t_fixed=time_text(r["time_to_target"]),
              band_fixed=band_text(r), eps=eps)

"""The schedule comparison the dashboard draws (issue 25, DESIGN §13): the verdict "which wins and
by how much, or that none does" checked against a judge written here from the bands alone, for
drawn bands (infinite ones included), for the presets' numbers and for moved values; the table,
the comparison's figure and the scheduled run's own time to ε against numbers computed here from
its curve."""

from __future__ import annotations

import math
import random
import re

import pytest

from distsgd import curves
from distsgd.delays import parse_delay
from distsgd.error import Problem
from distsgd.ui import cached, claims, presets, views

INF = math.inf


def fixed_row(x: int, t: float, lo: float, hi: float) -> dict:
    return {"x": x, "label": f"k-sync (m=16, K={x})", "time_to_target": t, "time_to_target_low": lo,
            "time_to_target_high": hi}


def sched(t: float, lo: float, hi: float) -> dict:
    return {"label": "k-sync, adasync(K0=2, period=10)", "time_to_target": t, "time_to_target_low": lo,
            "time_to_target_high": hi}


def judge(rows: list[dict], run: dict) -> tuple[str, int | None]:
    """Who wins, from the 95% bands of the times to ε, written apart from the dashboard's code: a
    fixed value wins when its whole band lies before the schedule's (the soonest such by its
    mean), the schedule when its whole band lies before every simulated fixed value's."""
    simulated = [i for i in range(len(rows)) if "time_to_target" in rows[i]]
    before = sorted((rows[i]["time_to_target"], i) for i in simulated
                    if rows[i]["time_to_target_high"] < run["time_to_target_low"])
    if before:
        return "fixed", before[0][1]
    if simulated and all(run["time_to_target_high"] < rows[i]["time_to_target_low"] for i in simulated):
        return "schedule", None
    return "none", None


def g3(v: float) -> str:
    return f"{v:.3g}" if math.isfinite(v) else "never"


def check_sentence(rows: list[dict], run: dict, eps: float = 0.01, horizon: float = 100.0) -> str:
    """The verdict says what :func:`judge` says, with the numbers computed here."""
    text = claims.schedule_verdict(rows, run, "K", eps, horizon)
    who, i = judge(rows, run)
    finite = [r["time_to_target"] for r in rows if math.isfinite(r.get("time_to_target", INF))]
    if who == "fixed":
        r = rows[i]
        assert text.startswith(f"The fixed K = {r['x']} reaches ε = {eps:g} at t ≈ {g3(r['time_to_target'])}"), text
        assert "the bands do not overlap" in text, text
        if math.isfinite(run["time_to_target"]):
            assert f"{run['time_to_target'] / r['time_to_target']:.3g}× sooner than {run['label']}" in text, text
        else:
            assert f"the simulated mean of {run['label']} does not within T = {horizon:g}" in text, text
    elif who == "schedule":
        assert text.startswith(f"{run['label']} reaches ε = {eps:g} at t ≈ {g3(run['time_to_target'])}"), text
        assert "band ends before any fixed K's begins" in text, text
        if finite:
            best = min(finite)
            x = next(r["x"] for r in rows if r.get("time_to_target") == best)
            assert f"{best / run['time_to_target']:.3g}× sooner than the best fixed K, K = {x} " in text, text
        else:
            assert "no fixed K's simulated mean does within T" in text, text
    else:
        assert "sooner" not in text and "do not overlap" not in text, text
        if not any("time_to_target" in r for r in rows):
            assert text.startswith("No fixed K was simulated here"), text
        elif not finite and not math.isfinite(run["time_to_target"]):
            assert text.startswith(f"Neither the simulated mean of {run['label']}"), text
        else:
            assert "95% bands overlap: neither wins here" in text, text
            x = int(re.search(r"the fixed K = (\d+) ", text).group(1))
            r = next(r for r in rows if r["x"] == x)  # the band named overlaps the schedule's
            assert r["time_to_target_low"] <= run["time_to_target_high"], text
            assert r["time_to_target_high"] >= run["time_to_target_low"], text
    return text


def test_the_schedule_wins_when_its_band_ends_before_every_fixed_band_begins():
    rows = [fixed_row(1, INF, INF, INF), fixed_row(4, 30.0, 28.0, 33.0), fixed_row(8, 40.0, 36.0, 44.0)]
    text = check_sentence(rows, sched(20.0, 18.0, 22.0))
    assert "1.5× sooner than the best fixed K, K = 4 (t ≈ 30, band [28, 33])" in text


def test_a_wide_band_of_a_slower_fixed_value_leaves_no_winner():
    """K = 8 is slower by its mean than K = 4, but its band reaches back over the schedule's: the
    schedule does not beat every fixed K (comparing with the best by the mean alone would say it does)."""
    rows = [fixed_row(4, 30.0, 28.0, 33.0), fixed_row(8, 40.0, 19.0, 60.0)]
    text = check_sentence(rows, sched(20.0, 18.0, 22.0))
    assert "the fixed K = 8 " in text and "neither wins" in text


def test_a_fixed_value_wins_and_the_soonest_of_the_clear_winners_is_named():
    rows = [fixed_row(2, 12.0, 5.0, 19.0), fixed_row(4, 14.0, 13.0, 15.0), fixed_row(8, 40.0, 36.0, 44.0)]
    text = check_sentence(rows, sched(30.0, 20.0, 35.0))
    assert text.startswith("The fixed K = 2 reaches") and "2.5× sooner" in text
    rows[0]["time_to_target_high"] = 25.0  # K = 2's band now overlaps: K = 4 is the clear winner
    text = check_sentence(rows, sched(30.0, 20.0, 35.0))
    assert text.startswith("The fixed K = 4 reaches") and "2.14× sooner" in text


def test_bands_that_touch_overlap():
    rows = [fixed_row(4, 30.0, 25.0, 33.0)]
    assert "neither wins" in check_sentence(rows, sched(20.0, 18.0, 25.0))


def test_nothing_reaches_and_nothing_simulated():
    rows = [fixed_row(4, INF, INF, INF), fixed_row(8, INF, 90.0, INF)]
    assert check_sentence(rows, sched(INF, INF, INF)).startswith("Neither the simulated mean")
    skipped = [{"x": 4, "label": "k-sync (m=16, K=4)", "bound_time_to_target": 3.0, "simulated_skipped": "x"}]
    assert check_sentence(skipped, sched(20.0, 18.0, 22.0)).startswith("No fixed K was simulated here")


def _band(rng: random.Random) -> tuple[float, float, float]:
    """A drawn time to ε with its band: low ≤ mean ≤ high, any of them possibly never (inf)."""
    lo = rng.choice([rng.uniform(1, 100), rng.uniform(1, 100), INF])
    t = rng.choice([lo, lo + rng.uniform(0, 30), INF]) if math.isfinite(lo) else INF
    hi = rng.choice([t, t + rng.uniform(0, 30), INF]) if math.isfinite(t) else INF
    return t, lo, hi


def test_the_verdict_is_true_for_drawn_bands():
    rng = random.Random(25)
    seen = set()
    for _ in range(3000):
        rows = [fixed_row(x, *_band(rng)) for x in rng.sample(range(1, 17), rng.randint(1, 6))]
        run = sched(*_band(rng))
        check_sentence(rows, run)
        seen.add(judge(rows, run)[0])
    assert seen == {"fixed", "schedule", "none"}


# -- the comparison's numbers: the presets and moved values -----------------------------------

QUAD = dict(eta=0.05, L=2.0, mu=0.5, sigma2=1.0, b=1, f0=1.0, dim=10)


def comparison(delay: str, m: int, spec: str, eps: float, horizon: float, problem: dict, K: int = 4,
               D: float = 0.5) -> tuple[list[dict], dict, dict]:
    """The trade-offs page's comparison at these settings (the page's grid of fixed values; no UI caps)."""
    d, p = parse_delay(delay), Problem(**problem)
    if spec.startswith("adasync"):
        schemes = [curves.build("k-sync", m, k) for k in sorted(set(curves.k_grid(m, 8)) | {K})]
    else:
        schemes = [curves.build("local-sgd", m, None, h, D) for h in (1, 2, 4, 8, 16, 32, 64)]
    x = "K" if spec.startswith("adasync") else "H"
    rows = curves.target_rows(schemes, d, p, eps, horizon, 101, 20, 1, x_name=x, keep_curve=True)
    run = curves.schedule_run(schemes[0], spec, d, p, horizon, 101, 20, 1, eps, shares=len(schemes))
    best = curves.best_index(rows, "time_to_target")
    return rows, run, cached._comparison(rows, best, run, eps)


def first_at_or_below(times: list[float], values: list[float], eps: float) -> float:
    return next((t for t, v in zip(times, values, strict=True) if v <= eps), INF)


def preset_settings(name: str) -> tuple:
    p = presets.PRESETS[name]
    problem = {k: p[k] for k in QUAD}
    if p["schedule"] == "adasync":
        delay, spec = f"pareto(xm={p['xm']}, alpha={p['alpha']})", f"adasync(K0={p['K0']}, period={p['period']:g})"
    else:
        delay = f"shifted-exp(rate={p['lam']}, shift={p['delta']})"
        spec = f"adacomm(H0={p['H0']}, period={p['period']:g})"
    return delay, p["m"], spec, p["eps"], p["horizon"], problem


@pytest.mark.parametrize("settings", [
    preset_settings("AdaSync on a heavy tail"),
    preset_settings("AdaComm with expensive communication"),
    ("exp(rate=1)", 8, "adasync(K0=2, period=5)", 0.02, 40.0, QUAD),  # moved: another law, m, K0, period, ε
    ("exp(rate=1)", 8, "adacomm(H0=8, period=5)", 0.05, 60.0, {**QUAD, "eta": 0.2}),
], ids=["adasync-preset", "adacomm-preset", "adasync-moved", "adacomm-moved"])
def test_the_comparison_holds_the_numbers_of_its_curves(settings):
    rows, run, comp = comparison(*settings)
    eps = settings[3]
    times = [r["time"] for r in run["rows"]]
    # the schedule's time to ε and its band: the first grid times its mean and band edges are ≤ ε
    for key, col in (("time_to_target", "simulated_mean"), ("time_to_target_low", "simulated_low"),
                     ("time_to_target_high", "simulated_high")):
        assert run[key] == first_at_or_below(times, [r[col] for r in run["rows"]], eps), key
    # every fixed value on the same grid, its time to ε from its own curve
    for r in rows:
        assert [c["time"] for c in r["curve"]] == times
        assert r["time_to_target"] == first_at_or_below(times, [c["simulated_mean"] for c in r["curve"]], eps)
    # the value in force starts at the schedule's first value and stays within its domain
    start = int(re.search(r"[KH]0=(\d+)", settings[2]).group(1))
    assert run["value_rows"][0]["value_mean"] == start
    assert all(1 <= v["value_mean"] <= (settings[1] if run["parameter"] == "K" else 10_000) for v in run["value_rows"])
    # the figure: every fixed curve, the best one starred (by the simulated mean), the schedule thick
    best = min(range(len(rows)), key=lambda i: (rows[i]["time_to_target"], i))
    names = [t.name for t in comp["figure"].data]
    starred = [n for n in names if n.startswith("simulated mean:") and n.endswith(" ★")]
    if math.isfinite(rows[best]["time_to_target"]):
        assert starred == [f"simulated mean: {rows[best]['label']} ★"]
        assert comp["value_figure"].data[-1].name == f"best fixed {run['parameter']} = {rows[best]['x']}"
    else:
        assert starred == []
    thick = [t.name for t in comp["figure"].data if t.name.startswith("simulated mean:") and t.line.width == 4.0]
    assert thick == [f"simulated mean: {run['label']}"]
    assert len([n for n in names if n.startswith("simulated mean:")]) == len(rows) + 1
    check_sentence(rows, run, eps, settings[4])


def test_the_table_stars_the_best_fixed_value_and_shows_each_band():
    rows = [fixed_row(1, INF, INF, INF), fixed_row(4, 30.0, 28.0, 33.5), fixed_row(8, 40.0, 36.0, INF)]
    table = views.schedule_table(rows, 1, sched(20.0, 18.0, 22.0), "K")
    assert [r["run"] for r in table] == ["K = 1", "K = 4", "K = 8", "schedule: k-sync, adasync(K0=2, period=10)"]
    assert [r["best"] for r in table] == ["", "★", "", ""]
    assert [r["95% band of the time to ε"] for r in table] == ["[never, never]", "[28, 33.5]", "[36, never]",
                                                              "[18, 22]"]
    assert [r["time to ε (simulated mean)"] for r in table] == ["never", 30.0, 40.0, 20.0]


def test_every_schedule_choice_makes_a_spec_its_scheme_takes():
    """Each choice of the schedule control (k-sync's and k-async's AdaSync, local SGD's AdaComm)
    names a scheme whose class schedules the parameter the choice sweeps, with a spec it accepts."""
    from distsgd.schedules import check_schedule
    from distsgd.schemes import scheme_for
    from distsgd.ui import controls, sidebar

    assert set(sidebar.SCHEDULED) == set(controls.CONTROLS["schedule"].options) - {"off"}
    for axis, name, key, rule in sidebar.SCHEDULED.values():
        scheme = scheme_for(name, 8, 2, 2)
        assert check_schedule(f"{rule}({key}=2, period=5)", scheme).parameter == axis == type(scheme).schedulable

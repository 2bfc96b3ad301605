"""One record per result (distsgd.records): every surface carries the Monte Carlo note where its
numbers are, and the heavy-tail preset's runtime page says it next to the chart, in English and
Chinese (issue 21).  Which schemes must carry the note is worked out here from the tail: with
Pareto(α) job times, P(X > x) = (x_m/x)^α, a statistic that needs j jobs to be long has a finite
variance iff j·α > 2; sync needs one (the largest of m), K-sync of m needs m − K + 1, and the
asynchronous schemes' long-run time per update is a renewal mean whose batch means have the
variance of X itself (j = 1)."""
from __future__ import annotations

import contextlib
import io
import json

import pytest

import distsgd
from distsgd import curves, make_scheme, parse_delay
from distsgd.cli import main
from distsgd.error import Problem
from distsgd.reasons import Phrase
from distsgd.records import error_curve, note_parts, runtime_point, share_budget
from distsgd.traces import trace_from_times
from distsgd.whatif import what_if

ALPHA, M, K = 1.5, 20, 10  # the "heavy-tailed stragglers" preset (distsgd/ui/presets.py)
HEAVY = parse_delay(f"pareto(xm=1, alpha={ALPHA})")


def _jobs(name: str) -> int:
    return M - K + 1 if name == "k-sync" else 1


#: the schemes whose simulated E[T] has an infinite variance here (j·α ≤ 2), and one whose has not
NOTED = [n for n in ("sync", "k-sync", "async", "k-batch-async") if _jobs(n) * ALPHA <= 2]
assert NOTED == ["sync", "async", "k-batch-async"]


def _cli(*argv: str) -> dict:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(list(argv)) == 0
    return json.loads(buf.getvalue())


@pytest.mark.parametrize("name", ["sync", "k-sync", "async", "k-batch-async"])
def test_every_surface_carries_the_note_exactly_where_the_variance_is_infinite(name: str) -> None:
    scheme = make_scheme(name, M, K=K if name != "sync" and name != "async" else None)
    point = runtime_point(scheme, HEAVY, 2000, 1)
    noted = name in NOTED
    assert bool(point.note) == noted
    if noted:
        assert "infinite" in point.note and f"α = {ALPHA:g}" in point.note
    views = {"json": point.as_json()["monte_carlo"].get("note"), "row": point.as_row().get("mc_note"),
             "columns": point.as_columns().get("mc_note")}
    assert views == dict.fromkeys(views, point.note or None)
    # the sentences travel with the text (a results file's JSON column included)
    parts = note_parts(point.as_columns()["mc_note_parts"]) if noted else ()
    assert "".join(map(str, parts or ())) == point.note


def test_cli_chart_rows_sweep_and_what_if_all_say_it() -> None:
    out = _cli("runtime", "--scheme", "async", "--m", str(M), "--delay", f"pareto(xm=1, alpha={ALPHA})",
               "--iterations", "2000", "--seed", "1", "--json")
    assert "Var[X] is infinite" in out["monte_carlo"]["note"]
    rows = curves.runtime_vs_K(["sync", "k-sync", "async", "k-batch-async"], M, HEAVY, [K], budget=1e8, seed=1)
    simulated = {r["scheme"] for r in rows if "mc_mean" in r}
    assert "sync" in simulated  # (the renewal schemes' warm-up on this tail may exceed a chart's budget)
    assert {r["scheme"] for r in rows if r.get("mc_note")} == set(NOTED) & simulated
    assert all(isinstance(p, Phrase) for r in rows if r.get("mc_note") for p in r["mc_note_parts"])
    df = distsgd.sweep({"seed": 1, "base": {"delay": f"pareto(xm=1, alpha={ALPHA})", "m": M, "K": K,
                                            "iterations": 1000},
                        "grid": {"scheme": ["sync", "k-sync"]}, "compute": {"runtime": True}},
                       local_workers=0, yes=True)
    assert df.set_index("scheme")["mc_note"].notna().to_dict() == {"sync": True, "k-sync": False}
    trace = trace_from_times([[1.0, 1.2, 0.9, 1.1]] * 4)
    rows, _ = what_if(trace, ["sync", "k-sync"], 2, 1, fit=HEAVY, seed=1, iterations=1000)
    fit = {r["scheme"]: r for r in rows if r["reading"] == "i.i.d. fit"}
    assert fit["sync"].get("mc_note") and not fit["k-sync"].get("mc_note")  # K = 2 of 4: 3 jobs, 4.5 > 2


def test_the_budget_is_shared_cheapest_first_and_never_exceeded() -> None:
    from distsgd.montecarlo import simulation_cost
    delay = parse_delay("exp(rate=1)")
    points = [(make_scheme("sync", 4), delay), (make_scheme("k-async", 64, K=8), delay),
              (make_scheme("async", 16), delay)]
    budget = 2e7
    runs = share_budget(points, budget, 20_000)
    spent = sum(simulation_cost(s, n, src) for (s, src), n in zip(points, runs, strict=True) if n)
    assert spent <= budget
    assert runs[0] == 20_000  # the cheap point is not starved by the dear one
    assert all(n == 0 or n >= 300 for n in runs)


@pytest.mark.parametrize("rows", ["error_rows", "target_rows"])
def test_a_charts_time_axis_budget_is_shared_by_its_schemes(rows: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # k-async's E[T] is only bounded, so each scheme's time axis is a Monte Carlo run
    asked: list[float] = []
    real = curves.runtime_for_time_axis

    def spy(s, src, seed, cost):  # type: ignore[no-untyped-def]
        asked.append(cost)
        return real(s, src, seed, cost)

    monkeypatch.setattr(curves, "runtime_for_time_axis", spy)
    schemes = [make_scheme("k-async", 8, K=k) for k in (2, 3, 4)]
    delay, budget = parse_delay("exp(rate=1, shift=0.5)"), 3e6
    if rows == "error_rows":
        curves.error_rows(schemes, delay, Problem(), 2.0, 5, 4, 1, axis_cost=budget)
    else:
        curves.target_rows(schemes, delay, Problem(), 0.5, axis_cost=budget)
    assert len(asked) == 3 and sum(asked) <= budget * (1 + 1e-12)
@pytest.mark.parametrize("lang, said, not_said", [
    ("en", "Var[T] is infinite (tail index α = 1.5 ≤ 2)", "为无穷大"),
    ("zh", "Var[T] 为无穷大（尾指数 α = 1.5 ≤ 2）", "is infinite"),
])
def test_heavy_tail_preset_runtime_page_states_the_caveat_next_to_the_chart(lang: str, said: str,
                                                                             not_said: str) -> None:
    from test_app_pages import assert_clean, fresh, shown
    at = fresh({"lang": lang})
    at.sidebar.selectbox(key="preset").set_value("heavy-tailed stragglers").run()
    at.switch_page("pages/runtime.py").run()
    assert_clean(at)
    warnings = [shown(w) for w in at.warning]
    caveats = [w for w in warnings if said in w]
    assert caveats, warnings
    assert not any(not_said in w for w in warnings)
    # named: sync at every K, and K-sync only at K = m (the one point where m − K + 1 jobs, α·1 ≤ 2)
    about = caveats[0].split(("：" if lang == "zh" else ": "), 1)[0]
    assert about.split("，" if lang == "zh" else ", ", 1)[1].split("; ") == ["sync", f"k-sync (m={M}, K={M})"], about


@pytest.mark.parametrize("cell", [
    None, 7, "not json", "{}", '[{"reason": "no_such_code", "fields": {}}]',
    '[{"reason": "mc_power", "fields": {}}]',  # a field missing
    '[{"reason": "out_of_domain", "fields": {"range": "x", "value": 1}}]',  # a refusal, not a note
    '[{"reason": "mc_power", "fields": {"alpha": "' + "9" * 5000 + '"}}]',  # over the length cap
])
def test_a_results_files_note_cell_is_read_as_phrases_only_when_it_is_the_librarys(cell: object) -> None:
    assert note_parts(cell) is None


def test_a_note_cell_the_library_wrote_reads_back() -> None:
    point = runtime_point(make_scheme("sync", M), HEAVY, 500, 1)
    assert note_parts(point.as_columns()["mc_note_parts"]) == point.monte_carlo.note_parts


def test_an_error_curves_rows_are_its_arrays_column_by_column() -> None:
    """ErrorCurve.as_rows (every chart's and CSV's rows): one row per grid time, each column the
    array it names at that time, the scheme by its label."""
    scheme = make_scheme("k-sync", 4, K=2)
    curve = error_curve(scheme, parse_delay("exp(rate=1)"), Problem(), 4.0, 6, 40, 3, model_paths=50)
    rows, sim = curve.as_rows(), curve.simulated
    assert [r["time"] for r in rows] == sim.time.tolist() and {r["scheme"] for r in rows} == {scheme.label}
    assert curve.bound is not None and curve.model is not None
    for column, values in (("simulated_mean", sim.mean), ("simulated_low", sim.ci95_low),
                           ("simulated_high", sim.ci95_high), ("bound", curve.bound.values),
                           ("model", curve.model.mean), ("model_stderr", curve.model.stderr)):
        assert [r[column] for r in rows] == [float(v) for v in values], column
    assert all(type(r["simulated_mean"]) is float for r in rows)  # JSON- and Parquet-ready

"""distsgd.whatif: E[T] and time to ε of each scheme under five readings of a trace (issue 11),
against values the test computes from the trace's numbers, and the sentence the page states."""

from __future__ import annotations

import math

import numpy as np
import pytest

from distsgd import make_cluster, make_scheme, parse_delay, simulate_runtime
from distsgd.error import Problem
from distsgd.params import ParameterError
from distsgd.traces import trace_from_times
from distsgd.ui import claims
from distsgd.whatif import READINGS, what_if

PROBLEM = Problem(eta=0.05, L=2.0, mu=0.5, sigma2=1.0, b=1, f0=1.0, dim=10)
EPS = 0.05


def _trace(m: int = 4, n: int = 200, seed: int = 3, slow: float = 3.0) -> np.ndarray:
    """m workers × n steps of uniform(0.5, 1.5), the last worker ``slow`` times slower."""
    t = np.random.default_rng(seed).uniform(0.5, 1.5, (m, n))
    t[-1] *= slow
    return t


def _rows(times: np.ndarray, schemes=("sync", "async"), **kw):
    trace = trace_from_times(times)
    rows, skipped = what_if(trace, list(schemes), 2, 1, stragglers=trace.stragglers(), seed=1,
                            problem=PROBLEM, eps=EPS, **kw)
    return {(r["reading"], r["scheme"]): r for r in rows}, skipped, trace


def _sync_iterations(K: int) -> float:
    """J(ε) of the fresh-gradient bound, written out: F = ηLσ²/(2μbK), rate 1 − ημ."""
    p = PROBLEM
    floor = p.eta * p.L * p.sigma2 / (2 * p.mu * p.b * K)
    return math.log((EPS - floor) / (p.f0 - floor)) / math.log(1 - p.eta * p.mu)


def test_each_reading_has_the_trace_s_own_expected_runtime() -> None:
    times = _trace()
    rows, skipped, trace = _rows(times, fit=parse_delay("exp(rate=1)"))
    assert skipped == [] and trace.stragglers() == ["4"]
    # sync replay: the mean over steps of the slowest worker's time
    assert rows["replay", "sync"]["analytic"] == pytest.approx(times.max(axis=0).mean(), rel=1e-12)
    # without the straggler: the max of the other three
    assert rows["stragglers dropped", "sync"]["analytic"] == pytest.approx(times[:-1].max(axis=0).mean(), rel=1e-12)
    assert rows["stragglers dropped", "sync"]["m"] == 3
    # backup workers: sync becomes K-sync waiting for the first m − 1 = 3: the 3rd smallest of each step
    backup = rows["backup workers", "k-sync"]
    assert backup["K"] == 3 and backup["analytic"] == pytest.approx(np.sort(times, axis=0)[2].mean(), rel=1e-12)
    # the i.i.d. fit: four i.i.d. exp(1) workers, E[max] = H_4
    assert rows["i.i.d. fit", "sync"]["analytic"] == pytest.approx(1 + 1 / 2 + 1 / 3 + 1 / 4, rel=1e-9)
    # per-worker laws: E[max_i X_i] with X_i uniform on worker i's own times, by enumeration of the CDF
    grid = np.unique(times)
    cdf = np.prod([np.searchsorted(np.sort(row), grid, side="right") / row.size for row in times], axis=0)
    expected = float(np.sum(grid * np.diff(np.concatenate([[0.0], cdf]))))
    assert rows["per-worker laws", "sync"]["analytic"] == pytest.approx(expected, rel=1e-9)
    # Monte Carlo agrees with each value it sits beside (4 half-widths)
    for r in rows.values():
        if r.get("mc_mean") is not None and r["kind"] in ("exact", "numerical"):
            half = (r["mc_high"] - r["mc_low"]) / 2
            assert abs(r["mc_mean"] - r["analytic"]) <= 4 * half + 1e-12, r


def test_time_to_target_is_the_bound_s_iterations_times_each_reading_s_runtime() -> None:
    rows, _, _ = _rows(_trace())
    J = _sync_iterations(K=4)
    for reading in ("replay", "per-worker laws", "i.i.d. fit"):
        r = rows[reading, "sync"]
        assert r["bound_note"] == "bound"
        assert r["bound_time_to_target"] == pytest.approx(J * r["analytic"], rel=1e-9)
    dropped = rows["stragglers dropped", "sync"]  # three workers: three gradients per update
    assert dropped["bound_time_to_target"] == pytest.approx(_sync_iterations(K=3) * dropped["analytic"], rel=1e-9)
    # async: floor ηLσ²/(2μγ'b) with γ' = 1 − γ + p₀/2 ≤ 1 is ≥ 0.1 > ε here: never
    a = rows["replay", "async"]
    assert math.isinf(a["bound_time_to_target"]) and a["bound_note"] == "bound (ε is below its floor)"
    # above the floor: J uses p₀ measured by the run (fresh fraction), so it exists and is finite
    trace = trace_from_times(_trace())
    r = what_if(trace, ["async"], 2, 1, seed=1, problem=PROBLEM, eps=0.5, gamma=0.5)[0][0]
    other = simulate_runtime(make_scheme("async", 4), make_cluster(trace=trace, trace_mode="replay"), 20_000, seed=9)
    assert r["p0"] == pytest.approx(other.fresh_fraction, abs=0.03)  # measured, not assumed
    p, gp = PROBLEM, 1 - 0.5 + r["p0"] / 2
    floor = p.eta * p.L * p.sigma2 / (2 * p.mu * gp * p.b)
    J = math.log((0.5 - floor) / (p.f0 - floor)) / math.log(1 - p.eta * p.mu * gp)
    runtime = r["analytic"] if r["kind"] in ("exact", "numerical") else r["mc_mean"]
    assert r["bound_note"] == "bound" and r["bound_time_to_target"] == pytest.approx(J * runtime, rel=1e-9)


def test_no_problem_no_target_column_and_an_unreachable_target_is_infinite() -> None:
    trace = trace_from_times(_trace())
    rows, _ = what_if(trace, ["sync"], 2, 1, seed=1)
    assert all("bound_time_to_target" not in r for r in rows)
    rows, _ = what_if(trace, ["sync"], 2, 1, seed=1, problem=PROBLEM, eps=1e-6)  # below the floor
    assert all(math.isinf(r["bound_time_to_target"]) for r in rows)


def test_a_trace_without_stragglers_skips_the_last_two_readings_with_the_reason() -> None:
    rows, skipped, trace = _rows(_trace(slow=1.0))
    assert trace.stragglers() == []
    assert skipped == [{"reading": r, "why": "no straggler in this trace"} for r in READINGS[3:]]
    assert {k[0] for k in rows} == set(READINGS[:3])


def test_a_column_of_times_is_refused() -> None:
    from distsgd.traces import load_trace
    with pytest.raises(ParameterError, match="trace"):
        what_if(load_trace(b"1.0\n2.0\n3.0\n"), ["sync"], 2, 1)


# -- the page's sentence ------------------------------------------------------------------------

def _row(reading: str, value: float, scheme: str = "sync") -> dict:
    return {"reading": reading, "scheme": scheme, "label": scheme, "analytic": value, "kind": "exact"}


def test_the_sentence_says_how_wrong_the_iid_answer_is_only_when_it_is() -> None:
    rows = [_row("replay", 2.0), _row("i.i.d. fit", 1.5), _row("stragglers dropped", 1.2),
            {**_row("backup workers", 1.3), "scheme": "k-sync"}]
    text = claims.whatif(rows)
    assert "25% lower" in text and "40% lower" in text and "35% lower" in text
    same = claims.whatif([_row("replay", 2.0),
                          {"reading": "i.i.d. fit", "scheme": "sync", "label": "sync", "analytic": None,
                           "kind": "approximation", "mc_mean": 2.01, "mc_low": 1.9, "mc_high": 2.1}])
    assert "gets this cluster right" in same and "lower" not in same and "higher" not in same
    assert "higher" in claims.whatif([_row("replay", 1.0), _row("i.i.d. fit", 1.5)])


def test_the_monte_carlo_budget_is_shared_cheapest_first_and_never_exceeded() -> None:
    """A replay's run length is fixed by its trace: with equal shares of 2e8 over nine points
    (2.2e7 each) async's replay (≈3.7e7) would be refused although the sync points use little."""
    from distsgd.examples import example_trace
    from distsgd.montecarlo import simulation_cost

    trace = example_trace("persistent-slow")
    budget = 2e8
    rows, _ = what_if(trace, ["sync", "async"], 2, 1, stragglers=trace.stragglers(), seed=1, budget=budget)
    sources = {"replay": make_cluster(trace=trace, trace_mode="replay"),
               "per-worker laws": make_cluster(trace=trace, trace_mode="per-worker"),
               "i.i.d. fit": make_cluster(trace=trace, trace_mode="pooled"),
               "backup workers": make_cluster(trace=trace, trace_mode="replay")}
    assert all("mc_mean" in r for r in rows), [r for r in rows if "mc_mean" not in r]
    spent = sum(simulation_cost(make_scheme(r["scheme"], r["m"], **({"K": r["K"]} if r["K"] else {})),
                                r["mc_iterations"], sources[r["reading"]])
                for r in rows if r["reading"] in sources)
    assert 0 < spent <= budget
    few, _ = what_if(trace, ["sync", "async"], 2, 1, stragglers=trace.stragglers(), seed=1, budget=1e7)
    assert any("mc_skipped" in r for r in few) and any("mc_mean" in r for r in few)

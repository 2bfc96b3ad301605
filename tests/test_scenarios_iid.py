"""Analytic E[T] against the table's own expectations and against Monte Carlo (DESIGN §6).

Two tests per row of tests/scenarios.py:

* ``test_analytic_kind_and_value`` — the kind must be the one :func:`scenarios.expected_kind`
  derives from DESIGN §2 (so an analytic path that raises, or quietly returns
  ``unavailable``, fails); where the value is known independently (:func:`scenarios.reference`:
  closed forms, scipy quadrature of the order-statistic integral, the Gamma maximum) exact
  values agree to 1e-9 and numerical ones to 1e-6 plus their own error estimate; a k-async
  bound is E[X_{K:m}]; local SGD and k-batch-sync values lie within pathwise bounds.
* ``test_monte_carlo_agrees_with_analytic`` — a fixed-seed simulation (seed from the row id):
  exact and numerical values within 4 confidence half-widths (plus the value's error); an
  upper bound from both sides: it holds (≥ the simulated mean − 4 half-widths) and is not
  vacuous (≤ BOUND_FACTOR × (the simulated mean + 4 half-widths)).  Where the simulated
  statistic has an infinite variance the interval means nothing: the i.i.d. schemes are then
  checked one-sidedly through the truncated mean E[min(T, c)] ≤ E[T] (bounded, so its interval
  is valid), and the long-run schemes are skipped with that reason (their values are exact
  closed forms, checked by the first test).

The rows at m = 1000 are marked ``slow`` (they run in ``make test``).
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

from distsgd import make_scheme, parse_delay
from distsgd.analytic import expected_runtime
from distsgd.montecarlo import simulate_runtime
from scenarios import (
    CLOSED_FORM_FAMILIES,
    LAWS,
    Scenario,
    expected_kind,
    law_mean,
    local_sgd_bounds,
    os_mean,
    reference,
    scenarios,
    statistic_has_finite_variance,
    translatable,
)

Z95 = 1.959963984540054

#: An upper bound must be at most this many times the simulated mean (+ 4 half-widths).
#: The table's bounds are the k-async bound E[X_{K:m}] for NLU laws at K = m/2; their ratios
#: to the simulated k-async mean, measured on every such row with the table's seeds and
#: iterations, are 1.22–1.27 (Δ + Exp), 1.47–1.56 (truncated normal, shifted or not),
#: 1.35–1.36 (Weibull k = 1.5, Δ = 0.2), 1.50–1.67 (uniform, shifted or not) and 1.31–1.79
#: (the shifted trace; 1.79 at m = 4, K = 2 is the largest).  2.25 leaves 25 % over the worst;
#: a bound 10× too loose is ≥ 12× the truth and fails everywhere (any looseness factor ≥ 1.85
#: fails on the Δ + Exp rows).  The bound is not tight in general: for small K/m with a shift
#: it can be 10–20× the truth (U(0.8, 1.8) at m = 64, K = 2: 20×), so such a row would need
#: its own factor.
BOUND_FACTOR = 2.25

#: Rows that fail because of the library, not the test (xfail, strict: when the library is
#: fixed the row passes, the xfail turns into a failure, and the entry must be removed here).
_KBS_HEAVY = ("the k-batch-sync lattice for Pareto α = 0.8 (m·α = 3.2) stops at an error estimate of "
              "1e-5–5e-5 relative and reports 'approximation' (the value agrees with Monte Carlo); "
              "DESIGN §2 asks 'numerical' (≤ 1e-6)")
LIBRARY_BUGS: dict[str, str] = {
    "k-batch-sync-m4-K2-pareto-infmean": _KBS_HEAVY,
    "k-batch-sync-m4-K4-pareto-infmean": _KBS_HEAVY,
    "k-batch-sync-m4-K9-pareto-infmean": _KBS_HEAVY,
}

EXACT_RTOL = 1e-9
NUMERICAL_RTOL = 1e-6


def _params() -> list:
    out = []
    for sc in scenarios():
        marks = [pytest.mark.slow] if sc.slow else []
        if sc.id in LIBRARY_BUGS:
            marks.append(pytest.mark.xfail(strict=True, reason="LIBRARY BUG: " + LIBRARY_BUGS[sc.id]))
        out.append(pytest.param(sc, id=sc.id, marks=marks))
    return out


ROWS = _params()


def _build(sc: Scenario):
    scheme = make_scheme(sc.scheme, sc.m, K=sc.K, H=sc.H, comm_delay=sc.D if sc.H is not None else 0.0)
    return scheme, parse_delay(sc.delay)


def _analytic(sc: Scenario):
    scheme, delay = _build(sc)
    est = expected_runtime(scheme, delay)
    translatable(est.method)
    kind = expected_kind(sc)
    assert est.kind == kind, f"{sc.id}: expected kind {kind!r}, got {est.kind!r} ({est.method})"
    assert (est.value is None) == (kind in ("infinite", "unavailable")), est
    return scheme, delay, est


@pytest.mark.parametrize("sc", ROWS)
def test_analytic_kind_and_value(sc: Scenario) -> None:
    _, _, est = _analytic(sc)
    if est.value is None:
        return
    v, err = est.value, est.error or 0.0
    assert math.isfinite(v) and v > 0
    ref = reference(sc)
    if ref is not None:
        if est.kind == "exact":
            tol = EXACT_RTOL * abs(ref)
        elif est.kind == "numerical":
            assert est.error is not None and est.error <= NUMERICAL_RTOL * abs(v), est
            tol = NUMERICAL_RTOL * abs(ref) + err
        else:  # the k-async bound is E[X_{K:m}]
            closed = sc.law.family in CLOSED_FORM_FAMILIES
            tol = (EXACT_RTOL if closed else NUMERICAL_RTOL) * abs(ref) + err
        assert abs(v - ref) <= tol, f"{sc.id}: {v!r} vs independent {ref!r} (tolerance {tol:.3g})"
    if sc.scheme == "local-sgd" and sc.H > 1:
        lo, hi = local_sgd_bounds(sc)
        assert lo * (1 - 1e-9) - err <= v <= hi * (1 + 1e-9) + err, (lo, v, hi)
    if sc.scheme == "k-batch-sync" and sc.K > 1:
        # pathwise: the K-th point overall comes no later than the K-th of the m first
        # completions; Wald: (K + m)·E[X] ≥ m·E[T] (every worker's next completion after T)
        if sc.K <= sc.m:
            assert v <= os_mean(sc.law, sc.K, sc.m) * (1 + 1e-9) + err
        mean = law_mean(sc.law)
        if math.isfinite(mean):
            assert v <= (sc.K + sc.m) * mean / sc.m * (1 + 1e-9) + err


@pytest.mark.parametrize("sc", ROWS)
def test_monte_carlo_agrees_with_analytic(sc: Scenario) -> None:
    scheme, delay, est = _analytic(sc)
    if est.kind == "infinite":
        pytest.skip("E[T] = ∞: a simulated mean does not converge")
    if est.kind == "unavailable":
        pytest.skip("no analytic value to compare (unavailable)")
    v, err = est.value, est.error or 0.0
    seed = zlib.crc32(sc.id.encode())  # fixed per row, different across rows
    if not statistic_has_finite_variance(sc):
        if scheme.fresh:
            _truncated_check(sc, scheme, delay, v, err, seed)
            return
        pytest.skip("Var[X] = ∞: a batch-means interval of the long run is meaningless "
                    "(the exact value is checked against its closed form)")
    mc = simulate_runtime(scheme, delay, sc.iterations, seed=seed, keep_times=False)
    hw = mc.half_width
    assert math.isfinite(hw) and hw > 0, mc
    slack = 4 * hw + err
    what = f"{sc.id}: analytic {v!r} ({est.kind}), simulated {mc.mean!r} ± {hw:.3g}"
    if est.kind in ("exact", "numerical"):
        assert abs(v - mc.mean) <= slack, what
    elif est.kind == "upper_bound":
        assert v >= mc.mean - slack, "the bound does not hold: " + what
        assert v <= BOUND_FACTOR * (mc.mean + slack), "the bound is vacuous: " + what
    else:  # pragma: no cover - expected_kind never asks for another kind
        raise AssertionError(what)


def _truncated_check(sc, scheme, delay, v, err, seed) -> None:
    """E[min(T, c)] ≤ E[T]: min(T, c) is bounded, so its i.i.d. interval is valid.  c is fixed
    before sampling (ten times the analytic value)."""
    mc = simulate_runtime(scheme, delay, sc.iterations, seed=seed, keep_times=True)
    t = np.asarray(mc.times, float)
    assert t.size == sc.iterations
    x = np.minimum(t, 10.0 * v)
    hw = Z95 * float(x.std(ddof=1)) / math.sqrt(x.size)
    assert v >= float(x.mean()) - 4 * hw - err, (sc.id, v, float(x.mean()), hw)


def test_table_covers_every_scheme_family_and_size() -> None:
    scs = scenarios()
    assert {s.scheme for s in scs} == {"sync", "k-sync", "k-batch-sync", "async", "k-async",
                                       "k-batch-async", "local-sgd"}
    assert {s.law.family for s in scs} == {"exp", "pareto", "lognormal", "normal", "weibull", "uniform",
                                           "empirical"}
    # every family with and without a shift, and Pareto with finite variance, infinite
    # variance (the dashboard's heavy-tailed preset, α = 1.5) and infinite mean
    for fam in {law.family for law in LAWS.values()}:
        assert {law.shift > 0 for law in LAWS.values() if law.family == fam} == {True, False}, fam
    assert {law["alpha"] for law in LAWS.values() if law.family == "pareto"} >= {2.5, 1.5, 0.8}
    assert max(s.m for s in scs) == 1000 and min(s.m for s in scs) == 4
    assert any(s.K is not None and s.K > s.m for s in scs)
    assert any(s.scheme == "local-sgd" and s.D > 0 and s.H > 1 for s in scs)
    assert len({s.id for s in scs}) == len(scs)
    # every kind the model knows for i.i.d. workers occurs, so each is exercised
    kinds = {expected_kind(s) for s in scs}
    assert kinds == {"exact", "numerical", "upper_bound", "infinite", "unavailable"}

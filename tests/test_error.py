"""Error model: simulated SGD against independently computed expectations, bounds, staleness."""

import math
import types

import numpy as np
import pytest

from distsgd import ParameterError, make_scheme, parse_delay
from distsgd.error import (
    LearningRate,
    Problem,
    bound_time_to_target,
    bound_vs_time,
    error_bound,
    exact_error,
    simulate_error,
    simulated_time_to_target,
    time_to_target,
)

P = Problem(eta=0.1, L=2.0, mu=0.5, sigma2=1.0, b=1, f0=1.0, dim=10)


def recursion_error(problem, K, J):
    """E f(w_J) by iterating the per-coordinate second-moment recursion (written out here)."""
    h = np.linspace(problem.mu, problem.L, problem.dim) if problem.dim > 1 else np.array([problem.mu])
    s = np.full(problem.dim, 2 * problem.f0 / h.sum())  # w0² per coordinate
    out = [0.5 * (h * s).sum()]
    for _ in range(J):
        s = (1 - problem.eta * h) ** 2 * s + problem.eta**2 * problem.sigma2 / (problem.b * problem.dim * K)
        out.append(0.5 * (h * s).sum())
    return np.array(out)


def brute_iteration_times(delay, m, K, n, paths, rng):
    """K-th smallest of m fresh draws per iteration, by sorting (no order-statistic trick)."""
    x = np.sort(delay.sample(rng, (paths, n, m)), axis=2)[:, :, K - 1]
    return np.cumsum(x, axis=1)


@pytest.mark.parametrize("name, K, spec", [
    ("sync", None, "exp(rate=1)"), ("k-sync", 3, "exp(rate=1)"),
    ("sync", None, "pareto(xm=0.5, alpha=3)"), ("k-sync", 2, "lognormal(mu=0, sigma=1)"),
    ("k-sync", 5, "uniform(low=0.5, high=1.5)"),
])
def test_simulated_mean_matches_the_exact_expectation_over_random_iteration_counts(name, K, spec):
    m = 6
    scheme = make_scheme(name, m, K=K)
    Kg = scheme.grads_per_update
    delay = parse_delay(spec)
    T = 15.0
    sim = simulate_error(scheme, delay, P, T, points=6, replicas=3000, seed=7)
    rng = np.random.default_rng(99)
    times = brute_iteration_times(delay, m, Kg, 200, 4000, rng)
    assert times[:, -1].min() > T
    counts = (times[:, :, None] <= sim.time[None, None, :]).sum(axis=1)  # (paths, points)
    e = recursion_error(P, Kg, int(counts.max()))[counts]
    expect, se_expect = e.mean(axis=0), e.std(axis=0, ddof=1) / math.sqrt(e.shape[0])
    se_sim = (sim.ci95_high - sim.mean) / 1.96
    tol = 4 * np.sqrt(se_sim**2 + se_expect**2) + 1e-12
    assert np.all(np.abs(sim.mean - expect) <= tol), (sim.mean, expect, tol)


@pytest.mark.parametrize("name, K", [("sync", None), ("k-sync", 2), ("k-batch-sync", 9)])
@pytest.mark.parametrize("spec", ["exp(rate=1)", "weibull(shape=0.8, scale=1)"])
def test_bound_lies_above_the_simulated_mean_for_fresh_schemes(name, K, spec):
    scheme = make_scheme(name, 6, K=K)
    delay = parse_delay(spec)
    sim = simulate_error(scheme, delay, P, 30.0, points=31, replicas=1000, seed=3)
    b = bound_vs_time(scheme, delay, P, sim.time)
    assert b.kind == "upper_bound" and P.eta <= 1 / P.L
    assert np.all(b.values >= sim.mean - 4 * (sim.ci95_high - sim.mean) / 1.96)
    # the exact model curve never exceeds the bound after the same number of iterations
    J = np.arange(0, 400)
    assert np.all(error_bound(scheme, P, J).values >= exact_error(scheme, P, J) - 1e-12)


def test_bound_refuses_when_its_step_size_condition_fails():
    big = Problem(eta=0.8, L=2.0, mu=0.5, sigma2=1.0, b=1, f0=1.0, dim=4)
    c = error_bound(make_scheme("sync", 4), big, np.arange(10))
    assert c.values is None and c.kind == "unavailable" and "1/L" in c.note
    mid = Problem(eta=0.2, L=2.0, mu=0.5, sigma2=1.0, b=1, f0=1.0, dim=4)
    c = error_bound(make_scheme("k-async", 4, K=2), mid, np.arange(10), gamma=0.5, p0=0.2)
    assert c.values is None and "1/(2L(1/K+1))" in c.note  # 0.2 > 1/(2·2·1.5) = 0.167
    assert error_bound(make_scheme("k-async", 4, K=2), P, np.arange(10), gamma=0.5, p0=0.2).values is not None
    small = Problem(eta=0.05, L=2.0, mu=0.5, sigma2=1.0, b=1, f0=1.0, dim=4)
    c = error_bound(make_scheme("async", 4), small, np.arange(10), gamma=1.0, p0=0.0)
    assert c.values is None and "γ'" in c.note
    ok = error_bound(make_scheme("async", 4), small, np.arange(10), gamma=0.5, p0=0.2)
    gp = 1 - 0.5 + 0.1
    assert ok.kind == "upper_bound"
    assert ok.floor == pytest.approx(0.05 * 2.0 * 1.0 / (2 * 0.5 * gp * 1 * 1))
    assert ok.values[3] == pytest.approx(ok.floor + (1 - 0.05 * 0.5 * gp) ** 3 * (1 - ok.floor))


def test_local_sgd_with_h1_and_no_communication_matches_sync():
    d = parse_delay("shifted-exp(rate=2, shift=0.1)")
    a = simulate_error(make_scheme("local-sgd", 5, H=1), d, P, 8.0, points=9, replicas=3000, seed=1)
    b = simulate_error(make_scheme("sync", 5), d, P, 8.0, points=9, replicas=3000, seed=2)
    se = np.hypot(a.ci95_high - a.mean, b.ci95_high - b.mean) / 1.96
    assert np.all(np.abs(a.mean - b.mean) <= 4 * se + 1e-12)
    J = np.arange(50)
    assert np.allclose(exact_error(make_scheme("local-sgd", 5, H=1), P, J),
                       exact_error(make_scheme("sync", 5), P, J))


def test_local_sgd_matches_a_per_worker_simulation():
    """Brute force: every worker takes H noisy steps on its own copy, then the m copies are averaged."""
    m, H, rounds, R = 4, 3, 12, 4000
    h = P.h
    rng = np.random.default_rng(5)
    w = np.broadcast_to(P.w0, (R, P.dim)).copy()
    sd = math.sqrt(P.sigma2 / (P.b * P.dim))
    for _ in range(rounds):
        local = np.repeat(w[:, None, :], m, axis=1)
        for _ in range(H):
            local = local - P.eta * (h * local + sd * rng.standard_normal(local.shape))
        w = local.mean(axis=1)
    brute = 0.5 * (h * w * w).sum(axis=1)
    # the library: a deterministic delay makes every round take exactly H time units
    scheme = make_scheme("local-sgd", m, H=H)
    sim = simulate_error(scheme, parse_delay("uniform(low=0.999999, high=1.000001)"), P,
                         rounds * H + 0.5, points=2, replicas=R, seed=6)
    se = math.hypot(brute.std() / math.sqrt(R), (sim.ci95_high[-1] - sim.mean[-1]) / 1.96)
    assert abs(sim.mean[-1] - brute.mean()) <= 4 * se
    assert exact_error(scheme, P, [rounds])[0] == pytest.approx(brute.mean(), abs=4 * brute.std() / math.sqrt(R))


def test_staleness_is_zero_for_fresh_and_positive_for_async():
    d = parse_delay("exp(rate=1)")
    for name, K in [("sync", None), ("k-sync", 2), ("k-batch-sync", 4), ("local-sgd", None)]:
        sim = simulate_error(make_scheme(name, 4, K=K, H=2 if name == "local-sgd" else None), d, P, 5.0,
                             points=3, replicas=20, seed=1)
        assert sim.staleness_mean is None
    for name, K in [("async", None), ("k-async", 2), ("k-batch-async", 3)]:
        sim = simulate_error(make_scheme(name, 4, K=K), d, P, 20.0, points=3, replicas=50, seed=1)
        assert sim.staleness_mean > 0 and 0 < sim.fresh_fraction < 1
        assert sim.staleness_counts.sum() > 0


def test_fresh_fraction_of_k_async_matches_theory_for_exponential_delays():
    """Memoryless delays: at every update all m workers are computing (the K pushers restart at
    once), so the next update's K pushers are a uniform K-subset of m and a gradient is fresh
    (pushed in the first update after its worker read) with probability K/m — except in the
    first update of a run, where all K are fresh.  Gradients of one run are dependent, so the
    standard error comes from G independent runs (batch means over seeds): with f_g fresh of
    c_g gradients in run g and the pooled fraction p, se = sqrt(Σ (f_g − p c_g)² / (G(G−1))) / c̄
    (the ratio estimator's)."""
    m, K, R, G = 8, 2, 10, 20
    scheme, delay = make_scheme("k-async", m, K=K), parse_delay("exp(rate=1)")
    fresh, count = np.empty(G), np.empty(G)
    for g in range(G):
        sim = simulate_error(scheme, delay, P, 400.0, points=3, replicas=R, seed=4 + g)
        count[g] = sim.staleness_counts.sum()
        fresh[g] = sim.fresh_fraction * count[g]
        assert sim.staleness_counts[0] == pytest.approx(fresh[g], rel=1e-12)  # fresh = staleness 0
    p = fresh.sum() / count.sum()
    se = math.sqrt(np.sum((fresh - p * count) ** 2) / (G * (G - 1))) / count.mean()
    # each replica's first update: K fresh gradients for sure; every later one: K·K/m expected
    expect = np.sum(R * K + (count - R * K) * K / m) / count.sum()
    assert abs(p - expect) <= 4 * se, (p, expect, se)
    assert se < 0.002  # the check has power: K/m = 0.25 is pinned to ±0.008


def _brute_async_sgd(problem, m, K, waits, T, delay, rng):
    """One run, event by event: worker i computes ∇f(w_read[i]) + ξ; the server applies every K."""
    h = problem.h
    sd = problem.noise_sd
    w = problem.w0.copy()
    read = [w.copy() for _ in range(m)]
    finish = delay.sample(rng, m)
    waiting = np.zeros(m, bool)
    buf = []
    err_t, err_v = [0.0], [problem.f0]
    while True:
        i = int(np.argmin(np.where(waiting, np.inf, finish)))
        t = finish[i]
        if t > T:
            break
        buf.append((i, h * read[i] + sd * rng.standard_normal(problem.dim)))
        if waits:
            waiting[i] = True
        else:
            read[i] = w.copy()
            finish[i] = t + delay.sample(rng)
        if len(buf) == K:
            w = w - problem.eta * np.mean([g for _, g in buf], axis=0)
            err_t.append(t)
            err_v.append(0.5 * (h * w * w).sum())
            if waits:  # the K pushers restart on the new parameters
                for j, _ in buf:
                    waiting[j] = False
                    finish[j] = t + delay.sample(rng)
                    read[j] = w.copy()
            else:  # only the pusher that triggered the update reads after it
                read[i] = w.copy()
            buf = []
    return np.array(err_t), np.array(err_v)


@pytest.mark.parametrize("name, K", [("async", None), ("k-async", 2), ("k-batch-async", 3)])
def test_async_sgd_matches_an_event_by_event_reference(name, K):
    """The vectorised SGD over the update trace vs a plain event loop that keeps each worker's
    read parameters; the mean error at several times must agree within the combined CI."""
    m, T, R = 4, 12.0, 600
    prob = Problem(eta=0.15, L=2.0, mu=0.5, sigma2=1.0, b=1, f0=1.0, dim=3)
    d = parse_delay("uniform(low=0.2, high=1.8)")
    scheme = make_scheme(name, m, K=K)
    grid = np.array([2.0, 5.0, 12.0])
    rng = np.random.default_rng(11)
    ref = np.empty((R, grid.size))
    for r in range(R):
        # async (K = 1) is the same process whether or not the pusher "waits" for its own update
        t, v = _brute_async_sgd(prob, m, scheme.grads_per_update, name == "k-async", T, d, rng)
        ref[r] = v[np.searchsorted(t, grid, side="right") - 1]
    sim = simulate_error(scheme, d, prob, T, points=25, replicas=R, seed=12)
    at = [np.flatnonzero(np.isclose(sim.time, g))[0] for g in grid]
    se = np.hypot(ref.std(axis=0, ddof=1) / math.sqrt(R), (sim.ci95_high[at] - sim.mean[at]) / 1.96)
    assert np.all(np.abs(sim.mean[at] - ref.mean(axis=0)) <= 4 * se), (sim.mean[at], ref.mean(axis=0), se)


def test_learning_rate_rules_change_the_asynchronous_floor():
    """With many workers, async's stale gradients raise the error floor; dividing η by the
    staleness lowers it (at the cost of a slower start)."""
    d = parse_delay("exp(rate=1)")
    s = make_scheme("async", 8)
    const = simulate_error(s, d, P, 40.0, points=5, replicas=400, seed=1)
    stale = simulate_error(s, d, P, 40.0, points=5, replicas=400, seed=1, lr=LearningRate("staleness"))
    adapt = simulate_error(s, d, P, 40.0, points=5, replicas=400, seed=1, lr=LearningRate("adaptive", C=0.005))
    assert stale.ci95_high[-1] < const.ci95_low[-1]
    assert adapt.ci95_high[-1] < const.ci95_low[-1]
    with pytest.raises(ParameterError, match="lr_rule"):
        LearningRate("bogus")


def test_time_to_target_from_bound_and_simulation():
    d = parse_delay("exp(rate=1)")
    s = make_scheme("sync", 4)
    b = bound_vs_time(s, d, P, np.linspace(0, 200, 20001))
    tt = bound_time_to_target(s, d, P, 0.1)
    assert 0 < tt.value < 200
    assert tt.value == pytest.approx(time_to_target(b.x, b.values, 0.1), abs=0.011)
    assert bound_time_to_target(s, d, P, b.floor * 0.99).value == math.inf
    assert bound_time_to_target(s, d, P, 2.0).value == 0.0
    sim = simulate_error(s, d, P, 200.0, points=2001, replicas=300, seed=2)
    st = simulated_time_to_target(sim, 0.1)
    assert st.low <= st.value <= st.high and st.value <= tt.value + 0.1


@pytest.mark.parametrize("kwargs, parameter", [
    ({"eta": 0}, "eta"), ({"eta": -1}, "eta"), ({"mu": 3.0, "L": 2.0}, "mu"), ({"sigma2": -1}, "sigma2"),
    ({"dim": 0}, "dim"), ({"b": 0}, "b"), ({"f0": 0}, "f0"), ({"L": float("nan")}, "L"),
])
def test_bad_problem_parameters(kwargs, parameter):
    with pytest.raises(ParameterError) as info:
        Problem(**kwargs)
    assert info.value.parameter == parameter


def test_bad_simulation_parameters():
    s, d = make_scheme("sync", 4), parse_delay("exp(rate=1)")
    for kw, name in [({"points": 1}, "points"), ({"replicas": 0}, "replicas"),
                     ({"replicas": 10**6}, "replicas"), ({"time": -1.0}, "time"),
                     ({"time": 1e9}, "time")]:
        args = {"time": 5.0, "points": 5, "replicas": 10, **kw}
        with pytest.raises(ParameterError) as info:
            simulate_error(s, d, P, **args)
        assert info.value.parameter == name
    with pytest.raises(ParameterError, match="infinite"):
        simulate_error(make_scheme("async", 4), parse_delay("pareto(xm=1, alpha=0.9)"), P, 5.0, 5, 10)


def test_measured_gamma_above_one_makes_the_bound_unavailable_not_an_error():
    small = Problem(eta=0.05, L=2.0, mu=0.5, sigma2=1.0, b=1, f0=1.0, dim=4)
    c = error_bound(make_scheme("async", 4), small, np.arange(10), gamma=1.06, p0=0.1)
    assert c.values is None and c.kind == "unavailable" and "γ = 1.06 > 1" in c.note


def test_target_rows_pick_the_k_with_the_earliest_bound_time():
    """Written out: t*(K) = E[T_K] · log((ε − F_K)/(F0 − F_K)) / log(1 − ημ), F_K = ηLσ²/(2μbK),
    E[T_K] = H_m − H_{m−K} for Exp(1); the sweep must return these and the argmin (inf where
    ε ≤ F_K)."""
    import math as _m

    from distsgd.curves import best_index, target_rows
    m, eps = 12, 0.03
    d = parse_delay("exp(rate=1)")
    schemes = [make_scheme("k-sync", m, K=k) for k in range(1, m + 1)]
    rows = target_rows(schemes, d, P, eps)  # replicas = 0: the bound only
    got = [types.SimpleNamespace(value=r["bound_time_to_target"]) for r in rows]
    best = best_index(rows, "bound_time_to_target")
    Hn = lambda n: sum(1 / i for i in range(1, n + 1))  # noqa: E731
    expect = []
    for k in range(1, m + 1):
        F = P.eta * P.L * P.sigma2 / (2 * P.mu * P.b * k)
        expect.append(_m.inf if eps <= F else
                      (Hn(m) - Hn(m - k)) * _m.log((eps - F) / (P.f0 - F)) / _m.log(1 - P.eta * P.mu))
    assert [g.value for g in got] == pytest.approx(expect, rel=1e-9)
    assert best == min((i for i in range(m) if _m.isfinite(expect[i])), key=expect.__getitem__)
    assert _m.isinf(got[0].value)  # K = 1: the floor 0.1 is above ε

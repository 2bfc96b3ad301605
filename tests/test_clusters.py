"""Clusters (issue 10, DESIGN §7): the kinds, their samplers, and E[T] of the schemes whose
workers start together, against independent references and Monte Carlo."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from distsgd import ParameterError, expected_runtime, make_cluster, make_scheme, parse_delay, simulate_runtime
from distsgd.clusters import IID, Markov, Static, parse_workers
from distsgd.orderstats import order_statistic_mean

F = parse_delay("shifted-exp(rate=1, shift=0.2)")
LAWS = ["shifted-exp(rate=2, shift=0.3)", "pareto(xm=1, alpha=2.5)", "lognormal(mu=0.2, sigma=0.7)",
        "normal(mean=1, std=0.5)", "weibull(shape=0.7, scale=2)", "uniform(low=0.5, high=2)"]


@pytest.mark.parametrize("spec", LAWS)
def test_scaled_law_is_s_times_x(spec: str) -> None:
    d, s = parse_delay(spec), 3.0
    x = np.array([0.1, 0.5, 1.0, 2.0, 5.0])
    np.testing.assert_allclose(d.scaled(s).cdf(s * x), d.cdf(x), rtol=1e-12, atol=1e-15)
    assert d.scaled(s).mean == pytest.approx(s * d.mean, rel=1e-12)
    assert type(d.scaled(s)) is type(d) and d.scaled(1.0) is d


@pytest.mark.parametrize("kwargs, name", [
    ({"m": 4, "delay": F, "slow": 5, "slowdown": 2}, "slow"),
    ({"m": 4, "delay": F, "slow": 1, "slowdown": 0.5}, "slowdown"),
    ({"m": 4, "delay": F, "slow": 1, "slow_fraction": 0.1, "slowdown": 2}, "slow_fraction"),
    ({"m": 4, "delay": F, "slow_fraction": 1.0, "slowdown": 2}, "slow_fraction"),
    ({"m": 4, "delay": F, "slow_fraction": 0.1, "persistence": 1.0, "slowdown": 2}, "persistence"),
    ({"m": 4, "delay": F, "persistence": 0.5}, "persistence"),
    ({"m": 4, "delay": F, "slowdown": 2}, "slowdown"),
    ({"m": 4, "delay": F, "slow": 1}, "slowdown"),
    ({"workers": "2*exp(rate=1)", "delay": F}, "delay"),
    ({"workers": "2*exp(rate=1) + x"}, "workers"),
    ({"workers": "2*nonsense(a=1)"}, "workers"),
    ({"workers": "2*exp(rate=1)", "m": 3}, "m"),
    ({"m": 4, "delay": parse_delay("exp(rate=1e-6)"), "slow": 1, "slowdown": 10}, "slowdown"),
])
def test_bad_combinations_name_the_parameter(kwargs: dict, name: str) -> None:
    with pytest.raises(ParameterError) as info:
        make_cluster(**kwargs)
    assert info.value.parameter == name, str(info.value)


def test_groups_parse_and_json() -> None:
    g = parse_workers("3*shifted-exp(rate=1e+1, shift=0.1) + 2*lognormal(mu=0, sigma=1)")
    assert g.m == 5 and [x.count for x in g.groups] == [3, 2]
    assert g.as_dict() == {"kind": "groups",
                           "workers": "3*shifted-exp(rate=10, shift=0.1) + 2*lognormal(mu=0, sigma=1)"}
    c = make_cluster(m=6, delay="exp(rate=1)", slow_fraction=0.25, persistence=0.9, slowdown=4)
    assert c.as_dict() == {"kind": "markov", "delay": "exp(rate=1)", "slow_fraction": 0.25,
                           "persistence": 0.9, "slowdown": 4.0}


def test_static_jobs_are_scaled_for_the_first_b_workers() -> None:
    c = Static(parse_delay("uniform(low=1, high=1.5)"), 5, 2, 3.0)
    x = c.jobs(np.random.default_rng(1), None, 7, 50)
    assert x.shape == (7, 5, 50)
    assert x[:, :2].min() >= 3.0 and x[:, 2:].max() <= 1.5


def test_markov_chain_has_the_stationary_fraction_and_the_persistence() -> None:
    """π of the mini-batches slow, lag-one correlation ρ of the state, also across two calls
    (the state carries over).  A nearly constant law makes the state visible in the time."""
    pi, rho = 0.2, 0.8
    c = Markov(parse_delay("uniform(low=1, high=1.001)"), 50, pi, rho, 2.0)
    rng = np.random.default_rng(7)
    state = c.start(rng, 100)
    a = c.jobs(rng, state, 100, 300) > 1.5
    b = c.jobs(rng, state, 100, 300) > 1.5
    s = np.concatenate([a, b], axis=2).astype(float)
    n = s.size
    # the mean of a stationary two-state chain: variance π(1−π)(1+ρ)/((1−ρ)n)
    assert abs(s.mean() - pi) <= 5 * math.sqrt(pi * (1 - pi) * (1 + rho) / ((1 - rho) * n))

    def lag1(x: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean((x - pi) * (y - pi)) / (pi * (1 - pi)))

    within = lag1(s[:, :, :-1], s[:, :, 1:])
    across = lag1(a[:, :, -1].astype(float), b[:, :, 0].astype(float))
    assert abs(within - rho) <= 0.02, within
    assert abs(across - rho) <= 5 * math.sqrt(1.0 / a[:, :, -1].size) * 2, across


def _kth_reference(laws: list, K: int, upper: float) -> float:
    """E[X_{K:m}] = ∫ P(#{i: X_i ≤ x} < K) dx, the Poisson-binomial pmf built by convolving one
    worker at a time, integrated by scipy's adaptive quad (independent of the library's path)."""
    def sf(x: float) -> float:
        pmf = np.array([1.0])
        for d in laws:
            p = float(d.cdf(x))
            pmf = np.convolve(pmf, [1 - p, p])
        return float(pmf[:K].sum())
    kinks = sorted({float(d.support[0]) for d in laws})
    return integrate.quad(sf, 0, upper, points=kinks + [1, 2, 5, 10], limit=1000, epsabs=1e-14, epsrel=1e-12)[0]


@pytest.mark.parametrize("K", [10, 8, 5, 1])
def test_static_kth_against_an_independent_quadrature(K: int) -> None:
    c = make_cluster(m=10, delay=F, slow=2, slowdown=3)
    est = expected_runtime(make_scheme("sync" if K == 10 else "k-sync", 10, **({} if K == 10 else {"K": K})), c)
    ref = _kth_reference([F.scaled(3)] * 2 + [F] * 8, K, upper=150.0)
    assert est.kind == "numerical"
    assert est.value == pytest.approx(ref, rel=1e-8)


def test_groups_kth_against_an_independent_quadrature() -> None:
    c = make_cluster(workers="3*weibull(shape=0.8, scale=1) + 4*lognormal(mu=0, sigma=0.5) "
                             "+ 2*uniform(low=0.5, high=3)")
    laws = [g.delay for g in c.groups for _ in range(g.count)]
    for K in (9, 4):
        est = expected_runtime(make_scheme("k-sync", 9, K=K) if K < 9 else make_scheme("sync", 9), c)
        assert est.kind == "numerical"
        assert est.value == pytest.approx(_kth_reference(laws, K, upper=400.0), rel=1e-7)


def test_equal_groups_are_the_iid_order_statistic() -> None:
    d = parse_delay("exp(rate=2)")
    for m, K in [(12, 12), (12, 5), (500, 499)]:
        c = make_cluster(workers=f"{m - 3}*exp(rate=2) + 3*exp(rate=2)")
        est = expected_runtime(make_scheme("k-sync", m, K=K), c)
        assert est.value == pytest.approx(order_statistic_mean(d, K, m).value, rel=1e-9)


def test_markov_sync_is_the_mixture_order_statistic_for_every_rho() -> None:
    pi, s, m = 0.2, 3.0, 10
    G = lambda x: (1 - pi) * F.cdf(x) + pi * F.scaled(s).cdf(x)  # noqa: E731
    ref = integrate.quad(lambda x: 1 - G(x) ** m, 0, 200, points=[0.2, 0.6, 1, 2, 5, 10], limit=1000,
                         epsabs=1e-14, epsrel=1e-12)[0]
    for rho in (0.0, 0.5, 0.99):
        c = make_cluster(m=m, delay=F, slow_fraction=pi, persistence=rho, slowdown=s)
        assert expected_runtime(make_scheme("sync", m), c).value == pytest.approx(ref, rel=1e-8)


def test_async_rates_add_up() -> None:
    """m = 4, one worker 3× slower, Exp(1): rates 1, 1, 1, 1/3 → E[T] = K / (10/3)."""
    c = make_cluster(m=4, delay="exp(rate=1)", slow=1, slowdown=3)
    assert expected_runtime(make_scheme("async", 4), c).value == pytest.approx(0.3, rel=1e-12)
    assert expected_runtime(make_scheme("k-batch-async", 4, K=3), c).value == pytest.approx(0.9, rel=1e-12)
    mk = make_cluster(m=4, delay="exp(rate=1)", slow_fraction=0.25, persistence=0.5, slowdown=3)
    assert expected_runtime(make_scheme("async", 4), mk).value == pytest.approx((0.75 + 0.25 * 3) / 4, rel=1e-12)


def test_kasync_kinds_on_clusters() -> None:
    st = make_cluster(m=6, delay=F, slow=2, slowdown=2)
    assert expected_runtime(make_scheme("k-async", 6, K=3), st).kind == "upper_bound"
    assert expected_runtime(make_scheme("k-async", 6, K=6), st).value == pytest.approx(
        expected_runtime(make_scheme("sync", 6), st).value, rel=1e-12)
    mk = make_cluster(m=6, delay=F, slow_fraction=0.2, persistence=0.5, slowdown=3)
    assert expected_runtime(make_scheme("k-async", 6, K=3), mk).kind == "unavailable"
    ln = make_cluster(workers="3*exp(rate=1) + 3*lognormal(mu=0, sigma=1)")
    assert expected_runtime(make_scheme("k-async", 6, K=3), ln).kind == "unavailable"  # lognormal is not NLU


CLUSTERS = {
    "static": make_cluster(m=10, delay=F, slow=2, slowdown=3),
    "groups": make_cluster(workers="6*exp(rate=1) + 4*lognormal(mu=0, sigma=1)"),
    "markov-0": make_cluster(m=10, delay=F, slow_fraction=0.2, persistence=0.0, slowdown=3),
    "markov-0.9": make_cluster(m=10, delay=F, slow_fraction=0.2, persistence=0.9, slowdown=3),
}


@pytest.mark.parametrize("name", sorted(CLUSTERS))
@pytest.mark.parametrize("scheme", ["sync", "k-sync", "local-sgd"])
def test_monte_carlo_agrees_with_theory(name: str, scheme: str) -> None:
    c = CLUSTERS[name]
    sc = make_scheme(scheme, 10, **({"K": 7} if scheme == "k-sync" else {"H": 1} if scheme == "local-sgd" else {}))
    est = expected_runtime(sc, c)
    r = simulate_runtime(sc, c, 100_000, seed=5)
    assert est.kind == "numerical"
    assert abs(r.mean - est.value) <= 4 / 1.96 * r.half_width, (r.mean, est.value, r.half_width)


def test_persistence_widens_the_interval_not_the_mean() -> None:
    """Batch means see the correlation between iterations: with ρ = 0.95 the interval is wider
    than the i.i.d. formula on the same values would say."""
    c = make_cluster(m=10, delay=F, slow_fraction=0.2, persistence=0.95, slowdown=3)
    r = simulate_runtime(make_scheme("sync", 10), c, 64_000, seed=3)
    naive = 1.96 * r.std / math.sqrt(r.iterations)
    assert r.half_width > 2 * naive


def test_iid_cluster_is_the_delay() -> None:
    sc, d = make_scheme("k-sync", 8, K=5), parse_delay("weibull(shape=0.8, scale=1)")
    a = simulate_runtime(sc, IID(d, 8), 5000, seed=4)
    b = simulate_runtime(sc, d, 5000, seed=4)
    assert a.mean == b.mean and a.ci95 == b.ci95
    assert expected_runtime(sc, IID(d, 8)) == expected_runtime(sc, d)


def test_what_is_not_built_says_so() -> None:
    c = CLUSTERS["static"]
    assert expected_runtime(make_scheme("k-batch-sync", 10, K=4), CLUSTERS["markov-0.9"]).kind == "unavailable"
    assert expected_runtime(make_scheme("local-sgd", 10, H=3), CLUSTERS["markov-0.9"]).kind == "unavailable"
    with pytest.raises(ParameterError) as info:
        simulate_runtime(make_scheme("sync", 9), c, 1000, seed=1)
    assert info.value.parameter == "m"

"""The SimPy reference models (tests/reference/simpy_models.py) against theory.

These check the reference models themselves — the runtime laws of DESIGN §2 and some exact
structural facts of each process — so that they can then be trusted to check the vectorised
engine.  Fixed seeds; Monte Carlo tolerances are 4 half-widths of a 95 % confidence interval
(i.i.d. formula for the fresh schemes, whose iterations are i.i.d.; batch means for the
schemes whose state carries over).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from distsgd import make_scheme, parse_delay
from tests.reference import simpy_models as sm

TOL = 4.0  # half-widths


def H(n: int) -> float:
    """Harmonic number H_n."""
    return float(sum(1.0 / i for i in range(1, n + 1)))


def iid_ci(x: np.ndarray) -> tuple[float, float]:
    x = np.asarray(x, dtype=float)
    return float(x.mean()), float(1.96 * x.std(ddof=1) / math.sqrt(x.size))


def assert_within(est: tuple[float, float], truth: float, what: str = "") -> None:
    mean, half = est
    assert abs(mean - truth) <= TOL * half, (
        f"{what}: {mean:.6g} ± {half:.3g} vs theory {truth:.6g} "
        f"({abs(mean - truth) / half:.2f} half-widths)")


def run(name: str, m: int, K: int | None, delay: str, updates: int, seed: int, **kw) -> sm.ModelResult:
    return sm.simulate(make_scheme(name, m, K, **kw), parse_delay(delay), updates, seed)


# ---------------------------------------------------------------------------------------
# runtime per iteration
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("m, lam", [(1, 1.0), (8, 2.0)])
def test_sync_exponential_is_H_m_over_lambda(m, lam):
    r = run("sync", m, None, f"exp(rate={lam})", 3000, seed=11)
    assert_within(iid_ci(r.intervals), H(m) / lam, "sync")


def test_sync_shifted_exponential_adds_the_shift():
    r = run("sync", 6, None, "shifted-exp(rate=1, shift=0.5)", 3000, seed=12)
    assert_within(iid_ci(r.intervals), 0.5 + H(6), "sync Δ+Exp")


@pytest.mark.parametrize("K", [1, 3, 8])
def test_k_sync_exponential_is_order_statistic(K):
    m, lam = 8, 2.0
    r = run("k-sync", m, K, f"exp(rate={lam})", 3000, seed=20 + K)
    assert_within(iid_ci(r.intervals), (H(m) - H(m - K)) / lam, f"k-sync K={K}")


def test_k_sync_pareto_order_statistic():
    # DESIGN §2 closed form: E[X_{k:n}] = x_m Γ(n+1) Γ(n−k+1−1/α) / (Γ(n−k+1) Γ(n+1−1/α))
    m, K, xm, a = 6, 4, 1.0, 2.5
    g = math.lgamma
    truth = xm * math.exp(g(m + 1) + g(m - K + 1 - 1 / a) - g(m - K + 1) - g(m + 1 - 1 / a))
    r = run("k-sync", m, K, f"pareto(xm={xm}, alpha={a})", 3000, seed=29)
    assert_within(iid_ci(r.intervals), truth, "k-sync Pareto")


@pytest.mark.parametrize("m, K", [(3, 5), (8, 2), (4, 4)])
def test_k_batch_sync_exponential_is_K_over_m_lambda(m, K):
    # superposition of m Poisson(λ) processes is Poisson(mλ): the K-th point is Gamma(K, mλ)
    lam = 1.5
    r = run("k-batch-sync", m, K, f"exp(rate={lam})", 3000, seed=30 + K)
    assert_within(iid_ci(r.intervals), K / (m * lam), f"k-batch-sync m={m} K={K}")


@pytest.mark.parametrize("K", [1, 3, 6])
def test_k_async_exponential_equals_k_sync(K):
    # Memoryless: at every update the m−K workers still computing have Exp(λ) residuals and
    # the K that restart draw fresh Exp(λ), so each iteration is the K-th of m fresh copies.
    m, lam = 8, 2.0
    r = run("k-async", m, K, f"exp(rate={lam})", 6000, seed=40 + K)
    assert_within(r.mean_runtime(), (H(m) - H(m - K)) / lam, f"k-async K={K}")


@pytest.mark.parametrize("delay, mean", [("uniform(low=1, high=3)", 2.0),
                                         ("pareto(xm=1, alpha=2.5)", 2.5 / 1.5)])
def test_async_is_mean_over_m(delay, mean):
    # m superposed renewal processes: elementary renewal theorem, long-run rate m/E[X]
    m = 6
    r = run("async", m, None, delay, 30000, seed=50)
    assert_within(r.mean_runtime(), mean / m, f"async {delay}")


@pytest.mark.parametrize("m, K, delay, mean", [
    (6, 4, "uniform(low=1, high=3)", 2.0),
    (4, 10, "lognormal(mu=0, sigma=1)", math.exp(0.5)),
    (5, 3, "pareto(xm=1, alpha=2.5)", 2.5 / 1.5),
])
def test_k_batch_async_is_K_mean_over_m(m, K, delay, mean):
    # pushes form m superposed renewal processes (nobody waits); an update every K of them
    r = run("k-batch-async", m, K, delay, 8000, seed=60 + K)
    assert_within(r.mean_runtime(), K * mean / m, f"k-batch-async m={m} K={K}")


def test_k_async_with_K_equal_m_is_sync():
    # with K = m everyone waits for everyone: every iteration restarts all m on fresh draws
    m, delay = 5, "lognormal(mu=0, sigma=0.8)"
    a = run("k-async", m, m, delay, 3000, seed=70)
    s = run("sync", m, None, delay, 3000, seed=71)
    (ma, ha), (ms, hs) = a.mean_runtime(), iid_ci(s.intervals)
    assert abs(ma - ms) <= TOL * math.hypot(ha, hs)
    assert stats.ks_2samp(a.intervals, s.intervals).pvalue > 1e-3
    assert not a.staleness.any()


def test_local_sgd_exponential_max_of_gammas():
    # round = max of m Gamma(H, λ) sums + D, reported per local step
    m, H_, lam, D = 4, 3, 2.0, 0.7
    F = stats.gamma(H_, scale=1 / lam).cdf
    emax = integrate.quad(lambda t: 1.0 - F(t) ** m, 0, np.inf)[0]
    r = run("local-sgd", m, None, f"exp(rate={lam})", 3000, seed=80, H=H_, comm_delay=D)
    assert_within(iid_ci(r.intervals), (emax + D) / H_, "local-sgd")
    assert r.staleness.size == m * H_ * 3000 and not r.staleness.any()


# ---------------------------------------------------------------------------------------
# staleness
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, K, extra", [
    ("sync", None, {}), ("k-sync", 2, {}), ("k-batch-sync", 7, {}), ("k-batch-sync", 2, {}),
    ("local-sgd", None, {"H": 2}), ("k-async", 4, {}),   # k-async with K = m
])
def test_fresh_schemes_have_zero_staleness(name, K, extra):
    r = run(name, 4, K, "weibull(shape=0.7, scale=1)", 300, seed=90, **extra)
    per_update = {"sync": 4, "local-sgd": 4 * 2}.get(name, K)
    assert r.staleness.size == per_update * 300
    assert not r.staleness.any() and not r.pending_staleness.any()


def test_async_exponential_mean_staleness_is_m_minus_1():
    # Memoryless race: after every push all m residual times are i.i.d. Exp(λ), so each push
    # comes from a uniformly random worker, independently of the past.  A gradient's
    # staleness is the number of updates (= pushes by the other workers) between its read
    # and its own push: the number of failures before the first success of a Bernoulli(1/m)
    # sequence, Geometric with mean (1 − 1/m)/(1/m) = m − 1.  This holds from time 0.
    m = 6
    r = run("async", m, None, "exp(rate=1)", 30000, seed=100)
    assert_within(r.mean_staleness(), m - 1, "async staleness")
    # the full law, not just the mean: P(staleness = s) = (1/m)(1 − 1/m)^s
    s = r.staleness
    for k in range(4):
        p = (1 / m) * (1 - 1 / m) ** k
        half = 1.96 * math.sqrt(p * (1 - p) / s.size)
        assert abs((s == k).mean() - p) <= TOL * half * 2  # ×2: the indicators are mildly correlated


@pytest.mark.parametrize("name, m, K, delay", [
    ("async", 6, None, "uniform(low=1, high=3)"),
    ("async", 5, None, "pareto(xm=1, alpha=1.5)"),
    ("k-async", 7, 3, "lognormal(mu=0, sigma=1.2)"),
    ("k-async", 5, 5, "exp(rate=1)"),
    ("k-batch-async", 6, 4, "weibull(shape=0.6, scale=1)"),
    ("k-batch-async", 3, 8, "uniform(low=0.5, high=1)"),
])
def test_staleness_counting_identity(name, m, K, delay):
    # Staleness of g applied in update j, read at version v, is #{updates u : v ≤ u < j}.
    # Summing over gradients and swapping the sums: each update u is counted once by every
    # computation that was read at or before u and is applied after u — the workers still
    # computing at u.  In k-async those are the m − K that did not push in this round; in
    # k-batch-async (and async) all m − 1 but the one whose push triggered u (pushes
    # buffered since the last update are applied in u itself, and their pushers are
    # computing again — on versions ≤ u).  Counting the computations still unfinished at
    # the end by their staleness so far (pending_staleness), for n updates exactly:
    #     Σ staleness + Σ pending = (m − K)·n  (k-async),   (m − 1)·n  (k-batch-async).
    # Hence the long-run mean staleness is (m − K)/K resp. (m − 1)/K, for any delay law.
    n = 2000
    r = run(name, m, K, delay, n, seed=110)
    k = 1 if K is None else K
    per_update = (m - k) if name != "k-batch-async" else (m - 1)
    assert r.staleness.size == k * n
    assert int(r.staleness.sum() + r.pending_staleness.sum()) == per_update * n
    assert r.staleness.mean() == pytest.approx(per_update / k, abs=r.pending_staleness.sum() / (k * n) + 1e-12)


def test_k_batch_async_trigger_reads_post_update_parameters():
    # one worker: it pushes K gradients on the same version, the K-th triggers the update and
    # the worker then reads the new version, so nothing is ever stale.  (Had it read the
    # pre-update parameters, every later batch would have staleness 1.)
    for K in (1, 2, 5):
        r = run("k-batch-async", 1, K, "exp(rate=1)", 200, seed=120 + K)
        assert not r.staleness.any()
    # async with one worker is plain sequential SGD
    r = run("async", 1, None, "exp(rate=1)", 200, seed=125)
    assert not r.staleness.any()


# ---------------------------------------------------------------------------------------
# the processes' bookkeeping
# ---------------------------------------------------------------------------------------

def test_draw_counts_match_the_process():
    m, n = 5, 400
    d = "lognormal(mu=0, sigma=1)"
    # every iteration starts m computations; the rest are cancelled
    assert run("k-sync", m, 2, d, n, seed=130).draws == m * n
    # k-batch-sync: m at the start plus one restart per finish but the K-th (which ends the
    # iteration: nothing is started to be cancelled, which matters for a Markov state or a replay)
    assert run("k-batch-sync", m, 7, d, n, seed=131).draws == (m + 7 - 1) * n
    # k-async: the m initial computations plus K restarts per update
    assert run("k-async", m, 3, d, n, seed=132).draws == m + 3 * n
    # k-batch-async: the m initial computations plus one restart per push
    assert run("k-batch-async", m, 3, d, n, seed=133).draws == m + 3 * n
    assert run("local-sgd", m, None, d, n, seed=134, H=3).draws == m * 3 * n


@pytest.mark.parametrize("name, K", [("sync", None), ("k-sync", 2), ("k-batch-sync", 6),
                                     ("async", None), ("k-async", 2), ("k-batch-async", 3)])
def test_update_times_increase_and_reproduce(name, K):
    a = run(name, 4, K, "uniform(low=0.5, high=2)", 300, seed=140)
    b = run(name, 4, K, "uniform(low=0.5, high=2)", 300, seed=140)
    assert a.update_times.size == 300
    assert np.all(np.diff(a.update_times) > 0) and a.update_times[0] > 0
    np.testing.assert_array_equal(a.update_times, b.update_times)
    np.testing.assert_array_equal(a.staleness, b.staleness)


def test_k_sync_iteration_is_at_least_the_smallest_possible():
    # sanity of cancellation: with uniform(1, 2) every iteration of a fresh scheme lasts ≥ 1
    # (a cancelled computation must not carry over into the next iteration)
    for name, K in [("k-sync", 1), ("k-batch-sync", 3)]:
        r = run(name, 6, K, "uniform(low=1, high=2)", 500, seed=150)
        assert r.intervals.min() >= 1.0 and r.intervals.max() <= 2.0 * K


def test_batch_means_covers_a_known_ar1_mean():
    # the CI helper itself: an AR(1) series with strong correlation, mean 3
    rng = np.random.default_rng(160)
    x = np.empty(40000)
    x[0] = 0.0
    e = rng.normal(size=x.size)
    for t in range(1, x.size):
        x[t] = 0.9 * x[t - 1] + e[t]
    mean, half = sm.batch_means(x + 3.0)
    assert abs(mean - 3.0) <= TOL * half
    assert half > 1.96 * x.std() / math.sqrt(x.size) * 2  # wider than the (wrong) i.i.d. interval


# ---------------------------------------------------------------------------------------
# the vectorised engine (distsgd.montecarlo) against the SimPy models
# ---------------------------------------------------------------------------------------

RENEWAL = {"async", "k-async", "k-batch-async"}
ENGINE_SCHEMES = [
    ("sync", 5, {}),
    ("k-sync", 6, {"K": 3}),
    ("k-batch-sync", 4, {"K": 6}),
    ("async", 5, {}),
    ("k-async", 6, {"K": 2}),
    ("k-batch-async", 5, {"K": 3}),
    ("local-sgd", 4, {"H": 3, "comm_delay": 0.5}),
]
ENGINE_DELAYS = ["exp(rate=1)", "pareto(xm=1, alpha=2.5)"]
ENGINE_SEEDS = range(8)


@pytest.mark.parametrize("delay", ENGINE_DELAYS)
@pytest.mark.parametrize("name, m, kw", ENGINE_SCHEMES, ids=[s[0] for s in ENGINE_SCHEMES])
def test_engine_agrees_with_the_simpy_model(name, m, kw, delay):
    from distsgd.montecarlo import simulate_runtime

    scheme = make_scheme(name, m, **kw)
    d = parse_delay(delay)
    per_iter_cost = m if name not in RENEWAL else 1
    model = sm.simulate(scheme, d, 16000 // per_iter_cost + 1000, 200)
    renewal = name in RENEWAL
    ms, hs = model.mean_runtime() if renewal else iid_ci(model.intervals)

    # the engine's own estimate and interval (batch means for the renewal schemes)
    eng = simulate_runtime(scheme, d, 40_000, seed=201)
    he = (eng.ci95[1] - eng.ci95[0]) / 2
    assert eng.ci95[0] <= eng.mean <= eng.ci95[1]
    assert abs(eng.mean - ms) <= TOL * math.hypot(he, hs), (
        f"runtime: engine {eng.mean:.5g} ± {he:.2g}, SimPy {ms:.5g} ± {hs:.2g}")

    if not renewal:
        assert not model.staleness.any()
        assert eng.staleness_mean in (None, 0.0)
        return
    # staleness: the engine reports a point value; independent seeds give its interval
    reps = [simulate_runtime(scheme, d, 10_000, seed=300 + s) for s in ENGINE_SEEDS]
    se, he_s = iid_ci(np.array([r.staleness_mean for r in reps]))
    he_s *= stats.t.ppf(0.975, len(reps) - 1) / 1.96
    ss, hs_s = model.mean_staleness()
    assert abs(se - ss) <= TOL * math.hypot(he_s, hs_s), (
        f"staleness: engine {se:.5g} ± {he_s:.2g}, SimPy {ss:.5g} ± {hs_s:.2g}")
    fe, hf = iid_ci(np.array([r.fresh_fraction for r in reps]))
    hf *= stats.t.ppf(0.975, len(reps) - 1) / 1.96
    fs, hfs = sm.batch_means((model.staleness[model.staleness.size // 10:] == 0).astype(float))
    assert abs(fe - fs) <= TOL * math.hypot(hf, hfs), (
        f"fresh fraction: engine {fe:.4g} ± {hf:.2g}, SimPy {fs:.4g} ± {hfs:.2g}")


@pytest.mark.parametrize("name, m, K, updates", [("async", 20, None, 60_000),
                                                 ("k-batch-async", 20, 4, 20_000)])
def test_engine_long_run_means_for_a_decreasing_hazard_delay(name, m, K, updates):
    """Weibull(k = 0.6) has a finite variance but a decreasing hazard: every worker starts
    fresh at time 0, fresh jobs finish faster than the stationary in-flight ones, and the
    in-flight ages (hence the staleness) take ~20 pushes per worker to settle.  A long
    SimPy run (10 % warm-up) sits on the exact long-run values E[T] = K·E[X]/m and mean
    staleness (m − 1)/K (counting identity above); the engine must too."""
    from distsgd.montecarlo import simulate_runtime

    scheme = make_scheme(name, m, K)
    d = parse_delay("weibull(shape=0.6, scale=1)")
    k = K or 1
    model = sm.simulate(scheme, d, updates, 210)
    ms, hs = model.mean_runtime()
    ss, hss = model.mean_staleness()
    reps = [simulate_runtime(scheme, d, 20_000, seed=400 + s, keep_times=False) for s in ENGINE_SEEDS]
    t8 = stats.t.ppf(0.975, len(reps) - 1) / 1.96
    me, he = iid_ci(np.array([r.mean for r in reps]))
    se, hse = iid_ci(np.array([r.staleness_mean for r in reps]))
    he, hse = he * t8, hse * t8
    exact_t, exact_s = k * d.mean / m, (m - 1) / k
    assert abs(ms - exact_t) <= TOL * hs and abs(ss - exact_s) <= TOL * hss  # the reference itself
    assert abs(se - ss) <= TOL * math.hypot(hse, hss), (
        f"staleness: engine {se:.4f} ± {hse:.3f}, SimPy {ss:.4f} ± {hss:.3f}, exact {exact_s:.4f}")
    assert abs(me - ms) <= TOL * math.hypot(he, hs), (
        f"runtime: engine {me:.5f} ± {he:.5f}, SimPy {ms:.5f} ± {hs:.5f}, exact {exact_t:.5f}")

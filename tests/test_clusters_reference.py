"""The reference job sources (tests/reference/cluster_jobs.py) and the SimPy models run on
them, against theory computed here (DESIGN §7, "Clusters: who is slow, and for how long").

These check the reference itself — so that it can be trusted to check the library's
clusters.  Fixed seeds; Monte Carlo tolerances are 4 half-widths of a 95 % confidence
interval (i.i.d. formula where the iterations are independent, batch means where a state
carries over); replay is deterministic and checked to 1e-12 or by an exact bound.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from distsgd import make_scheme, parse_delay
from tests.reference import cluster_jobs as cj
from tests.reference import simpy_models as sm
from tests.test_engines_simpy import assert_within, iid_ci

TOL = 4.0  # half-widths


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def expon(rate: float = 1.0, shift: float = 0.0, s: float = 1.0):
    """scipy law of s·(Δ + Exp(rate)) — the shift scaled too (DESIGN §7)."""
    return stats.expon(loc=s * shift, scale=s / rate)


def kth_of_independent(cdfs: list, K: int) -> float:
    """E[X_{K:m}] for independent non-negative X_i with the given cdfs:
    ∫ P(#{i : X_i ≤ x} < K) dx, the probability by inclusion over the subsets A of the
    workers done by x (|A| < K) — brute force, fine for m ≤ 8."""
    m = len(cdfs)

    def sf(x: float) -> float:
        F = [float(c(x)) for c in cdfs]
        total = 0.0
        for size in range(K):
            for A in itertools.combinations(range(m), size):
                total += math.prod(F[i] if i in A else 1.0 - F[i] for i in range(m))
        return total

    return integrate.quad(sf, 0, np.inf, limit=200, epsabs=1e-11, epsrel=1e-10)[0]


def max_of_independent(cdfs: list) -> float:
    """E[max_i X_i] = ∫ (1 − Π_i F_i(x)) dx."""
    return integrate.quad(lambda x: 1.0 - math.prod(float(c(x)) for c in cdfs), 0, np.inf,
                          limit=200, epsabs=1e-11, epsrel=1e-10)[0]


def markov_mixture(normal, slow, m: int, pi: float, K: int) -> float:
    """Σ_j Bin(j; m, π) · E[X_{K:m} of j slow and m − j normal workers]."""
    return sum(stats.binom.pmf(j, m, pi) * kth_of_independent([slow.cdf] * j + [normal.cdf] * (m - j), K)
               for j in range(m + 1))


# ---------------------------------------------------------------------------------------
# the sources on their own
# ---------------------------------------------------------------------------------------

SCHEMES = [("sync", 5, {}), ("k-sync", 5, {"K": 3}), ("k-batch-sync", 4, {"K": 6}),
           ("async", 5, {}), ("k-async", 6, {"K": 2}), ("k-batch-async", 5, {"K": 3}),
           ("local-sgd", 4, {"H": 3, "comm_delay": 0.5})]


@pytest.mark.parametrize("name, m, kw", SCHEMES, ids=[s[0] for s in SCHEMES])
def test_iid_jobs_reproduce_the_delay_stream(name, m, kw):
    # passing IIDJobs(F, m, rng) is the same run, number for number, as passing F and rng
    scheme, d = make_scheme(name, m, **kw), parse_delay("lognormal(mu=0, sigma=1)")
    jobs = cj.IIDJobs(d, m, rng(7))
    a = sm.simulate(scheme, jobs, 300)
    b = sm.simulate(scheme, d, 300, rng(7))
    np.testing.assert_array_equal(a.update_times, b.update_times)
    np.testing.assert_array_equal(a.staleness, b.staleness)
    assert a.draws == b.draws == jobs.started()


def test_iid_jobs_and_a_delay_draw_one_sample_per_computation():
    # the stream itself, independently of IIDJobs: one delay.sample(rng) call per computation
    d = parse_delay("weibull(shape=0.7, scale=1)")
    g = rng(8)
    direct = [float(d.sample(g)) for _ in range(50)]
    jobs = cj.IIDJobs(d, 3, rng(8))
    assert [jobs.next(n % 3) for n in range(50)] == direct
    # one worker: every iteration is one computation (local SGD: H of them, plus D)
    for name, kw in [("sync", {}), ("async", {}), ("k-batch-async", {"K": 1})]:
        r = sm.simulate(make_scheme(name, 1, **kw), d, 50, rng(8))
        assert np.allclose(r.intervals, direct, rtol=1e-12, atol=0), name
    r = sm.simulate(make_scheme("local-sgd", 1, H=2, comm_delay=0.3), d, 25, rng(8))
    assert np.allclose(r.intervals, [(direct[2 * k] + direct[2 * k + 1] + 0.3) / 2 for k in range(25)],
                       rtol=1e-12, atol=0)


def test_a_source_with_the_wrong_m_is_refused():
    with pytest.raises(ValueError, match="workers"):
        sm.simulate(make_scheme("sync", 4), cj.IIDJobs(parse_delay("exp(rate=1)"), 5, rng(0)), 10)


def test_static_jobs_slow_the_first_b_workers():
    # uniform(1, 2): a slow worker's time s·X lies in [s, 2s], a normal one's in [1, 2]
    m, b, s = 5, 2, 3.0
    jobs = cj.StaticJobs(parse_delay("uniform(low=1, high=2)"), m, b, s, rng(1))
    for _ in range(200):
        for i in range(m):
            jobs.next(i)
    for i in range(m):
        t, flags = jobs.times(i), jobs.slow_flags(i)
        assert t.size == 200
        if i < b:
            assert flags.all() and t.min() >= s and t.max() <= 2 * s
        else:
            assert not flags.any() and t.min() >= 1 and t.max() <= 2


def test_group_jobs_take_consecutive_ids():
    groups = [(2, parse_delay("uniform(low=1, high=2)")), (3, parse_delay("uniform(low=5, high=6)")),
              (1, parse_delay("uniform(low=10, high=11)"))]
    jobs = cj.GroupJobs(groups, rng(2))
    assert jobs.m == 6 and jobs.group_of == [0, 0, 1, 1, 1, 2]
    for _ in range(100):
        for i in range(jobs.m):
            jobs.next(i)
    lows = [1, 1, 5, 5, 5, 10]
    for i, lo in enumerate(lows):
        t = jobs.times(i)
        assert t.min() >= lo and t.max() <= lo + 1, f"worker {i}"


def test_markov_slow_fraction_and_lag_one_correlation():
    # one worker, 200 000 mini-batches: the long-run fraction of slow ones is π, and the
    # lag-one correlation of the state is 1 − π(1−ρ) − (1−π)(1−ρ) = ρ.  The stationary start
    # makes E[(S_n − π)(S_{n+1} − π)] = ρ π (1 − π) for every n, so the normalised products
    # are a stationary series with mean ρ: batch means give both intervals.
    pi, rho, s = 0.2, 0.9, 5.0
    jobs = cj.MarkovJobs(parse_delay("uniform(low=1, high=2)"), 1, pi, rho, s, rng(3))
    for _ in range(200_000):
        jobs.next(0)
    f = jobs.slow_flags(0).astype(float)
    assert_within(sm.batch_means(f), pi, "slow fraction")
    y = (f[:-1] - pi) * (f[1:] - pi) / (pi * (1 - pi))
    assert_within(sm.batch_means(y), rho, "lag-one correlation")
    # the slow state is exactly the slowed mini-batches: s·X ≥ s > 2 ≥ X
    t = jobs.times(0)
    assert np.array_equal(t >= s, f == 1.0)
    # measured (seed 3): fraction 0.1998 ± 0.0082, correlation 0.8999 ± 0.0295


def test_markov_starts_from_the_stationary_law_and_workers_are_independent():
    # 20 000 workers, 3 mini-batches each: the state is slow w.p. π at every mini-batch from
    # the first on (stationary start), and two workers' states are uncorrelated
    m, pi, rho = 20_000, 0.3, 0.95
    jobs = cj.MarkovJobs(parse_delay("exp(rate=1)"), m, pi, rho, 4.0, rng(4))
    for _ in range(3):
        for i in range(m):
            jobs.next(i)
    flags = np.array([jobs.slow_flags(i) for i in range(m)], dtype=float)   # (m, 3)
    half = 1.96 * math.sqrt(pi * (1 - pi) / m)
    for n in range(3):
        assert abs(flags[:, n].mean() - pi) <= TOL * half, f"mini-batch {n}"
    a, b = flags[0::2, 0], flags[1::2, 0]                                    # pairs of workers
    assert_within(iid_ci((a - pi) * (b - pi) / (pi * (1 - pi))), 0.0, "two workers")
    # and the state persists within a worker: lag-one correlation ρ
    assert_within(iid_ci((flags[:, 0] - pi) * (flags[:, 1] - pi) / (pi * (1 - pi))), rho, "lag one")
    # measured: two workers 0.0029 ± 0.0197 (0), lag one 0.9546 ± 0.0126 (0.95)


def test_per_worker_and_pooled_jobs_draw_uniformly():
    per = [np.array([1.0, 2.0]), np.array([10.0, 20.0, 30.0])]
    jobs = cj.PerWorkerJobs(per, rng(5))
    n = 6000
    for _ in range(n):
        jobs.next(0)
        jobs.next(1)
    for i, v in enumerate(per):
        t = jobs.times(i)
        for value in v:
            p = 1 / v.size
            assert abs((t == value).mean() - p) <= TOL * 1.96 * math.sqrt(p * (1 - p) / n)
    pooled = cj.PooledJobs(np.concatenate(per), 3, rng(6))
    for _ in range(n):
        pooled.next(2)
    t = pooled.times(2)
    for value in (1.0, 20.0):
        assert abs((t == value).mean() - 0.2) <= TOL * 1.96 * math.sqrt(0.2 * 0.8 / n)
    assert pooled.started(0) == 0 and pooled.started() == n


# ---------------------------------------------------------------------------------------
# static stragglers and groups: independent, non-identical workers
# ---------------------------------------------------------------------------------------

def test_static_sync_is_the_max_of_non_identical_workers():
    # m = 6, b = 2 workers 3× slower, Exp(1): E[T] = ∫ (1 − F_slow(x)² F(x)⁴) dx
    m, b, s = 6, 2, 3.0
    cdfs = [expon(s=s).cdf] * b + [expon().cdf] * (m - b)
    truth = max_of_independent(cdfs)
    assert truth == pytest.approx(kth_of_independent(cdfs, m), rel=1e-8)   # the two formulas agree
    jobs = cj.StaticJobs(parse_delay("exp(rate=1)"), m, b, s, rng(10))
    r = sm.simulate(make_scheme("sync", m), jobs, 4000)
    assert_within(iid_ci(r.intervals), truth, "static sync")
    assert all(jobs.started(i) == 4000 for i in range(m))
    # measured: 4.8277 ± 0.0993 vs theory 4.8144 (6 i.i.d. Exp(1) workers: H_6 = 2.45)


def test_static_k_sync_is_a_poisson_binomial_order_statistic():
    # K = 4 of m = 6: the 2 slowest are cancelled — and the cancelled ones count as started
    m, b, s, K = 6, 2, 3.0, 4
    truth = kth_of_independent([expon(s=s).cdf] * b + [expon().cdf] * (m - b), K)
    jobs = cj.StaticJobs(parse_delay("exp(rate=1)"), m, b, s, rng(11))
    r = sm.simulate(make_scheme("k-sync", m, K), jobs, 4000)
    assert_within(iid_ci(r.intervals), truth, "static k-sync")
    assert all(jobs.started(i) == 4000 for i in range(m))
    # measured: 1.3320 ± 0.0224 vs theory 1.3480 (i.i.d. Exp(1): H_6 − H_2 = 0.95)


def _static_and_groups():
    static_d = parse_delay("shifted-exp(rate=1, shift=0.5)")
    static_means = [3.0 * 1.5] * 2 + [1.5] * 4          # s·(Δ + 1/λ) for the 2 slow workers
    groups = [(2, parse_delay("uniform(low=1, high=3)")), (3, parse_delay("exp(rate=0.5)")),
              (1, parse_delay("pareto(xm=1, alpha=2.5)"))]
    group_means = [2.0] * 2 + [2.0] * 3 + [2.5 / 1.5]   # (a+b)/2, 1/λ, α x_m/(α − 1)
    return [("static", lambda seed: cj.StaticJobs(static_d, 6, 2, 3.0, rng(seed)), static_means),
            ("groups", lambda seed: cj.GroupJobs(groups, rng(seed)), group_means)]


CLUSTERS = _static_and_groups()


@pytest.mark.parametrize("cluster, make, means", CLUSTERS, ids=[c[0] for c in CLUSTERS])
@pytest.mark.parametrize("name, K", [("async", 1), ("k-batch-async", 3)])
def test_async_runtime_is_K_over_the_sum_of_rates(cluster, make, means, name, K):
    # every worker is a renewal process of its own law (nobody waits): the long-run push rate
    # is Σ_i 1/E[X_i], an update every K pushes
    m = len(means)
    truth = K / sum(1.0 / mu for mu in means)
    r = sm.simulate(make_scheme(name, m, None if name == "async" else K), make(20 + K), 30_000 // K)
    assert_within(r.mean_runtime(), truth, f"{name} on {cluster}")
    if name == "async":
        # mean staleness m − 1 for any cluster (the counting identity of test_engines_simpy)
        assert_within(r.mean_staleness(), m - 1, f"async staleness on {cluster}")
    # measured: async static 0.32265 ± 0.00225 (theory 0.32143), groups 0.32389 ± 0.00279
    # (0.32258); k-batch-async static 0.96149 ± 0.00792 (0.96429), groups 0.95931 ± 0.00907
    # (0.96774); async staleness 4.9990 ± 0.0036 (static), 5.0000 ± 0.0023 (groups)


# ---------------------------------------------------------------------------------------
# Markov slowdowns
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, K, rho", [("sync", 5, 0.0), ("sync", 5, 0.95), ("k-sync", 3, 0.95)])
def test_markov_sync_is_the_binomial_mixture_whatever_rho(name, K, rho):
    # every worker starts one mini-batch per iteration (a cancelled one too), so at every
    # iteration the m states are i.i.d. stationary: E[T] = Σ_j Bin(j; m, π) E[X_{K:m} of j
    # slow, m − j normal] — the same for every ρ.  Δ + Exp(λ) with the shift scaled too.
    m, pi, s, rate, shift = 5, 0.3, 4.0, 1.0, 0.5
    truth = markov_mixture(expon(rate, shift), expon(rate, shift, s), m, pi, K)
    jobs = cj.MarkovJobs(parse_delay(f"shifted-exp(rate={rate}, shift={shift})"), m, pi, rho, s, rng(30))
    n = 8000
    r = sm.simulate(make_scheme(name, m, None if name == "sync" else K), jobs, n)
    # with ρ > 0 consecutive iterations are correlated: batch means (fine for ρ = 0 as well)
    assert_within(sm.batch_means(r.intervals), truth, f"{name} Markov ρ={rho}")
    assert all(jobs.started(i) == n for i in range(m))   # the state advanced once per iteration
    # measured: sync ρ = 0: 6.6642 ± 0.0829, ρ = 0.95: 6.7747 ± 0.2750 (theory 6.7268 for both:
    # the interval is 3.3× wider under persistence, the mean the same); k-sync K = 3, ρ = 0.95:
    # 2.0216 ± 0.1050 (theory 2.0343); i.i.d. workers (π = 0) would give sync 0.5 + H_5 = 2.78


def test_markov_async_runtime_and_staleness():
    # renewal–reward: a worker's long-run mean mini-batch time is (1 − π + π s) E[X]; the mean
    # staleness of async stays m − 1 (ρ = 0.9)
    m, pi, rho, s = 6, 0.2, 0.9, 5.0
    jobs = cj.MarkovJobs(parse_delay("uniform(low=1, high=3)"), m, pi, rho, s, rng(40))
    r = sm.simulate(make_scheme("async", m), jobs, 60_000)
    assert_within(r.mean_runtime(), (1 - pi + pi * s) * 2.0 / m, "async Markov runtime")
    assert_within(r.mean_staleness(), m - 1, "async Markov staleness")
    # measured: 0.60081 ± 0.0193 vs 0.6; staleness 4.9996 ± 0.0019


def test_markov_persistence_fattens_the_far_tail_of_async_staleness():
    # m = 8, π = 0.1, s = 10, X ~ uniform(0.5, 1.5), async.  The mean staleness is m − 1 either
    # way, and so is, to within the noise, the *moderate* tail: P(staleness ≥ 3(m−1) = 21) was
    # 0.0872 ± 0.0015 (ρ = 0) against 0.0821 ± 0.0078 (ρ = 0.95) (seed 5, 120 000 updates) —
    # for Exp(1) 0.0645 ± 0.0006 against 0.0617 ± 0.0023: persistence does *not* raise it.
    # Why: a slow mini-batch is slow with the same probability π either way, and the others'
    # time-average push rate is the same; only over windows shorter than a spell are the
    # others' states frozen, which spreads the number of pushes a long slow mini-batch sees.
    # That shows in the far tail: P(staleness ≥ 10(m−1) = 70).
    m, pi, s = 8, 0.1, 10.0
    d = parse_delay("uniform(low=0.5, high=1.5)")
    tails, means = {}, {}
    for rho, n in [(0.0, 100_000), (0.95, 200_000)]:
        r = sm.simulate(make_scheme("async", m), cj.MarkovJobs(d, m, pi, rho, s, rng(50)), n)
        st = r.staleness[n // 10:]
        tails[rho] = sm.batch_means((st >= 10 * (m - 1)).astype(float))
        means[rho] = r.mean_staleness()
        assert_within(means[rho], m - 1, f"mean staleness ρ={rho}")
    (p0, h0), (p95, h95) = tails[0.0], tails[0.95]
    # one-sided: larger by more than 4 standard errors of the difference (a batch-means
    # half-width is t_{0.975, 19} ≈ 2.09 standard errors)
    se = math.hypot(h0, h95) / stats.t.ppf(0.975, 19)
    assert p95 - p0 > 4 * se, (
        f"P(staleness ≥ {10 * (m - 1)}): ρ=0.95 {p95:.5f} ± {h95:.5f} vs ρ=0 {p0:.5f} ± {h0:.5f}")
    # measured (seed 50): ρ = 0: 0.00106 ± 0.00023, ρ = 0.95: 0.00381 ± 0.00064 (3.6×; the
    # difference is 8.5 standard errors); mean staleness 6.9997 ± 0.0036 and 6.9998 ± 0.0025


# ---------------------------------------------------------------------------------------
# replay of a trace: deterministic
# ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def table() -> np.ndarray:
    return rng(60).uniform(0.5, 2.0, size=(4, 7))            # m = 4 workers, S = 7 steps


def test_replay_sync_is_the_mean_of_the_column_maxima(table):
    m, S = table.shape
    n = 20 * S                                               # a multiple of S
    r = sm.simulate(make_scheme("sync", m), cj.ReplayJobs(table), n)
    colmax = [max(table[i, j] for i in range(m)) for j in range(S)]
    assert abs(r.intervals.mean() - sum(colmax) / S) <= 1e-12
    # iteration j is step j mod S, one by one
    assert np.allclose(r.intervals, [colmax[j % S] for j in range(n)], rtol=0, atol=1e-12)


def test_replay_k_sync_is_the_kth_smallest_of_each_column(table):
    m, S = table.shape
    K, n = 2, 20 * S
    jobs = cj.ReplayJobs(table)
    r = sm.simulate(make_scheme("k-sync", m, K), jobs, n)
    kth = [sorted(table[:, j])[K - 1] for j in range(S)]
    assert abs(r.intervals.mean() - sum(kth) / S) <= 1e-12
    assert np.allclose(r.intervals, [kth[j % S] for j in range(n)], rtol=0, atol=1e-12)
    assert all(jobs.started(i) == n for i in range(m))       # the cancelled ones advance too


@pytest.mark.parametrize("H", [1, 2])
def test_replay_local_sgd_is_the_max_of_the_sums_plus_D(table, H):
    m, S = table.shape
    D, rounds = 0.7, 10 * S                                  # H·rounds steps: a multiple of S
    r = sm.simulate(make_scheme("local-sgd", m, H=H, comm_delay=D), cj.ReplayJobs(table), rounds)
    per_round = [(max(sum(table[i, (H * k + h) % S] for h in range(H)) for i in range(m)) + D) / H
                 for k in range(rounds)]
    assert np.allclose(r.intervals, per_round, rtol=0, atol=1e-12)
    if H == 1:
        colmax = [max(table[:, j]) for j in range(S)]
        assert abs(r.intervals.mean() - (sum(colmax) / S + D)) <= 1e-12


@pytest.mark.parametrize("name, K", [("async", 1), ("k-batch-async", 3)])
def test_replay_async_rate_is_K_over_the_sum_of_worker_rates(table, name, K):
    # Worker i pushes on the cycle c_i = Σ_j t[i, j]: by time T it has pushed between
    # ⌊T/c_i⌋S and (⌊T/c_i⌋ + 1)S times, so |pushes(T) − T Σ_i S/c_i| ≤ mS for all m.  At the
    # n-th update pushes = nK, hence |T_n/n − K r| ≤ mS r / n with r = 1/Σ_i 1/mean_i.
    m, S = table.shape
    n = 3000
    r_ = 1.0 / sum(1.0 / table[i].mean() for i in range(m))
    res = sm.simulate(make_scheme(name, m, None if name == "async" else K), cj.ReplayJobs(table), n)
    assert abs(res.update_times[-1] / n - K * r_) <= m * S * r_ / n


def test_replay_drops_incomplete_steps_and_cycles(table):
    t = table.copy()
    t[2, 3] = np.nan
    jobs = cj.ReplayJobs(t)
    assert jobs.dropped == 1 and jobs.S == 6
    kept = np.delete(table, 3, axis=1)
    got = [jobs.next(1) for _ in range(13)]
    assert got == [kept[1, n % 6] for n in range(13)]


# ---------------------------------------------------------------------------------------
# per-worker trace law: exact expectations by enumeration
# ---------------------------------------------------------------------------------------

def test_per_worker_trace_sync_and_k_sync_by_enumeration():
    per = [np.array([1.0, 2.0, 4.0]), np.array([0.5, 3.0]), np.array([1.5, 2.5, 6.0, 0.8])]
    combos = list(itertools.product(*per))                   # 24 equally likely outcomes
    e_max = sum(max(c) for c in combos) / len(combos)
    e_2nd = sum(sorted(c)[1] for c in combos) / len(combos)
    for name, K, truth, seed in [("sync", None, e_max, 70), ("k-sync", 2, e_2nd, 71)]:
        r = sm.simulate(make_scheme(name, 3, K), cj.PerWorkerJobs(per, rng(seed)), 4000)
        assert_within(iid_ci(r.intervals), truth, name)
    # measured: sync 3.7205 ± 0.0471 (exact 3.7292), k-sync 2.0702 ± 0.0301 (exact 2.0583)

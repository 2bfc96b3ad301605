"""The Monte Carlo engines: exact laws, process identities, staleness, timelines, memory."""

import math
import tracemalloc

import numpy as np
import pytest
from scipy import stats

from distsgd import ParameterError, jit, make_scheme, parse_delay
from distsgd.engines import iid as iid_engines
from distsgd.montecarlo import (
    sample_order_statistic,
    simulate_runtime,
    simulate_timeline,
    simulate_updates,
)
from scenarios import DELAYS


def harmonic(n):
    return sum(1.0 / i for i in range(1, n + 1))


@pytest.mark.parametrize("key", ["lognormal", "pareto", "empirical", "normal"])
@pytest.mark.parametrize("k, n", [(1, 30), (12, 30), (30, 30)])
def test_order_statistic_sampling_has_the_law_of_sorting(key, k, n):
    """F⁻¹(Beta(k, n−k+1)) against the brute force: sample n, take the k-th smallest."""
    d = parse_delay(DELAYS[key])
    fast = sample_order_statistic(d, k, n, np.random.default_rng(1), 20_000)
    brute = np.sort(d.sample(np.random.default_rng(2), (20_000, n)), axis=1)[:, k - 1]
    assert stats.ks_2samp(fast, brute).pvalue > 1e-4
    se = math.sqrt(fast.var() / fast.size + brute.var() / brute.size)
    assert abs(fast.mean() - brute.mean()) <= 4 * se


def test_order_statistic_precision_for_many_workers():
    # the maximum of 10^5 exponentials is H_n/λ on average; isf keeps it exact in the tail
    d = parse_delay("exp(rate=1)")
    x = sample_order_statistic(d, 100_000, 100_000, np.random.default_rng(3), 200_000)
    se = x.std() / math.sqrt(x.size)
    assert abs(x.mean() - harmonic(100_000)) <= 4 * se


@pytest.mark.parametrize("spec", ["exp(rate=3)", "weibull(shape=0.6, scale=1)", "uniform(low=0.5, high=1.5)",
                                  "lognormal(mu=0, sigma=1)"])
@pytest.mark.parametrize("name, m, K", [("async", 12, None), ("k-async", 12, 3), ("k-batch-async", 10, 4)])
def test_long_run_staleness_identity_for_any_delay(spec, name, m, K):
    """At every update each computation still running gains one unit of staleness: m − K of
    them in k-async (the K pushers restart), m − 1 in k-batch-async and async (only the pusher
    that triggered the update reads after it).  K gradients per update, so the long-run mean
    staleness is (m − K)/K and (m − 1)/K whatever the delay law."""
    scheme = make_scheme(name, m, K=K)
    k = scheme.grads_per_update
    expect = (m - k) / k if name == "k-async" else (m - 1) / k
    r = simulate_runtime(scheme, parse_delay(spec), 80_000, seed=4)
    assert r.staleness_mean == pytest.approx(expect, rel=0.02)


def test_fresh_fractions_for_exponential_delays():
    """Memoryless delays: a gradient of async is fresh iff no other push came first (1/m);
    in k-async each update's K pushers are a uniform K-subset of the m workers (K/m)."""
    r = simulate_runtime(make_scheme("async", 12), parse_delay("exp(rate=3)"), 60_000, seed=4)
    assert r.fresh_fraction == pytest.approx(1 / 12, rel=0.05)
    r = simulate_runtime(make_scheme("k-async", 12, K=3), parse_delay("exp(rate=1)"), 60_000, seed=5)
    assert r.fresh_fraction == pytest.approx(3 / 12, rel=0.03)


@pytest.mark.parametrize("name, kw", [("sync", {}), ("k-sync", {"K": 3}), ("k-batch-sync", {"K": 9}),
                                      ("local-sgd", {"H": 3})])
def test_fresh_schemes_report_no_staleness(name, kw):
    r = simulate_runtime(make_scheme(name, 6, **kw), parse_delay("uniform(low=1, high=2)"), 2000, seed=1)
    assert r.staleness_mean is None
    tr = simulate_updates(make_scheme(name, 6, **kw), parse_delay("uniform(low=1, high=2)"), 50, 3, seed=1)
    assert tr.workers is None and tr.times.shape == (3, 50) and np.all(np.diff(tr.times, axis=1) > 0)


def test_k_async_with_k_equal_m_is_sync_and_k_one_is_async():
    d = parse_delay("lognormal(mu=0, sigma=1)")
    a = simulate_runtime(make_scheme("k-async", 8, K=8), d, 40_000, seed=1)
    b = simulate_runtime(make_scheme("sync", 8), d, 40_000, seed=2)
    assert abs(a.mean - b.mean) <= 4 * math.hypot(a.half_width, b.half_width)
    assert a.staleness_mean == 0
    c = simulate_runtime(make_scheme("k-async", 8, K=1), d, 40_000, seed=3)
    e = simulate_runtime(make_scheme("async", 8), d, 40_000, seed=4)
    assert abs(c.mean - e.mean) <= 4 * math.hypot(c.half_width, e.half_width)


def test_local_sgd_h1_matches_sync_and_gamma_path_matches_sums():
    d = parse_delay("shifted-exp(rate=2, shift=0.1)")
    a = simulate_runtime(make_scheme("local-sgd", 16, H=1), d, 50_000, seed=1)
    b = simulate_runtime(make_scheme("sync", 16), d, 50_000, seed=2)
    assert abs(a.mean - b.mean) <= 4 * math.hypot(a.half_width, b.half_width)
    # the Gamma order-statistic shortcut against brute-force sums of H exponentials
    fast = simulate_runtime(make_scheme("local-sgd", 16, H=5, comm_delay=0.3), d, 50_000, seed=3)
    rng = np.random.default_rng(4)
    brute = (d.sample(rng, (50_000, 16, 5)).sum(axis=2).max(axis=1) + 0.3) / 5
    se = math.hypot(fast.half_width / 1.96, brute.std() / math.sqrt(brute.size))
    assert abs(fast.mean - brute.mean()) <= 4 * se


def brute_k_batch_sync(delay, m: int, K: int, n: int, seed: int) -> np.ndarray:
    """The K-th completion overall when each of m workers runs back to back from 0: no worker can
    finish more than K jobs before it, so K draws per worker always suffice (an independent
    reference with no path extension at all)."""
    rng = np.random.default_rng(seed)
    out = np.empty(n)
    for s in range(0, n, 5000):
        b = min(5000, n - s)
        c = np.cumsum(delay.sample(rng, (b, m, K)), axis=2).reshape(b, m * K)
        out[s:s + b] = np.partition(c, K - 1, axis=1)[:, K - 1]
    return out


@pytest.fixture
def shallow_paths(monkeypatch):
    """Force the k-batch-sync engine to draw only ⌈K/m⌉ completions per worker up front (the
    fewest that can hold K points), so that most iterations must extend some worker's path."""
    calls = []

    def depth(delay, m, K, rng):
        calls.append((m, K))
        return -(-K // m)

    monkeypatch.setattr(iid_engines, "_kbatch_sync_depth", depth)
    return calls


@pytest.mark.parametrize("path", ["kernel", "numpy", "numpy-shallow"])
def test_k_batch_sync_has_the_right_law(path, request, monkeypatch):
    """Both engines against the brute force above: the compiled one in event order (m + K − 1
    draws) and the numpy one that extends paths.  Exponential delays: E[T] = K/(mλ) exactly,
    whatever the allocation of points to workers.  Uniform(0, 1): when a worker is fast enough
    to outrun its drawn path, T tends to be small, so redrawing such iterations instead of
    extending them (or extending from 0) biases the mean.  With the numpy engine's own depth
    almost no iteration needs an extension (0.1 % for the exponential case, none for the
    uniform ones: that variant checks the law, not the extension); with shallow paths 98 %,
    100 % and 58 % of the iterations of the three cases extend some worker's path."""
    monkeypatch.setattr(jit, "ENABLED", path == "kernel")
    if path == "numpy-shallow":
        assert request.getfixturevalue("shallow_paths") == []
    m, K, lam, n = 3, 40, 2.0, 20_000
    r = simulate_runtime(make_scheme("k-batch-sync", m, K=K), parse_delay(f"exp(rate={lam})"), n, seed=8)
    assert abs(r.mean - K / (m * lam)) <= 4 * r.half_width
    d = parse_delay("uniform(low=0, high=1)")
    for m, K in [(3, 12), (2, 9)]:
        fast = simulate_runtime(make_scheme("k-batch-sync", m, K=K), d, n, seed=9 + K)
        brute = brute_k_batch_sync(d, m, K, n, seed=100 + K)
        se = math.hypot(fast.half_width / 1.959963984540054, brute.std(ddof=1) / math.sqrt(n))
        assert abs(fast.mean - brute.mean()) <= 4 * se, (m, K, fast.mean, brute.mean(), se)
        assert stats.ks_2samp(fast.times, brute).pvalue > 1e-4
    if path == "numpy-shallow":
        assert request.getfixturevalue("shallow_paths"), \
            "the engine no longer asks _kbatch_sync_depth: force shallow paths another way"


def test_same_seed_same_numbers():
    for name, kw in [("k-sync", {"K": 3}), ("k-batch-sync", {"K": 7}), ("k-async", {"K": 2}),
                     ("k-batch-async", {"K": 3}), ("local-sgd", {"H": 2})]:
        s, d = make_scheme(name, 5, **kw), parse_delay("weibull(shape=0.8, scale=1)")
        a = simulate_runtime(s, d, 3000, seed=11)
        b = simulate_runtime(s, d, 3000, seed=11)
        c = simulate_runtime(s, d, 3000, seed=12)
        assert np.array_equal(a.times, b.times) and a.ci95 == b.ci95
        assert a.mean != c.mean
    t1 = simulate_timeline(make_scheme("k-async", 5, K=2), d, 6, seed=3)
    t2 = simulate_timeline(make_scheme("k-async", 5, K=2), d, 6, seed=3)
    assert t1.rows() == t2.rows()


def test_ci_covers_the_truth_at_the_nominal_rate():
    """Over 40 seeds, the 95% batch-means interval of k-async (exponential: exact mean known)
    should miss about 2 times; more than 7 misses has probability < 0.1%."""
    m, K = 10, 3
    truth = harmonic(m) - harmonic(m - K)
    misses = 0
    for seed in range(40):
        r = simulate_runtime(make_scheme("k-async", m, K=K), parse_delay("exp(rate=1)"), 4000, seed=seed)
        misses += not (r.ci95[0] <= truth <= r.ci95[1])
    assert misses <= 7


@pytest.mark.parametrize("name, kw", [("async", {}), ("k-async", {"K": 3}), ("k-batch-async", {"K": 3})])
def test_update_trace_is_consistent(name, kw):
    s = make_scheme(name, 7, **kw)
    tr = simulate_updates(s, parse_delay("lognormal(mu=0, sigma=1)"), 300, 5, seed=2)
    K = s.grads_per_update
    assert tr.times.shape == (5, 300) and tr.workers.shape == (5, 300, K)
    assert np.all(np.diff(tr.times, axis=1) >= 0)
    assert tr.staleness.min() >= 0
    assert tr.reads_after_update.shape == (K,) and tr.reads_after_update[-1]
    if name == "k-async":
        # the K pushers of one update are distinct workers (each waits once pushed)
        assert all(len(set(w)) == K for w in tr.workers.reshape(-1, K))
    # replay the read rule: each worker's next gradient is computed on the version it read
    read = np.zeros((5, 7), dtype=int)
    for j in range(300):
        for k in range(K):
            w = tr.workers[:, j, k]
            assert np.array_equal(j - read[np.arange(5), w], tr.staleness[:, j, k])
            if not tr.reads_after_update[k]:
                read[np.arange(5), w] = j
        for k in range(K):
            if tr.reads_after_update[k]:
                read[np.arange(5), tr.workers[:, j, k]] = j + 1


@pytest.mark.parametrize("name, kw", [("sync", {}), ("k-sync", {"K": 2}), ("k-batch-sync", {"K": 5}),
                                      ("async", {}), ("k-async", {"K": 2}), ("k-batch-async", {"K": 3}),
                                      ("local-sgd", {"H": 3, "comm_delay": 0.2})])
def test_timeline_structure(name, kw):
    s = make_scheme(name, 5, **kw)
    tl = simulate_timeline(s, parse_delay("uniform(low=0.5, high=1.5)"), 8, seed=1)
    assert len(tl.update_times) == 8 and np.all(np.diff(tl.update_times) > 0)
    assert set(tl.outcome) <= {"used", "stale", "cancelled", "waiting", "communicating", "in flight"}
    assert np.all(tl.end >= tl.start) and tl.end.max() <= tl.update_times[-1] + 1e-12
    for w in range(5):  # a worker does one thing at a time
        sel = np.argsort(tl.start[tl.worker == w], kind="stable")
        st, en = tl.start[tl.worker == w][sel], tl.end[tl.worker == w][sel]
        assert np.all(st[1:] >= en[:-1] - 1e-12)
    used = np.isin(tl.outcome, ["used", "stale"]).sum()
    if name != "local-sgd":
        assert used == 8 * s.grads_per_update
    if s.fresh:
        assert "stale" not in set(tl.outcome)


def test_timeline_caps():
    with pytest.raises(ParameterError, match="m"):
        simulate_timeline(make_scheme("sync", 500), parse_delay("exp(rate=1)"), 3)
    with pytest.raises(ParameterError, match="iterations"):
        simulate_timeline(make_scheme("sync", 5), parse_delay("exp(rate=1)"), 10_000)


@pytest.mark.parametrize("bad, words", [(0, "iterations"), (-5, "iterations"), (10**9, "iterations"),
                                        (2.5, "iterations")])
def test_bad_iterations(bad, words):
    with pytest.raises(ParameterError, match=words):
        simulate_runtime(make_scheme("sync", 3), parse_delay("exp(rate=1)"), bad)


def test_bad_seed():
    with pytest.raises(ParameterError, match="seed"):
        simulate_runtime(make_scheme("sync", 3), parse_delay("exp(rate=1)"), 10, seed=-1)


@pytest.mark.parametrize("name, kw, iters", [
    ("sync", {}, 100_000), ("k-sync", {"K": 5000}, 100_000), ("k-batch-sync", {"K": 10_000}, 200),
    ("async", {}, 20_000), ("k-async", {"K": 2500}, 200), ("k-batch-async", {"K": 100}, 2_000),
    ("local-sgd", {"H": 4}, 200),
])
def test_memory_stays_bounded_at_m_10000(name, kw, iters):
    s = make_scheme(name, 10_000, **kw)
    d = parse_delay("lognormal(mu=0, sigma=0.5)")
    tracemalloc.start()
    try:
        simulate_runtime(s, d, iters, seed=1, keep_times=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 200 * 2**20, f"{peak / 2**20:.0f} MiB"


def test_t95_is_students_t_quantile() -> None:
    """The batch means' interval half-width factor: scipy.stats.t's 97.5 % quantile (a dof below 1 is 1)."""
    from scipy import stats

    from distsgd.engines.batchmeans import t95
    for dof in (1, 2, 5, 19, 29, 99, 1000, 123_456):
        assert t95(dof) == float(stats.t.ppf(0.975, dof))
    assert t95(0) == t95(1)

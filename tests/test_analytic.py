"""Tests of the analytic core (distsgd/analytic.py).

Expected values are computed here independently of the code under test: closed forms written
out in the test, scipy.integrate.quad on formulas stated here, exact enumeration of small
discrete cases, or fixed-seed Monte Carlo with a tolerance of 4 confidence half-widths.
"""

from __future__ import annotations

import decimal
import itertools
import math
import time

import numpy as np
import pytest
from scipy import integrate, special, stats

from distsgd.analytic import (
    KINDS,
    Estimate,
    expected_runtime,
    order_statistic_cdf,
    order_statistic_mean,
    order_statistic_moments,
    order_statistic_pdf,
    order_statistic_std,
)
from distsgd.delays import (
    Empirical,
    Exponential,
    LogNormal,
    Pareto,
    TruncatedNormal,
    Uniform,
    Weibull,
)
from distsgd.numerics.maxsum import max_of_sums_mean as _local_sgd_numerical
from distsgd.numerics.superposition import kbatch_sync_runtime as _kbatch_sync_numerical
from distsgd.orderstats import Law as _OSLaw
from distsgd.orderstats import affine_quadrature_moments, quadrature_moments
from distsgd.orderstats import order_statistic_quadrature as _order_statistic_mean_quad
from distsgd.params import ParameterError
from distsgd.schemes import (
    Async,
    KAsync,
    KBatchAsync,
    KBatchSync,
    KSync,
    LocalSGD,
    Sync,
)
from scenarios import CLOSED_FORM_FAMILIES, Law, gamma_max_mean, law_mean, os_mean

Z95 = 1.959963984540054
KN = [(1, 1), (1, 10), (5, 10), (10, 10), (1, 1000), (500, 1000), (1000, 1000), (10000, 10000)]


def _hw4(samples: np.ndarray) -> float:
    """4 half-widths of the 95% confidence interval of the mean of i.i.d. samples."""
    return 4 * Z95 * float(np.std(samples, ddof=1)) / math.sqrt(samples.size)


# -- closed forms, written out here ---------------------------------------------------------

def exp_os_mean(rate: float, shift: float, k: int, n: int) -> float:
    return shift + math.fsum(1.0 / i for i in range(n - k + 1, n + 1)) / rate


def exp_os_std(rate: float, k: int, n: int) -> float:
    return math.sqrt(math.fsum(1.0 / i**2 for i in range(n - k + 1, n + 1))) / rate


def pareto_os_mean(xm: float, a: float, shift: float, k: int, n: int) -> float:
    g = special.gammaln
    return shift + xm * math.exp(g(n + 1) + g(n - k + 1 - 1 / a) - g(n - k + 1) - g(n + 1 - 1 / a))


def pareto_os_std(xm: float, a: float, k: int, n: int) -> float:
    """Rényi: X_{k:n} = x_m Π_{i=n−k+1}^{n} e^{Z_i/(αi)}, so E[X^r] = x_m^r Π αi/(αi − r); the
    variance m2 − m1² cancels badly in floating point, so it is done in 60-digit decimals."""
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        A = decimal.Decimal(repr(a))
        m1 = m2 = decimal.Decimal(1)
        for i in range(n - k + 1, n + 1):
            m1 *= A * i / (A * i - 1)
            m2 *= A * i / (A * i - 2)
        return float((m2 - m1 * m1).sqrt()) * xm


def uniform_os_mean(a: float, b: float, shift: float, k: int, n: int) -> float:
    return shift + a + (b - a) * k / (n + 1)


def uniform_os_std(a: float, b: float, k: int, n: int) -> float:
    return (b - a) * math.sqrt(k * (n - k + 1) / ((n + 1) ** 2 * (n + 2)))


CLOSED = [
    (Exponential(rate=2.0), lambda k, n: exp_os_mean(2.0, 0.0, k, n), lambda k, n: exp_os_std(2.0, k, n)),
    (Exponential(rate=0.5, shift=3.0), lambda k, n: exp_os_mean(0.5, 3.0, k, n), lambda k, n: exp_os_std(0.5, k, n)),
    (Pareto(xm=1.0, alpha=2.5), lambda k, n: pareto_os_mean(1.0, 2.5, 0.0, k, n),
     lambda k, n: pareto_os_std(1.0, 2.5, k, n) if 2.5 * (n - k + 1) > 2 else math.inf),
    (Pareto(xm=2.0, alpha=1.2, shift=0.5), lambda k, n: pareto_os_mean(2.0, 1.2, 0.5, k, n),
     lambda k, n: pareto_os_std(2.0, 1.2, k, n) if 1.2 * (n - k + 1) > 2 else math.inf),
    (Uniform(low=1.0, high=3.0), lambda k, n: uniform_os_mean(1.0, 3.0, 0.0, k, n),
     lambda k, n: uniform_os_std(1.0, 3.0, k, n)),
    (Uniform(low=0.0, high=1.0, shift=2.0), lambda k, n: uniform_os_mean(0.0, 1.0, 2.0, k, n),
     lambda k, n: uniform_os_std(0.0, 1.0, k, n)),
]


# -- order statistics ---------------------------------------------------------------------

@pytest.mark.parametrize("delay,mean,std", CLOSED, ids=lambda x: str(x) if not callable(x) else "")
def test_order_statistic_closed_forms_are_exact(delay, mean, std):
    for k, n in KN:
        est, s = order_statistic_moments(delay, k, n)
        assert est.kind == "exact"
        # (the gammaln form of the Pareto mean loses ~1e-12 to cancellation at large n)
        assert est.value == pytest.approx(mean(k, n), rel=1e-10), (k, n)
        assert s == pytest.approx(std(k, n), rel=1e-7), (k, n)
        assert est.std == s


def test_pareto_minimum_is_pareto():
    """X_{1:n} of Pareto(x_m, α) is Pareto(x_m, nα): mean x_m·nα/(nα − 1), to the last digit."""
    for n in (1, 10, 1000, 100_000):
        est = order_statistic_mean(Pareto(xm=2.0, alpha=2.5), 1, n)
        assert est.value == pytest.approx(2.0 * n * 2.5 / (n * 2.5 - 1), rel=1e-14)


@pytest.mark.parametrize("delay,mean,std", CLOSED, ids=lambda x: str(x) if not callable(x) else "")
def test_quadrature_path_matches_closed_forms(delay, mean, std):
    for k, n in KN:
        est = _order_statistic_mean_quad(delay, k, n)
        expect = mean(k, n)
        assert est.kind == "numerical", (k, n, est)
        assert abs(est.value - expect) <= 1e-9 * expect, (k, n, est.value, expect)
        assert est.error is not None and est.error <= 1e-6 * expect
        if math.isfinite(std(k, n)):
            assert est.std == pytest.approx(std(k, n), rel=1e-6), (k, n)


@pytest.mark.parametrize("delay", [LogNormal(mu=0.0, sigma=1.0), LogNormal(mu=0.0, sigma=2.0),
                                   Weibull(shape=0.3, scale=1.0), Weibull(shape=3.0, scale=2.0),
                                   TruncatedNormal(mean_=1.0, std_=1.0)], ids=str)
def test_quadrature_single_draw_is_the_mean(delay):
    """k = n = 1: E[X_{1:1}] = E[X] in closed form (lognormal e^{μ+σ²/2}, Weibull sΓ(1+1/k), ...)."""
    if isinstance(delay, LogNormal):
        expect = math.exp(delay.mu + delay.sigma**2 / 2)
    elif isinstance(delay, Weibull):
        expect = delay.scale * math.gamma(1 + 1 / delay.shape)
    else:
        a = delay.mean_ / delay.std_
        expect = delay.mean_ + delay.std_ * stats.norm.pdf(a) / stats.norm.cdf(a)
    est = order_statistic_mean(delay, 1, 1)
    assert est.kind == "numerical"
    assert est.value == pytest.approx(expect, rel=1e-9)


@pytest.mark.parametrize("delay", [LogNormal(mu=0.0, sigma=1.0), LogNormal(mu=0.5, sigma=2.0, shift=0.1),
                                   Weibull(shape=0.3, scale=1.0), Weibull(shape=1.5, scale=1.0, shift=0.2),
                                   TruncatedNormal(mean_=1.0, std_=0.5)], ids=str)
@pytest.mark.parametrize("k,n", [(1, 10), (5, 10), (10, 10), (3, 40)])
def test_order_statistics_match_monte_carlo(delay, k, n):
    rng = np.random.default_rng(1000 * k + n)
    x = np.sort(delay.sample(rng, (40_000, n)), axis=1)[:, k - 1]
    est = order_statistic_mean(delay, k, n)
    assert est.kind == "numerical"
    assert abs(est.value - x.mean()) <= _hw4(x), (est.value, x.mean())
    # the standard deviation too, where its sampling error is moderate (not for heavy tails)
    if not (isinstance(delay, Weibull) and delay.shape < 1) and not (isinstance(delay, LogNormal) and delay.sigma > 1):
        assert est.std == pytest.approx(x.std(), rel=0.05)


@pytest.mark.parametrize("delay", [LogNormal(mu=0.0, sigma=2.0), Weibull(shape=0.3, scale=1.0),
                                   TruncatedNormal(mean_=-1.0, std_=1.0)], ids=str)
@pytest.mark.parametrize("k,n", [(1, 10000), (5000, 10000), (10000, 10000), (990, 1000)])
def test_large_n_order_statistics_match_beta_sampling(delay, k, n):
    """X_{k:n} = F⁻¹(U_{k:n}) with U_{k:n} ~ Beta(k, n−k+1): an exact sampler for any n."""
    rng = np.random.default_rng(k + 7 * n)
    u = rng.beta(k, n - k + 1, 200_000)
    x = delay.ppf(u)
    est = order_statistic_mean(delay, k, n)
    assert est.kind == "numerical" and est.error <= 1e-6 * est.value
    assert abs(est.value - x.mean()) <= _hw4(x), (est.value, x.mean())


def test_empirical_order_statistics_by_enumeration():
    """Trace {1, 2, 2, 5} (+ shift 0.5): enumerate all 4^n equally likely draws for n = 3."""
    vals = [1.0, 2.0, 2.0, 5.0]
    d = Empirical.from_values(vals, shift=0.5)
    n = 3
    draws = np.array(list(itertools.product(vals, repeat=n))) + 0.5
    srt = np.sort(draws, axis=1)
    for k in range(1, n + 1):
        est, std = order_statistic_moments(d, k, n)
        assert est.kind == "exact"
        assert est.value == pytest.approx(srt[:, k - 1].mean(), rel=1e-13)
        assert std == pytest.approx(srt[:, k - 1].std(), rel=1e-12)


def test_pareto_infinite_cases():
    d = Pareto(xm=1.0, alpha=0.9)
    est = expected_runtime(Sync(10), d)
    assert est.kind == "infinite" and est.value is None
    # k-sync is finite iff α(m − K + 1) > 1
    assert expected_runtime(KSync(10, 10), d).kind == "infinite"
    ok = expected_runtime(KSync(10, 9), d)  # α·2 = 1.8 > 1
    assert ok.kind == "exact" and ok.value == pytest.approx(pareto_os_mean(1.0, 0.9, 0.0, 9, 10), rel=1e-12)
    half = Pareto(xm=1.0, alpha=0.5)
    assert expected_runtime(KSync(10, 9), half).kind == "infinite"  # α·2 = 1, not > 1
    assert expected_runtime(KSync(10, 8), half).kind == "exact"  # α·3 = 1.5
    assert order_statistic_std(Pareto(xm=1.0, alpha=1.5), 10, 10) == math.inf
    # async and the batch schemes need E[X] < ∞
    for s in (Async(10), KBatchAsync(10, 3), KAsync(10, 1), LocalSGD(10, 4)):
        e = expected_runtime(s, d)
        assert e.kind == "infinite" and e.value is None, s
    # k-batch-sync: finite iff m·α > 1 (all m workers must be stuck on a long job)
    assert expected_runtime(KBatchSync(2, 3), half).kind == "infinite"
    e = expected_runtime(KBatchSync(3, 3), half)
    assert e.kind in ("numerical", "approximation") and e.value is not None and e.value > 0


def test_order_statistic_cdf_and_pdf():
    d = Exponential(rate=2.0)
    x = np.linspace(0.0, 4.0, 41)
    n = 7
    # minimum and maximum of exponentials in closed form
    assert np.allclose(order_statistic_cdf(d, 1, n, x), 1 - np.exp(-2.0 * n * x), rtol=1e-12, atol=1e-15)
    assert np.allclose(order_statistic_cdf(d, n, n, x), (1 - np.exp(-2.0 * x)) ** n, rtol=1e-12, atol=1e-15)
    assert np.allclose(order_statistic_pdf(d, 1, n, x), 2.0 * n * np.exp(-2.0 * n * x), rtol=1e-10)
    # the density integrates to 1 and to the mean, for a non-closed-form law
    ln = LogNormal(mu=0.0, sigma=0.5)
    for k in (1, 4, 9):
        tot = integrate.quad(lambda t, k=k: order_statistic_pdf(ln, k, 9, t), 0, np.inf, limit=200)[0]
        mean = integrate.quad(lambda t, k=k: t * order_statistic_pdf(ln, k, 9, t), 0, np.inf, limit=200)[0]
        assert tot == pytest.approx(1.0, abs=1e-8)
        assert mean == pytest.approx(order_statistic_mean(ln, k, 9).value, rel=1e-7)
    # a trace has a pmf
    tr = Empirical.from_values([1.0, 2.0, 2.0, 5.0])
    pmf = order_statistic_pdf(tr, 2, 3, np.array([1.0, 1.5, 2.0, 5.0]))
    assert pmf[1] == 0.0 and pmf.sum() == pytest.approx(1.0, rel=1e-12)
    with pytest.raises(ValueError):
        order_statistic_mean(d, 0, 3)


# -- identities across schemes ------------------------------------------------------------

def test_exponential_kasync_equals_ksync():
    lam = 1.7
    d = Exponential(rate=lam)
    for m, K in [(10, 3), (50, 25), (1000, 999)]:
        expect = math.fsum(1.0 / i for i in range(m - K + 1, m + 1)) / lam
        a, s = expected_runtime(KAsync(m, K), d), expected_runtime(KSync(m, K), d)
        assert a.kind == s.kind == "exact"
        assert a.value == pytest.approx(expect, rel=1e-12) and s.value == pytest.approx(expect, rel=1e-12)


def test_exponential_kbatch_sync_equals_kbatch_async():
    lam = 0.8
    d = Exponential(rate=lam)
    for m, K in [(1, 5), (10, 3), (10, 30), (64, 129)]:
        expect = K / (m * lam)
        bs, ba = expected_runtime(KBatchSync(m, K), d), expected_runtime(KBatchAsync(m, K), d)
        assert bs.kind == ba.kind == "exact"
        assert bs.value == pytest.approx(expect, rel=1e-12) and ba.value == pytest.approx(expect, rel=1e-12)


@pytest.mark.parametrize("m,K", [(2, 2), (10, 5), (10, 10), (10, 30), (3, 100), (100, 50), (1000, 10)])
def test_forced_renewal_path_on_exponential(m, K):
    """The lattice renewal computation, forced on Exp(λ), must give K/(mλ)."""
    lam = 2.0
    est = _kbatch_sync_numerical(Exponential(rate=lam), m, K)
    expect = K / (m * lam)
    assert est.kind in ("numerical", "approximation")
    assert abs(est.value - expect) <= max(1e-6 * expect, est.error), (est, expect)
    if est.kind == "numerical":
        assert abs(est.value - expect) <= 1e-6 * expect


ALL_DELAYS = [Exponential(rate=2.0), Exponential(rate=1.0, shift=0.5), Pareto(xm=1.0, alpha=2.5),
              Pareto(xm=1.0, alpha=1.5), LogNormal(mu=0.0, sigma=1.0), TruncatedNormal(mean_=1.0, std_=0.5),
              Weibull(shape=0.5, scale=1.0), Weibull(shape=2.0, scale=1.0), Uniform(low=0.5, high=1.5),
              Empirical.from_values([0.31, 0.52, 0.52, 1.7, 2.05], shift=0.1)]


@pytest.mark.parametrize("delay", ALL_DELAYS, ids=str)
def test_async_is_mean_over_m(delay):
    """Elementary renewal theorem, with E[X] computed here from the family's formula."""
    if isinstance(delay, Exponential):
        mean = delay.shift + 1 / delay.rate
    elif isinstance(delay, Pareto):
        mean = delay.alpha * delay.xm / (delay.alpha - 1) + delay.shift
    elif isinstance(delay, LogNormal):
        mean = math.exp(delay.mu + delay.sigma**2 / 2) + delay.shift
    elif isinstance(delay, TruncatedNormal):
        a = delay.mean_ / delay.std_
        mean = delay.mean_ + delay.std_ * stats.norm.pdf(a) / stats.norm.cdf(a) + delay.shift
    elif isinstance(delay, Weibull):
        mean = delay.scale * math.gamma(1 + 1 / delay.shape) + delay.shift
    elif isinstance(delay, Uniform):
        mean = (delay.low + delay.high) / 2 + delay.shift
    else:
        mean = float(np.mean(delay.values)) + delay.shift
    for m in (1, 7, 1000):
        e = expected_runtime(Async(m), delay)
        assert e.kind == "exact" and e.value == pytest.approx(mean / m, rel=1e-9)
        assert expected_runtime(KAsync(m, 1), delay).value == pytest.approx(mean / m, rel=1e-9)
        e = expected_runtime(KBatchAsync(m, 5), delay)
        assert e.kind == "exact" and e.value == pytest.approx(5 * mean / m, rel=1e-9)


def test_exponential_sync_async_ratio():
    d = Exponential(rate=3.0)
    for m in (1, 2, 10, 500):
        hm = math.fsum(1.0 / i for i in range(1, m + 1))
        ratio = expected_runtime(Sync(m), d).value / expected_runtime(Async(m), d).value
        assert ratio == pytest.approx(m * hm, rel=1e-12)


def law_of(delay) -> Law:
    """The same law as a tests/scenarios.py Law, whose order statistics are computed there
    independently of distsgd (closed forms, a finite sum for a trace, scipy quad)."""
    fam = {Exponential: "exp", Pareto: "pareto", LogNormal: "lognormal", TruncatedNormal: "normal",
           Weibull: "weibull", Uniform: "uniform", Empirical: "empirical"}[type(delay)]
    if isinstance(delay, Empirical):
        return Law(str(delay), fam, (), delay.shift, tuple(float(v) for v in delay.values))
    fields = {"exp": ("rate",), "pareto": ("xm", "alpha"), "lognormal": ("mu", "sigma"),
              "normal": ("mean_", "std_"), "weibull": ("shape", "scale"), "uniform": ("low", "high")}[fam]
    return Law(str(delay), fam, tuple((f.rstrip("_"), float(getattr(delay, f))) for f in fields), delay.shift)


@pytest.mark.parametrize("delay", ALL_DELAYS, ids=str)
def test_local_sgd_with_one_step_is_the_slowest_worker_plus_D(delay):
    """H = 1: a round is one step of every worker, the slowest of m, then D: E[T] = E[X_{m:m}] + D,
    with E[X_{m:m}] from tests/scenarios.py (closed forms for the exponential, Pareto, uniform
    and a trace — exact to 1e-9 —, scipy quad for the others — numerical, 1e-6 + its error)."""
    law = law_of(delay)
    closed = law.family in CLOSED_FORM_FAMILIES
    for m in (1, 8, 1000):
        top = os_mean(law, m, m)
        for D in (0.0, 0.25):
            e = expected_runtime(LocalSGD(m, 1, D), delay)
            assert e.kind == ("exact" if closed else "numerical"), (m, D, e)
            tol = 1e-9 * top if closed else 1e-6 * top + e.error
            assert abs(e.value - (top + D)) <= tol, (m, D, e.value, top + D)


def test_kasync_kind_logic():
    """k-async (DESIGN §2): exact for the memoryless exponential without shift, (H_m − H_{m−K})/λ;
    E[X_{K:m}] as an upper bound for NLU laws; unavailable otherwise; K = 1 is async (E[X]/m) and
    K = m is sync (E[X_{m:m}]).  Every expected value is computed here or in tests/scenarios.py."""
    m, K = 20, 5
    h = math.fsum(1.0 / i for i in range(m - K + 1, m + 1))  # H_20 − H_15
    bounds = [
        (Exponential(rate=1.0, shift=0.5), 0.5 + h, 1e-12),
        (Uniform(low=0.5, high=1.5), 0.5 + 1.0 * K / (m + 1), 1e-12),
        # truncated normal and Weibull: quadrature of P(X_{K:m} > x), written in tests/scenarios.py
        (TruncatedNormal(mean_=1.0, std_=0.5), os_mean(law_of(TruncatedNormal(mean_=1.0, std_=0.5)), K, m), 1e-6),
        (Weibull(shape=2.0, scale=1.0), os_mean(law_of(Weibull(shape=2.0, scale=1.0)), K, m), 1e-6),
    ]
    for d, expect, rtol in bounds:
        e = expected_runtime(KAsync(m, K), d)
        assert e.kind == "upper_bound", d
        assert abs(e.value - expect) <= rtol * expect + (e.error or 0.0), (d, e.value, expect)
    for d in (LogNormal(mu=0.0, sigma=1.0), Pareto(xm=1.0, alpha=2.5), Weibull(shape=0.5, scale=1.0)):
        e = expected_runtime(KAsync(m, K), d)
        assert e.kind == "unavailable" and e.value is None and e.method, d
        law = law_of(d)
        one = expected_runtime(KAsync(m, 1), d)
        assert one.kind == "exact" and one.value == pytest.approx(law_mean(law) / m, rel=1e-9), d
        every = expected_runtime(KAsync(m, m), d)
        closed = law.family in CLOSED_FORM_FAMILIES
        assert every.kind == ("exact" if closed else "numerical"), d
        assert abs(every.value - os_mean(law, m, m)) <= (1e-9 if closed else 1e-6) * every.value + (every.error or 0)
    e = expected_runtime(KAsync(m, K), Exponential(rate=2.0))
    assert e.kind == "exact" and e.value == pytest.approx(h / 2.0, rel=1e-12)


# -- k-batch-sync: renewal superposition vs Monte Carlo and exact enumeration ----------------

def mc_kbatch_sync(delay, m: int, K: int, iters: int, seed: int) -> np.ndarray:
    """Per iteration: each worker's completion times are cumulative sums of its draws (K draws
    cover every case); T is the K-th smallest completion time over all workers."""
    rng = np.random.default_rng(seed)
    x = np.cumsum(delay.sample(rng, (iters, m, K)), axis=2).reshape(iters, m * K)
    return np.partition(x, K - 1, axis=1)[:, K - 1]


@pytest.mark.parametrize("delay", [Pareto(xm=1.0, alpha=3.0), Uniform(low=0.0, high=1.0),
                                   Exponential(rate=1.0, shift=0.5), LogNormal(mu=0.0, sigma=1.0),
                                   Weibull(shape=0.6, scale=1.0)], ids=str)
@pytest.mark.parametrize("m,K", [(5, 3), (5, 5), (4, 11)])
def test_kbatch_sync_matches_monte_carlo(delay, m, K):
    est = expected_runtime(KBatchSync(m, K), delay)
    assert est.kind == "numerical", est
    t = mc_kbatch_sync(delay, m, K, 60_000, seed=31 * m + K)
    assert abs(est.value - t.mean()) <= _hw4(t), (est.value, t.mean())
    # pathwise bounds: T ≤ X_{K:m} for K ≤ m, and E[T] ≤ (K+m)E[X]/m (Wald)
    if K <= m:
        assert est.value <= order_statistic_mean(delay, K, m).value * (1 + 1e-9)
    assert est.value <= (K + m) * delay.mean / m


def test_kbatch_sync_trace_by_enumeration():
    """Trace {1, 2.5} (shift 0.5): all 2^(m·K) equally likely job-time assignments."""
    d = Empirical.from_values([1.0, 2.5], shift=0.5)
    for m, K in [(2, 3), (3, 2), (2, 2)]:
        x = np.array(list(itertools.product([1.5, 3.0], repeat=m * K))).reshape(-1, m, K)
        t = np.sort(np.cumsum(x, axis=2).reshape(len(x), -1), axis=1)[:, K - 1]
        est = expected_runtime(KBatchSync(m, K), d)
        assert est.kind in ("exact", "numerical")
        assert est.value == pytest.approx(t.mean(), rel=1e-9), (m, K)


def test_kbatch_sync_special_cases():
    d = LogNormal(mu=0.0, sigma=0.5)
    one = expected_runtime(KBatchSync(7, 1), d)
    assert one.value == pytest.approx(order_statistic_mean(d, 1, 7).value, rel=1e-12)
    solo = expected_runtime(KBatchSync(1, 6), d)  # one worker: a sum of K delays
    assert solo.kind == "exact" and solo.value == pytest.approx(6 * math.exp(0.125), rel=1e-12)
    # beyond the work budget: an upper bound, returned quickly
    t0 = time.process_time()  # CPU time: the machine may be busy with other tests
    big = expected_runtime(KBatchSync(100_000, 100_000), d)
    assert time.process_time() - t0 < 2.0
    assert big.kind == "upper_bound" and big.value == pytest.approx(2 * math.exp(0.125), rel=1e-12)


# -- local SGD ------------------------------------------------------------------------------

def mc_local_max(delay, m: int, H: int, iters: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return delay.sample(rng, (iters, m, H)).sum(axis=2).max(axis=1)


@pytest.mark.parametrize("delay", [Uniform(low=0.0, high=1.0), Uniform(low=1.0, high=3.0, shift=0.5),
                                   LogNormal(mu=0.0, sigma=0.5), LogNormal(mu=0.0, sigma=1.0)], ids=str)
@pytest.mark.parametrize("m,H", [(10, 5), (50, 3)])
def test_local_sgd_matches_monte_carlo(delay, m, H):
    D = 0.3
    est = expected_runtime(LocalSGD(m, H, D), delay)
    assert est.kind == "numerical", est
    s = mc_local_max(delay, m, H, 40_000, seed=m * H)
    per_step = (s + D) / H
    assert abs(est.value - per_step.mean()) <= _hw4(per_step), (est.value, per_step.mean())


@pytest.mark.parametrize("m,H,lam,shift", [(10, 5, 1.0, 0.0), (100, 10, 2.0, 0.4), (1000, 3, 0.5, 1.0)])
def test_local_sgd_exponential_is_gamma(m, H, lam, shift):
    d = Exponential(rate=lam, shift=shift)
    expect = H * shift + gamma_max_mean(m, H, lam)
    est = expected_runtime(LocalSGD(m, H, 0.0), d)
    assert est.kind == "numerical"
    assert est.value == pytest.approx(expect / H, rel=1e-8)
    # the general lattice path, forced on the same law
    lat = _local_sgd_numerical(d, m, H)
    assert lat.kind in ("numerical", "approximation")
    assert abs(lat.value - expect) <= max(1e-6 * expect, lat.error), (lat, expect)


@pytest.mark.parametrize("shape,scale,shift,m", [(3, 0.5, 0.7, 10), (10, 2.0, 0.0, 100), (2, 1.0, 4.0, 1)])
def test_order_statistic_moments_move_with_an_affine_map(shape, scale, shift, m):
    """The quadrature of Y_{m:m} for the standard Gamma, moved to shift + scale·Y, is the quadrature
    of the moved law itself: mean, variance (scale²) and error (scale)."""
    direct = quadrature_moments(_OSLaw(stats.gamma(shape, scale=scale), shift=shift), m, m)
    moved = affine_quadrature_moments(stats.gamma(shape, scale=scale), shift, m, m)
    assert moved.mean == pytest.approx(direct.mean, rel=1e-12)
    assert moved.var == pytest.approx(direct.var, rel=1e-9)
    assert moved.error <= 10 * direct.error + 1e-15 * direct.mean


def test_local_sgd_uniform_two_steps_is_triangular():
    """H = 2 uniforms on [0, 1]: F(x) = x²/2 on [0, 1], 1 − (2 − x)²/2 on [1, 2]."""
    m = 25
    F = lambda x: x * x / 2 if x <= 1 else 1 - (2 - x) ** 2 / 2  # noqa: E731
    expect = sum(integrate.quad(lambda x: 1 - F(x) ** m, a, b, epsabs=0, epsrel=1e-13)[0] for a, b in ((0, 1), (1, 2)))
    lat = _local_sgd_numerical(Uniform(low=0.0, high=1.0), m, 2)
    assert lat.kind == "numerical"
    assert lat.value == pytest.approx(expect, rel=1e-7)


def test_local_sgd_special_cases():
    d = Weibull(shape=1.5, scale=2.0)
    e = expected_runtime(LocalSGD(1, 4, 1.0), d)  # one worker: (H·E[X] + D)/H
    assert e.kind == "exact" and e.value == pytest.approx((4 * 2 * math.gamma(1 + 1 / 1.5) + 1) / 4, rel=1e-12)
    assert expected_runtime(LocalSGD(8, 4), Pareto(xm=1.0, alpha=1.0)).kind == "infinite"
    const = expected_runtime(LocalSGD(8, 4, 2.0), Empirical.from_values([0.5, 0.5]))
    assert const.kind == "exact" and const.value == pytest.approx((4 * 0.5 + 2.0) / 4)


# -- the contract -------------------------------------------------------------------------------

def test_every_pair_returns_a_well_formed_estimate():
    delays = ALL_DELAYS + [Pareto(xm=1.0, alpha=0.4), Empirical.from_values([1.0, 1.0])]
    schemes = [Sync(6), KSync(6, 2), KBatchSync(6, 4), KBatchSync(6, 13), Async(6), KAsync(6, 3),
               KBatchAsync(6, 9), LocalSGD(6, 1, 0.1), LocalSGD(6, 3, 0.1)]
    for d in delays:
        for s in schemes:
            e = expected_runtime(s, d)
            assert isinstance(e, Estimate) and e.kind in KINDS and e.method
            assert (e.value is None) == (e.kind in ("infinite", "unavailable")), (s, d, e)
            if e.value is not None:
                assert type(e.value) is float and math.isfinite(e.value) and e.value > 0
            if e.kind == "numerical":
                assert e.error is not None and e.error <= 1e-6 * e.value
    with pytest.raises(ValueError):
        Estimate(None, "exact", "x")
    with pytest.raises(ParameterError, match="scheme"):  # the library's one exception type (DESIGN §6)
        expected_runtime("sync", Exponential(rate=1.0))  # type: ignore[arg-type]

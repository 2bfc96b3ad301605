"""Fuzz the library's public API with extreme but allowed values (and junk), issue 7.

Every call must either return a sound result or raise :class:`ParameterError` naming a
parameter — never another exception, never NaN, never a negative runtime — and stay within
10 s of CPU and 1 GiB (tracemalloc peak) each.  Hypothesis runs derandomized (a fixed seed), so the
same calls run every time.  Monte Carlo calls pass a small ``budget`` (the time guard of
simulate_runtime/simulate_updates, in cost units ≈ ns): a call predicted to cost more is
refused, which exercises the guard and keeps the file fast; the measured time of every call
checks the cost model from above.  Calls are counted per kind; the last test asserts at least
2 000 of them and prints the counts and the slowest calls.
"""

from __future__ import annotations

import math
import time
import tracemalloc
from collections import Counter, defaultdict

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from distsgd import ParameterError, limits, make_scheme, parse_delay
from distsgd.analytic import (
    Estimate,
    expected_runtime,
    order_statistic_cdf,
    order_statistic_mean,
    order_statistic_pdf,
    order_statistic_std,
)
from distsgd.curves import build
from distsgd.delays import Delay, Empirical, Exponential, LogNormal, Pareto, TruncatedNormal, Uniform, Weibull
from distsgd.montecarlo import (
    RuntimeSample,
    UpdateTrace,
    sample_order_statistic,
    simulate_runtime,
    simulate_timeline,
    simulate_updates,
)
from distsgd.schemes import H_MAX, K_BATCH_MAX, M_MAX, SCHEME_NAMES
from distsgd.topology import NODES

#: one worker runs the whole file under xdist, so that the last test sees every call counted
pytestmark = pytest.mark.xdist_group("library_fuzz")


@pytest.fixture(scope="module", autouse=True)
def _kernels_compiled() -> None:
    """Every call below is timed (≤ 10 s).  numba compiles a kernel on its first call, from a
    cold cache in seconds (24 s for k-batch-sync's on a busy fresh clone): each engine runs once
    first, on a parametric and an empirical law, so that the times are the library's."""
    for d in (parse_delay("exp(rate=1)"), Empirical(values=np.array([0.5, 1.0, 2.0]))):
        for name in SCHEME_NAMES:
            s = build(name, 4, 2, 2)
            simulate_runtime(s, d, 50, seed=0, keep_times=False)
            simulate_updates(s, d, 20, 2, 0)
            simulate_timeline(s, d, 3, 0)

MAX_SECONDS = 10.0
MAX_BYTES = 2**30
#: the Monte Carlo budget of one fuzzed call (cost units ≈ ns): about 50 ms predicted
MC_BUDGET = 5e7

CALLS: Counter[str] = Counter()
REFUSED: Counter[str] = Counter()
SECONDS: dict[str, float] = defaultdict(float)
SLOWEST: list[tuple[float, str]] = []
FUZZ_TESTS = {"junk", "delays", "order_statistics", "runtime", "updates_and_timelines"}
DONE: set[str] = set()

#: no shrinking phase: a failing call is reported as generated (shrinking heavy calls can
#: take longer than the whole run); derandomized, so it is the same call every time
FUZZ = settings(derandomize=True, deadline=None, database=None, print_blob=True,
                suppress_health_check=list(HealthCheck),
                phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target])


def call(kind: str, f, *args, **kwargs):
    """Run one library call, measured: ≤ 10 s of the process's CPU time (a machine busy with other
    work does not count; wall time did, and failed a 3 s call on a loaded machine), tracemalloc
    peak ≤ 1 GiB.  Returns
    (result, None) or (None, the ParameterError); any other exception propagates."""
    tracemalloc.start()
    t0 = time.process_time()  # CPU seconds, as the library's bounds are stated (limits.TIME_BUDGET_SECONDS)
    error = None
    result = None
    try:
        result = f(*args, **kwargs)
    except ParameterError as exc:
        error = exc
    finally:
        dt = time.process_time() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        CALLS[kind] += 1
        SECONDS[kind] += dt
        SLOWEST.append((dt, f"{kind}: {getattr(f, '__name__', f)}{_short(args)}"))
        SLOWEST.sort(reverse=True)
        del SLOWEST[10:]
    assert dt <= MAX_SECONDS, f"{kind} took {dt:.1f} s: {getattr(f, '__name__', f)}{_short(args)}"
    assert peak <= MAX_BYTES, f"{kind} used {peak / 2**20:.0f} MiB"
    if error is not None:
        REFUSED[kind] += 1
        assert error.parameter and isinstance(error.parameter, str) and "\n" not in str(error)
    return result, error


def _short(args) -> str:
    text = "(" + ", ".join(str(a) if not isinstance(a, np.ndarray) else f"array{a.shape}" for a in args) + ")"
    return text if len(text) < 160 else text[:160] + "…)"


def finite_nonneg(x) -> bool:
    a = np.asarray(x, dtype=float)
    return bool(np.all(np.isfinite(a)) and np.all(a >= 0))


# -----------------------------------------------------------------------------------------
# strategies: every family at the edges of its domain, with shifts


def _edge(lo, hi, extra=()):
    """The domain's ends, points near them, a few typical values and anything in between."""
    pts = [lo, hi, lo * (1 + 1e-12) if lo else 1e-300, hi * (1 - 1e-12), *extra]
    return st.one_of(st.sampled_from([p for p in pts if lo <= p <= hi]),
                     st.floats(lo, hi, allow_nan=False, allow_infinity=False))


SHIFTS = _edge(0.0, limits.TIME_SCALE_MAX, (1e-9, 0.5, 1.0))
T0, T1 = limits.TIME_SCALE_MIN, limits.TIME_SCALE_MAX


@st.composite
def delays(draw) -> Delay | None:
    """A delay of any family, parameters at the edges of their domains (None when a joint
    constraint refuses the combination, which must be a ParameterError)."""
    family = draw(st.sampled_from(["exp", "pareto", "lognormal", "normal", "weibull", "uniform", "empirical"]))
    shift = draw(SHIFTS)
    if family == "exp":
        args = dict(rate=draw(_edge(1e-6, 1e9, (1.0,))))
        cls = Exponential
    elif family == "pareto":
        args = dict(xm=draw(_edge(T0, T1, (1.0,))), alpha=draw(_edge(limits.PARETO_ALPHA_MIN, 1e3, (1.0, 2.0, 2.5))))
        cls = Pareto
    elif family == "lognormal":
        args = dict(mu=draw(_edge(limits.LOGNORMAL_MU_MIN, limits.LOGNORMAL_MU_MAX, (0.0,))),
                    sigma=draw(_edge(1e-300, limits.LOGNORMAL_SIGMA_MAX, (1e-9, 1.0, 3.0))))
        cls = LogNormal
    elif family == "normal":
        std = draw(_edge(T0, T1, (1.0,)))
        ratio = draw(st.sampled_from([-30.0, -29.999, -3.0, 0.0, 1.0, 30.0, 1e3]))
        args = dict(mean_=max(-T1, min(T1, ratio * std)), std_=std)
        cls = TruncatedNormal
    elif family == "weibull":
        args = dict(shape=draw(_edge(limits.WEIBULL_SHAPE_MIN, 1e3, (0.2, 0.5, 1.0))), scale=draw(_edge(T0, T1, (1.0,))))  # noqa: E501
        cls = Weibull
    elif family == "uniform":
        lo = draw(_edge(0.0, T1, (1.0,)))
        args = dict(low=lo, high=draw(_edge(T0, T1, (lo + 1.0, lo * 1.001 + T0))))
        cls = Uniform
    else:
        n = draw(st.sampled_from([2, 3, 50, 1000]))
        kind = draw(st.sampled_from(["extreme", "equal", "lognormal", "discrete"]))
        rng = np.random.default_rng(draw(st.integers(0, 2**32)))
        if kind == "extreme":
            v = rng.choice([1e-300, 1e-9, 1.0, limits.MAX_TRACE_TIME], n)
        elif kind == "equal":
            v = np.full(n, draw(_edge(1e-300, limits.MAX_TRACE_TIME, (1.0,))))
        elif kind == "lognormal":
            v = np.minimum(rng.lognormal(0, 3, n) + 1e-12, limits.MAX_TRACE_TIME)
        else:
            v = rng.integers(1, 6, n).astype(float)
        d, err = call("construct", Empirical.from_values, v, "fuzz", shift)
        assert err is None, err
        return d
    d, err = call("construct", lambda: cls(shift=shift, **args))
    if err is not None:
        assert family in ("uniform", "normal") and err.parameter in ("high", "mean"), err
        return None
    return d


M_VALUES = st.one_of(st.sampled_from([1, 2, 3, 7, 10, 100, 1000, M_MAX - 1, M_MAX]), st.integers(1, M_MAX))


@st.composite
def schemes(draw, max_m: int = M_MAX):
    name = draw(st.sampled_from(SCHEME_NAMES))
    m = draw(M_VALUES.filter(lambda v: v <= max_m) if max_m < M_MAX else M_VALUES)
    K = H = None
    D = 0.0
    if name in ("k-sync", "k-async"):
        K = draw(st.one_of(st.sampled_from([1, m, max(1, m - 1), max(1, m // 2)]), st.integers(1, m)))
    elif name in ("k-batch-sync", "k-batch-async"):
        K = draw(st.one_of(st.sampled_from([1, m, 2 * m, 10 * m, K_BATCH_MAX]), st.integers(1, K_BATCH_MAX)))
        K = min(K, K_BATCH_MAX)
    elif name == "local-sgd":
        H = draw(st.one_of(st.sampled_from([1, 2, H_MAX]), st.integers(1, H_MAX)))
        D = draw(_edge(0.0, 1e9, (0.5,)))
    graph = None
    if name in ("d-psgd", "ad-psgd"):  # a graph of at most NODES.high nodes (its own domain, DESIGN §12.1)
        m = min(m, int(NODES.high))
        graph = draw(st.sampled_from(["ring", "exponential", "star", "torus"]))
    s, err = call("construct", make_scheme, name, m, K=K, H=H, comm_delay=D, topology=graph)
    assert err is None, err
    return s


# -----------------------------------------------------------------------------------------
# 1. junk: spec strings, values outside the domains, wrong types


JUNK_TEXT = st.one_of(
    st.text(max_size=60),
    st.builds(lambda name, body: f"{name}({body})",
              st.sampled_from(["exp", "pareto", "lognormal", "normal", "weibull", "uniform", "empirical",
                               "shifted-exp", "gamma", "EXP", "trace", ""]),
              st.lists(st.builds(lambda k, v: f"{k}={v}",
                                 st.sampled_from(["rate", "xm", "alpha", "mu", "sigma", "mean", "std", "shape",
                                                  "scale", "low", "high", "shift", "file", "x", ""]),
                                 st.one_of(st.sampled_from(["nan", "inf", "-inf", "-1", "0", "1e-300", "5e-324",
                                                            "1e308", "1e400", "", "abc", "1_000", "0x10",
                                                            "/dev/zero", "/nonexistent", "1e6", "1e9"]),
                                           st.floats(allow_nan=True).map(repr))), max_size=4)
              .map(", ".join)),
    st.sampled_from(["exp(rate=1", "exp(rate=1))", "exp((rate=1)", "pareto(xm=1, alpha=2.5,)", "(" * 3000,
                     "exp(rate=1, rate=1)", "empirical(file=/dev/zero)", "empirical(file=/)",
                     "empirical(file=/proc/self/status)"]),
)

BAD_VALUES = st.sampled_from([None, True, False, "abc", "", float("nan"), float("inf"), -1, 0, 10**400, -10**400,
                              2.5, [1, 2], {"a": 1}, object(), np.array([1.0, 2.0]), b"1", 1e308, -0.0, 5e-324])


@settings(FUZZ, max_examples=400)
@given(text=JUNK_TEXT, bad=BAD_VALUES, which=st.integers(0, 11))
def test_junk(text, bad, which):
    d, _ = call("parse_delay", parse_delay, text)
    if d is not None:
        assert isinstance(d, Delay) and not math.isnan(d.mean)
    exp = Exponential(rate=1.0)
    s = make_scheme("k-sync", 5, K=2)
    attempts = [
        lambda: make_scheme("k-batch-async", bad, K=2),
        lambda: make_scheme("k-sync", 5, K=bad),
        lambda: make_scheme("local-sgd", 5, H=bad),
        lambda: make_scheme("local-sgd", 5, H=2, comm_delay=bad),
        lambda: Pareto(xm=1.0, alpha=bad),
        lambda: expected_runtime(s, bad),
        lambda: simulate_runtime(s, exp, bad, seed=1, budget=MC_BUDGET),
        lambda: simulate_runtime(s, exp, 10, seed=bad, budget=MC_BUDGET),
        lambda: order_statistic_mean(exp, bad, 5),
        lambda: exp.ppf(bad),
        lambda: exp.sample(np.random.default_rng(0), bad),
        lambda: simulate_updates(s, exp, 10, bad, seed=1, budget=MC_BUDGET),
    ]
    r, err = call("bad_value", attempts[which])
    # a few of these values are valid for some parameters (0 for a comm_delay or a seed, 2.5
    # or -0.0 for a probability …): then the result must be sound
    if err is None:
        if isinstance(r, RuntimeSample):
            assert finite_nonneg([r.mean, *r.ci95])
        elif isinstance(r, np.ndarray):
            assert not np.isnan(r).any()
    DONE.add("junk")


# -----------------------------------------------------------------------------------------
# 2. every delay family at its edges: moments, quantiles, cdf/sf/pdf, samples


Q = np.array([0.0, 1e-300, 5e-324, 1e-16, 1e-3, 0.5, 1 - 1e-16, 1.0])
X = np.array([-np.inf, -1e300, 0.0, 5e-324, 1e-300, 1e-9, 0.5, 1.0, 1e6, 2e6 + 1, 1e9, 1e300, np.inf])


@settings(FUZZ, max_examples=240)
@given(d=delays(), seed=st.integers(0, 2**63 - 1), size=st.sampled_from([None, 0, 1, 7, (3, 4), 10_000]))
def test_delays(d, seed, size):
    if d is None:
        return
    for name in ("mean", "var", "std", "tail_index", "support", "is_nlu", "key", "label", "latex"):
        v, err = call("delay." + name, lambda n=name: getattr(d, n))
        assert err is None
        if name in ("mean", "var", "std"):
            assert not math.isnan(v) and v >= 0
            assert math.isinf(v) == (d.tail_index <= (1 if name == "mean" else 2)), (d, name, v)
    lo = d.support[0]
    for f in (d.ppf, d.isf):
        q, err = call("delay." + f.__name__, f, Q)
        assert err is None and not np.isnan(q).any() and np.all(q >= lo - 1e-9 * abs(lo))
    for f in (d.cdf, d.sf):
        p, err = call("delay." + f.__name__, f, X)
        assert err is None and np.all((p >= 0) & (p <= 1))
    p, err = call("delay.pdf", d.pdf, X)
    assert err is None and not np.isnan(p).any() and np.all(p >= 0)
    x, err = call("delay.sample", d.sample, np.random.default_rng(seed), size)
    assert err is None and finite_nonneg(x) and np.all(np.asarray(x) >= lo)
    again = call("parse_delay", parse_delay, d.key)[0] if not isinstance(d, Empirical) else d
    assert again == d
    DONE.add("delays")


# -----------------------------------------------------------------------------------------
# 3. order statistics, n up to M_MAX


@settings(FUZZ, max_examples=200)
@given(d=delays(), n=M_VALUES, kk=st.floats(0, 1), seed=st.integers(0, 2**63 - 1))
def test_order_statistics(d, n, kk, seed):
    if d is None:
        return
    k = max(1, min(n, int(round(kk * n))))
    e, err = call("order_statistic_mean", order_statistic_mean, d, k, n)
    assert err is None and isinstance(e, Estimate)
    if e.value is not None:
        assert math.isfinite(e.value) and e.value >= d.support[0] * (1 - 1e-9)
    s, err = call("order_statistic_std", order_statistic_std, d, k, n)
    assert err is None and (s is None or (not math.isnan(s) and s >= 0))
    for f in (order_statistic_cdf, order_statistic_pdf):
        v, err = call(f.__name__, f, d, k, n, X)
        assert err is None and not np.isnan(v).any() and np.all(v >= 0)
        if f is order_statistic_cdf:
            assert np.all(v <= 1)
    x, err = call("sample_order_statistic", sample_order_statistic, d, k, n, seed, 100)
    assert err is None and finite_nonneg(x)
    DONE.add("order_statistics")


# -----------------------------------------------------------------------------------------
# 4. expected_runtime and simulate_runtime: every scheme, m from 1 to 100 000


@settings(FUZZ, max_examples=160)
@given(s=schemes(), d=delays(), iterations=st.sampled_from([2, 3, 10, 100, 2000]), seed=st.integers(0, 2**63 - 1))
def test_runtime(s, d, iterations, seed):
    if d is None:
        return
    e, err = call("expected_runtime", expected_runtime, s, d)
    assert err is None, f"a valid pair raised: {err}"  # never raises for a valid (scheme, delay)
    assert (e.value is None) == (e.kind in ("infinite", "unavailable"))
    if e.value is not None:
        assert math.isfinite(e.value) and e.value >= 0
    r, err = call("simulate_runtime", simulate_runtime, s, d, iterations, seed, False, budget=MC_BUDGET)
    if err is not None:
        assert err.parameter in ("iterations", "m", "K", "H"), err
        return
    assert finite_nonneg([r.mean, r.std, *r.ci95]) and r.ci95[0] <= r.mean <= r.ci95[1]
    assert r.iterations >= iterations and r.seed == seed
    if r.staleness_mean is not None:
        assert r.staleness_mean >= 0 and 0 <= r.fresh_fraction <= 1
    DONE.add("runtime")


# -----------------------------------------------------------------------------------------
# 5. simulate_updates and simulate_timeline


@settings(FUZZ, max_examples=130)
@given(s=schemes(max_m=300), d=delays(), updates=st.sampled_from([1, 2, 50, 400]), replicas=st.sampled_from([1, 3]),
       iterations=st.sampled_from([1, 3, 10]), seed=st.integers(0, 2**63 - 1))
def test_updates_and_timelines(s, d, updates, replicas, iterations, seed):
    if d is None:
        return
    tr, err = call("simulate_updates", simulate_updates, s, d, updates, replicas, seed, budget=MC_BUDGET)
    if err is None:
        assert isinstance(tr, UpdateTrace) and tr.times.shape == (replicas, updates)
        assert finite_nonneg(tr.times) and np.all(np.diff(tr.times, axis=1) >= 0)
        if tr.staleness is not None:
            assert tr.staleness.min() >= 0 and tr.workers.max() < s.m
    else:
        assert err.parameter in ("updates", "replicas", "m", "K", "H"), err
    tl, err = call("simulate_timeline", simulate_timeline, s, d, iterations, seed)
    if err is None:
        assert len(tl.update_times) == iterations and finite_nonneg(tl.update_times)
        assert np.all(np.diff(tl.update_times) >= 0)
        assert finite_nonneg(tl.start) and np.all(tl.end >= tl.start) and np.all(tl.staleness >= 0)
    else:
        assert err.parameter in ("m", "K", "H", "iterations"), err
    DONE.add("updates_and_timelines")


# -----------------------------------------------------------------------------------------


def test_zz_counts():
    """At least 2 000 library calls, none over 10 s or 1 GiB (asserted per call above)."""
    if DONE != FUZZ_TESTS:
        pytest.skip(f"only a subset of the fuzz tests ran ({sorted(DONE)})")
    total = sum(CALLS.values())
    lines = [f"{total} library calls, {sum(REFUSED.values())} refused with ParameterError, "
             f"{sum(SECONDS.values()):.1f} s in calls"]
    for kind in sorted(CALLS, key=lambda k: -CALLS[k]):
        lines.append(f"  {kind:24s} {CALLS[kind]:6d} calls  {REFUSED[kind]:5d} refused  {SECONDS[kind]:7.2f} s")
    lines.append("slowest calls:")
    lines += [f"  {dt:6.2f} s  {what}" for dt, what in SLOWEST]
    print("\n".join(lines))
    assert total >= 2000
    assert SLOWEST[0][0] <= MAX_SECONDS

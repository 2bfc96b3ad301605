"""The compiled SGD loops (distsgd/error/sgd_kernels.py) against the numpy reference loops of
distsgd/error/simulate.py: same trace and seed → same numbers, for every scheme and rule.

Tolerance: 1e-12 relative.  The kernels sum over the K gradients and the d coordinates one by
one, numpy pairwise or through BLAS, so single updates differ in the last bits; the SGD recursion
contracts (|1 − ηh| < 1) and does not amplify them, and 1e-12 leaves a margin of ~1000 ulps.
"""

import numpy as np
import pytest

from distsgd import jit, limits, make_scheme, parse_delay
from distsgd.error import LearningRate, Problem, simulate_error
from distsgd.error import sgd_kernels as kn
from distsgd.error import simulate as sim_mod
from distsgd.montecarlo import simulate_updates

RTOL = 1e-12
PROB = Problem(eta=0.1, L=2.0, mu=0.5, sigma2=1.0, b=1, f0=1.0, dim=5)
DELAY = parse_delay("exp(rate=1)")
M, R, N = 4, 5, 150
#: C makes the adaptive rate bind sometimes and not at other times; η_max ≠ η catches one for the other
RULES = {"constant": LearningRate(), "staleness": LearningRate("staleness"),
         "adaptive": LearningRate("adaptive", C=0.002, eta_max=0.15)}
FRESH = [("sync", {}), ("k-sync", {"K": 2}), ("k-batch-sync", {"K": 3}), ("local-sgd", {"H": 3})]
ASYNC = [("async", {}), ("k-async", {"K": 2}), ("k-batch-async", {"K": 3})]


def _trace(name, kw, seed=5):
    scheme = make_scheme(name, M, **kw)
    return scheme, simulate_updates(scheme, DELAY, N, R, seed)


def _run(path, scheme, tr, lr, seed=9):
    stats = sim_mod.StaleStats()
    err = path(scheme, PROB, tr, lr, np.random.default_rng(seed), stats)
    return err, stats


def _same_stats(a, b):
    for name in ("total", "fresh", "count"):
        assert getattr(a, name) == getattr(b, name), name
    np.testing.assert_array_equal(a.hist, b.hist)
    assert a.gdiff == pytest.approx(b.gdiff, rel=RTOL)
    assert a.gnow == pytest.approx(b.gnow, rel=RTOL)


def test_the_traces_exercise_what_the_kernels_distinguish():
    """Preconditions of the comparisons below: stale and fresh gradients, and in k-batch-async
    a worker pushing twice in one window after a mid-window read (the case where the gradient
    is computed on w, not on its worker's read row)."""
    for name, kw in ASYNC:
        _, tr = _trace(name, kw)
        assert (tr.staleness == 0).any() and (tr.staleness >= 2).any(), name
    _, tr = _trace("k-batch-async", {"K": 3})
    assert not tr.reads_after_update[:-1].any() and tr.reads_after_update[-1]
    w = tr.workers
    repeated = (w[:, :, 1:, None] == w[:, :, None, :-1]) & np.tri(2, 2, dtype=bool)  # k2 > k1 same worker
    assert repeated.sum() >= 10


@pytest.mark.parametrize("name, kw", FRESH, ids=[f[0] for f in FRESH])
def test_fresh_kernel_matches_the_numpy_reference(name, kw):
    scheme, tr = _trace(name, kw)
    ref, _ = _run(sim_mod._run_sgd_numpy, scheme, tr, LearningRate())
    got, _ = _run(sim_mod._run_sgd_kernel, scheme, tr, LearningRate())
    assert np.ptp(ref[:, -1]) > 0  # the noise reaches the error
    np.testing.assert_allclose(got, ref, rtol=RTOL, atol=0)


@pytest.mark.parametrize("rule", list(RULES))
@pytest.mark.parametrize("name, kw", ASYNC, ids=[a[0] for a in ASYNC])
def test_async_kernel_matches_the_numpy_reference(name, kw, rule):
    scheme, tr = _trace(name, kw)
    ref, s_ref = _run(sim_mod._run_sgd_numpy, scheme, tr, RULES[rule])
    got, s_got = _run(sim_mod._run_sgd_kernel, scheme, tr, RULES[rule])
    np.testing.assert_allclose(got, ref, rtol=RTOL, atol=0)
    _same_stats(s_got, s_ref)
    assert s_ref.gdiff > 0 and s_ref.gnow > 0


@pytest.mark.parametrize("rule", ["constant", "adaptive"])
def test_the_learning_rate_rules_give_different_paths(rule):
    """The adaptive rule with these constants is neither η_max throughout nor η: the
    comparison above would not see a kernel that ignored it."""
    scheme, tr = _trace("k-async", {"K": 2})
    adaptive, _ = _run(sim_mod._run_sgd_numpy, scheme, tr, RULES["adaptive"])
    other = LearningRate() if rule == "constant" else LearningRate("adaptive", C=1e9, eta_max=0.15)
    base, _ = _run(sim_mod._run_sgd_numpy, scheme, tr, other)
    assert np.abs(adaptive / base - 1).max() > 1e-3


@pytest.mark.skipif(not jit.ENABLED, reason="kernels run uncompiled (DISTSGD_JIT=0): nothing to compare")
@pytest.mark.parametrize("rule", list(RULES))
def test_compiled_async_kernel_equals_its_python_function(rule):
    """async_sgd.py_func runs the outer loop in Python (its helpers stay compiled)."""
    scheme, tr = _trace("k-batch-async", {"K": 3})
    z = np.random.default_rng(1).standard_normal((N, R, PROB.dim))
    coef = np.array([PROB.eta, PROB.noise_sd, RULES[rule].C, RULES[rule].eta_max or PROB.eta])
    outs = []
    for fn in (kn.async_sgd, kn.async_sgd.py_func):
        w = np.broadcast_to(PROB.w0, (R, PROB.dim)).copy()
        read = np.broadcast_to(w[:, None], (R, M, PROB.dim)).copy()
        err, acc = np.zeros((R, N + 1)), np.zeros((R, 2))
        fn(w, read, tr.workers, tr.staleness, tr.reads_after_update, z, err, 0, PROB.h, coef, kn.RULES[rule], acc)
        outs.append((w, read, err, acc))
    for a, b in zip(*outs, strict=True):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=0)


@pytest.mark.skipif(not jit.ENABLED, reason="kernels run uncompiled (DISTSGD_JIT=0): nothing to compare")
def test_compiled_fresh_kernel_equals_its_python_function():
    z = np.random.default_rng(2).standard_normal((40, R, PROB.dim))
    shrink, sd = 1 - PROB.eta * PROB.h, np.full(PROB.dim, 0.03)
    outs = []
    for fn in (kn.fresh_sgd, kn.fresh_sgd.py_func):
        w = np.broadcast_to(PROB.w0, (R, PROB.dim)).copy()
        err = np.zeros((R, 41))
        fn(w, shrink, sd, PROB.h, z, err, 0)
        outs.append((w, err))
    for a, b in zip(*outs, strict=True):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=0)
    assert np.ptp(outs[0][1][:, 1:]) > 0


@pytest.mark.parametrize("name, kw", [FRESH[3], ASYNC[2]], ids=["local-sgd", "k-batch-async"])
def test_noise_drawn_in_blocks_is_the_same_stream(name, kw, monkeypatch):
    """Blocks of 7 updates give exactly the numbers of one block: (B, R, d) draws continue the
    stream of B successive (R, d) draws."""
    scheme, tr = _trace(name, kw)
    whole, _ = _run(sim_mod._run_sgd_kernel, scheme, tr, RULES["adaptive"])
    monkeypatch.setattr(sim_mod, "NOISE_BLOCK_BYTES", 8 * R * PROB.dim * 7)
    blocks, _ = _run(sim_mod._run_sgd_kernel, scheme, tr, RULES["adaptive"])
    np.testing.assert_array_equal(blocks, whole)


@pytest.mark.parametrize("name, kw", [FRESH[3], ASYNC[0], ASYNC[1]], ids=["local-sgd", "async", "k-async"])
def test_simulate_error_gives_the_same_curve_and_statistics_either_way(name, kw, monkeypatch):
    """End to end, with several replica groups and noise blocks: the compiled path and the
    numpy reference give the same mean, band and staleness statistics for the same seed.
    (Not k-batch-sync: its compiled timing engine draws in event order, another stream of the
    same law — tests/test_engines.py checks the two in law.)"""
    scheme = make_scheme(name, M, **kw)
    monkeypatch.setattr(limits, "SGD_GROUP_BYTES", 5_000)  # groups of one to three replicas
    monkeypatch.setattr(sim_mod, "NOISE_BLOCK_BYTES", 8 * 3 * PROB.dim * 11)
    out = {}
    for compiled in (False, True):
        monkeypatch.setattr(jit, "ENABLED", compiled)  # the one switch: the engines follow it too
        out[compiled] = simulate_error(scheme, DELAY, PROB, 30.0, points=7, replicas=12, seed=3,
                                       lr=RULES["staleness"], keep_errors=True)
    ref, got = out[False], out[True]
    assert sim_mod._replica_group(scheme, ref.updates, PROB.dim, 12) < 12
    np.testing.assert_allclose(got.errors, ref.errors, rtol=RTOL, atol=0)
    np.testing.assert_allclose(got.mean, ref.mean, rtol=RTOL, atol=0)
    if not scheme.fresh:
        assert (got.staleness_mean, got.fresh_fraction) == (ref.staleness_mean, ref.fresh_fraction)
        np.testing.assert_array_equal(got.staleness_counts, ref.staleness_counts)
        assert got.gamma_measured == pytest.approx(ref.gamma_measured, rel=RTOL)


@pytest.mark.parametrize("name, kw, spec, lr", [
    ("k-sync", {"K": 1}, "adasync(K0=1, period=4)", None),
    ("local-sgd", {"H": 4, "comm_delay": 1.0}, "adacomm(H0=4, period=5)", None),
    *[("k-async", {"K": 1}, "adasync(K0=1, period=4)", rule) for rule in RULES]])
def test_scheduled_updates_either_way(name, kw, spec, lr, monkeypatch):
    """AdaSync and AdaComm on the model problem (each replica's K or H changes at its own
    checkpoints): the compiled updates (scheduled_fresh, scheduled_async with each learning-rate
    rule) and the numpy reference (the per-step loop of distsgd.error.scheduled) give the same
    errors and the same schedule for the same seed.  (With DISTSGD_JIT=0 the kernels' plain
    Python functions against the numpy reference.)"""
    from distsgd.error import scheduled

    scheme = make_scheme(name, M, **kw)

    def run():
        return simulate_error(scheme, DELAY, PROB, 30.0, points=31, replicas=R, seed=3, keep_errors=True,
                              schedule=spec, lr=None if lr is None else RULES[lr])

    monkeypatch.setattr(scheduled.jit, "ENABLED", True)
    compiled = run()
    monkeypatch.setattr(scheduled.jit, "ENABLED", False)
    reference = run()
    assert compiled.schedule is not None and reference.schedule is not None
    on_grid = reference.schedule.grid_value[0]
    assert on_grid[-1] != on_grid[0]  # K or H changed during the run
    np.testing.assert_array_equal(compiled.schedule.grid_value[0], on_grid)
    np.testing.assert_allclose(compiled.errors, reference.errors, rtol=RTOL, atol=0)

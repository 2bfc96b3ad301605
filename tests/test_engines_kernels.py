"""The compiled engine kernels against their pure-numpy reference paths (issue 9).

Same seed → the same random numbers → identical results (exact equality: both paths add the
same two floats, t + draw, and pick the pushers by the same rule, ties by worker id).  With
``DISTSGD_JIT=0`` the kernels run as plain Python and the same checks hold.
"""

from __future__ import annotations

import heapq
import math

import numpy as np
import pytest

from distsgd import jit
from distsgd.delays import Delay, parse_delay
from distsgd.delays.empirical import Empirical
from distsgd.engines import renewal, runtime_kernels

# an empirical trace with repeated values: pushers that restart together often finish together
TRACE = Empirical.from_values([1.0, 1.0, 1.0, 2.0, 2.0, 3.5], name="ties")
LAWS: dict[str, Delay] = {
    "exp": parse_delay("exp(rate=1)"),
    "lognormal": parse_delay("lognormal(mu=0, sigma=1.5)"),
    "weibull-0.2": parse_delay("weibull(shape=0.2, scale=1)"),  # tiny draws vanish in rounding: ties
    "empirical-ties": TRACE,
}
# (m, K): K = 1, K = m, K > 16 (the kernel's merge sort), m > 64 (the reference's argpartition)
SHAPES = [(1, 1), (2, 1), (5, 5), (7, 3), (16, 4), (40, 30), (90, 20)]


def _blocks(fn, delay: Delay, m: int, K: int, R: int, seed: int, record: bool, total: int) -> list:
    return list(fn(delay, m, K, R, np.random.default_rng(seed), record, total))


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 16 updates, so that a short run crosses many block boundaries (state carried)."""
    monkeypatch.setattr(renewal.limits, "CHUNK", 64)


@pytest.mark.parametrize("law", sorted(LAWS))
@pytest.mark.parametrize("m, K", SHAPES)
@pytest.mark.parametrize("record", [True, False])
def test_kasync_kernel_matches_numpy(law: str, m: int, K: int, record: bool, small_blocks: None) -> None:
    delay, R, total = LAWS[law], 3, 150
    ref = _blocks(renewal._kasync_blocks_numpy, delay, m, K, R, 11, record, total)
    got = _blocks(renewal._kasync_blocks_kernel, delay, m, K, R, 11, record, total)
    assert len(got) == len(ref) == math.ceil(total / 16)
    for (t1, s1, w1), (t2, s2, w2) in zip(ref, got, strict=True):
        assert t2.shape == t1.shape and s2.shape == s1.shape
        np.testing.assert_array_equal(t2, t1)
        np.testing.assert_array_equal(s2, s1)
        if record:
            np.testing.assert_array_equal(w2, w1)
        else:
            assert w1 is None and w2 is None


@pytest.mark.parametrize("law, m, K", [("weibull-0.2", 2, 1), ("empirical-ties", 7, 3), ("empirical-ties", 16, 4)])
def test_tie_laws_do_tie(law: str, m: int, K: int) -> None:
    """Cases of the equality test above really have ties (else it would not exercise the tie
    rule): a job lost in rounding, or pushers finishing at one instant, repeat an update time."""
    times = np.concatenate([t for t, _, _ in _blocks(renewal._kasync_blocks_numpy, LAWS[law], m, K, 3, 11,
                                                     False, 150)], axis=1)
    assert np.any(np.diff(times, axis=1) == 0)


def test_public_entry_matches_reference() -> None:
    """kasync_blocks (compiled when enabled) gives the reference's numbers at the default block size."""
    delay = LAWS["lognormal"]
    ref = _blocks(renewal._kasync_blocks_numpy, delay, 9, 4, 2, 3, True, 5000)
    got = _blocks(renewal.kasync_blocks, delay, 9, 4, 2, 3, True, 5000)
    for a, b in zip(ref, got, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize("m, K", [(3, 1), (70, 1), (70, 30), (70, 70), (300, 299)])
@pytest.mark.parametrize("ties", [False, True])
def test_earliest_by_value_then_column(m: int, K: int, ties: bool) -> None:
    """The reference path's choice of pushers: each row's K smallest by (value, column), against
    Python's sort of (value, column) pairs."""
    rng = np.random.default_rng(m + K)
    fin = rng.integers(0, 4, (5, m)).astype(float) if ties else rng.random((5, m))
    expect = [sorted(range(m), key=lambda i, row=row: (row[i], i))[:K] for row in fin]
    np.testing.assert_array_equal(renewal.earliest(fin, K), expect)


@pytest.mark.parametrize("m, K", [(6, 2), (6, 6), (20, 17)])
def test_kasync_kernel_invariants(m: int, K: int) -> None:
    """Each update's pushers are K distinct workers; staleness is ≥ 0 and 0 when all m push;
    update times never decrease."""
    trace = renewal.kasync_trace(LAWS["empirical-ties"], m, K, 3, 500, np.random.default_rng(2), True)
    assert trace.workers is not None
    w = np.sort(trace.workers, axis=2)
    assert np.all(np.diff(w, axis=2) > 0) and w.min() >= 0 and w.max() < m
    assert trace.staleness is not None and trace.staleness.min() >= 0
    if K == m:
        assert trace.staleness.max() == 0
    assert np.all(np.diff(trace.times, axis=1) >= 0)


def test_kasync_kernel_law() -> None:
    """Exp(1), m = 8, K = 3: the mean time between updates is (H_m − H_{m−K}) (DESIGN §2) and the
    mean staleness (m − K)/K (Little's law); 95% intervals from 32 batch means of 8 replicas."""
    m, K, R, n, warm = 8, 3, 8, 40_000, 2_000
    trace = renewal.kasync_trace(LAWS["exp"], m, K, R, warm + n, np.random.default_rng(7), False)
    gaps = np.diff(trace.times, axis=1)[:, warm - 1:]
    means = gaps.reshape(R * 4, -1).mean(axis=1)
    half = 2.04 * means.std(ddof=1) / math.sqrt(means.size)  # t_{0.975, 31}
    expect = sum(1.0 / i for i in range(m - K + 1, m + 1))
    assert abs(means.mean() - expect) <= 1.5 * half
    assert trace.staleness is not None
    st = trace.staleness[:, warm:].reshape(R * 4, -1).mean(axis=1)
    st_half = 2.04 * st.std(ddof=1) / math.sqrt(st.size)
    assert abs(st.mean() - (m - K) / K) <= 1.5 * st_half


@pytest.mark.parametrize("m", [3, 40, 40_000])
def test_previous_push_kernel_matches_numpy(m: int) -> None:
    """Each push's worker's previous push, over two consecutive windows (state carried)."""
    rng = np.random.default_rng(m)
    dtype = np.int16 if m < 2**15 else np.int32
    last_ref = np.full(m, -1, dtype=np.int64)
    last_got = last_ref.copy()
    g0 = 0
    for size in (1000, 257):
        w = rng.integers(0, m, size).astype(dtype)
        ref = renewal._previous_push_numpy(g0, w, last_ref)
        got = renewal._previous_push(g0, w, last_got)
        np.testing.assert_array_equal(got, ref)
        np.testing.assert_array_equal(last_got, last_ref)
        g0 += size
    # and by hand: a worker's previous push is the last index before it with the same worker
    w = np.array([2, 0, 2, 2, 1, 0], dtype=np.int16)
    np.testing.assert_array_equal(renewal._previous_push(10, w, np.full(3, -1, dtype=np.int64)),
                                  [-1, -1, 10, 12, -1, 11])


def test_kernels_release_the_gil() -> None:
    """Compiled kernels are nogil (DESIGN §11); the uncompiled function stays reachable."""
    for fn in (runtime_kernels.kasync_steps, runtime_kernels.previous_pushes, runtime_kernels.kbatch_sync_kth):
        assert callable(fn.py_func)
        if jit.ENABLED:
            assert fn.targetoptions.get("nogil") is True
        else:
            assert fn.py_func is fn


def _kth_by_heapq(row: np.ndarray, m: int, K: int) -> float:
    """k-batch-sync in event order with the standard library's heap: the first m draws start the
    workers, each of the K − 1 earliest finishes restarts that worker with the next draw."""
    h = [(float(x), i) for i, x in enumerate(row[:m])]
    heapq.heapify(h)
    for j in range(K - 1):
        t, i = heapq.heappop(h)
        heapq.heappush(h, (t + float(row[m + j]), i))
    return h[0][0]


@pytest.mark.parametrize("law", sorted(LAWS))
@pytest.mark.parametrize("m, K", [(1, 1), (1, 9), (2, 1), (3, 3), (5, 12), (16, 4), (33, 100), (100, 100)])
def test_kbatch_sync_kernel_matches_heapq(law: str, m: int, K: int) -> None:
    """Draw for draw against heapq (ties included: the empirical trace repeats values; the value
    popped among equal times does not change the multiset, so the results are equal exactly)."""
    draws = LAWS[law].sample(np.random.default_rng(m * 1000 + K), (40, m + K - 1))
    out = np.empty(40)
    runtime_kernels.kbatch_sync_kth(draws, m, K, out)
    np.testing.assert_array_equal(out, [_kth_by_heapq(r, m, K) for r in draws])


@pytest.mark.parametrize("law", ["exp", "empirical-ties"])
@pytest.mark.parametrize("m, K", [(7, 3), (90, 20)])
def test_kasync_steps_until_matches_the_scheduled_reference(law: str, m: int, K: int) -> None:
    """A scheduled run's block (DESIGN §13): each replica starts at its own update index and stops
    at its first update that ends after ``until``; the kernel and the numpy reference of the
    scheduled k-async stepper (distsgd.error.scheduled_times.kasync_block) agree exactly."""
    from distsgd.error.scheduled_times import kasync_block

    R, b = 6, 40
    rng = np.random.default_rng(m * K)
    delay = LAWS[law]
    finish0 = delay.sample(rng, (R, m))
    read0 = rng.integers(0, 3, (R, m))
    draws = delay.sample(rng, (R, b, K))
    j0 = np.arange(R, dtype=np.int64) * 5 + 3
    until = float(np.median(finish0)) + 2.0 * K / m * delay.mean * 10
    finish0[0] += until  # replica 0's first update ends after ``until``: its only one
    outs = []
    for fn in (runtime_kernels.kasync_steps, kasync_block):
        finish, read = finish0.copy(), read0.copy()
        times, made = np.full((R, b), np.nan), np.zeros(R, dtype=np.int64)
        stale, workers = np.zeros((R, b, K), dtype=np.int64), np.full((R, b, K), -1, dtype=np.int32)
        fn(finish, read, draws, j0, times, stale, workers, True, until, made)
        done = np.arange(b)[None, :] < made[:, None]
        outs.append((made, finish, read, times[done], stale[done], workers[done]))
    for got, ref in zip(*outs, strict=True):
        np.testing.assert_array_equal(got, ref)
    made = outs[0][0]
    assert made[0] == 1 and made.max() < b  # every replica stopped inside the block
    times = outs[1][3]
    # each replica's last update is its first one after ``until``
    ends = np.cumsum(made) - 1
    assert (times[ends] > until).all() and (np.delete(times, ends) <= until).all()

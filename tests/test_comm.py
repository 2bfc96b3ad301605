"""Communication models (DESIGN §4), checked against the arithmetic written out by hand."""

import pytest

from distsgd import ParameterError, parse_delay
from distsgd.comm import CommModel, parameter_server_time, ring_allreduce_time
from distsgd.curves import runtime_vs_m


def test_parameter_server_carries_every_worker_through_one_link():
    # 8 workers, 1e6 float32 parameters (4 MB), 1 GB/s, 1 ms: 2·8·4e6/1e9 + 2·1e-3 = 0.066 s
    assert parameter_server_time(8, 1e6, 1e9, 1e-3) == pytest.approx(0.066)


def test_ring_allreduce_is_bandwidth_optimal_but_pays_latency_per_step():
    # 2·(7/8)·4e6/1e9 + 2·7·1e-3 = 0.007 + 0.014
    assert ring_allreduce_time(8, 1e6, 1e9, 1e-3) == pytest.approx(0.021)
    assert ring_allreduce_time(1, 1e6, 1e9, 1e-3) == 0.0
    # bandwidth term bounded in m, latency term linear in m
    big = ring_allreduce_time(1000, 1e6, 1e9, 0.0)
    assert big == pytest.approx(2 * 999 / 1000 * 4e6 / 1e9)


def test_parameter_server_loses_to_the_ring_by_m_squared_over_m_minus_1():
    # without latency: (2 m s/B) / (2 (m−1)/m · s/B) = m² / (m − 1)
    for m in (2, 8, 64):
        ps = CommModel(params=25e6, bandwidth=1.25e9, latency=0.0, topology="parameter-server").time(m)
        ring = CommModel(params=25e6, bandwidth=1.25e9, latency=0.0, topology="ring-allreduce").time(m)
        assert ps / ring == pytest.approx(m * m / (m - 1))


def test_word_size_scales_the_bandwidth_term():
    assert parameter_server_time(4, 1e6, 1e9, 0.0, word_bytes=2) == pytest.approx(
        parameter_server_time(4, 1e6, 1e9, 0.0) / 2)


def H(n: int) -> float:
    return sum(1.0 / i for i in range(1, n + 1))


def test_speedup_is_samples_per_unit_time_relative_to_one_worker():
    # the speed-up the local-SGD page draws (curves.runtime_vs_m): K_used · E[X] / E[T(m)].
    # X = 1 + Exp(1), E[X] = 2, m = 10: sync waits for X_{10:10}, E[T] = 1 + H_10, and uses all
    # 10 gradients; k-sync with K = 4 waits for X_{4:10}, E[T] = 1 + H_10 − H_6, and counts only
    # the 4 gradients it keeps; async applies one gradient every E[X]/m = 0.2: exactly m×
    rows = runtime_vs_m(["sync", "k-sync", "async"], [10], parse_delay("shifted-exp(rate=1, shift=1)"), K=4,
                        budget=2e6, seed=1)
    by = {r["scheme"]: r for r in rows}
    expected = {"sync": 10 * 2 / (1 + H(10)), "k-sync": 4 * 2 / (1 + H(10) - H(6)), "async": 10.0}
    for scheme, value in expected.items():
        r = by[scheme]
        assert r["kind"] == "exact"
        assert r["speedup_analytic"] == pytest.approx(value, rel=1e-9)
        assert r["speedup_lower_bound"] is None  # only an upper bound on E[T] gives one
        used = {"sync": 10, "k-sync": 4, "async": 1}[scheme]
        assert r["speedup_mc"] == pytest.approx(used * 2 / r["mc_mean"], rel=1e-12)


@pytest.mark.parametrize("kwargs, name", [
    ({"bandwidth": 0}, "bandwidth"), ({"latency": -1}, "latency"), ({"params": 0}, "params"),
    ({"topology": "mesh"}, "topology"), ({"word_bytes": 0}, "word_bytes"),
])
def test_bad_network_parameters(kwargs, name):
    with pytest.raises(ParameterError) as info:
        CommModel(**kwargs)
    assert info.value.parameter == name


def test_bad_worker_count():
    with pytest.raises(ParameterError, match="m"):
        ring_allreduce_time(0, 1e6, 1e9, 0.0)

"""Communication models (DESIGN §4), checked against the arithmetic written out by hand."""

import pytest

from distsgd import ParameterError
from distsgd.comm import CommModel, parameter_server_time, ring_allreduce_time, speedup


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


def test_speedup_is_samples_per_unit_time_relative_to_one_worker():
    # m = 10 workers, E[X] = 1, an iteration takes 2 and uses all 10 gradients: 5×
    assert speedup(10, 1.0, 2.0) == pytest.approx(5.0)
    # k-sync with K = 4 counts only the 4 gradients it keeps
    assert speedup(10, 1.0, 0.5, samples_per_update=4) == pytest.approx(8.0)


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

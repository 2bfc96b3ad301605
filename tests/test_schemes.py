"""Scheme construction and validation messages."""

import dataclasses

import pytest

from distsgd import ParameterError, backup_workers, make_scheme
from distsgd.schemes import M_MAX, SCHEME_NAMES, KSync


@pytest.mark.parametrize("name, kwargs", [
    ("sync", {}), ("k-sync", {"K": 3}), ("k-batch-sync", {"K": 30}), ("async", {}),
    ("k-async", {"K": 5}), ("k-batch-async", {"K": 11}), ("local-sgd", {"H": 4, "comm_delay": 0.5}),
])
def test_make_scheme_builds_every_scheme(name, kwargs):
    s = make_scheme(name, 10, **kwargs)
    assert s.name == name and s.m == 10
    d = s.as_dict()
    assert d["scheme"] == name and d["K"] == kwargs.get("K") and d["H"] == kwargs.get("H")
    assert s == make_scheme(name, 10, **kwargs) and hash(s) == hash(make_scheme(name, 10, **kwargs))
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.m = 3  # frozen


def test_gradients_per_update():
    assert make_scheme("sync", 8).grads_per_update == 8
    assert make_scheme("async", 8).grads_per_update == 1
    assert make_scheme("k-batch-async", 8, K=20).grads_per_update == 20


@pytest.mark.parametrize("args, kwargs, parameter, words", [
    (("k-sync", 5), {"K": 10}, "K", "1 ≤ K ≤ m = 5"),
    (("k-async", 5), {"K": 6}, "K", "K ≤ m"),
    (("k-sync", 5), {"K": 0}, "K", "[1,"),
    (("k-sync", 5), {}, "K", "needs K"),
    (("sync", 0), {}, "m", "[1, 100000]"),
    (("sync", -3), {}, "m", "got -3"),
    (("sync", M_MAX + 1), {}, "m", "[1, 100000]"),
    (("sync", 2.5), {}, "m", "an integer"),
    (("sync", 5), {"K": 3}, "K", "not a parameter of sync"),
    (("local-sgd", 5), {}, "H", "needs H"),
    (("local-sgd", 5), {"H": 0}, "H", "[1, 10000]"),
    (("local-sgd", 5), {"H": 2, "comm_delay": -1}, "comm_delay", "[0, 1e9]"),
    (("async", 5), {"comm_delay": 1.0}, "comm_delay", "not a parameter"),
    (("async", 5), {"H": 2}, "H", "not a parameter"),
    (("nonsense", 5), {}, "scheme", "unknown scheme 'nonsense'"),
])
def test_bad_schemes_name_the_parameter(args, kwargs, parameter, words):
    with pytest.raises(ParameterError) as info:
        make_scheme(*args, **kwargs)
    assert info.value.parameter == parameter
    assert words in str(info.value)


def test_batch_schemes_allow_K_above_m():
    assert make_scheme("k-batch-sync", 4, K=100).K == 100
    assert make_scheme("k-batch-async", 4, K=100).K == 100


def test_names_are_case_and_underscore_tolerant():
    assert make_scheme("K_Sync", 4, K=2) == make_scheme("k-sync", 4, K=2)
    assert set(SCHEME_NAMES) == {"sync", "k-sync", "k-batch-sync", "async", "k-async",
                                 "k-batch-async", "local-sgd", "d-psgd", "ad-psgd"}


def test_backup_workers_is_k_sync_with_n_plus_b():
    s = backup_workers(16, 4)
    assert isinstance(s, KSync) and s.m == 20 and s.K == 16
    with pytest.raises(ParameterError, match="b"):
        backup_workers(16, -1)

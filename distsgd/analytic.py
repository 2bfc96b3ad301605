"""Analytic expected runtime per iteration, E[T] (DESIGN §2 "Analytic runtime per iteration").

:func:`expected_runtime` validates its arguments and asks the scheme
(:meth:`Scheme.expected_runtime <distsgd.schemes.Scheme.expected_runtime>`), which uses

* order statistics (:mod:`distsgd.orderstats`; closed forms on the delay families) for sync,
  k-sync, and the bounds and special cases of the others;
* the elementary renewal theorem for the asynchronous schemes (``K·E[X]/m``);
* lattice computations (:mod:`distsgd.numerics`) for k-batch-sync (renewal superposition) and
  local SGD (the slowest of m sums of H delays).

Every result is an :class:`~distsgd.estimate.Estimate` whose ``kind`` says how far to trust it.

>>> from distsgd import make_scheme, parse_delay
>>> expected_runtime(make_scheme("async", m=4), parse_delay("exp(rate=2)"))
Estimate(value=0.125, kind='exact', method='elementary renewal theorem E[X]/m', std=None, error=None)
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from . import limits
from .clusters import Cluster, as_source
from .delays import Delay
from .estimate import KINDS, REL_TOL, VALUE_KINDS, Estimate
from .orderstats import (
    order_statistic_cdf,
    order_statistic_mean,
    order_statistic_moments,
    order_statistic_pdf,
    order_statistic_std,
)
from .params import Domain
from .schemes import Scheme, check_scheme

__all__ = [
    "KINDS", "VALUE_KINDS", "REL_TOL", "Estimate", "expected_runtime", "order_statistic_mean",
    "order_statistic_std", "order_statistic_moments", "order_statistic_pdf", "order_statistic_cdf",
]

#: the work budget of one call's lattice computations (FFT-butterfly units; limits.ANALYTIC_WORK)
WORK = Domain("work", 0.0, math.inf, low_open=True, doc="work budget of the lattice computations")


def expected_runtime(scheme: Scheme, delay: Delay | Cluster, work: float | None = None) -> Estimate:
    """Expected runtime per iteration E[T] of ``scheme`` under i.i.d. delays ``delay`` (DESIGN §2),
    or on a cluster (DESIGN §7: :meth:`Scheme.cluster_runtime`; a cluster whose mini-batches are
    all i.i.d. — b = 0 or s = 1, π = 0, one group — is its delay, the same result).

    * sync / k-sync: ``E[X_{m:m}]`` / ``E[X_{K:m}]`` (order statistics; Dutta et al. 2018).
    * async / k-batch-async: ``E[X]/m`` / ``K·E[X]/m`` (elementary renewal theorem), exact.
    * k-async: K = 1 is async, K = m is sync; exponential without shift
      ``(H_m − H_{m−K})/λ`` (memoryless); otherwise ``E[X_{K:m}]`` as an ``upper_bound`` for
      new-longer-than-used delays, else ``unavailable``.
    * k-batch-sync: exponential without shift ``K/(mλ)``; K = 1 is ``E[X_{1:m}]``; otherwise
      ``∫ P(N(t) < K) dt`` for m superposed renewal processes, computed on lattices.
    * local-sgd: per local step ``(E[max_i S_i] + D)/H`` (Wang & Joshi, Cooperative SGD).

    Never raises for a valid (scheme, delay) pair, and swallows no exception: a bad argument
    is a :class:`ParameterError` naming it.  ``work`` caps the lattice computations
    (k-batch-sync, local SGD) in FFT-butterfly units (default ``limits.ANALYTIC_WORK`` ≈ 1e9,
    about 1–2 s); beyond it the result falls back to a bound or ``unavailable`` (with the
    reason in ``method``).
    """
    check_scheme(scheme)
    source = as_source(delay, scheme.m)
    budget = limits.ANALYTIC_WORK if work is None else WORK.check(work, "work")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if isinstance(source, Cluster):
            return scheme.cluster_runtime(source, budget)
        return scheme.expected_runtime(source, budget)

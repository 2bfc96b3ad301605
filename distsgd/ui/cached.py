"""Every expensive call the pages make, cached per argument set with bounded size.

Arguments are the frozen parameter objects (Delay, Scheme, Problem, …), so equal inputs hit
the cache across sessions.  A delay law is hashed by its ``key`` (the spec string, or a
measured trace's digest): never by its values, which for an uploaded trace are megabytes.
Each entry is small (rows of numbers, at most a few 10⁴ samples), ``max_entries`` bounds the
count and ``ttl`` lets idle entries go, so the whole cache stays within a few tens of MB.
Nothing here is mutable module state.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from .. import sweeps
from ..analytic import order_statistic_cdf, order_statistic_mean, order_statistic_pdf
from ..delays import Delay, Empirical
from ..montecarlo import sample_order_statistic, simulate_runtime, simulate_timeline
from ..random import keyed
from ..schemes import Scheme, make_scheme
from ..sgd import LearningRate, Problem


def _subclasses(cls: type) -> list[type]:
    return [cls] + [s for c in cls.__subclasses__() for s in _subclasses(c)]


#: Streamlit matches hash_funcs by exact type: every delay family, hashed by its key
_HASH = {cls: (lambda d: d.key) for cls in _subclasses(Delay)}
_CACHE: dict[str, Any] = dict(max_entries=64, ttl=3600, show_spinner=False, hash_funcs=_HASH)
#: samples drawn for the delay page's histograms (bytes per entry: 8 × this)
SAMPLES = 20_000


@st.cache_data(**_CACHE)
def runtime_vs_K(names: tuple[str, ...], m: int, delay: Delay, Ks: tuple[int, ...], H: int,
                 budget: float, seed: int) -> list[dict[str, Any]]:
    return sweeps.runtime_vs_K(names, m, delay, Ks, H, 0.0, budget, seed)


@st.cache_data(**_CACHE)
def runtime_vs_m(names: tuple[str, ...], ms: tuple[int, ...], delay: Delay, K: int, H: int,
                 comm_delay: float, budget: float, seed: int) -> list[dict[str, Any]]:
    return sweeps.runtime_vs_m(names, ms, delay, K, H, comm_delay, budget, seed)


@st.cache_data(**_CACHE)
def runtime_vs_H(m: int, Hs: tuple[int, ...], delay: Delay, comm_delay: float, budget: float,
                 seed: int) -> list[dict[str, Any]]:
    return sweeps.runtime_vs_H(m, Hs, delay, comm_delay, budget, seed)


@st.cache_data(**_CACHE)
def runtime_points(schemes: tuple[Scheme, ...], delay: Delay, budget: float, seed: int) -> list[dict[str, Any]]:
    return sweeps.runtime_rows(schemes, delay, budget, seed)


@st.cache_data(**_CACHE)
def async_speedup(m: int, delay: Delay) -> dict[str, Any]:
    return sweeps.async_speedup(m, delay)


@st.cache_data(**_CACHE)
def error_rows(schemes: tuple[Scheme, ...], delay: Delay, problem: Problem, time: float, points: int,
               replicas: int, seed: int, gamma: float | None, p0: float | None,
               lr: LearningRate) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return sweeps.error_rows(schemes, delay, problem, time, points, replicas, seed, gamma, p0, lr)


@st.cache_data(**_CACHE)
def target_rows(schemes: tuple[Scheme, ...], delay: Delay, problem: Problem, eps: float,
                time: float, replicas: int, seed: int, gamma: float, p0: float | None,
                x_name: str) -> list[dict[str, Any]]:
    return sweeps.target_rows(schemes, delay, problem, eps, time, 101, replicas, seed, gamma, p0, x_name)


@st.cache_data(**_CACHE)
def delay_sample(delay: Delay, seed: int) -> np.ndarray:
    """A sample of X for the delay page's histogram."""
    return delay.sample(np.random.default_rng(seed), SAMPLES)


@st.cache_data(**_CACHE)
def order_statistic(delay: Delay, k: int, n: int, seed: int) -> dict[str, Any]:
    """Samples of X_{k:n} (exact: F⁻¹(Beta(k, n−k+1))), its mean, and the theory to overlay on
    their histogram: the density on a grid for a continuous law; for a measured trace (a
    discrete law, no density) the exact probability of each histogram bin divided by its width,
    ``(P(X_{k:n} ≤ b) − P(X_{k:n} ≤ a)) / (b − a)``, which is what the histogram estimates."""
    rng = np.random.default_rng(seed)
    x_s = sample_order_statistic(delay, k, n, rng, SAMPLES)
    lo, hi = float(np.quantile(x_s, 0.0005)), float(np.quantile(x_s, 0.995))
    if hi <= lo:  # a point mass (e.g. a trace with one value): one bin around it
        lo, hi = lo - 0.5 * max(abs(lo), 1e-9), hi + 0.5 * max(abs(hi), 1e-9)
    edges = np.linspace(lo, hi, 71)
    if isinstance(delay, Empirical):
        cdf = order_statistic_cdf(delay, k, n, edges)
        theory = {"kind": "bins", "edges": edges, "density": np.diff(cdf) / np.diff(edges)}
    else:
        grid = np.linspace(lo, hi, 400)
        theory = {"kind": "pdf", "x": grid, "density": order_statistic_pdf(delay, k, n, grid)}
    est = order_statistic_mean(delay, k, n)
    return {"samples": x_s, "edges": edges, "theory": theory, "mean": est.value, "kind": est.kind}


@st.cache_data(**_CACHE)
def fanout(delay: Delay, ms: tuple[int, ...], iterations: int, seed: int) -> dict[str, Any]:
    rows = []
    for m in ms:
        est = order_statistic_mean(delay, m, m)
        mc = simulate_runtime(make_scheme("sync", m), delay, iterations, seed=keyed(seed, "fan-out", m),
                              keep_times=False)
        rows.append({"m": m, "analytic": est.value, "kind": est.kind, "mc_mean": mc.mean,
                     "mc_low": mc.ci95[0], "mc_high": mc.ci95[1]})
    return {"rows": rows}


@st.cache_data(**_CACHE)
def timeline(scheme: Scheme, delay: Delay, iterations: int, seed: int) -> Any:
    return simulate_timeline(scheme, delay, iterations, seed)

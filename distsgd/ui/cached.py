"""Every expensive call the pages make, cached per argument set with bounded size.

Arguments are the frozen parameter objects (Delay, Scheme, Problem, …), so equal inputs hit
the cache across sessions; each entry is small (rows of numbers), ``max_entries`` bounds the
total, and ``ttl`` lets idle entries go.  Nothing here is mutable module state.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from .. import sweeps
from ..analytic import order_statistic_mean, order_statistic_pdf
from ..delays import Delay
from ..montecarlo import sample_order_statistic, simulate_runtime, simulate_timeline
from ..schemes import Scheme, make_scheme
from ..sgd import LearningRate, Problem

_CACHE = dict(max_entries=64, ttl=3600, show_spinner=False)


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
def order_statistic(delay: Delay, k: int, n: int, samples: int, seed: int) -> dict[str, Any]:
    """Samples of X_{k:n}, its density on a grid, and its mean."""
    rng = np.random.default_rng(seed)
    x_s = sample_order_statistic(delay, k, n, rng, samples)
    lo, hi = float(np.quantile(x_s, 0.0005)), float(np.quantile(x_s, 0.995))
    grid = np.linspace(lo, hi, 400)
    try:
        pdf = order_statistic_pdf(delay, k, n, grid)
    except Exception:  # a measured trace has no density: the histogram alone is shown
        pdf = None
    est = order_statistic_mean(delay, k, n)
    return {"samples": x_s, "x": grid, "pdf": pdf, "mean": est.value, "kind": est.kind}


@st.cache_data(**_CACHE)
def fanout(delay: Delay, ms: tuple[int, ...], iterations: int, seed: int) -> dict[str, Any]:
    rows = []
    for i, m in enumerate(ms):
        est = order_statistic_mean(delay, m, m)
        mc = simulate_runtime(make_scheme("sync", m), delay, iterations, seed=seed + i, keep_times=False)
        rows.append({"m": m, "analytic": est.value, "kind": est.kind, "mc_mean": mc.mean,
                     "mc_low": mc.ci95[0], "mc_high": mc.ci95[1]})
    return {"rows": rows}


@st.cache_data(**_CACHE)
def timeline(scheme: Scheme, delay: Delay, iterations: int, seed: int) -> Any:
    return simulate_timeline(scheme, delay, iterations, seed)

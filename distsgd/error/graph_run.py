"""Error against wall-clock time for the schemes on a graph (DESIGN §12.4): the timing engines of
:mod:`distsgd.engines.graph` drive the simulation of every node's model
(:mod:`distsgd.error.graph_simulate`), and the exact per-eigenmode curve of d-psgd
(:func:`~distsgd.error.graph.dpsgd_exact`) is put on the time axis by the same timing process.

The chart's error is that of the average model x̄(t) (the model a user of the trained network
would read off); the mean node error and the consensus distance come as the simulation's
``metrics`` (``node_error``, ``consensus``), so every surface that shows a problem's metrics
shows them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import limits
from ..clusters import Cluster
from ..delays import Delay
from ..engines import graph as engine
from ..estimate import Estimate
from ..params import ParameterError
from ..random import Seed, generator
from ..schemes import GraphScheme
from .graph import MixingSpectrum, dpsgd_exact
from .graph_simulate import GraphSimulation, simulate_adpsgd, simulate_dpsgd
from .problem import MAX_UPDATES, MAX_WORK, Problem
from .timing import counts_at, updates_needed

__all__ = ["simulate_graph", "graph_model_vs_time", "GRAPH_METRICS", "finish_times", "events"]

#: the per-time quantities of a graph scheme besides the average model's error (DESIGN §12.4)
GRAPH_METRICS = ("node_error", "consensus")


def finish_times(scheme: GraphScheme, delay: Delay | Cluster, R: int, n: int, horizon: float,
                  rng: np.random.Generator, max_updates: int) -> np.ndarray:
    """d-psgd's (R, n + 1, m) finish times, n doubled until every node of every replica has
    finished past the horizon (rarely needed: n is sized from E[T] with a margin)."""
    while True:
        T = engine.dpsgd_finish_times(delay, scheme.topology, R, n, rng)
        if T[:, -1, :].min() >= horizon:
            return T
        if n >= max_updates:
            raise ParameterError("time", "runs_too_long", cap=max_updates)
        n = min(max_updates, 2 * n)


def events(scheme: GraphScheme, delay: Delay | Cluster, R: int, n: int, horizon: float, rng: np.random.Generator,
            max_updates: int) -> engine.GossipEvents:
    """ad-psgd's first n gradients in each replica, n doubled until every replica passes the horizon."""
    while True:
        ev = engine.adpsgd_events(delay, scheme.topology, R, n, rng)
        if ev.times[:, -1].min() >= horizon:
            return ev
        if n >= max_updates:
            raise ParameterError("time", "runs_too_long", cap=max_updates)
        n = min(max_updates, 2 * n)


def simulate_graph(scheme: GraphScheme, delay: Delay | Cluster, problem: Problem, grid: np.ndarray, R: int, n: int,
                   rng: np.random.Generator, keep: bool = False, max_work: float = MAX_WORK,
                   max_updates: int = MAX_UPDATES) -> tuple[GraphSimulation, np.ndarray | None]:
    """Simulated d-psgd or ad-psgd on the model problem (DESIGN §12.4), every node's model, R
    replicas read on ``grid``, the timing sized for n iterations (or gradients) and extended until
    it covers the grid: the error of the average model, the mean node error and the consensus
    distance; with ad-psgd's staleness per gradient (averagings a neighbour started while it was
    computed), None for d-psgd.  :func:`~distsgd.error.simulate_error` plans the run and calls this."""
    W = scheme.topology.mixing()
    horizon = float(grid[-1])
    if not scheme.gossip:  # d-psgd
        T = finish_times(scheme, delay, R, n, horizon, rng, max_updates)
        return simulate_dpsgd(problem, W, T, grid, seed=rng, keep=keep, max_work=max_work), None
    ev = events(scheme, delay, R, n, horizon, rng, max_updates)
    sim = simulate_adpsgd(problem, scheme.m, ev.times, ev.nodes, ev.peers, grid, seed=rng, keep=keep,
                          max_work=max_work)
    return sim, ev.staleness


def graph_model_vs_time(scheme: GraphScheme, delay: Delay | Cluster, problem: Problem, t: Any, paths: int = 400,
                        seed: Seed = 0, runtime: Estimate | None = None) -> tuple[np.ndarray, np.ndarray, int] | None:
    """d-psgd's exact expected error of the average model after k iterations of every node
    (:func:`~distsgd.error.graph.dpsgd_exact`), at k = the nodes' mean iteration count by t
    (linear between whole counts), averaged over ``paths`` simulated timing paths (fewer when the graph is large):
    (mean, standard error, paths).  An approximation of E[f(x̄(t))] when the nodes are at different
    iterations (they differ by a few); None for ad-psgd, and for graphs over
    :data:`limits.GRAPH_EXACT_MAX_M` nodes (the exact curve diagonalises W)."""
    if scheme.gossip or scheme.m > limits.GRAPH_EXACT_MAX_M:  # ad-psgd: no exact curve
        return None
    t = np.asarray(t, dtype=float)
    rng = generator(seed)
    n = updates_needed(scheme, delay, float(t.max()), seed, runtime)
    m = scheme.m
    paths = int(max(16, min(paths, limits.MAX_TRACE_VALUES // (4 * (n + 1) * m))))
    T = finish_times(scheme, delay, paths, n, float(t.max()), rng, MAX_UPDATES)
    per_node = np.ascontiguousarray(T[:, 1:, :].transpose(0, 2, 1)).reshape(paths * m, -1)  # t_i(1…n)
    k = counts_at(per_node, t).reshape(paths, m, t.size).mean(axis=1)  # the nodes' mean count
    lo = np.floor(k).astype(np.int64)
    exact = dpsgd_exact(problem, MixingSpectrum.from_eigenvalues(scheme.topology.eigenvalues()),
                        np.arange(int(lo.max()) + 2)).average
    e = exact[lo] + (k - lo) * (exact[lo + 1] - exact[lo])  # linear between the whole counts
    return e.mean(axis=0), e.std(axis=0, ddof=1) / math.sqrt(paths), paths

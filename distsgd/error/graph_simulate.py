"""Every node's model simulated on a graph (DESIGN §12.4): d-psgd driven by the finish times of the
max-plus recursion, ad-psgd by its event sequence, each read on a wall-clock time grid as the error
of the average model ``f(x̄) − f*``, the mean node error ``(1/m) Σ_i f(x_i) − f*`` and the consensus
distance ``(1/m) Σ_i ‖x_i − x̄‖²``, with the replica mean and a 95 % band.

Both take arrays (the engines of §12.3 make them): d-psgd the times t_i(k) as (R, n + 1, m), ad-psgd
(R, E) arrays of event times, nodes and peers.  d-psgd is numpy, vectorised over replicas and nodes
(one sparse product W·X per iteration); ad-psgd's event loop is sequential within a replica, so it
runs in the compiled kernel of :mod:`distsgd.error.graph_kernels` when :data:`distsgd.jit.ENABLED`.
The numpy loop, vectorised over replicas only, is kept as the reference (run when ``DISTSGD_JIT=0``):
measured on 20 000 events of m = 100 nodes, R = 200, d = 10, it took 4–6 s against the kernel's
1.8 s, of which the Gaussian draws alone are 1.0–1.3 s (without noise 3–6 s against 0.6–0.9 s).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import jit, limits
from ..params import ParameterError
from ..random import Seed, generator
from ..schemes import M
from . import graph_kernels as kernels
from .graph import check_mixing
from .problem import MAX_WORK, Problem, band
from .timing import counts_at

__all__ = ["Band", "GraphSimulation", "simulate_dpsgd", "simulate_adpsgd", "Moments", "record", "check_grid",
           "check_size"]

#: (grid point, node) contributions merged at once by the d-psgd simulation (bounds its temporaries)
PAIRS_BLOCK = limits.CHUNK // 8
#: bytes of Gaussian noise drawn at once by the ad-psgd simulation
NOISE_BLOCK_BYTES = 4 * 2**20


@dataclass(frozen=True, eq=False)
class Band:
    """One quantity on the time grid: the mean over replicas and its Student-t 95 % band
    (:func:`distsgd.error.problem.band`); ``values`` (R, P) when kept."""

    mean: np.ndarray
    ci95_low: np.ndarray
    ci95_high: np.ndarray
    values: np.ndarray | None = None

    @classmethod
    def of(cls, x: np.ndarray, keep: bool) -> Band:
        mean, low, high = band(x)
        return cls(mean, low, high, x if keep else None)


@dataclass(frozen=True, eq=False)
class GraphSimulation:
    """Simulated models of every node on the time grid: ``average`` f(x̄(t)) − f*, ``nodes``
    (1/m) Σ_i f(x_i(t)) − f*, ``consensus`` (1/m) Σ_i ‖x_i(t) − x̄(t)‖²; ``steps`` is the number of
    d-psgd iterations (or ad-psgd events) simulated."""

    time: np.ndarray
    average: Band
    nodes: Band
    consensus: Band
    replicas: int
    steps: int


def check_grid(grid: Any) -> np.ndarray:
    g = np.asarray(grid, dtype=float)
    if g.ndim != 1 or g.size < 1:
        raise ParameterError("grid", "graph_array_shape", what="grid", shape=g.shape, expected="(P,)")
    if not (np.isfinite(g).all() and (np.diff(g) >= 0).all()):
        raise ParameterError("grid", "graph_times_order", what="grid")
    return g


def _start(problem: Problem, x0: Any, R: int, m: int) -> np.ndarray:
    """Every node's start, (R, m, d): w₀ everywhere, or ``x0`` of shape (d,), (m, d) or (R, m, d)."""
    d = problem.dim
    x = problem.w0 if x0 is None else np.asarray(x0, dtype=float)
    if x.shape not in ((d,), (m, d), (R, m, d)) or not np.isfinite(x).all():
        raise ParameterError("x0", "graph_array_shape", what="x0", shape=x.shape, expected=f"({d},), ({m}, {d}) "
                             f"or ({R}, {m}, {d})")
    return np.broadcast_to(x, (R, m, d)).copy()


def check_size(R: int, m: int, P: int, d: int, steps: int, per_step: int, max_models: float,
               max_work: float, loss_rows: int = 1, average_rows: int = 0) -> None:
    """Refuse what exceeds the memory cap (R × max(m, P) × d numbers) or the work cap (each step
    touches ``per_step`` rows of d numbers, and each grid point reads m models, each costing
    ``loss_rows`` rows of d: 1 on the model problem, a real problem's training rows for its loss,
    0 when no node's loss is taken; and the average model, ``average_rows``: a real problem's
    training and held-out rows for its loss and metrics)."""
    values = float(R) * max(m, P) * d
    if values > max_models:
        raise ParameterError("replicas", "graph_models_cap", values=values, cap=max_models)
    work = float(R) * d * (float(steps) * per_step + float(P) * (m * loss_rows + average_rows))
    if work > max_work:
        raise ParameterError("replicas", "sgd_work_cap", work=work, cap=max_work)


class Moments:
    """Per (replica, grid point): how many node models were added, their mean, the sum of squared
    deviations from it (merged by Chan et al.'s pairwise formula, so the consensus distance is
    not a difference of large numbers) and Σ f(x_i), f = ``loss`` (rows of models → values)."""

    def __init__(self, R: int, P: int, d: int, loss: Callable[[np.ndarray], np.ndarray]) -> None:
        self.loss = loss
        self.n = np.zeros(R * P)
        self.mu = np.zeros((R * P, d))
        self.m2 = np.zeros(R * P)
        self.f = np.zeros(R * P)

    def add(self, key: np.ndarray, vals: np.ndarray) -> None:
        """Add the models ``vals`` (B, d) to the cells ``key`` (B,) (a cell may repeat)."""
        order = np.argsort(key, kind="stable")
        ks, x = key[order], vals[order]
        starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
        cells, nb = ks[starts], np.diff(np.r_[starts, ks.size]).astype(float)
        mb = np.add.reduceat(x, starts, axis=0) / nb[:, None]
        dev = x - np.repeat(mb, nb.astype(np.int64), axis=0)
        m2b = np.add.reduceat((dev * dev).sum(axis=1), starts)
        fb = np.add.reduceat(self.loss(x), starts)
        na = self.n[cells]
        tot = na + nb
        delta = mb - self.mu[cells]
        self.mu[cells] += delta * (nb / tot)[:, None]
        self.m2[cells] += m2b + (delta * delta).sum(axis=1) * (na * nb / tot)
        self.n[cells] = tot
        self.f[cells] += fb


def simulate_dpsgd(problem: Problem, mixing: Any, finish_times: Any, grid: Any, seed: Seed = None,
                   x0: Any = None, keep: bool = False, max_models: float = limits.GRAPH_MAX_MODELS,
                   max_work: float = MAX_WORK) -> GraphSimulation:
    """Every node's model of d-psgd, R replicas at once, read on the time ``grid``.

    ``finish_times[r, k, i]`` = t_i(k), when node i's model x_i(k) exists (k = 0 is the start; the
    max-plus recursion of DESIGN §12 gives the others).  Iteration k: ``x_i(k+1) = Σ_j w_ij x_j(k) −
    η (h ⊙ x_i(k) + ξ_i(k))``, ξ ~ N(0, σ²/(b d)) per coordinate, drawn as one standard-normal array of
    shape (m, R, d) per iteration k = 0, 1, … from ``seed``'s stream (none when σ² = 0).
    **The model of node i at time t** is its latest model, x_i(k) with the largest k such that
    t_i(k) ≤ t (x_i(0) before t_i(1)): the model it holds then, while it computes the next one.
    The grid must end by the last finish time of every node (else the models there are unknown).
    ``x0`` (optional) starts the nodes elsewhere than w₀: (d,), (m, d) or (R, m, d).
    """
    W = check_mixing(mixing)
    m, d, h, eta, sd = W.shape[0], problem.dim, problem.h, problem.eta, problem.noise_sd
    T = np.asarray(finish_times, dtype=float)
    if T.ndim != 3 or T.shape[0] < 1 or T.shape[1] < 1 or T.shape[2] != m:
        raise ParameterError("finish_times", "graph_array_shape", what="finish_times", shape=T.shape,
                             expected=f"(R, n + 1, {m})")
    R, n = T.shape[0], T.shape[1] - 1
    g = check_grid(grid)
    P = g.size
    check_size(R, m, P, d, n, W.nnz + m, max_models, max_work)
    if not np.isfinite(T).all():
        raise ParameterError("finish_times", "graph_times_order", what="finish_times")
    end = float(T[:, n, :].min())
    if g[-1] > end:
        raise ParameterError("time", "graph_trace_short", end=end, time=float(g[-1]))
    rng = generator(seed)
    X = np.ascontiguousarray(_start(problem, x0, R, m).transpose(1, 0, 2))  # (m, R, d)
    acc = Moments(R, P, d, lambda x: 0.5 * (x * x) @ h)
    base = np.arange(R)[None, :] * P  # (1, R)
    lo = np.zeros((m, R), dtype=np.int64)  # x_i(0) holds from the grid's start
    for k in range(n + 1):
        if k < n:
            nxt = T[:, k + 1, :].T  # (m, R)
            if (nxt < T[:, k, :].T).any():
                raise ParameterError("finish_times", "graph_times_order", what="finish_times")
            hi = np.searchsorted(g, nxt, side="left")
        else:
            hi = np.full((m, R), P, dtype=np.int64)
        record(acc, X, lo, hi, base)
        if k < n:
            mixed = (W @ X.reshape(m, R * d)).reshape(m, R, d)
            grad = h * X
            if sd > 0:
                grad += sd * rng.standard_normal((m, R, d))
            X = mixed - eta * grad
            lo = hi
    assert (acc.n == m).all()  # every grid point got every node's model exactly once
    return _result(g, acc, R, n, m, keep)


def record(acc: Moments, X: np.ndarray, lo: np.ndarray, hi: np.ndarray, base: np.ndarray) -> None:
    """Add x_i (row i of X, (m, R, d)) to the grid points lo[i, r] ≤ p < hi[i, r] of replica r."""
    cnt = (hi - lo).ravel()
    sel = np.flatnonzero(cnt > 0)
    if sel.size == 0:
        return
    c = cnt[sel]
    cum = np.cumsum(c)
    # blocks of entries holding at most about PAIRS_BLOCK (grid point, node) pairs
    cuts = np.r_[0, np.searchsorted(cum, np.arange(PAIRS_BLOCK, cum[-1], PAIRS_BLOCK), side="right"), sel.size]
    flat_x = X.reshape(-1, X.shape[2])  # row i·R + r
    start = (lo.ravel() + np.broadcast_to(base, lo.shape).ravel())[sel]  # cell of the first grid point
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        if a == b:
            continue
        cc = c[a:b]
        offs = np.arange(int(cc.sum())) - np.repeat(np.cumsum(cc) - cc, cc)
        key = np.repeat(start[a:b], cc) + offs
        acc.add(key, flat_x[np.repeat(sel[a:b], cc)])


def _result(g: np.ndarray, acc: Moments, R: int, steps: int, m: int, keep: bool) -> GraphSimulation:
    P = g.size
    average = acc.loss(acc.mu).reshape(R, P)
    nodes = (acc.f / m).reshape(R, P)
    consensus = (acc.m2 / m).reshape(R, P)
    return GraphSimulation(g, Band.of(average, keep), Band.of(nodes, keep), Band.of(consensus, keep), R, steps)


def simulate_adpsgd(problem: Problem, m: int, times: Any, nodes: Any, peers: Any, grid: Any,
                    seed: Seed = None, x0: Any = None, keep: bool = False,
                    max_models: float = limits.GRAPH_MAX_MODELS, max_work: float = MAX_WORK) -> GraphSimulation:
    """Every node's model of ad-psgd (DESIGN §12), R replicas at once, read on the time ``grid``.

    Event e of replica r (``times[r, e]`` non-decreasing in e) is node i = ``nodes[r, e]`` finishing a
    gradient with peer j = ``peers[r, e]``: x_i and x_j ← (x_i + x_j)/2; then
    ``x_i ← x_i − η (h ⊙ x̂_i + ξ)`` with x̂_i the model i read when it started (stale: taken right after
    its previous event, or its start), ξ ~ N(0, σ²/(b d)); then i reads x̂_i ← x_i.  The noise of event
    e is one standard-normal (R, d) draw per event, in order, from ``seed``'s stream (drawn in blocks;
    none when σ² = 0).  The models at time t are those after every event with time ≤ t; the events
    must run to the grid's end in every replica.  ``x0`` as :func:`simulate_dpsgd`'s.
    """
    m = M.check(m, "m")
    t = np.asarray(times, dtype=float)
    i_ev, j_ev = np.asarray(nodes), np.asarray(peers)
    if t.ndim != 2 or t.shape[0] < 1 or i_ev.shape != t.shape or j_ev.shape != t.shape:
        raise ParameterError("times", "graph_array_shape", what="times, nodes, peers",
                             shape=(t.shape, i_ev.shape, j_ev.shape), expected="three equal (R, E)")
    R, E = t.shape
    if not (np.issubdtype(i_ev.dtype, np.integer) and np.issubdtype(j_ev.dtype, np.integer)) or (E and (
            min(i_ev.min(), j_ev.min()) < 0 or max(i_ev.max(), j_ev.max()) >= m or (i_ev == j_ev).any())):
        raise ParameterError("nodes", "graph_event_nodes", last=m - 1)
    if not (np.isfinite(t).all() and (np.diff(t, axis=1) >= 0).all()):
        raise ParameterError("times", "graph_times_order", what="times")
    g = check_grid(grid)
    P, d, sd = g.size, problem.dim, problem.noise_sd
    end = float(t[:, -1].min()) if E else -np.inf
    if g[-1] > end:
        raise ParameterError("time", "graph_trace_short", end=end, time=float(g[-1]))
    counts = np.ascontiguousarray(counts_at(t, g), dtype=np.int64)  # events with time ≤ t_p: (R, P)
    used = int(counts.max())
    check_size(R, m, P, d, used, 2, max_models, max_work)
    rng = generator(seed)
    X = _start(problem, x0, R, m)
    read = X.copy()
    out = np.empty((3, R * P))
    ev = (np.ascontiguousarray(i_ev[:, :used], dtype=np.int64), np.ascontiguousarray(j_ev[:, :used], dtype=np.int64))
    flat = counts.ravel()
    order = np.argsort(flat, kind="stable")
    bounds = np.searchsorted(flat[order], np.arange(used + 2))  # cells recorded before event e
    ptr = np.zeros(R, dtype=np.int64)
    B = int(max(1, min(used, NOISE_BLOCK_BYTES // (8 * R * d))))
    z = np.zeros((B, R, d))
    for e0 in range(0, used, B):
        zb = z[: min(B, used - e0)]
        if sd > 0:
            rng.standard_normal(out=zb)
        if jit.ENABLED:
            kernels.adpsgd_events(X, read, *ev, zb, e0, problem.eta, sd, problem.h, counts, ptr, out)
        else:
            _adpsgd_numpy(X, read, *ev, zb, e0, problem.eta, sd, problem.h, out, order, bounds)
    last = order[bounds[used]:bounds[used + 1]]
    _snapshot(out, last, X[last // P], problem.h)  # the grid points after the last event used
    average, mean_nodes, consensus = (x.reshape(R, P) for x in out)
    return GraphSimulation(g, Band.of(average, keep), Band.of(mean_nodes, keep), Band.of(consensus, keep), R, used)


def _adpsgd_numpy(X: np.ndarray, read: np.ndarray, nodes: np.ndarray, peers: np.ndarray, z: np.ndarray, e0: int,
                  eta: float, sd: float, h: np.ndarray, out: np.ndarray, order: np.ndarray,
                  bounds: np.ndarray) -> None:
    """The reference of :func:`~distsgd.error.graph_kernels.adpsgd_events`: the same events, one at a
    time, vectorised over replicas; before event e it records the cells ``order[bounds[e]:bounds[e+1]]``
    (those whose count of events is e)."""
    R, m, d = X.shape
    P = out.shape[1] // R
    base = np.arange(R) * m
    Xf, rf = X.reshape(R * m, d), read.reshape(R * m, d)  # views: row r·m + i
    for b in range(z.shape[0]):
        e = e0 + b
        cells = order[bounds[e]:bounds[e + 1]]
        if cells.size:
            _snapshot(out, cells, X[cells // P], h)
        i, j = nodes[:, e] + base, peers[:, e] + base
        avg = 0.5 * (Xf[i] + Xf[j])
        Xf[j] = avg
        new = avg - eta * (h * rf[i] + sd * z[b])
        Xf[i] = new
        rf[i] = new


def _snapshot(out: np.ndarray, cells: np.ndarray, Xs: np.ndarray, h: np.ndarray) -> None:
    """The three numbers of the models Xs (k, m, d) into the cells of ``out`` (3, R·P)."""
    xbar = Xs.mean(axis=1)
    dev = Xs - xbar[:, None, :]
    out[0, cells] = 0.5 * (xbar * xbar) @ h
    out[1, cells] = 0.5 * ((Xs * Xs) @ h).mean(axis=1)
    out[2, cells] = (dev * dev).sum(axis=2).mean(axis=1)

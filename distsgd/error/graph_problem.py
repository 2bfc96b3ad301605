"""d-psgd and ad-psgd on any problem of DESIGN §9 (a logistic regression, a user's functions): every
node's model, driven by the same timing engines as on the model problem (:mod:`distsgd.error.graph_run`),
read on the time grid as the error of the average model f(x̄) − f*, the mean node error
(1/m) Σ_i f(x_i) − f*, the consensus distance (1/m) Σ_i ‖x_i − x̄‖², and the problem's metrics (test
accuracy, test loss) of the average model.

* d-psgd, iteration k of node i: ``x_i(k+1) = Σ_j w_ij x_j(k) − η·grad(x_i(k), b)``, one batch of b
  rows per node, all nodes and replicas in one ``problem.grad`` call; node i's model at time t is its
  latest, as in :func:`~distsgd.error.graph_simulate.simulate_dpsgd`.
* ad-psgd, event e (node i with peer j): x_i, x_j ← (x_i + x_j)/2, then x_i ← x_i − η·grad(x̂_i, b) at
  the model x̂_i that i read when it started, then i reads; as
  :func:`~distsgd.error.graph_simulate.simulate_adpsgd` (its numpy loop: vectorised over replicas).

Work: each step's gradients (R·m·b·d per d-psgd iteration, R·b·d per ad-psgd event) and, at every grid
point, the loss of each node's model (R·P·m evaluations of the training loss: rows·d each) — refused
over ``max_work`` (the ``sgd_work_cap`` of :func:`~distsgd.error.general.simulate_problem`).
"""

from __future__ import annotations

import numpy as np

from .. import limits
from ..clusters import Cluster
from ..delays import Delay
from ..problems.base import GradientProblem, data_rows
from ..schemes import GraphScheme
from .graph_run import GRAPH_METRICS, events, finish_times
from .graph_simulate import Moments, check_size, record
from .problem import band
from .result import ErrorSimulation
from .timing import counts_at

__all__ = ["simulate_graph_problem"]


def _rows(problem: GradientProblem, node_error: bool) -> tuple[int, int]:
    """Rows a grid point reads, for the work cap: each node's training loss (if asked), then the
    average model's loss and metrics."""
    train, test = data_rows(problem)
    return (train if node_error else 0), train + test


def _metrics(problem: GradientProblem, models: np.ndarray) -> dict[str, np.ndarray]:
    """The problem's metrics (test accuracy, …) of each row of ``models``, in blocks."""
    fn = getattr(problem, "metrics", None)
    if not callable(fn):
        return {}
    out: dict[str, list[np.ndarray]] = {}
    for s in range(0, models.shape[0], 1024):
        for name, v in fn(models[s:s + 1024]).items():
            out.setdefault(name, []).append(np.asarray(v, dtype=np.float64))
    return {name: np.concatenate(parts) for name, parts in out.items()}


def _dpsgd(scheme: GraphScheme, delay: Delay | Cluster, problem: GradientProblem, eta: float, b: int,
           grid: np.ndarray, R: int, n: int, rng: np.random.Generator, max_work: float, max_updates: int,
           node_error: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """(average model (R·P, d), Σ_i f(x_i), Σ‖x_i − x̄‖² per cell, the node count per cell, iterations)."""
    W = scheme.topology.mixing()
    m, P = scheme.m, grid.size
    T = finish_times(scheme, delay, R, n, float(grid[-1]), rng, max_updates)
    steps = T.shape[1] - 1
    w0 = np.asarray(problem.w0(), dtype=np.float64)
    d = w0.size
    check_size(R, m, P, d, steps, m * b, limits.GRAPH_MAX_MODELS, max_work,
               *_rows(problem, node_error))
    X = np.broadcast_to(w0, (m, R, d)).copy()
    acc = Moments(R, P, d, problem.loss if node_error else _no_loss)
    base = np.arange(R)[None, :] * P
    lo = np.zeros((m, R), dtype=np.int64)
    for k in range(steps + 1):
        hi = np.searchsorted(grid, T[:, k + 1, :].T, side="left") if k < steps else np.full((m, R), P, np.int64)
        record(acc, X, lo, hi, base)
        if k < steps:
            mixed = (W @ X.reshape(m, R * d)).reshape(m, R, d)
            X = mixed - eta * problem.grad(X.reshape(m * R, d), rng, b).reshape(m, R, d)
            lo = hi
    assert (acc.n == m).all()
    return acc.mu, acc.f, acc.m2, acc.n, steps


def _adpsgd(scheme: GraphScheme, delay: Delay | Cluster, problem: GradientProblem, eta: float, b: int,
            grid: np.ndarray, R: int, n: int, rng: np.random.Generator, max_work: float, max_updates: int,
            node_error: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """As :func:`_dpsgd`, and the staleness of each gradient used (last)."""
    m, P = scheme.m, grid.size
    ev = events(scheme, delay, R, n, float(grid[-1]), rng, max_updates)
    counts = counts_at(ev.times, grid)  # events with time ≤ t_p: (R, P)
    used = int(counts.max())
    w0 = np.asarray(problem.w0(), dtype=np.float64)
    d = w0.size
    check_size(R, m, P, d, used, b, limits.GRAPH_MAX_MODELS, max_work,
               *_rows(problem, node_error))
    X = np.broadcast_to(w0, (R * m, d)).copy()  # row r·m + i
    read = X.copy()
    xbar, f, m2 = np.empty((R * P, d)), np.empty(R * P), np.empty(R * P)
    flat = counts.ravel()
    order = np.argsort(flat, kind="stable")
    bounds = np.searchsorted(flat[order], np.arange(used + 2))  # cells recorded before event e
    base = np.arange(R) * m

    def snapshot(cells: np.ndarray) -> None:
        Xs = X.reshape(R, m, d)[cells // P]
        mean = Xs.mean(axis=1)
        xbar[cells] = mean
        if node_error:
            f[cells] = problem.loss(Xs.reshape(-1, d)).reshape(cells.size, m).sum(axis=1)
        m2[cells] = ((Xs - mean[:, None, :]) ** 2).sum(axis=(1, 2))

    for e in range(used):
        cells = order[bounds[e]:bounds[e + 1]]
        if cells.size:
            snapshot(cells)
        i, j = ev.nodes[:, e] + base, ev.peers[:, e] + base
        avg = 0.5 * (X[i] + X[j])
        X[j] = avg
        new = avg - eta * problem.grad(read[i], rng, b)
        X[i] = new
        read[i] = new
    snapshot(order[bounds[used]:bounds[used + 1]])
    return xbar, f, m2, ev.staleness[:, :used], used


def _no_loss(x: np.ndarray) -> np.ndarray:
    return np.zeros(x.shape[0])


def simulate_graph_problem(scheme: GraphScheme, delay: Delay | Cluster, problem: GradientProblem, eta: float,
                           b: int, f_star: float, grid: np.ndarray, R: int, n: int, rng: np.random.Generator,
                           keep: bool, max_work: float, max_updates: int, node_error: bool = True) -> ErrorSimulation:
    """d-psgd or ad-psgd on ``problem`` (see the module's docstring): the error of the average model
    on the grid with its band, and as ``metrics`` the mean node error (unless ``node_error`` is
    False: it costs m training losses per grid point, most of the run's work on a small problem),
    the consensus distance and the problem's metrics of the average model; ad-psgd's staleness as
    the simulation's."""
    m, P = scheme.m, grid.size
    args = (scheme, delay, problem, eta, b, grid, R, n, rng, max_work, max_updates, node_error)
    if scheme.gossip:
        xbar, f, m2, stale, steps = _adpsgd(*args)
    else:
        xbar, f, m2, _, steps = _dpsgd(*args)
        stale = None
    avg = (problem.loss(xbar) - f_star).reshape(R, P)
    mean, low, high = band(avg)
    out = ErrorSimulation(grid, mean, low, high, R, steps, errors=avg if keep else None)
    named = dict(zip(GRAPH_METRICS, ((f / m - f_star).reshape(R, P), (m2 / m).reshape(R, P)), strict=True))
    if not node_error:
        del named["node_error"]
    named.update({k: v.reshape(R, P) for k, v in _metrics(problem, xbar).items()})
    out.metrics = {k: band(v) for k, v in named.items()}
    if stale is not None:
        out.staleness_mean = float(stale.mean())
        out.fresh_fraction = float(np.count_nonzero(stale == 0) / stale.size)
        out.staleness_counts = np.bincount(stale.ravel())
    return out

"""Simulated SGD on any problem of :mod:`distsgd.problems` (DESIGN §9), driven by the same update
trace as the model problem (:func:`distsgd.montecarlo.simulate_updates`), vectorised over replicas.

* fresh schemes (sync, k-sync, k-batch-sync): update j is ``w ← w − η · mean of K mini-batch
  gradients at w``; K independent b-row batches drawn with replacement are one Kb-row batch, so
  it is one call ``grad(W, rng, K·b)`` (the same law);
* asynchronous schemes: each of the K gradients is computed at the parameters its worker read
  (a stale gradient at the stale model), with the learning-rate rule of
  :class:`~distsgd.error.problem.LearningRate`; workers read as the trace says;
* local SGD: every worker takes H steps from the average on its own mini-batches, then the m
  models are averaged (one update).

The loss and the problem's metrics are evaluated on the time grid only: each replica's model is
recorded when its update count reaches that of a grid time, and the recorded models are
evaluated together in blocks.  Memory: the R models, the m stale copies an asynchronous scheme or
local SGD needs, the trace; nothing per update.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import limits
from ..clusters import Cluster
from ..delays import Delay
from ..estimate import Estimate
from ..montecarlo import UpdateTrace
from ..params import ParameterError
from ..problems import LogisticRegression, bundled
from ..problems.base import LAM, GradientProblem, checked_output, data_rows
from ..problems.data import DataSet, check_set, prepared
from ..random import Seed, generator
from ..schedules import Schedule
from ..schemes import GraphScheme, Scheme
from .graph_problem import simulate_graph_problem
from .problem import BATCH, ETA, MAX_UPDATES, RECORD_BLOCK, LearningRate
from .scheduled import scheduled_scheme, simulate_scheduled
from .simulate import ErrorSimulation, StaleStats, band, plan_run
from .timing import counts_at, covering_trace

__all__ = ["simulate_problem", "problem_work", "linearised_floor", "Floor", "RealProblem", "RECORD_BLOCK",
           "GAMMA_SAMPLES"]

#: updates (evenly spaced) at which the staleness factor γ is measured with full gradients, and
#: the replicas it is measured on: (K + 1) full gradients each
GAMMA_SAMPLES = 8
GAMMA_REPLICAS = 4


@dataclass(frozen=True)
class RealProblem:
    """A bundled set (or a user's :class:`~distsgd.problems.data.DataSet`) with its λ and split,
    and the SGD's η and b: what the dashboard asks for, hashable by value (the problem itself is
    :attr:`problem`, built once per process)."""

    name: str
    lam: float
    eta: float
    b: int
    test_fraction: float = 0.25
    split_seed: int = 0
    #: a user's data file (then ``name`` is only what is shown); None: the bundled set ``name``
    data: DataSet | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "lam", LAM.check(self.lam, "lam"))
        object.__setattr__(self, "eta", ETA.check(self.eta, "eta"))
        object.__setattr__(self, "b", BATCH.check(self.b, "b"))
        if self.data is None:
            check_set(self.name)

    @property
    def problem(self) -> LogisticRegression:
        if self.data is not None:
            return prepared(self.data, self.lam, self.test_fraction, self.split_seed)
        return bundled(self.name, self.lam, self.test_fraction, self.split_seed)

    def facts(self) -> dict[str, Any]:
        """What a page says about the problem, as plain numbers: the constants with their kinds
        (DESIGN §9), the rows, classes and d, and the test accuracy at the optimum."""
        pb = self.problem
        return {"constants": pb.constants.as_json(), "info": dict(pb.info), "classes": pb.classes, "dim": pb.dim,
                "best_test_accuracy": float(pb.metrics(pb.w_star[None])["test_accuracy"][0])}


@dataclass(frozen=True)
class Floor:
    """The linearised noise floor η·σ²*/(4·b·K) (DESIGN §9): ``value``, ``kind`` (approximation)
    and ``K`` (gradients averaged by an update; m for local SGD)."""

    value: float | None
    kind: str
    K: int

    def as_json(self) -> dict[str, Any]:
        return {"value": self.value, "kind": self.kind, "K": self.K}


def linearised_floor(scheme: Scheme, problem: GradientProblem, eta: float, b: int) -> Floor:
    """η·σ²*/(4bK): the stationary error of SGD on the quadratic model of f at w* (small η,
    fresh gradients; local SGD counts the m models averaged, and so do d-psgd and ad-psgd for their
    average model, whose step is that of m gradients (d-psgd) or η/m with one (ad-psgd): consensus
    noise not counted).  An approximation (DESIGN §9)."""
    K = scheme.m if scheme.averages_models or isinstance(scheme, GraphScheme) else scheme.grads_per_update
    sigma2 = problem.constants.sigma2.value
    return Floor(None if sigma2 is None else eta * sigma2 / (4 * b * K), "approximation", K)


class _Recorder:
    """Loss and metrics of each replica's model at the update counts the grid asks for."""

    def __init__(self, problem: GradientProblem, idx: np.ndarray, n: int) -> None:
        self.problem, self.idx, self.n = problem, idx, n
        R = idx.shape[0]
        code = np.unique(idx + (n + 1) * np.arange(R)[:, None])  # one (replica, count) pair each
        self.pairs = code
        rows, counts = code // (n + 1), code % (n + 1)
        order = np.argsort(counts, kind="stable")
        self.rows, self.counts = rows[order], counts[order]
        self.pair_of = order  # position in ``pairs`` of each sorted entry
        self.loss = np.empty(code.size)
        self.metrics: dict[str, np.ndarray] = {}
        self._buf: list[np.ndarray] = []
        self._at: list[np.ndarray] = []
        self._size = 0

    def record(self, count: int, W: np.ndarray) -> None:
        lo, hi = np.searchsorted(self.counts, [count, count + 1])
        if hi > lo:
            self._buf.append(W[self.rows[lo:hi]].copy())
            self._at.append(self.pair_of[lo:hi])
            self._size += hi - lo
            if self._size >= RECORD_BLOCK:
                self.flush()

    def flush(self) -> None:
        if not self._buf:
            return
        Wb, at = np.concatenate(self._buf), np.concatenate(self._at)
        self.loss[at] = self.problem.loss(Wb)
        for name, values in (getattr(self.problem, "metrics", lambda W: {})(Wb)).items():
            self.metrics.setdefault(name, np.full(self.pairs.size, np.nan))[at] = values
        self._buf, self._at, self._size = [], [], 0

    def on_grid(self, values: np.ndarray) -> np.ndarray:
        """(R, P): the value of each replica at each grid time."""
        R = self.idx.shape[0]
        return values[np.searchsorted(self.pairs, self.idx + (self.n + 1) * np.arange(R)[:, None])]


def _check_output(problem: GradientProblem, W: np.ndarray, rng: np.random.Generator, b: int) -> None:
    """The problem's functions give arrays of the right shape, finite (named if not)."""
    checked_output("loss", problem.loss(W), (W.shape[0],))
    checked_output("grad", problem.grad(W, rng, b), W.shape)


def problem_work(scheme: Scheme, problem: GradientProblem, b: int, replicas: int, updates: int,
                 points: int) -> float:
    """Element operations of a run of :func:`simulate_problem`, which its ``max_work`` caps: each
    replica's SGD (updates × gradients per update × b rows, each of d numbers) and the evaluation
    of its recorded models (at most min(points, updates + 1) of them, each reading the training rows
    of the loss and the held-out rows of the metrics, :func:`~distsgd.problems.base.data_rows`).
    On digits the evaluation is most of it: 1 797 rows a model against b rows a gradient."""
    grads = scheme.m * scheme.steps_per_update if scheme.averages_models else scheme.grads_per_update
    train, test = data_rows(problem)
    evaluations = min(points, updates + 1)
    return float(replicas) * problem.dim * (float(updates) * grads * b + float(evaluations) * (train + test))


def simulate_problem(scheme: Scheme, delay: Delay | Cluster, problem: GradientProblem, eta: float, b: int,
                     time: float, points: int = 101, replicas: int = 100, seed: Seed = None,
                     lr: LearningRate | None = None, *, keep_errors: bool = False,
                     max_work: float = limits.MAX_SGD_WORK, max_updates: int = MAX_UPDATES,
                     max_timing_cost: float = math.inf, budget: float | None = None,
                     runtime: Estimate | None = None, schedule: Schedule | str | None = None,
                     graph_node_error: bool = True) -> ErrorSimulation:
    """Simulated SGD on ``problem`` on the grid ``linspace(0, time, points)``: the error
    f(w) − f* (f* from the problem's constants) and each metric, mean and 95 % band over replicas
    (see the module's docstring for the process).  Caps as :func:`distsgd.error.simulate_error`;
    the work cap counts the SGD and the evaluation of the recorded models (:func:`problem_work`).
    ``schedule`` changes K or H during the run, as in :func:`~distsgd.error.simulate_error`.  d-psgd
    and ad-psgd run every node's model (:mod:`~distsgd.error.graph_problem`);
    ``graph_node_error=False`` leaves out their mean node error (m training losses per grid point)."""
    eta = ETA.check(eta, "eta")
    b = BATCH.check(b, "b")
    sched, scheme = scheduled_scheme(scheme, schedule)
    grid, replicas, n = plan_run(scheme, delay, time, points, replicas, seed, runtime, max_updates, max_timing_cost)
    lr = lr or LearningRate()
    rng = generator(seed)
    work = problem_work(scheme, problem, b, replicas, n, points)
    if work > max_work:
        raise ParameterError("replicas", "sgd_work_cap", work=work, cap=max_work)
    f_star = problem.constants.f_star.value
    if f_star is None:
        raise ParameterError("f_star", "problem_f_star_unknown")
    w0 = np.asarray(problem.w0(), dtype=np.float64)
    _check_output(problem, w0[None], rng.spawn(1)[0], b)  # (a child stream: the run's stays as it is)
    if sched is not None:
        return simulate_scheduled(scheme, sched, delay, problem, eta, b, f_star, grid, replicas, rng, max_updates,
                                  max_work, keep_errors, lr)
    if isinstance(scheme, GraphScheme):
        return simulate_graph_problem(scheme, delay, problem, eta, b, f_star, grid, replicas, n, rng, keep_errors,
                                      max_work, max_updates, graph_node_error)
    group = _replica_group(scheme, n, problem.dim, b, replicas)
    errors = np.empty((replicas, points))
    metrics: dict[str, np.ndarray] = {}
    stale = StaleStats()
    n_used = n
    for g0 in range(0, replicas, group):
        r = min(group, replicas - g0)
        tr = covering_trace(scheme, delay, n, r, time, rng, budget)
        n_used = max(n_used, tr.updates)
        rec = _Recorder(problem, counts_at(tr.times, grid), tr.updates)
        _run(scheme, problem, eta, b, tr, lr, rng, rec, stale, w0)
        rec.flush()
        errors[g0:g0 + r] = rec.on_grid(rec.loss) - f_star
        for name, values in rec.metrics.items():
            metrics.setdefault(name, np.empty((replicas, points)))[g0:g0 + r] = rec.on_grid(values)
    mean, low, high = band(errors)
    out = ErrorSimulation(grid, mean, low, high, replicas, n_used, errors=errors if keep_errors else None)
    out.metrics = {name: band(v) for name, v in metrics.items()}
    if not scheme.fresh:
        out.staleness_mean = stale.total / stale.count
        out.fresh_fraction = stale.fresh / stale.count
        out.gamma_measured = stale.gdiff / stale.gnow if stale.gnow > 0 else None
        out.staleness_counts = stale.hist
    return out


def _replica_group(scheme: Scheme, n: int, d: int, b: int, replicas: int) -> int:
    """Replicas simulated together within limits.SGD_GROUP_BYTES: the trace, the models, the stale
    copies (asynchronous schemes, local SGD) and the recorded models."""
    per = 8 * (n + 1) * 2 + 8 * d * 4
    if not scheme.fresh:
        per += 72 * n * scheme.grads_per_update + 8 * scheme.m * d + 8 * scheme.grads_per_update * d * 3
    if scheme.averages_models:
        per += 8 * scheme.m * d * 3
    return int(max(1, min(replicas, limits.SGD_GROUP_BYTES // per)))


def _run(scheme: Scheme, problem: GradientProblem, eta: float, b: int, tr: UpdateTrace, lr: LearningRate,
         rng: np.random.Generator, rec: _Recorder, stale: StaleStats, w0: np.ndarray) -> None:
    R, n = tr.times.shape
    W = np.broadcast_to(w0, (R, w0.size)).copy()
    rec.record(0, W)
    if scheme.averages_models:
        m, H = scheme.m, scheme.steps_per_update
        for j in range(n):
            local = np.repeat(W, m, axis=0)  # (R·m, d): every worker starts from the average
            for _ in range(H):
                local -= eta * problem.grad(local, rng, b)
            W = local.reshape(R, m, -1).mean(axis=1)
            rec.record(j + 1, W)
        return
    if scheme.fresh:
        Kb = scheme.grads_per_update * b
        for j in range(n):
            W -= eta * problem.grad(W, rng, Kb)
            rec.record(j + 1, W)
        return
    _run_async(scheme, problem, eta, b, tr, lr, rng, rec, stale, W)


def _run_async(scheme: Scheme, problem: GradientProblem, eta: float, b: int, tr: UpdateTrace, lr: LearningRate,
               rng: np.random.Generator, rec: _Recorder, stale: StaleStats, W: np.ndarray) -> None:
    """Update j averages the K gradients of the trace, each at the parameters its worker read
    (as :func:`distsgd.error.simulate._run_async_sgd_numpy` does on the model problem)."""
    assert tr.workers is not None and tr.staleness is not None and tr.reads_after_update is not None
    R, n = tr.times.shape
    K, m, d = tr.workers.shape[2], scheme.m, W.shape[1]
    read = np.repeat(W, m, axis=0)  # (R·m, d): the parameters each worker last read
    rows = tr.workers + (np.arange(R) * m)[:, None, None]  # (R, n, K) rows of ``read``
    after, mid = tr.reads_after_update, ~tr.reads_after_update
    eta_max = lr.eta_max if lr.eta_max is not None else eta
    stale.add(tr.staleness)
    full = getattr(problem, "full_grad", None)
    sample = set(np.linspace(0, n - 1, min(n, GAMMA_SAMPLES)).astype(int).tolist()) if callable(full) else set()
    for j in range(n):
        flat = rows[:, j]
        used = read[flat]  # (R, K, d): the parameters each gradient is computed on
        if mid.any():
            used = np.where((tr.staleness[:, j] == 0)[..., None], W[:, None, :], used)
        if j in sample:
            assert full is not None
            s = min(R, GAMMA_REPLICAS)
            g_now = full(W[:s])
            g_used = full(used[:s].reshape(s * K, d)).reshape(s, K, d)
            stale.gdiff += float(((g_now[:, None, :] - g_used) ** 2).sum()) / K
            stale.gnow += float((g_now**2).sum())
        G = problem.grad(used.reshape(R * K, d), rng, b).reshape(R, K, d)
        if lr.rule == "staleness":
            lam = eta / np.maximum(tr.staleness[:, j], 1)  # (R, K)
            step = np.einsum("rk,rkd->rd", lam, G) / K
        elif lr.rule == "constant":
            step = eta * G.mean(axis=1)
        else:
            dist2 = ((W[:, None, :] - used) ** 2).sum(axis=2).mean(axis=1)
            with np.errstate(divide="ignore"):
                eta_j = np.where(dist2 > 0, np.minimum(lr.C / dist2, eta_max), eta_max)
            step = eta_j[:, None] * G.mean(axis=1)
        if mid.any():
            read[flat[:, mid]] = W[:, None, :]  # read now, before the update
        W = W - step
        read[flat[:, after]] = W[:, None, :]
        rec.record(j + 1, W)

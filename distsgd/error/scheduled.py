"""SGD with an adaptive schedule (DESIGN §13): k-sync or k-async whose K, or local SGD whose H,
each replica changes at checkpoints from its own training loss.

The run goes checkpoint by checkpoint.  Up to checkpoint c every replica's updates are drawn with
the value in force (:class:`~distsgd.error.scheduled_times.ScheduledTimes`, or
:class:`~distsgd.error.scheduled_times.ScheduledKAsync`) until one ends after c: that update was in
progress at c and keeps its value.  The SGD steps (as
:func:`~distsgd.error.general.simulate_problem` takes them: ``W ← W − η·grad(W, K·b)``, H local
steps on each of the m workers and the average, or K gradients at the parameters their workers
read) apply every update that ended by c; then the
training loss F(w_c) of each replica gives its ratio r = F(w_c)/F(w₀) and the schedule's rule the
value of the replica's next update.  The model problem runs as
:class:`~distsgd.error.problem.QuadraticProblem` (the same process in law as its own kernels).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import jit
from ..clusters import Cluster
from ..delays import Delay
from ..params import ParameterError
from ..problems.base import GradientProblem
from ..schedules import Schedule, check_schedule
from ..schemes import Scheme
from . import sgd_kernels as kernels
from .exact import geom
from .problem import RECORD_BLOCK, LearningRate, QuadraticProblem, band
from .result import ErrorSimulation, ScheduleRun
from .scheduled_times import ScheduledKAsync, ScheduledTimes, UpdateLog

__all__ = ["scheduled_scheme", "ScheduledPaths", "run_scheduled", "simulate_scheduled", "schedule_record"]


@dataclass(eq=False)
class ScheduledPaths:
    """A scheduled run's result: the training loss and metrics (R, P) on the grid, the update
    times and values (R, n) padded with inf and 0 (``counts`` updates each), and what the
    schedule did at each checkpoint."""

    errors: np.ndarray
    metrics: dict[str, np.ndarray]
    times: np.ndarray
    values: np.ndarray
    counts: np.ndarray
    ratios: np.ndarray  # (R, C) F(w_c)/F(w₀) at each checkpoint
    after: np.ndarray  # (R, C) the value each replica took at each checkpoint
    applied: np.ndarray  # (R,) the updates applied by the horizon
    stale: np.ndarray | None = None  # k-async: (R, n, kmax) each gradient's staleness (padded with 0)
    workers: np.ndarray | None = None  # k-async: (R, n, kmax) the pushers (padded with −1)


def scheduled_scheme(scheme: Scheme, schedule: Schedule | str | None) -> tuple[Schedule | None, Scheme]:
    """(the checked schedule, the scheme with K or H at the schedule's first value), or
    (None, scheme) without a schedule."""
    if schedule is None:
        return None, scheme
    s = check_schedule(schedule, scheme)
    parameter = type(scheme).schedulable
    assert parameter is not None
    return s, dataclasses.replace(scheme, **{parameter: s.start})


class _Grid:
    """The losses and metrics of each replica's model at the update counts of the grid times:
    models copied when their count is reached (once for the grid times that share a count),
    evaluated together in blocks."""

    def __init__(self, problem: GradientProblem, R: int, P: int) -> None:
        self.problem = problem
        self.loss = np.full((R, P), np.nan)
        self.metrics: dict[str, np.ndarray] = {}
        self._W: list[np.ndarray] = []
        self._at: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._size = 0

    def record(self, W: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> None:
        """The models W[rows] for the grid columns ``cols``; ``rows`` is sorted, a row may repeat
        (one copy)."""
        if rows.size:
            first = np.empty(rows.size, dtype=bool)
            first[0] = True
            np.not_equal(rows[1:], rows[:-1], out=first[1:])
            u, model = rows[first], np.cumsum(first) - 1
            self._W.append(W[u].copy())
            self._at.append((rows, cols, model + self._size))
            self._size += u.size
            if self._size >= RECORD_BLOCK:
                self.flush()

    def flush(self) -> None:
        if not self._W:
            return
        Wb = np.concatenate(self._W)
        r, c, model = (np.concatenate(a) for a in zip(*self._at, strict=True))
        self.loss[r, c] = self.problem.loss(Wb)[model]
        metrics = getattr(self.problem, "metrics", None)
        for name, v in (metrics(Wb) if callable(metrics) else {}).items():
            self.metrics.setdefault(name, np.full(self.loss.shape, np.nan))[r, c] = v[model]
        self._W, self._at, self._size = [], [], 0


class _Stepper:
    """What the two kinds of scheduled updates share: on the model problem (``exact``), a stretch
    of updates between checkpoints draws its noise at once, replica by replica (z[p] for update k of
    replica r, p = Σ_{r' < r} (upto − applied)[r'] + k − applied[r]), and runs in a compiled loop
    (:meth:`_compiled`) when kernels are enabled, else in :func:`_sgd` (the reference: the same
    numbers for the same seed)."""

    problem: GradientProblem
    rng: np.random.Generator

    def __init__(self) -> None:
        self.exact = isinstance(self.problem, QuadraticProblem)
        self._z, self._z_at = np.empty((0, 0)), np.empty(0, dtype=np.int64)  # the noise of the stretch

    def exact_updates(self, W: np.ndarray, trace: UpdateLog, applied: np.ndarray, upto: np.ndarray, grid: _Grid,
                      cols: np.ndarray, counts: np.ndarray) -> None:
        """The exact updates applied[r] … upto[r] − 1 of every replica, recorded as :func:`_sgd` does."""
        pending = upto - applied
        z = self.rng.standard_normal((int(pending.sum()), W.shape[1]))
        if jit.ENABLED:
            self._compiled(W, trace, applied, upto, z, grid.loss, int(cols[0]) if cols.size else 0, counts)
            return
        self._z, self._z_at = z, np.cumsum(pending) - pending - applied
        _sgd(self, W, trace, applied, upto, grid, cols, counts)

    def _noise(self, rows: np.ndarray | None, at: np.ndarray) -> np.ndarray:
        """The noise :meth:`exact_updates` drew for update ``at`` of these replicas (None: all)."""
        return self._z[self._z_at[slice(None) if rows is None else rows] + at]

    def _compiled(self, W: np.ndarray, trace: UpdateLog, applied: np.ndarray, upto: np.ndarray, z: np.ndarray,
                  loss: np.ndarray, col0: int, counts: np.ndarray) -> None:
        raise NotImplementedError

    def update(self, W: np.ndarray, rows: np.ndarray | None, values: np.ndarray, at: np.ndarray) -> None:
        raise NotImplementedError


def _put(W: np.ndarray, rows: np.ndarray | None, Wr: np.ndarray) -> None:
    """W[rows] = Wr (rows None: all of W), in place."""
    if rows is None:
        W[...] = Wr
    else:
        W[rows] = Wr


class _Fresh(_Stepper):
    """Updates of k-sync (``W ← W − η·grad(W, K·b)``) or local SGD (H local steps on each of the m
    workers, then the average).  On the model problem an update is linear with Gaussian noise,
    ``w ← s_v ⊙ w + σ_v ⊙ z``, and sampled exactly as the fixed engines do: k-sync s = 1 − ηh,
    σ = η·√(σ²/(K·b·d)); local SGD (the m-worker average after H linear steps) s = a^H,
    σ² = η²·σ²/(b·d)·Σ_{k<H} a^{2k}/m with a = 1 − ηh."""

    def __init__(self, scheme: Scheme, problem: GradientProblem, eta: float, b: int, rng: np.random.Generator) -> None:
        self.scheme, self.problem, self.eta, self.b, self.rng = scheme, problem, eta, b, rng
        super().__init__()
        self._linear = (np.ones((1, 0)), np.zeros((1, 0)))  # row v: (s_v, σ_v); row 0 unused

    def _table(self, top: int) -> tuple[np.ndarray, np.ndarray]:
        """s_v and σ_v of the exact update for every value v ≤ top, one row each."""
        if top >= self._linear[0].shape[0]:
            problem = self.problem
            assert isinstance(problem, QuadraticProblem)
            a = 1.0 - self.eta * problem.h
            v = np.maximum(np.arange(top + 1), 1)[:, None]
            var = problem.model.sigma2 / (self.b * problem.dim)
            if self.scheme.averages_models:
                self._linear = (a**v, self.eta * np.sqrt(var * geom(a * a, v) / self.scheme.m))
            else:
                self._linear = (a * np.ones_like(v), self.eta * np.sqrt(var / v) * np.ones_like(a))
        return self._linear

    def _compiled(self, W: np.ndarray, trace: UpdateLog, applied: np.ndarray, upto: np.ndarray, z: np.ndarray,
                  loss: np.ndarray, col0: int, counts: np.ndarray) -> None:
        problem = self.problem
        assert isinstance(problem, QuadraticProblem)
        shrink, sd = self._table(int(trace.values.max(initial=1)))
        kernels.scheduled_fresh(W, applied, upto, trace.values, shrink, sd, z, problem.h, counts, loss, col0)

    def update(self, W: np.ndarray, rows: np.ndarray | None, values: np.ndarray, at: np.ndarray) -> None:
        """One update of these replicas (None: all), replica rows[i] with K (or H) = values[i], in
        place: on the model problem the exact update (s_v and σ_v looked up per replica, the noise
        :meth:`exact_updates` drew), otherwise one :meth:`step` per value."""
        if not self.exact:
            _by_value(self.step, W, rows, values, at)
            return
        shrink, sd = (t[values] for t in self._table(int(values.max())))
        _put(W, rows, shrink * (W if rows is None else W[rows]) + sd * self._noise(rows, at))

    def step(self, W: np.ndarray, rows: np.ndarray | None, value: int, at: np.ndarray) -> None:
        """One update of these replicas (None: all) with K (or H) = value, in place (SGD steps)."""
        problem, eta, b, rng = self.problem, self.eta, self.b, self.rng
        Wr = W if rows is None else W[rows]
        if self.scheme.averages_models:
            m = self.scheme.m
            local = np.repeat(Wr, m, axis=0)
            for _ in range(value):
                local -= eta * problem.grad(local, rng, b)
            Wr = local.reshape(Wr.shape[0], m, -1).mean(axis=1)
        else:
            Wr = Wr - eta * problem.grad(Wr, rng, value * b)
        _put(W, rows, Wr)


class _KAsync(_Stepper):
    """k-async updates: each of the K gradients of an update is computed at the parameters its
    worker read (``problem.grad`` at the stale model), with the learning-rate rule of ``lr``
    (:class:`~distsgd.error.problem.LearningRate`, as the fixed runs apply it); the pushers then
    read the new parameters.  On the model problem, as the fixed runs' kernel does, the mean of
    the K gradients' noises is one Gaussian per coordinate: σ/√K·z, or σ·√(Σλ_k²)/K·z under the
    staleness rule (λ_k = η/max(1, staleness) in the step)."""

    def __init__(self, scheme: Scheme, problem: GradientProblem, eta: float, b: int, rng: np.random.Generator,
                 lr: LearningRate, log: UpdateLog, W: np.ndarray) -> None:
        self.m, self.problem, self.eta, self.b, self.rng, self.lr, self.log = scheme.m, problem, eta, b, rng, lr, log
        self.read = np.repeat(W, scheme.m, axis=0)  # (R·m, d): what each worker last read
        self.eta_max = lr.eta_max if lr.eta_max is not None else eta
        super().__init__()

    def _sd(self) -> float:
        """σ per coordinate of one gradient's noise on the model problem: √(σ²/(b·d))."""
        problem = self.problem
        assert isinstance(problem, QuadraticProblem)
        return float(np.sqrt(problem.model.sigma2 / (self.b * problem.dim)))

    def _compiled(self, W: np.ndarray, trace: UpdateLog, applied: np.ndarray, upto: np.ndarray, z: np.ndarray,
                  loss: np.ndarray, col0: int, counts: np.ndarray) -> None:
        problem = self.problem
        assert isinstance(problem, QuadraticProblem) and trace.workers is not None and trace.stale is not None
        coef = np.array([self.eta, self._sd(), self.lr.C, self.eta_max])
        kernels.scheduled_async(W, self.read.reshape(W.shape[0], self.m, -1), trace.values, trace.workers,
                                trace.stale, applied, upto, z, problem.h, coef, kernels.RULES[self.lr.rule],
                                counts, loss, col0)

    def update(self, W: np.ndarray, rows: np.ndarray | None, values: np.ndarray, at: np.ndarray) -> None:
        """One update of these replicas (None: all), replica rows[i] with K = values[i]."""
        _by_value(self.step, W, rows, values, at)

    def step(self, W: np.ndarray, rows: np.ndarray | None, value: int, at: np.ndarray) -> None:
        r = np.arange(W.shape[0]) if rows is None else rows
        assert self.log.workers is not None and self.log.stale is not None
        flat = r[:, None] * self.m + self.log.workers[r, at, :value]  # (g, K) rows of ``read``
        used = self.read[flat]
        g, d = r.size, W.shape[1]
        lam = self.eta / np.maximum(self.log.stale[r, at, :value], 1) if self.lr.rule == "staleness" else None
        if self.exact:
            problem = self.problem
            assert isinstance(problem, QuadraticProblem)
            z = self._noise(r, at)
            if lam is not None:
                step = problem.h * (np.einsum("gk,gkd->gd", lam, used) / value)
                step += (self._sd() * np.sqrt((lam * lam).sum(axis=1)) / value)[:, None] * z
            else:
                step = problem.h * (used.sum(axis=1) * (1.0 / value)) + self._sd() / np.sqrt(value) * z
                step *= self._rate(W[r], used)[:, None]
        else:
            G = self.problem.grad(used.reshape(g * value, d), self.rng, self.b).reshape(g, value, d)
            if lam is not None:
                step = np.einsum("gk,gkd->gd", lam, G) / value
            else:
                step = self._rate(W[r], used)[:, None] * G.mean(axis=1)
        W[r] -= step
        self.read[flat] = W[r][:, None, :]

    def _rate(self, w: np.ndarray, used: np.ndarray) -> np.ndarray:
        """η of each update (g,): constant, or adaptive η_j = min(C / mean_k ‖w − u_k‖², η_max)
        (η_max when nothing is stale)."""
        if self.lr.rule == "constant":
            return np.full(w.shape[0], self.eta)
        dist2 = ((w[:, None, :] - used) ** 2).sum(axis=2).mean(axis=1)
        with np.errstate(divide="ignore"):
            return np.where(dist2 > 0, np.minimum(self.lr.C / dist2, self.eta_max), self.eta_max)


def _sgd(stepper: _Stepper, W: np.ndarray, trace: UpdateLog, applied: np.ndarray, upto: np.ndarray,
         grid: _Grid, cols: np.ndarray, counts: np.ndarray) -> None:
    """Apply updates applied[r] … upto[r] − 1 of every replica (each with its own value), and
    record replica r's model for grid column cols[j] when it has made counts[r, j] updates."""
    R = W.shape[0]
    rows_all = np.arange(R)
    hit_r, hit_j = np.nonzero(np.ones(counts.shape, dtype=bool))  # row-major: sorted by replica
    hit_c = cols[hit_j]
    hit_k = counts.ravel() - applied[hit_r]  # the step after which each is recorded
    order = np.argsort(hit_k, kind="stable")
    hit_r, hit_c, hit_k = hit_r[order], hit_c[order], hit_k[order]
    steps = int((upto - applied).max(initial=0))
    edges = np.searchsorted(hit_k, np.arange(steps + 2))
    for k in range(steps + 1):
        grid.record(W, hit_r[edges[k]:edges[k + 1]], hit_c[edges[k]:edges[k + 1]])
        count = applied + k
        on = count < upto
        if not on.any():
            break
        active = rows_all if on.all() else rows_all[on]
        at = count[active]
        stepper.update(W, None if active.size == R else active, trace.values[active, at], at)


def _by_value(step: Callable[[np.ndarray, np.ndarray | None, int, np.ndarray], None], W: np.ndarray,
              rows: np.ndarray | None, values: np.ndarray, at: np.ndarray) -> None:
    """``step`` once per distinct value, on the replicas (None: all) that have it."""
    if (values == values[0]).all():
        step(W, rows, int(values[0]), at)
        return
    active = np.arange(W.shape[0]) if rows is None else rows
    for v in np.unique(values):
        pick = values == v
        step(W, active[pick], int(v), at[pick])


def run_scheduled(scheme: Scheme, schedule: Schedule, source: Delay | Cluster, problem: GradientProblem,
                  eta: float, b: int, grid: np.ndarray, R: int, rng: np.random.Generator,
                  max_updates: int, max_work: float, lr: LearningRate | None = None) -> ScheduledPaths:
    """R replicas of the scheduled run on the time grid (see the module's docstring): the
    training loss on the grid as :attr:`ScheduledPaths.errors` before f* is taken off."""
    timing_rng, sgd_rng = rng.spawn(2)
    horizon = float(grid[-1])
    checkpoints = schedule.checkpoints(horizon)
    value = np.full(R, schedule.start, dtype=np.int64)
    W = np.broadcast_to(np.asarray(problem.w0(), dtype=np.float64), (R, problem_dim(problem))).copy()
    f0 = float(problem.loss(W[:1])[0])
    if not f0 > 0:
        raise ParameterError("schedule", "schedule_loss_positive", spec=schedule.spec, f0=f0)
    timing: ScheduledTimes | ScheduledKAsync
    stepper: _Stepper
    if scheme.fresh:
        trace = UpdateLog(R)
        timing = ScheduledTimes(scheme, source, R, timing_rng)
        stepper = _Fresh(scheme, problem, eta, b, sgd_rng)
    else:
        trace = UpdateLog(R, kmax=max(schedule.values()) if schedule.rule == "steps" else scheme.m)
        timing = ScheduledKAsync(scheme, source, R, timing_rng)
        stepper = _KAsync(scheme, problem, eta, b, sgd_rng, lr or LearningRate(), trace, W)
    rec = _Grid(problem, R, grid.size)
    applied = np.zeros(R, dtype=np.int64)
    ratios = np.empty((R, checkpoints.size))
    after = np.empty((R, checkpoints.size), dtype=np.int64)
    work = 0.0
    lo = -np.inf
    for i, c in enumerate([*checkpoints.tolist(), horizon]):
        timing.extend(trace, value, c, max_updates)
        upto = _count_at(trace.times, c)
        cols = np.flatnonzero((grid > lo) & (grid <= c))  # contiguous: the grid increases
        counts = applied[:, None] + _counts(_stretch(trace.times, applied, upto), grid[cols])
        work += _work(scheme, trace, applied, upto, b, W.shape[1])
        if work > max_work:
            raise ParameterError("replicas", "sgd_work_cap", work=work, cap=max_work)
        if stepper.exact:
            stepper.exact_updates(W, trace, applied, upto, rec, cols, counts)
        else:
            _sgd(stepper, W, trace, applied, upto, rec, cols, counts)
        applied = upto
        lo = c
        if i < checkpoints.size:
            ratios[:, i] = problem.loss(W) / f0
            value = after[:, i] = schedule.after(c, ratios[:, i], scheme.m)
    rec.flush()
    return ScheduledPaths(rec.loss, rec.metrics, trace.times, trace.values, trace.n, ratios,
                          after, applied, trace.stale, trace.workers)


def problem_dim(problem: GradientProblem) -> int:
    """d: the size of the problem's w₀."""
    return int(np.asarray(problem.w0()).size)


def _count_at(times: np.ndarray, t: float) -> np.ndarray:
    """Updates of each replica ended by t."""
    return (times <= t).sum(axis=1)


def _counts(times: np.ndarray, t: np.ndarray) -> np.ndarray:
    """(R, len(t)): updates of each replica ended by each of the increasing times t (rows
    inf-padded).  An end time x counts at t[j] iff x ≤ t[j], i.e. iff j ≥ searchsorted(t, x, "left"):
    one search of every end time among the few t, then a running count per replica."""
    R, P = times.shape[0], t.size
    first = np.searchsorted(t, times, side="left")  # P: after every t (inf padding included)
    hist = np.bincount((np.arange(R)[:, None] * (P + 1) + first).ravel(), minlength=R * (P + 1))
    return np.cumsum(hist.reshape(R, P + 1)[:, :P], axis=1)


def _stretch(times: np.ndarray, applied: np.ndarray, upto: np.ndarray) -> np.ndarray:
    """Each replica's end times of its updates applied[r] … upto[r] − 1, left-aligned and padded
    with inf (the updates that end within the stretch between two checkpoints)."""
    idx = applied[:, None] + np.arange(int((upto - applied).max(initial=0)))
    out = np.take_along_axis(times, np.minimum(idx, times.shape[1] - 1), axis=1)
    out[idx >= upto[:, None]] = np.inf
    return out


def _work(scheme: Scheme, trace: UpdateLog, applied: np.ndarray, upto: np.ndarray, b: int, d: int) -> float:
    """Gradient rows × d of the updates about to be applied (the work cap of simulate_problem)."""
    k = np.arange(trace.values.shape[1])
    pending = (k >= applied[:, None]) & (k < upto[:, None])
    total = float(trace.values[pending].sum()) * (scheme.m if scheme.averages_models else 1)
    return total * b * d


def schedule_record(schedule: Schedule, paths: ScheduledPaths, grid: np.ndarray) -> ScheduleRun:
    """The schedule's record of a run: means over replicas at each checkpoint and, on the grid,
    the value of the update in progress at each grid time (the last one after the horizon)."""
    counts = _counts(paths.times, grid)
    idx = np.minimum(counts, paths.counts[:, None] - 1)
    on_grid = np.take_along_axis(paths.values, idx, axis=1).astype(np.float64)
    return ScheduleRun(schedule, schedule.checkpoints(float(grid[-1])), paths.after.mean(axis=0),
                       paths.ratios.mean(axis=0), band(on_grid))



def simulate_scheduled(scheme: Scheme, schedule: Schedule, source: Delay | Cluster, problem: GradientProblem,
                       eta: float, b: int, f_star: float, grid: np.ndarray, R: int, rng: np.random.Generator,
                       max_updates: int, max_work: float, keep_errors: bool = False,
                       lr: LearningRate | None = None) -> ErrorSimulation:
    """The error f(w) − f* and every metric of the scheduled run on ``grid``, mean and 95 % band
    over R replicas, with the schedule's record (:class:`~distsgd.error.result.ScheduleRun`); for
    k-async also the staleness of every gradient applied by the horizon (mean, fresh fraction,
    histogram)."""
    paths = run_scheduled(scheme, schedule, source, problem, eta, b, grid, R, rng, max_updates, max_work, lr)
    errors = paths.errors - f_star
    mean, low, high = band(errors)
    out = ErrorSimulation(grid, mean, low, high, R, int(paths.counts.max()), errors=errors if keep_errors else None)
    out.metrics = {name: band(v) for name, v in paths.metrics.items()}
    out.schedule = schedule_record(schedule, paths, grid)
    if paths.stale is not None and paths.workers is not None:
        n = paths.stale.shape[1]
        done = np.arange(n)[None, :] < paths.applied[:, None]  # (R, n) updates applied by the horizon
        st = paths.stale[(paths.workers >= 0) & done[:, :, None]]
        if st.size:
            out.staleness_mean = float(st.mean())
            out.fresh_fraction = float(np.count_nonzero(st == 0) / st.size)
            out.staleness_counts = np.bincount(st)
    return out

"""Error against wall-clock time: bounds, the exact model curve, and simulated SGD (DESIGN §3).

Model problem: ``f(w) = ½ Σ_i h_i w_i²`` with h_i evenly spaced in [μ, L] (h = μ when d = 1),
f* = 0, every coordinate of w₀ equal and scaled so that f(w₀) = F0.  A gradient at w is
``h ⊙ w + ξ`` with ξ ~ N(0, σ²/(b·d)·I), so E‖ξ‖² = σ²/b.  An update averages the K
gradients of the iteration: ``w ← w − η · mean(g)``.

* :func:`error_bound` — Dutta et al. (AISTATS 2018): fresh gradients
  ``F_K + (1 − ημ)^J (F0 − F_K)``, ``F_K = ηLσ²/(2μbK)`` (needs η ≤ 1/L); asynchronous
  ``F'_K + (1 − ημγ')^J (F0 − F'_K)``, ``γ' = 1 − γ + p0/2``, ``F'_K = ηLσ²/(2μγ'bK)``
  (needs η ≤ 1/(2L(M_G/K + 1)) with M_G = 1 for this model, as recalled from the paper).
  Against time with J(t) = t / E[T].
* :func:`exact_error` — the exact expectation on the model problem for fresh-gradient schemes
  and local SGD: per coordinate ``E[w²] ← a² E[w²] + η²σ²/(b d K)``, a = 1 − ηh.
* :func:`simulate_error` — replicas of SGD driven by the same timing process as the runtime
  Monte Carlo (:func:`distsgd.montecarlo.simulate_updates`): each gradient is computed on the
  parameters its worker read, so staleness comes out of the process.
"""

from __future__ import annotations

import argparse
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from .analytic import VALUE_KINDS, Estimate, expected_runtime
from .delays import Delay
from .montecarlo import UpdateTrace, iteration_cost, simulate_runtime, simulate_updates
from .params import Domain, ParameterError
from .random import Seed, generator
from .schemes import KAsync, LocalSGD, Scheme

__all__ = [
    "Problem", "LearningRate", "BoundCurve", "ErrorSimulation", "TargetTime", "ModelCurve",
    "error_bound", "bound_vs_time", "exact_error", "exact_error_vs_time", "simulate_error",
    "time_to_target", "bound_time_to_target", "simulated_time_to_target", "sweep_time_to_target",
    "ETA", "L_SMOOTH", "MU", "SIGMA2", "BATCH", "F0", "DIM", "GAMMA", "P0", "TIME", "POINTS",
    "REPLICAS", "MAX_REPLICAS", "MAX_UPDATES",
]

ETA = Domain("eta", 0.0, 100.0, low_open=True, symbol="η", doc="learning rate")
L_SMOOTH = Domain("L", 0.0, 1e6, low_open=True, symbol="L", doc="smoothness (largest curvature)")
MU = Domain("mu", 0.0, 1e6, low_open=True, symbol="μ", doc="strong convexity (smallest curvature)")
SIGMA2 = Domain("sigma2", 0.0, 1e6, symbol="σ²", doc="gradient noise variance E‖ξ‖² per sample")
BATCH = Domain("b", 1, 1_000_000, integer=True, symbol="b", doc="mini-batch size")
F0 = Domain("f0", 0.0, 1e9, low_open=True, symbol="F₀", doc="initial error f(w₀) − f*")
DIM = Domain("dim", 1, 1000, integer=True, symbol="d", doc="model dimension")
GAMMA = Domain("gamma", 0.0, 1.0, symbol="γ", doc="staleness-gradient factor")
P0 = Domain("p0", 0.0, 1.0, symbol="p₀", doc="lower bound on P(gradient is fresh)")
TIME = Domain("time", 0.0, 1e12, low_open=True, symbol="T", doc="wall-clock horizon")
POINTS = Domain("points", 2, 10_000, integer=True, doc="points on the time grid")
MAX_REPLICAS = 10_000
REPLICAS = Domain("replicas", 1, MAX_REPLICAS, integer=True, doc="independent SGD runs")
MAX_UPDATES = 200_000
#: a cap on replicas × updates × K × d (array-element work of one simulation)
MAX_WORK = 4e9
ETA_MAX = Domain("eta_max", 0.0, 100.0, low_open=True, symbol="η_max")
C_ADAPT = Domain("C", 0.0, 1e9, low_open=True, symbol="C")
_GROUP = 2**21
#: cost caps of the E[T] that sets the time axis (analytic lattice work; Monte Carlo in
#: iteration_cost units, about nanoseconds)
_AXIS_ANALYTIC_WORK = 3e7
_AXIS_MC_COST = 1e8
#: bytes of trace and SGD state per group of replicas simulated together
_GROUP_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Problem:
    """The model problem and the SGD hyper-parameters (DESIGN §3)."""

    eta: float = 0.05
    L: float = 2.0
    mu: float = 0.5
    sigma2: float = 1.0
    b: int = 1
    f0: float = 1.0
    dim: int = 10

    def __post_init__(self) -> None:
        for dom, name in ((ETA, "eta"), (L_SMOOTH, "L"), (MU, "mu"), (SIGMA2, "sigma2"),
                          (BATCH, "b"), (F0, "f0"), (DIM, "dim")):
            object.__setattr__(self, name, dom.check(getattr(self, name), name))
        if self.mu > self.L:
            raise ParameterError("mu", f"must be ≤ L = {self.L:g} (got {self.mu:g})")

    @property
    def h(self) -> np.ndarray:
        """Curvatures h_i, evenly spaced in [μ, L]."""
        return np.linspace(self.mu, self.L, self.dim) if self.dim > 1 else np.array([self.mu])

    @property
    def w0(self) -> np.ndarray:
        """Equal coordinates with f(w₀) = F0: c = √(2F0 / Σh)."""
        return np.full(self.dim, math.sqrt(2 * self.f0 / self.h.sum()))

    @property
    def noise_sd(self) -> float:
        """Per-coordinate standard deviation of one gradient's noise: √(σ²/(b d))."""
        return math.sqrt(self.sigma2 / (self.b * self.dim))


@dataclass(frozen=True)
class LearningRate:
    """Learning-rate rule for the asynchronous schemes (fresh schemes always use η).

    constant:  η
    adaptive:  η_j = min(C / ‖w_j − w_τ‖², η_max), ‖·‖² averaged over the update's K gradients
               (Dutta et al. 2018, staleness-dependent rate); η_max when nothing is stale
    staleness: η / max(1, staleness) for each gradient
    """

    rule: str = "constant"
    C: float = 0.01
    eta_max: float | None = None

    RULES = ("constant", "adaptive", "staleness")

    def __post_init__(self) -> None:
        if self.rule not in self.RULES:
            raise ParameterError("lr_rule", f"must be one of {', '.join(self.RULES)} (got {self.rule!r})")
        object.__setattr__(self, "C", C_ADAPT.check(self.C, "C"))
        if self.eta_max is not None:
            object.__setattr__(self, "eta_max", ETA_MAX.check(self.eta_max, "eta_max"))


# ---------------------------------------------------------------------------------------
# bounds


@dataclass(frozen=True, eq=False)
class BoundCurve:
    """A bound as a function of iterations or time.  ``values`` is None when its step-size
    condition fails (``note`` says which); ``floor`` is the error it tends to."""

    x: np.ndarray
    values: np.ndarray | None
    kind: str
    floor: float | None
    rate: float | None
    condition: str
    note: str = ""
    runtime: Estimate | None = None
    gamma_prime: float | None = None


def _bound_constants(scheme: Scheme, problem: Problem, gamma: float | None,
                     p0: float | None) -> tuple[float | None, float | None, str, str, float | None]:
    """(floor, contraction, condition text, note if violated, γ')."""
    eta, L, mu, s2, b = problem.eta, problem.L, problem.mu, problem.sigma2, problem.b
    if isinstance(scheme, LocalSGD):
        return None, None, "", "no bound is drawn for local SGD (the exact model curve is shown instead)", None
    K = scheme.grads_per_update
    if scheme.fresh:
        cond = "η ≤ 1/L"
        if eta > 1 / L:
            return None, None, cond, f"the bound needs η ≤ 1/L = {1 / L:.4g} (η = {eta:g})", None
        return eta * L * s2 / (2 * mu * b * K), 1 - eta * mu, cond, "", None
    if gamma is None or p0 is None:
        missing = "γ" if gamma is None else "p₀"
        return None, None, "", f"the asynchronous bound needs {missing}", None
    # a measured γ may exceed 1 (near the noise floor stale and fresh gradients differ by
    # noise alone); the bound assumes γ ≤ 1, so then it is not drawn
    gamma = Domain("gamma", 0.0, math.inf).check(gamma, "gamma")
    p0 = P0.check(p0, "p0")
    gp = 1 - gamma + p0 / 2
    if gamma > 1:
        return None, None, "γ ≤ 1", f"γ = {gamma:.3g} > 1: the bound's assumption on stale gradients fails", gp
    limit = 1 / (2 * L * (1 / K + 1))
    cond = "η ≤ 1/(2L(1/K + 1)) and γ' = 1 − γ + p₀/2 > 0"
    if eta > limit:
        return None, None, cond, f"the asynchronous bound needs η ≤ 1/(2L(1/K+1)) = {limit:.4g} (η = {eta:g})", gp
    if gp <= 0:
        return None, None, cond, f"γ' = 1 − γ + p₀/2 = {gp:.3g} ≤ 0: no contraction", gp
    if eta * mu * gp >= 1:
        return None, None, cond, f"ημγ' = {eta * mu * gp:.3g} ≥ 1", gp
    return eta * L * s2 / (2 * mu * gp * b * K), 1 - eta * mu * gp, cond, "", gp


def error_bound(scheme: Scheme, problem: Problem, iterations: Any, gamma: float | None = None,
                p0: float | None = None) -> BoundCurve:
    """Upper bound on E[f(w_J)] − f* after J iterations (Dutta et al. 2018, Thms 1 and 4)."""
    J = np.asarray(iterations, dtype=float)
    floor, rate, cond, note, gp = _bound_constants(scheme, problem, gamma, p0)
    if floor is None:
        return BoundCurve(J, None, "unavailable", None, None, cond, note, gamma_prime=gp)
    values = floor + rate**J * (problem.f0 - floor)
    return BoundCurve(J, values, "upper_bound", floor, rate, cond, "", gamma_prime=gp)


#: E[T] for the time axis, memoised by value (scheme, the law's key, seed): the bound, the
#: exact curve and the simulation of one scheme all ask for it.  Keys are short strings and
#: values small Estimates, so the memo never holds a trace; at most _AXIS_MEMO entries.
_AXIS_MEMO = 512
_axis_memo: "OrderedDict[tuple[object, ...], Estimate]" = OrderedDict()
_axis_lock = threading.Lock()


def _seed_key(seed: Seed) -> object:
    if isinstance(seed, np.random.SeedSequence):
        return ("ss", seed.entropy, tuple(seed.spawn_key))
    if isinstance(seed, np.random.Generator):
        return None  # a Generator's stream moves on: never memoised
    return seed


def _runtime_for_time_axis(scheme: Scheme, delay: Delay, seed: Seed) -> Estimate:
    """E[T] from the analytic core when exact or numerical, else from a bounded Monte Carlo run
    (and the result says so)."""
    sk = _seed_key(seed)
    key = (scheme, getattr(delay, "key", None) or str(delay), sk)
    if sk is not None:
        with _axis_lock:
            hit = _axis_memo.get(key)
            if hit is not None:
                _axis_memo.move_to_end(key)
                return hit
    est = expected_runtime(scheme, delay, work=_AXIS_ANALYTIC_WORK)
    if not ((est.kind in VALUE_KINDS and est.value is not None) or est.kind == "infinite"):
        # bounded like everything else: at most 20 000 iterations, about 0.1 s of simulation
        iterations = int(min(20_000, max(500, _AXIS_MC_COST / iteration_cost(scheme, delay))))
        mc = simulate_runtime(scheme, delay, iterations, seed=seed, keep_times=False)
        why = f"analytic E[T] is {est.kind.replace('_', ' ')}"
        est = Estimate(mc.mean, "approximation", f"Monte Carlo mean ({why}), 95% CI ±{mc.half_width:.3g}")
    if sk is not None:
        with _axis_lock:
            _axis_memo[key] = est
            while len(_axis_memo) > _AXIS_MEMO:
                _axis_memo.popitem(last=False)
    return est


def _per_update_runtime(scheme: Scheme, est: Estimate) -> float:
    # local SGD reports runtime per local step; one "update" (average) is H steps
    return est.value * scheme.H if isinstance(scheme, LocalSGD) else est.value  # type: ignore[operator]


def bound_vs_time(scheme: Scheme, delay: Delay, problem: Problem, t: Any, gamma: float | None = None,
                  p0: float | None = None, seed: Seed = 0,
                  runtime: Estimate | None = None) -> BoundCurve:
    """The bound with J(t) = t / E[T] (DESIGN §3)."""
    t = np.asarray(t, dtype=float)
    est = runtime or _runtime_for_time_axis(scheme, delay, seed)
    if est.value is None or not math.isfinite(est.value) or est.value <= 0:
        return BoundCurve(t, None, "unavailable", None, None, "", "E[T] is infinite or unknown", est)
    c = error_bound(scheme, problem, t / _per_update_runtime(scheme, est), gamma, p0)
    return BoundCurve(t, c.values, c.kind, c.floor, c.rate, c.condition, c.note, est, c.gamma_prime)


# ---------------------------------------------------------------------------------------
# exact expectation on the model problem


def exact_error(scheme: Scheme, problem: Problem, iterations: Any) -> np.ndarray | None:
    """E[f(w_J)] − f* exactly, for fresh-gradient schemes and local SGD (None otherwise).

    Per coordinate with a = 1 − ηh: fresh schemes ``s ← a² s + η²σ²/(b d K)``; local SGD per
    round ``s ← a^{2H} s + η²σ²/(b d m) Σ_{k<H} a^{2k}``.  Closed form of the geometric series.
    """
    if not scheme.fresh:
        return None
    J = np.asarray(iterations, dtype=float)
    h, w0, eta = problem.h, problem.w0, problem.eta
    a = 1 - eta * h
    v = problem.noise_sd**2 * eta**2
    if isinstance(scheme, LocalSGD):
        H = scheme.H
        rho = a ** (2 * H)
        add = v / scheme.m * _geom(a**2, H)
    else:
        rho = a**2
        add = v / scheme.grads_per_update
    Jc = J[..., None]
    with np.errstate(over="ignore", invalid="ignore"):
        s = rho**Jc * w0**2 + add * _geom_series(rho, Jc)
    return 0.5 * (s * h).sum(axis=-1)


def _geom(r: np.ndarray, n: int) -> np.ndarray:
    """Σ_{k<n} r^k, stable at r = 1."""
    r = np.asarray(r, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (1 - r**n) / (1 - r)
    return np.where(np.isclose(r, 1.0), float(n), out)


def _geom_series(r: np.ndarray, J: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = (1 - r**J) / (1 - r)
    return np.where(np.isclose(r, 1.0), J, out)


@dataclass(frozen=True, eq=False)
class ModelCurve:
    """The model problem's exact expected error after n updates, averaged over the random
    number of updates N(t) by time t — exact in the SGD noise, Monte Carlo in the timing:
    ``mean[i]`` estimates E[e(N(t_i))] from ``paths`` simulated timing paths, with standard
    error ``stderr[i]`` (no SGD is simulated)."""

    mean: np.ndarray
    stderr: np.ndarray
    paths: int

    METHOD = ("exact expected error of the model problem after n updates, averaged over "
              "simulated timing paths of the update count N(t)")


def exact_error_vs_time(scheme: Scheme, delay: Delay, problem: Problem, t: Any, paths: int = 2000,
                        seed: Seed = 0) -> ModelCurve | None:
    """E[e(N(t))] with e the exact error after n updates (:func:`exact_error`) and N(t) the
    number of updates by t, averaged over ``paths`` sampled timing paths (fewer when one path
    is costly); see :class:`ModelCurve`.  None for the asynchronous schemes."""
    if not scheme.fresh:
        return None
    t = np.asarray(t, dtype=float)
    rng = generator(seed)
    n = _updates_needed(scheme, delay, float(t.max()), seed)
    # fewer paths when one path of the timing process is costly (the standard error says so)
    paths = int(max(16, min(paths, _AXIS_MC_COST / (n * iteration_cost(scheme, delay)))))
    counts = np.empty((paths, t.size), dtype=np.int64)
    group = max(1, _GROUP // n)
    for g0 in range(0, paths, group):
        r = min(group, paths - g0)
        tr = _covering_trace(scheme, delay, n, r, float(t.max()), rng)
        counts[g0:g0 + r] = _counts_at(tr.times, t)
    table = exact_error(scheme, problem, np.arange(counts.max() + 1))
    e = table[counts]
    return ModelCurve(e.mean(axis=0), e.std(axis=0, ddof=1) / math.sqrt(paths), paths)


# ---------------------------------------------------------------------------------------
# simulated SGD


@dataclass(eq=False)
class ErrorSimulation:
    """Simulated f(w) − f* on the time grid: mean and 95% band over replicas."""

    time: np.ndarray
    mean: np.ndarray
    ci95_low: np.ndarray
    ci95_high: np.ndarray
    replicas: int
    updates: int
    staleness_mean: float | None = None
    fresh_fraction: float | None = None
    gamma_measured: float | None = None
    staleness_counts: np.ndarray | None = None
    errors: np.ndarray | None = field(default=None, repr=False)


def _counts_at(times: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Number of updates with time ≤ t, per replica row (vectorised searchsorted)."""
    R, n = times.shape
    # Offsetting each row by a multiple of a span larger than all times makes one sorted array.
    span = float(max(times[:, -1].max(), t.max())) * 2 + 1.0
    off = np.arange(R)[:, None] * span
    flat = (times + off).ravel()
    q = (t[None, :] + off).ravel()
    return (np.searchsorted(flat, q, side="right") - np.arange(R).repeat(t.size) * n).reshape(R, t.size)


def _updates_needed(scheme: Scheme, delay: Delay, horizon: float, seed: Seed) -> int:
    est = _runtime_for_time_axis(scheme, delay, seed)
    if est.value is None or not math.isfinite(est.value):
        raise ParameterError("delay", "E[T] is infinite for this delay: the error against time is not defined")
    per = _per_update_runtime(scheme, est)
    mean_n = horizon / per
    n = int(math.ceil(mean_n * 1.2 + 6 * math.sqrt(mean_n) + 10))
    if n > MAX_UPDATES:
        raise ParameterError("time", f"horizon needs about {int(mean_n)} updates; at most "
                             f"{MAX_UPDATES} are simulated (shorten the time)")
    return n


def _covering_trace(scheme: Scheme, delay: Delay, n: int, replicas: int, horizon: float,
                    rng: np.random.Generator, budget: float | None = None) -> UpdateTrace:
    """A trace whose every replica reaches the horizon (rarely needs a second, longer try)."""
    while True:
        tr = simulate_updates(scheme, delay, n, replicas, rng, budget=budget)
        if tr.times[:, -1].min() >= horizon:
            return tr
        if n >= MAX_UPDATES:
            raise ParameterError("time", f"some runs need more than {MAX_UPDATES} updates to reach "
                                 f"the horizon (shorten the time)")
        n = min(MAX_UPDATES, 2 * n)


def simulate_error(scheme: Scheme, delay: Delay, problem: Problem, time: float, points: int = 101,
                   replicas: int = 200, seed: Seed = None,
                   lr: LearningRate | None = None, keep_errors: bool = False,
                   max_work: float = MAX_WORK, max_updates: int = MAX_UPDATES,
                   max_timing_cost: float = math.inf, budget: float | None = None) -> ErrorSimulation:
    """Simulated SGD error on the grid ``linspace(0, time, points)``, mean and 95% band.

    The timing comes from :func:`simulate_updates` (the runtime Monte Carlo's process); for
    the asynchronous schemes every gradient is ∇f at the parameters its worker read plus
    noise, and workers read as the process says (after the update for k-async; at once, or
    after the update for the K-th push, for k-batch-async).  Local SGD steps every worker on
    its own noise for H steps and averages; the sum of H linear Gaussian steps is sampled
    exactly (one Gaussian per coordinate per round, with the variance of the m-worker mean).

    The timing runs within the library's time bound (``limits.TIME_BUDGET``, cost units ≈ ns)
    unless ``budget`` says otherwise (a benchmark of a known, long workload).
    """
    time = TIME.check(time, "time")
    points = POINTS.check(points, "points")
    replicas = REPLICAS.check(replicas, "replicas")
    lr = lr or LearningRate()
    rng = generator(seed)
    grid = np.linspace(0.0, time, points)
    n = _updates_needed(scheme, delay, time, seed if seed is not None else 0)
    if n > max_updates:
        raise ParameterError("time", f"{scheme.label} needs about {n} updates to reach T = {time:g}; "
                             f"at most {max_updates} are simulated here (shorten T or use fewer workers)")
    timing = float(replicas) * n * iteration_cost(scheme, delay)
    if timing > max_timing_cost:
        raise ParameterError("replicas", f"simulating the timing of {replicas} runs of {scheme.label} "
                             f"up to T = {time:g} is too costly for one request "
                             f"(≈ {timing / 1e9:.2g} s); use fewer replicas, a shorter T or fewer workers")
    K = scheme.grads_per_update if not isinstance(scheme, LocalSGD) else 1
    work = float(replicas) * n * K * problem.dim
    if work > max_work:
        raise ParameterError("replicas", f"replicas × updates × K × dim ≈ {work:.3g} exceeds the cap "
                             f"{max_work:.0e}; use fewer replicas or a shorter time")
    group = _replica_group(scheme, n, problem.dim, replicas)
    errors = np.empty((replicas, points))
    stats = _StaleStats()
    n_used = n
    for g0 in range(0, replicas, group):
        r = min(group, replicas - g0)
        tr = _covering_trace(scheme, delay, n, r, time, rng, budget)
        n_used = max(n_used, tr.updates)
        path = _run_sgd(scheme, problem, tr, lr, rng, stats)
        errors[g0:g0 + r] = np.take_along_axis(path, _counts_at(tr.times, grid), axis=1)
    mean = errors.mean(axis=0)
    if replicas > 1:
        from scipy import stats as st
        hw = st.t.ppf(0.975, replicas - 1) * errors.std(axis=0, ddof=1) / math.sqrt(replicas)
    else:
        hw = np.full(points, np.inf)
    out = ErrorSimulation(grid, mean, mean - hw, mean + hw, replicas, n_used,
                          errors=errors if keep_errors else None)
    if not scheme.fresh:
        out.staleness_mean = stats.total / stats.count
        out.fresh_fraction = stats.fresh / stats.count
        out.gamma_measured = stats.gdiff / stats.gnow if stats.gnow > 0 else None
        out.staleness_counts = stats.hist
    return out


def _replica_group(scheme: Scheme, n: int, dim: int, replicas: int) -> int:
    """Replicas simulated together: as many as keep the trace and the SGD state of one group
    within _GROUP_BYTES (fresh schemes keep only update times; asynchronous ones also each
    gradient's worker and staleness, and every worker's read parameters)."""
    if scheme.fresh:
        per = 8 * (n + 1) * 2 + 8 * dim * 4
    else:
        K = scheme.grads_per_update
        # bytes per gradient of the timing engine's working arrays: the k-async stepper keeps
        # staleness and workers (~24 B); the merged-renewal engine sorts all pushes (~72 B)
        per_grad = 24 if isinstance(scheme, KAsync) and K > 1 else 72
        per = 8 * (n + 1) * 2 + per_grad * n * K + 8 * scheme.m * dim + 8 * K * dim * 4
    return int(max(1, min(replicas, _GROUP_BYTES // per)))


class _StaleStats:
    def __init__(self) -> None:
        self.total = 0.0
        self.fresh = 0.0
        self.count = 0
        self.gdiff = 0.0
        self.gnow = 0.0
        self.hist = np.zeros(1, dtype=np.int64)

    def add(self, st: np.ndarray) -> None:
        self.total += float(st.sum())
        self.fresh += float((st == 0).sum())
        self.count += st.size
        c = np.bincount(st.ravel())
        if c.size > self.hist.size:
            c[: self.hist.size] += self.hist
            self.hist = c
        else:
            self.hist[: c.size] += c


def _run_sgd(scheme: Scheme, problem: Problem, tr: UpdateTrace, lr: LearningRate,
             rng: np.random.Generator, stats: _StaleStats) -> np.ndarray:
    """Error after each update (column 0 is f(w₀)), shape (R, n + 1)."""
    R, n = tr.times.shape
    h, eta, sd = problem.h, problem.eta, problem.noise_sd
    w = np.broadcast_to(problem.w0, (R, problem.dim)).copy()
    err = np.empty((R, n + 1))
    err[:, 0] = problem.f0
    if scheme.fresh:
        if isinstance(scheme, LocalSGD):
            a = 1 - eta * h
            shrink = a**scheme.H
            sd_round = eta * sd * np.sqrt(_geom(a**2, scheme.H) / scheme.m)
        else:
            shrink = 1 - eta * h
            sd_round = eta * sd / math.sqrt(scheme.grads_per_update)
        for j in range(n):
            w = shrink * w + sd_round * rng.standard_normal((R, problem.dim))
            err[:, j + 1] = 0.5 * (h * w * w).sum(axis=1)
        return err
    return _run_async_sgd(scheme, problem, tr, lr, rng, stats, w, err)


def _run_async_sgd(scheme: Scheme, problem: Problem, tr: UpdateTrace, lr: LearningRate,
                   rng: np.random.Generator, stats: _StaleStats, w: np.ndarray,
                   err: np.ndarray) -> np.ndarray:
    """Update j averages the K gradients h ⊙ w_τ(k) + ξ_k, each at the parameters w_τ(k) its
    worker read.  With per-gradient rates λ_k the noise part (1/K) Σ λ_k ξ_k is one Gaussian
    with variance (σ²/(b d)) Σ λ_k² / K² per coordinate, drawn as such (exact in law)."""
    R, n = tr.times.shape
    h, eta, sd, d = problem.h, problem.eta, problem.noise_sd, problem.dim
    h2 = h * h
    eta_max = lr.eta_max if lr.eta_max is not None else eta
    assert tr.workers is not None and tr.staleness is not None and tr.reads_after_update is not None
    K = tr.workers.shape[2]
    m = scheme.m
    w_read = np.broadcast_to(w[:, None, :], (R, m, d)).reshape(R * m, d).copy()
    base = (np.arange(R) * m)[:, None]
    after, mid = tr.reads_after_update, ~tr.reads_after_update
    ones = np.ones(R)
    sd_mean = sd / math.sqrt(K)  # noise of the mean of K gradients
    stats.add(tr.staleness)
    rows_flat = tr.workers + base[:, :, None]  # (R, n, K) rows of w_read
    gdiff = gnow = 0.0
    for j in range(n):
        flat = rows_flat[:, j]
        used = w_read[flat]  # (R, K, d): the parameters each gradient was computed on
        if mid.any():
            # a k-batch-async worker pushing twice in one window computed its second gradient
            # on the current w, which it read mid-window (written back after the window)
            used = np.where((tr.staleness[:, j] == 0)[..., None], w[:, None, :], used)
        diff = w[:, None, :] - used  # (R, K, d)
        gap2 = diff * diff
        gdiff += float((gap2 @ h2).sum())
        gnow += float((w * w) @ h2 @ ones)
        if lr.rule == "staleness":
            lam = eta / np.maximum(tr.staleness[:, j], 1)  # (R, K)
            drift = np.einsum("rk,rkd->rd", lam, used) / K
            noise_sd = sd * np.sqrt((lam * lam).sum(axis=1)) / K  # (R,)
            step = h * drift + noise_sd[:, None] * rng.standard_normal((R, d))
        else:
            grad = h * (used[:, 0] if K == 1 else used.sum(axis=1) * (1.0 / K)) \
                + sd_mean * rng.standard_normal((R, d))
            if lr.rule == "constant":
                step = eta * grad
            else:
                dist2 = gap2.sum(axis=2).mean(axis=1)
                with np.errstate(divide="ignore"):
                    eta_j = np.where(dist2 > 0, np.minimum(lr.C / dist2, eta_max), eta_max)
                step = eta_j[:, None] * grad
        if mid.any():
            w_read[flat[:, mid]] = w[:, None, :]  # read now, before the update
        w = w - step
        w_read[flat[:, after]] = w[:, None, :]
        err[:, j + 1] = 0.5 * (w * w) @ h
    stats.gdiff += gdiff / K
    stats.gnow += gnow
    return err


# ---------------------------------------------------------------------------------------
# trade-offs


@dataclass(frozen=True)
class TargetTime:
    """Wall-clock time to reach error ε: a value, ``inf`` if never, None if unknown;
    ``low``/``high`` bracket it where a band exists (simulation)."""

    value: float | None
    source: str
    low: float | None = None
    high: float | None = None


def time_to_target(t: np.ndarray, curve: np.ndarray, eps: float) -> float:
    """First grid time at which a (piecewise-constant) curve is ≤ ε; inf if it never is."""
    hit = np.flatnonzero(np.asarray(curve) <= eps)
    return float(t[hit[0]]) if hit.size else math.inf


def bound_time_to_target(scheme: Scheme, delay: Delay, problem: Problem, eps: float,
                         gamma: float | None = None, p0: float | None = None,
                         runtime: Estimate | None = None, seed: Seed = 0) -> TargetTime:
    """t* = E[T] · log((ε − F)/(F0 − F)) / log(rate) from the bound; inf when ε ≤ floor."""
    eps = Domain("eps", 0.0, 1e12, low_open=True).check(eps, "eps")
    floor, rate, _, note, _ = _bound_constants(scheme, problem, gamma, p0)
    if floor is None:
        return TargetTime(None, f"bound unavailable: {note}")
    if eps >= problem.f0:
        return TargetTime(0.0, "bound")
    if eps <= floor:
        return TargetTime(math.inf, "bound (ε is below its floor)")
    est = runtime or _runtime_for_time_axis(scheme, delay, seed)
    if est.value is None:
        return TargetTime(None, "E[T] unknown")
    J = math.log((eps - floor) / (problem.f0 - floor)) / math.log(rate)
    return TargetTime(J * _per_update_runtime(scheme, est), "bound")


def simulated_time_to_target(sim: ErrorSimulation, eps: float) -> TargetTime:
    """From the simulated mean, bracketed by the times the band's edges reach ε."""
    return TargetTime(time_to_target(sim.time, sim.mean, eps), "simulated mean",
                      low=time_to_target(sim.time, sim.ci95_low, eps),
                      high=time_to_target(sim.time, sim.ci95_high, eps))


def sweep_time_to_target(schemes: Sequence[Scheme], delay: Delay, problem: Problem, eps: float,
                         source: str = "bound", gamma: float | None = None, p0: float | None = None,
                         time: float | None = None, points: int = 201, replicas: int = 100,
                         seed: Seed = 0) -> tuple[list[TargetTime], int | None]:
    """Time to reach ε for each scheme of a sweep (over K, m or H) and the index of the best.

    source: "bound", "exact" (fresh schemes and local SGD) or "simulated" (needs ``time``).
    """
    out: list[TargetTime] = []
    for s in schemes:
        if source == "bound":
            out.append(bound_time_to_target(s, delay, problem, eps, gamma, p0, seed=seed))
        elif source in ("exact", "simulated"):
            if time is None:
                raise ParameterError("time", f"source {source!r} needs a time horizon")
            grid = np.linspace(0, time, points)
            if source == "exact":
                ex = exact_error_vs_time(s, delay, problem, grid, seed=seed)
                out.append(TargetTime(None, "exact model unavailable") if ex is None
                           else TargetTime(time_to_target(grid, ex.mean, eps), "exact model"))
            else:
                sim = simulate_error(s, delay, problem, time, points, replicas, seed)
                out.append(simulated_time_to_target(sim, eps))
        else:
            raise ParameterError("source", f"must be bound, exact or simulated (got {source!r})")
    finite = [i for i, r in enumerate(out) if r.value is not None and math.isfinite(r.value)]
    best = min(finite, key=lambda i: out[i].value) if finite else None  # type: ignore[arg-type,return-value]
    return out, best


# ---------------------------------------------------------------------------------------
# CLI: python -m distsgd error …


def add_cli_arguments(sub: Any, add_scheme_args: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser("error", help="error against wall-clock time: bound and simulated SGD")
    add_scheme_args(p)
    for flag, typ, default, doc in [
        ("--eta", float, None, "learning rate η"), ("--L", float, None, "smoothness L"),
        ("--mu", float, None, "strong convexity μ"), ("--sigma2", float, None, "gradient noise σ²"),
        ("--b", int, None, "mini-batch size b"), ("--f0", float, None, "initial error F0"),
        ("--dim", int, None, "model dimension d"), ("--time", float, None, "wall-clock horizon T"),
        ("--points", int, None, "points on the time grid"), ("--replicas", int, None, "SGD replicas"),
    ]:
        p.add_argument(flag, type=typ, required=True, help=doc)
    p.add_argument("--gamma", type=float, default=None,
                   help="staleness factor γ for the async bound (default: measured in the simulation)")
    p.add_argument("--p0", type=float, default=None,
                   help="P(fresh) lower bound p0 (default: measured fraction of fresh gradients)")
    p.add_argument("--lr-rule", default="constant", dest="lr_rule", choices=LearningRate.RULES,
                   help="learning-rate rule for the asynchronous schemes")
    p.add_argument("--C", type=float, default=0.01, help="constant of the adaptive rule")


def run_cli(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from .cli import _finite, _resolve_seed
    from .delays import parse_delay
    from .schemes import make_scheme

    scheme = make_scheme(args.scheme, args.m, K=args.K, H=args.H, comm_delay=args.comm_delay)
    delay = parse_delay(args.delay)
    problem = Problem(eta=args.eta, L=args.L, mu=args.mu, sigma2=args.sigma2, b=args.b,
                      f0=args.f0, dim=args.dim)
    gamma = None if args.gamma is None else GAMMA.check(args.gamma, "gamma")
    p0 = None if args.p0 is None else P0.check(args.p0, "p0")
    seed = _resolve_seed(args.seed)
    sim = simulate_error(scheme, delay, problem, args.time, args.points, args.replicas, seed,
                         LearningRate(args.lr_rule, args.C))
    if not scheme.fresh:
        if gamma is None:
            gamma = sim.gamma_measured
        if p0 is None:
            p0 = sim.fresh_fraction
    bound = bound_vs_time(scheme, delay, problem, sim.time, gamma, p0, seed=seed)
    exact = exact_error_vs_time(scheme, delay, problem, sim.time, seed=seed)

    def lst(a: np.ndarray | None) -> list[Any] | None:
        return None if a is None else [_finite(float(v)) for v in a]

    d = scheme.as_dict()
    simulated: dict[str, Any] = {"mean": lst(sim.mean), "ci95_low": lst(sim.ci95_low),
                                 "ci95_high": lst(sim.ci95_high), "replicas": sim.replicas}
    if not scheme.fresh:
        simulated["staleness_mean"] = sim.staleness_mean
        simulated["fresh_fraction"] = sim.fresh_fraction
        simulated["gamma_measured"] = _finite(sim.gamma_measured) if sim.gamma_measured is not None else None
    out: dict[str, Any] = {
        "scheme": d["scheme"], "m": d["m"], "K": d["K"], "H": d["H"], "delay": str(delay),
        "time": lst(sim.time), "bound": lst(bound.values), "bound_kind": bound.kind,
        "bound_note": bound.note or None,
        "bound_params": {"gamma": gamma, "p0": p0, "floor": bound.floor,
                         "runtime": _finite(bound.runtime.value) if bound.runtime and bound.runtime.value else None,
                         "runtime_method": bound.runtime.method if bound.runtime else None},
        "exact_model": None if exact is None else {
            "mean": lst(exact.mean), "stderr": lst(exact.stderr), "paths": exact.paths,
            "method": ModelCurve.METHOD},
        "simulated": simulated, "seed": seed,
    }
    idx = np.unique(np.linspace(0, sim.time.size - 1, min(11, sim.time.size)).astype(int))
    lines = [f"scheme {scheme.label}, delay {delay}, η={problem.eta:g}, L={problem.L:g}, "
             f"μ={problem.mu:g}, σ²={problem.sigma2:g}, b={problem.b}, F0={problem.f0:g}, d={problem.dim}",
             f"bound: {bound.kind}" + (f" — {bound.note}" if bound.note else
                                       f" (floor {bound.floor:.4g}, E[T] {bound.runtime.value:.4g} "
                                       f"[{bound.runtime.kind}])" if bound.runtime and bound.floor is not None else ""),
             f"{'time':>12} {'bound':>12} {'model':>12} {'simulated':>12} {'95% CI':>25}"]
    for i in idx:
        b = "—" if bound.values is None else f"{bound.values[i]:.5g}"
        e = "—" if exact is None else f"{exact.mean[i]:.5g}"
        lines.append(f"{sim.time[i]:12.5g} {b:>12} {e:>12} {sim.mean[i]:12.5g} "
                     f"[{sim.ci95_low[i]:.5g}, {sim.ci95_high[i]:.5g}]".rjust(0))
    if not scheme.fresh:
        lines.append(f"staleness mean {sim.staleness_mean:.4g}, fresh fraction {sim.fresh_fraction:.4g}, "
                     f"measured γ {sim.gamma_measured if sim.gamma_measured is None else round(sim.gamma_measured, 4)}")
    if exact is not None:
        lines.append(f"model: {ModelCurve.METHOD} ({exact.paths} paths; largest standard error "
                     f"{float(exact.stderr.max()):.2g})")
    lines.append(f"{sim.replicas} replicas, seed {seed}")
    return out, "\n".join(lines)

"""Monte Carlo of the schemes' timing processes (DESIGN §2): the runtime per iteration with a
confidence interval, update traces for the SGD simulation, and timelines for drawing.

Each scheme draws with the cheapest *exact* engine for what is asked (its class says which:
:mod:`distsgd.schemes`): order statistics, per-iteration superposition or sums
(:mod:`distsgd.engines.iid`) for the schemes whose iterations are independent — averaged with
the i.i.d. t-interval — and long runs of the renewal processes (:mod:`distsgd.engines.renewal`)
for the asynchronous ones — averaged by batch means after a warm-up
(:mod:`distsgd.engines.batchmeans`).

Bounds (DESIGN §6, distsgd/limits.py): every call works in chunks of bounded size, so its
memory stays well under ``limits.MEMORY_BYTES`` whatever it is asked; and a call whose
predicted cost (:func:`simulation_cost`, ≈ ns) exceeds its budget (default
``limits.TIME_BUDGET``, ≈ 60 s) is refused with a :class:`ParameterError` naming
``iterations`` (and how many would fit) or, when even the smallest run does not fit, the
scheme parameter that makes it too big.

>>> from distsgd import make_scheme, parse_delay
>>> r = simulate_runtime(make_scheme("sync", m=8), parse_delay("exp(rate=1)"), 20_000, seed=1)
>>> r.ci95[0] < 2.7178571 < r.ci95[1]   # H_8 = 2.7178571…
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import limits
from . import random as _random
from .clusters import Cluster, as_source
from .delays import Delay
from .engines import clusters as cluster_engine
from .engines.batchmeans import MAX_KEPT_TIMES, cv2, layout, t95, warmup
from .engines.renewal import UpdateTrace
from .engines.timeline import Intervals
from .orderstats import sample_order_statistic
from .params import Domain, ParameterError
from .reasons import Phrase
from .schemes import Scheme, check_scheme

__all__ = [
    "RuntimeSample", "UpdateTrace", "Timeline", "simulate_runtime", "simulate_updates",
    "simulate_timeline", "timeline_max_iterations", "sample_order_statistic", "iteration_cost", "simulation_cost",
    "ITERATIONS", "SEED", "MAX_ITERATIONS",
]

MAX_ITERATIONS = limits.MAX_ITERATIONS
ITERATIONS = Domain("iterations", limits.MIN_ITERATIONS, MAX_ITERATIONS, integer=True,
                    doc="Monte Carlo iterations (≥ 2: the confidence interval needs a variance)")
SEED = _random.SEED
TIMELINE_MAX_M = limits.TIMELINE_MAX_M
TIMELINE_MAX_ITERATIONS = limits.TIMELINE_MAX_ITERATIONS
#: replicas and updates of simulate_updates
REPLICAS = Domain("replicas", 1, limits.MAX_TRACE_VALUES, integer=True, doc="independent runs")
UPDATES = Domain("updates", 1, limits.MAX_TRACE_VALUES, integer=True, doc="updates per run")
#: a cost budget (cost units ≈ ns); the default is limits.TIME_BUDGET
BUDGET = Domain("budget", 0.0, math.inf, low_open=True, doc="cost budget of one call (≈ ns)")


def _check_seed(seed: object) -> None:
    if not isinstance(seed, (np.random.Generator, np.random.SeedSequence)) and seed is not None:
        SEED.check(seed, "seed")


@dataclass(frozen=True, eq=False)
class RuntimeSample:
    """Monte Carlo estimate of the mean runtime per iteration (time between updates).

    ``ci95`` is a 95% confidence interval for the mean: the i.i.d. t-interval for schemes
    whose iterations are independent, batch means over independent replicas (post warm-up)
    for the renewal schemes; its lower end is clipped at 0 (a runtime is never negative).
    ``times`` holds the per-iteration runtimes that were used.  ``note_parts`` (``note``: their English text) warn when
    the simulated statistic's mean or variance is infinite (heavy tails).
    """

    mean: float
    ci95: tuple[float, float]
    iterations: int
    seed: int | None
    method: str
    times: np.ndarray | None = field(default=None, repr=False)
    std: float | None = None
    staleness_mean: float | None = None
    fresh_fraction: float | None = None
    note_parts: tuple[Phrase, ...] = ()

    @property
    def note(self) -> str:
        """The warnings of :attr:`note_parts` as one English text ('' when there is none)."""
        return "".join(map(str, self.note_parts))

    @property
    def half_width(self) -> float:
        return (self.ci95[1] - self.ci95[0]) / 2

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"mean": self.mean, "ci95": list(self.ci95),
                                  "iterations": self.iterations, "seed": self.seed}
        if self.staleness_mean is not None:
            out["staleness_mean"] = self.staleness_mean
            out["fresh_fraction"] = self.fresh_fraction
        if self.note:
            out["note"] = self.note
        return out


def simulate_updates(scheme: Scheme, delay: Delay | Cluster, updates: int, replicas: int,
                     seed: _random.Seed = None, *, budget: float | None = None) -> UpdateTrace:
    """``updates`` updates of ``replicas`` independent runs of the scheme, from time 0.

    For the fresh-gradient schemes the updates of one run are independent and the trace
    holds only their times (cumulative sums of per-iteration runtimes); for local SGD an
    "update" is one averaging round (H local steps).  For the renewal schemes it also
    holds the workers and staleness of every gradient (see :class:`UpdateTrace`).

    The trace holds at most ``limits.MAX_TRACE_VALUES`` values (replicas × updates × K) and
    its predicted cost must fit ``budget`` (default ``limits.TIME_BUDGET``); otherwise a
    ParameterError names ``updates`` or ``replicas`` and says how many would fit.  ``delay`` may
    be a cluster (DESIGN §7): every worker's mini-batches then come from it.
    """
    source = _source(scheme, delay)
    n = UPDATES.check(updates, "updates")
    R = REPLICAS.check(replicas, "replicas")
    _check_seed(seed)
    budget = limits.TIME_BUDGET if budget is None else BUDGET.check(budget, "budget")
    per_update = scheme.grads_per_update if scheme.renewal else 1
    cap = limits.MAX_TRACE_VALUES
    if R * n * per_update > cap:
        if n * per_update > cap:
            raise ParameterError("updates", "gradient_trace_updates", scheme=scheme.label, cap=cap,
                                 fit=max(1, cap // per_update))
        raise ParameterError("replicas", "gradient_trace_replicas", scheme=scheme.label, cap=cap, updates=n,
                             fit=cap // (n * per_update))
    unit = scheme.cluster_cost(source, R) if isinstance(source, Cluster) else scheme.iteration_cost(source, R)
    cost = unit * R * n
    if cost > budget:
        if unit * n > budget:
            fit = int(budget // unit)
            if fit < 1:
                raise ParameterError(scheme.costly_parameter(), "update_too_costly", scheme=scheme.label,
                                     seconds=unit / 1e9, budget=budget / 1e9)
            raise ParameterError("updates", "updates_too_costly", updates=n, scheme=scheme.label,
                                 seconds=unit * n / 1e9, budget=budget / 1e9, fit=fit)
        raise ParameterError("replicas", "replicas_too_costly", replicas=R, updates=n, scheme=scheme.label,
                             seconds=cost / 1e9, budget=budget / 1e9, fit=int(budget // (unit * n)))
    rng = _random.generator(seed)
    if scheme.renewal:
        return scheme.update_trace(source, R, n, rng, True)
    if isinstance(source, Cluster):
        per = scheme.cluster_times(source, R, n, rng).ravel()
    else:
        per = _iid_times(scheme, source, R * n, rng)
    per *= scheme.steps_per_update  # local SGD: a round of H steps, not one step
    return UpdateTrace(np.cumsum(per.reshape(R, n), axis=1))


def _iid_times(scheme: Scheme, delay: Delay, n: int, rng: np.random.Generator) -> np.ndarray:
    """n independent per-iteration runtimes of a fresh-gradient scheme, drawn in chunks."""
    if n <= limits.CHUNK:
        return scheme.iteration_times(delay, n, rng)
    out = np.empty(n)
    for s in range(0, n, limits.CHUNK):
        out[s:s + limits.CHUNK] = scheme.iteration_times(delay, min(limits.CHUNK, n - s), rng)
    return out


def _heavy_note(scheme: Scheme, delay: Delay) -> tuple[Phrase, ...]:
    """A warning when the simulated statistic's mean or variance is infinite.

    With a tail P(X > x) ~ x^{-α}, the statistic's p-th moment is finite iff
    ``scheme.tail_jobs · α > p`` (see :attr:`Scheme.tail_jobs`): e.g. Pareto(α = 0.8) has an
    infinite mean, but k-sync with m = 10, K = 8 waits for the 8th of 10 jobs, and
    E[X_{8:10}] is finite (3·0.8 > 2: so is its variance)."""
    alpha = delay.tail_index
    short: tuple[Phrase, ...] = ()
    if scheme.renewal and warmup(delay)[1]:
        short = (Phrase("mc_short_warmup", pushes=limits.WARMUP_MAX_PUSHES_PER_WORKER,
                         staleness=scheme.staleness_formula),)
    variable = (Phrase("mc_variable", cv2=f"{cv2(delay):.3g}"),) + short if short else ()
    if not math.isfinite(alpha):
        return variable
    j = scheme.tail_jobs
    power = (Phrase("mc_power_jobs", alpha=f"{alpha:g}", jobs=j, product=f"{j * alpha:g}") if j > 1
             else Phrase("mc_power", alpha=f"{alpha:g}"))
    if j * alpha <= 1:
        return (Phrase("mc_mean_infinite_renewal" if scheme.renewal else "mc_mean_infinite", power=power),)
    if j * alpha <= 2:
        return (Phrase("mc_variance_infinite", law="Var[X]" if scheme.renewal else "Var[T]", power=power),) + short
    return variable


def _layout(scheme: Scheme, iterations: int, delay: Delay | None = None) -> tuple[int, int, int, int]:
    """Replicas, warm-up, measured updates per replica and batches per replica of a renewal run
    (:func:`distsgd.engines.batchmeans.layout`)."""
    return layout(scheme.m, scheme.grads_per_update, iterations, delay, scheme.lockstep)


def iteration_cost(scheme: Scheme, delay: Delay | Cluster | None = None, replicas: int = 4) -> float:
    """Cost of one simulated iteration (of one replica), calibrated to about a nanosecond per
    unit on one core of the 2-core development machine: order statistics ~200 ns per
    iteration, superposition ~120 ns per drawn completion, local-SGD sums ~36 ns per delay,
    the merged renewal processes ~200–400 ns per push, k-async ~15 µs per lockstep step shared
    by its ``replicas`` plus ~0.1 µs per replica, 10 ns per worker and 20 ns per pusher.
    Measured within a factor of about 2 either way (a shared machine is noisy).  ``delay``
    refines it where the engine depends on the law (local SGD with exponential delays samples
    a Gamma order statistic).  On a cluster that is not i.i.d., :meth:`Scheme.cluster_cost`."""
    if isinstance(delay, Cluster):
        delay = as_source(delay, delay.m)
        if isinstance(delay, Cluster):
            return scheme.cluster_cost(delay, replicas)
    return scheme.iteration_cost(delay, replicas)


def simulation_cost(scheme: Scheme, iterations: int, delay: Delay | Cluster | None = None) -> float:
    """Cost (≈ ns) of :func:`simulate_runtime` for ``iterations``, warm-up included (the
    renewal schemes run every replica through a warm-up of 40 or more pushes per worker
    first; pass ``delay``: very variable laws need a longer one).  On a cluster, its layout
    (batches spanning its memory) at :meth:`Scheme.cluster_cost`."""
    if isinstance(delay, Cluster):
        delay = as_source(delay, delay.m)
        if isinstance(delay, Cluster):
            R, w, n, _ = _cluster_layout(scheme, delay, iterations)
            return scheme.cluster_cost(delay, R) * R * (w + n)
    if scheme.renewal:
        R, w, n, _ = _layout(scheme, iterations, delay)
        return scheme.iteration_cost(delay, R) * R * (w + n)
    return scheme.iteration_cost(delay, 4) * iterations


def _check_cost(scheme: Scheme, iterations: int, delay: Delay, budget: float) -> None:
    """Refuse a simulate_runtime call whose predicted cost exceeds ``budget``."""
    cost = simulation_cost(scheme, iterations, delay)
    if cost <= budget:
        return
    lo = limits.MIN_ITERATIONS
    floor = simulation_cost(scheme, lo, delay)
    if floor > budget:
        param = scheme.costly_parameter()
        raise ParameterError(param, "scheme_too_big", scheme=scheme.label, iterations=lo, seconds=floor / 1e9,
                             budget=budget / 1e9, advice=scheme.cost_advice(param))
    hi = iterations  # cost(lo) ≤ budget < cost(hi): the most iterations that fit
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if simulation_cost(scheme, mid, delay) <= budget:
            lo = mid
        else:
            hi = mid
    raise ParameterError("iterations", "iterations_too_costly", iterations=iterations, scheme=scheme.label,
                         seconds=cost / 1e9, budget=budget / 1e9, fit=lo)


def simulate_runtime(scheme: Scheme, delay: Delay | Cluster, iterations: int = 100_000,
                     seed: _random.Seed = None, keep_times: bool = True, *,
                     budget: float | None = None) -> RuntimeSample:
    """Monte Carlo mean runtime per iteration with a 95% confidence interval.

    sync/k-sync/k-batch-sync/local-sgd: ``iterations`` independent iterations, t-interval.
    async/k-async/k-batch-async: R replicas of a long run, warm-up dropped, batch means;
    the reported ``iterations`` (measured updates, R·n) is at least the number asked.

    ``iterations`` is in [2, 10⁷]; ``seed`` an int (reported as is), a SeedSequence or a
    Generator (then ``seed`` is None in the result), or None.  A run whose predicted cost
    exceeds ``budget`` (default ``limits.TIME_BUDGET`` ≈ 60 s) is refused (ParameterError
    naming ``iterations`` with how many fit, or the scheme parameter that is too big).

    ``delay`` may be a cluster (DESIGN §7): one whose mini-batches are all i.i.d. is its delay
    (the same numbers); on the others every worker's mini-batches come from the cluster, and a
    state (Markov slowdowns, a replayed trace) carries over from one mini-batch to the next.
    """
    source = _source(scheme, delay)
    iterations = ITERATIONS.check(iterations, "iterations")
    budget = limits.TIME_BUDGET if budget is None else BUDGET.check(budget, "budget")
    _check_seed(seed)
    seed_out = _random.seed_int(seed) if not isinstance(seed, (np.random.SeedSequence, np.random.Generator)) \
        else None
    if isinstance(source, Cluster):
        return _simulate_cluster(scheme, source, iterations, seed_out, seed, keep_times, budget)
    delay = source
    _check_cost(scheme, iterations, delay, budget)
    rng = _random.generator(seed)
    note = _heavy_note(scheme, delay)
    if scheme.renewal:
        R, w, n, B = _layout(scheme, iterations, delay)
        return _simulate_renewal(scheme, delay, (R, w, n, B), seed_out, rng, keep_times, note)
    kept: list[np.ndarray] = []
    total = total2 = 0.0
    shift = None
    for s0 in range(0, iterations, limits.CHUNK):
        x = _iid_times(scheme, delay, min(limits.CHUNK, iterations - s0), rng)
        if shift is None:
            shift = float(x[0])  # centre the sums for a stable variance
        d = x - shift
        total += float(d.sum())
        total2 += float((d * d).sum())
        if keep_times and s0 < MAX_KEPT_TIMES:
            kept.append(x[: MAX_KEPT_TIMES - s0])
    assert shift is not None
    times = np.concatenate(kept) if kept else None
    mean = shift + total / iterations
    var = max(total2 - total * (total / iterations), 0.0) / (iterations - 1)
    std = math.sqrt(var)
    hw = t95(iterations - 1) * std / math.sqrt(iterations)
    method = scheme.mc_method(delay)
    return RuntimeSample(mean=mean, ci95=(max(mean - hw, 0.0), mean + hw), iterations=iterations,
                         seed=seed_out, method=method, times=times, std=std,
                         staleness_mean=None, fresh_fraction=None, note_parts=note)


def _source(scheme: Scheme, delay: object) -> Delay | Cluster:
    """The API's ``delay`` argument, checked: a Delay (an i.i.d. cluster's one law too), or a
    cluster of ``scheme.m`` workers that is not i.i.d."""
    check_scheme(scheme)
    return as_source(delay, scheme.m)


def _t_interval(x: np.ndarray) -> tuple[float, float, float]:
    """Mean, standard deviation and 95% half-width of independent values."""
    mean, std = float(x.mean()), float(x.std(ddof=1))
    return mean, std, t95(x.size - 1) * std / math.sqrt(x.size)


def _cluster_note(scheme: Scheme, cluster: Cluster) -> tuple[Phrase, ...]:
    """:func:`_heavy_note` when every worker's law has the same tail (static stragglers and
    Markov slowdowns scale X; equal groups): the i.i.d. reasoning on which moments are
    infinite holds.  Workers with different tails are not judged (a renewal scheme's long-run
    rate survives one worker with E[X_i] = ∞, a k-sync iteration may too)."""
    laws = cluster_engine.laws(cluster)
    if len({law.tail_index for law in laws}) != 1:
        return ()
    return _heavy_note(scheme, max(laws, key=cv2))


def _cluster_layout(scheme: Scheme, cluster: Cluster, iterations: int) -> tuple[int, int, int, int]:
    return cluster_engine.layout(cluster, scheme.grads_per_update, iterations, scheme.renewal, scheme.lockstep)


def _simulate_cluster(scheme: Scheme, cluster: Cluster, iterations: int, seed_out: int | None, seed: _random.Seed,
                      keep_times: bool, budget: float) -> RuntimeSample:
    """Any scheme on a cluster that is not i.i.d.: the renewal schemes by batch means as on
    i.i.d. workers; the others i.i.d. iterations and the t-interval without a state, R
    stationary replicas and batch means with one (Markov slowdowns, a replayed trace)."""
    R, w, n, B = _cluster_layout(scheme, cluster, iterations)
    unit = scheme.cluster_cost(cluster, R)
    cost = unit * R * (w + n)
    if cost > budget:
        floor = unit * R * (w + B * 4)
        if floor > budget or R * n > 4 * iterations:
            param = scheme.costly_parameter()
            raise ParameterError(param, "cluster_too_big", scheme=scheme.label, seconds=max(floor, cost) / 1e9,
                                 budget=budget / 1e9, advice=scheme.cost_advice(param))
        fit = max(limits.MIN_ITERATIONS, int(iterations * (budget - unit * R * w) / (cost - unit * R * w)))
        raise ParameterError("iterations", "cluster_iterations_too_costly", iterations=iterations,
                             scheme=scheme.label, seconds=cost / 1e9, budget=budget / 1e9, fit=fit)
    rng = _random.generator(seed)
    note = _cluster_note(scheme, cluster)
    if scheme.renewal:
        return _simulate_renewal(scheme, cluster, (R, w, n, B), seed_out, rng, keep_times, note)
    if not cluster.stateful:
        x = scheme.cluster_times(cluster, 1, iterations, rng).ravel()
        mean, std, hw = _t_interval(x)
        method = f"{cluster.kind} cluster: every worker's mini-batches drawn, {iterations} independent iterations"
    else:
        x = scheme.cluster_times(cluster, R, n, rng)
        mean, _, hw = _t_interval(x.reshape(R * B, n // B).mean(axis=1))
        std = float(x.std(ddof=1))
        x = x.ravel()
        runs = "one run (a replay: every run is the same)" if cluster.deterministic else f"{R} stationary runs"
        method = (f"{cluster.kind} cluster: {runs} × {n} iterations, 95% CI from {R * B} batch means "
                  "(the iterations of a run are correlated)")
    return RuntimeSample(mean=mean, ci95=(max(mean - hw, 0.0), mean + hw), iterations=x.size, seed=seed_out,
                         method=method, times=x[:MAX_KEPT_TIMES] if keep_times else None, std=std, note_parts=note)


def _simulate_renewal(scheme: Scheme, source: Delay | Cluster, shape: tuple[int, int, int, int], seed: int | None,
                      rng: np.random.Generator, keep_times: bool, note: tuple[Phrase, ...]) -> RuntimeSample:
    R, w, n, B = shape
    K = scheme.grads_per_update
    acc, what = scheme.batch_means(source, R, w, n, B, rng, keep_times)
    if isinstance(source, Cluster):
        what = f"{source.kind} cluster: {what}"
    means = np.concatenate([a.sums.ravel() for a in acc]) / (n // B)
    mean = float(means.mean())
    nb = means.size
    hw = t95(nb - 1) * float(means.std(ddof=1)) / math.sqrt(nb)
    N = R * n
    total, total2 = sum(a.total for a in acc), sum(a.total2 for a in acc)
    std = math.sqrt(max(total2 - total * (total / N), 0.0) / max(N - 1, 1))
    kept = [k for a in acc for k in a.kept]
    method = (f"{what}; {R} replica{'s' if R > 1 else ''} × {n} updates after {w} warm-up, "
              f"95% CI from {nb} batch means")
    return RuntimeSample(mean=mean, ci95=(max(mean - hw, 0.0), mean + hw), iterations=N, seed=seed,
                         method=method, times=np.concatenate(kept)[:MAX_KEPT_TIMES] if kept else None,
                         std=std, staleness_mean=sum(a.stale for a in acc) / (N * K),
                         fresh_fraction=sum(a.fresh for a in acc) / (N * K), note_parts=note)


@dataclass(eq=False)
class Timeline:
    """Per-worker intervals of the first few iterations of one run.

    Each interval is (worker, start, end, outcome, staleness); outcome is ``used`` or
    ``stale`` (a gradient used fresh or stale), ``cancelled`` (work cancelled at an update),
    ``waiting`` (a worker idle), ``communicating`` (the local-SGD averaging round) or
    ``in flight`` (work still running when the window ends).  ``update_times`` are the times of the updates.
    ``slow`` marks the work on a mini-batch that ran slow (a cluster's slow worker or state).
    """

    scheme: Scheme
    delay: Delay | Cluster
    worker: np.ndarray
    start: np.ndarray
    end: np.ndarray
    outcome: np.ndarray
    staleness: np.ndarray
    update_times: np.ndarray
    slow: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    def rows(self) -> list[dict[str, object]]:
        slow = self.slow if self.slow.size == self.worker.size else np.zeros(self.worker.size, dtype=bool)
        return [{"worker": int(w), "start": float(s), "end": float(e), "outcome": str(o),
                 "staleness": int(st), "slow": bool(sl)}
                for w, s, e, o, st, sl in zip(self.worker, self.start, self.end, self.outcome,
                                              self.staleness, slow, strict=True)]


def timeline_max_iterations(scheme: Scheme) -> int:
    """The most iterations :func:`simulate_timeline` draws for ``scheme`` (≤ 200; 0 when even
    one iteration exceeds the job cap)."""
    cap, one = scheme.timeline_cap, scheme.timeline_jobs(1)
    if one > cap:
        return 0
    fit = max(1, (cap - scheme.m) // max(1, one - scheme.m)) if scheme.renewal else cap // one
    return int(min(fit, TIMELINE_MAX_ITERATIONS))


def simulate_timeline(scheme: Scheme, delay: Delay | Cluster, iterations: int = 5,
                      seed: _random.Seed = None) -> Timeline:
    """Event-by-event run of ``iterations`` updates with every worker's intervals recorded.

    m ≤ 200, iterations ≤ 200 and at most ``limits.TIMELINE_MAX_JOBS`` jobs (200 000 for the
    vectorised local SGD; it is for drawing, not for estimating); beyond, a ParameterError
    names the parameter.  ``delay`` may be a cluster: each worker then takes its own mini-batches.
    """
    source = _source(scheme, delay)
    iterations = Domain("iterations", 1, TIMELINE_MAX_ITERATIONS, integer=True).check(iterations)
    if scheme.m > TIMELINE_MAX_M:
        raise ParameterError("m", "timeline_workers", cap=TIMELINE_MAX_M, m=scheme.m)
    _check_seed(seed)
    jobs = scheme.timeline_jobs(iterations)
    if jobs > scheme.timeline_cap:
        cap, fit = scheme.timeline_cap, timeline_max_iterations(scheme)
        if fit < 1:
            raise ParameterError(scheme.timeline_parameter, "timeline_one_iteration", cap=cap, scheme=scheme.label,
                                 jobs=scheme.timeline_jobs(1))
        raise ParameterError("iterations", "timeline_iterations", cap=cap, iterations=iterations,
                             scheme=scheme.label, jobs=jobs, fit=fit)
    out = Intervals()
    updates = scheme.timeline(source, iterations, _random.generator(seed), out)
    return Timeline(scheme=scheme, delay=source, slow=np.array(out.slow, dtype=bool),
                    worker=np.array(out.worker, dtype=int),
                    start=np.array(out.start, dtype=float), end=np.array(out.end, dtype=float),
                    outcome=np.array(out.outcome, dtype=object),
                    staleness=np.array(out.staleness, dtype=int),
                    update_times=np.array(updates))

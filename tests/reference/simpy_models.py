"""Reference event models of the distributed-SGD schemes, written in SimPy.

A second, independent implementation of the processes of DESIGN §2 ("The schemes: what
exactly happens"), written from those descriptions only and meant to be *obviously*
correct rather than fast: one parameter-server process and m worker processes that talk
through a store (the server's inbox), start signals, reply events and interrupts.  Every
computation time is drawn on its own with ``delay.sample(rng)`` when the computation
starts, which is the honest per-event cost of a discrete-event simulation.  It is used to
check ``distsgd.montecarlo`` (tests/test_engines_simpy.py) and to measure the engine's
speed-up (benchmarks/bench_runtime.py).

Every model takes either a Delay — every mini-batch of every worker i.i.d. X ~ F, as in
DESIGN §2 — or a *job source* (tests/reference/cluster_jobs.py, DESIGN §7's clusters:
static stragglers, groups, Markov slowdowns, trace replay …).  A Delay is wrapped in an
``IIDJobs``, which makes exactly the ``delay.sample(rng)`` calls the models always made, so
the numbers for a Delay are unchanged.  Wherever worker i starts a computation — including
one that is later cancelled — the model calls ``jobs.next(i)`` once.  A job source is
stateful: pass a fresh one to every run (the model's ``rng`` argument is then unused; the
source draws from its own).  tests/test_clusters_reference.py checks the models on clusters.

Versions are explicit: the server's ``version`` v is the number of updates applied so far,
so the parameters are w_v; a worker records the version it read when it starts a
computation.  Update j (0-based) turns w_j into w_{j+1}; a gradient computed on w_v and
applied in update j has staleness j − v (DESIGN §2).

Each model returns a :class:`ModelResult`:

* ``update_times`` — wall-clock time of each update, in order (for local SGD, of each
  round end, after the averaging time D);
* ``staleness`` — one entry per gradient used, in the order they were applied (local SGD:
  one 0 per local step; its local gradients are always on the worker's current model);
* ``pending_staleness`` — for every worker, (number of updates) − (version of the
  computation it holds at the end), i.e. the staleness its unfinished gradient has
  accumulated so far.  With it the staleness bookkeeping of the asynchronous schemes obeys
  an exact counting identity (see the tests).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import simpy
from scipy import stats

from distsgd.delays import Delay
from distsgd.schemes import Scheme

from .cluster_jobs import IIDJobs, JobSource

#: what every model takes as its first argument: one law for every mini-batch, or a job source
Jobs = Delay | JobSource

__all__ = [
    "ModelResult",
    "sync",
    "k_sync",
    "k_batch_sync",
    "k_async",
    "async_",
    "k_batch_async",
    "local_sgd",
    "simulate",
    "MODELS",
    "batch_means",
]


# ---------------------------------------------------------------------------------------
# result
# ---------------------------------------------------------------------------------------

def batch_means(x: np.ndarray, batches: int = 20) -> tuple[float, float]:
    """Mean of a (possibly autocorrelated) series and the 95 % half-width from batch means.

    The series is cut into ``batches`` contiguous batches of equal length (a remainder at
    the start is dropped); the batch means are treated as i.i.d. (Student t, batches − 1
    degrees of freedom).  Right for the long-run mean of a regenerative/renewal process when
    each batch is much longer than the correlation time.
    """
    x = np.asarray(x, dtype=float)
    n = x.size // batches
    if n < 1:
        raise ValueError(f"need at least {batches} values for {batches} batch means (got {x.size})")
    means = x[x.size - n * batches:].reshape(batches, n).mean(axis=1)
    half = stats.t.ppf(0.975, batches - 1) * means.std(ddof=1) / math.sqrt(batches)
    return float(means.mean()), float(half)


@dataclass
class ModelResult:
    """What one run of a reference model produced (see the module docstring)."""

    scheme: str
    m: int
    K: int | None
    update_times: np.ndarray
    staleness: np.ndarray
    #: local steps per update (H for local SGD, else 1): runtimes are reported per step
    steps_per_update: int = 1
    pending_staleness: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: how many computation times were drawn (= SimPy timeouts for computations)
    draws: int = 0

    @property
    def updates(self) -> int:
        return int(self.update_times.size)

    @property
    def intervals(self) -> np.ndarray:
        """Runtime of each iteration: time between consecutive updates (the first from 0),
        per local step for local SGD."""
        return np.diff(self.update_times, prepend=0.0) / self.steps_per_update

    def mean_runtime(self, warmup: float = 0.1, batches: int = 20) -> tuple[float, float]:
        """Long-run mean runtime per iteration after dropping a ``warmup`` fraction of the
        updates, and its 95 % half-width from batch means."""
        iv = self.intervals
        return batch_means(iv[int(warmup * iv.size):], batches)

    def mean_staleness(self, warmup: float = 0.1, batches: int = 20) -> tuple[float, float]:
        """Mean staleness of the gradients used after the warm-up, with a batch-means half-width."""
        s = self.staleness
        return batch_means(s[int(warmup * s.size):], batches)


def _source(delay_or_jobs: Jobs, m: int, rng: np.random.Generator) -> JobSource:
    """The job source of a run: a JobSource as given (its m must be the scheme's), or for a
    Delay an IIDJobs on ``rng`` — one ``delay.sample(rng)`` call per computation started, as
    a per-event simulator does (and as these models always did)."""
    if isinstance(delay_or_jobs, JobSource):
        if delay_or_jobs.m != m:
            raise ValueError(f"the job source has {delay_or_jobs.m} workers, the scheme m = {m}")
        return delay_or_jobs
    if isinstance(delay_or_jobs, Delay):
        return IIDJobs(delay_or_jobs, m, rng, record=False)
    raise TypeError(f"need a Delay or a JobSource (got {type(delay_or_jobs).__name__})")


def _check(m: int, K: int, updates: int, *, k_le_m: bool) -> None:
    if m < 1 or K < 1 or updates < 1:
        raise ValueError(f"need m, K, updates ≥ 1 (got m={m}, K={K}, updates={updates})")
    if k_le_m and K > m:
        raise ValueError(f"need K ≤ m (got K={K}, m={m})")


class _Signals:
    """``signals[j]`` is the event the server succeeds when iteration (or round) j begins.

    Events are created on first use by whichever side asks first, so a worker can wait for
    iteration j before the server has got there; old ones are forgotten.
    """

    def __init__(self, env: simpy.Environment) -> None:
        self.env = env
        self._events: dict[int, simpy.Event] = {}

    def __getitem__(self, j: int) -> simpy.Event:
        ev = self._events.get(j)
        if ev is None:
            ev = self._events[j] = self.env.event()
        return ev

    def fire(self, j: int, value: Any = None) -> None:
        self[j].succeed(value)
        # Every worker has picked up start j−1 before iteration j can begin (each iteration
        # takes positive time), but an interrupted worker asks for start j only after the
        # server has fired it, so j and j−1 are kept.
        self._events.pop(j - 2, None)


# ---------------------------------------------------------------------------------------
# sync, k-sync, k-batch-sync: every iteration starts all m workers on the current w_j
# ---------------------------------------------------------------------------------------

def _sync_family(delay_or_jobs: Jobs, m: int, K: int, updates: int, rng: np.random.Generator,
                 *, batch: bool, name: str) -> ModelResult:
    jobs = _source(delay_or_jobs, m, rng)
    env = simpy.Environment()
    inbox = simpy.Store(env)          # gradients pushed to the server: (worker, version)
    starts = _Signals(env)            # starts[j] fires with version j when iteration j begins
    computing = [False] * m           # worker i holds an unfinished computation of this iteration
    times: list[float] = []
    draws = 0

    def worker(i: int):
        nonlocal draws
        j = 0
        while True:
            v = yield starts[j]                   # read w_j: version v = j
            computing[i] = True
            try:
                while True:
                    draws += 1
                    yield env.timeout(jobs.next(i))   # worker i starts a mini-batch
                    put = inbox.put((i, v))       # push (never blocks: the store is unbounded)
                    if not batch:
                        break                     # (k-)sync: one gradient per iteration, then wait
                    # k-batch-sync: straight on with another mini-batch on the same w_v, unless
                    # this push was the K-th: the push's callbacks hand it to the server first,
                    # which ends the iteration, and the interrupt arrives here before anything
                    # is started (so the K-th finisher starts nothing to be cancelled)
                    yield put
                    yield env.timeout(0)
            except simpy.Interrupt:
                pass                              # cancelled: the iteration ended first
            computing[i] = False
            j = v + 1

    procs = [env.process(worker(i)) for i in range(m)]

    def server():
        for j in range(updates):
            starts.fire(j, j)                     # everybody starts on w_j
            got = 0
            while got < K:                        # the K-th finish (overall) ends the iteration
                _, v = yield inbox.get()
                if v == j:                        # a push from an earlier iteration can only be
                    got += 1                      # left over on an exact tie; it is discarded
            for i in range(m):                    # cancel the unfinished computations
                if computing[i]:
                    procs[i].interrupt("iteration over")
            times.append(env.now)                 # update j: w_{j+1} = w_j − η·mean of the K

    env.run(until=env.process(server()))
    return ModelResult(name, m, K, np.asarray(times), np.zeros(K * updates, dtype=np.int64),
                       pending_staleness=np.zeros(m, dtype=np.int64), draws=draws)


def sync(delay_or_jobs: Jobs, m: int, K: int | None, updates: int, rng: np.random.Generator) -> ModelResult:
    """Synchronous SGD: all m start on w_j; the iteration ends when the last finishes (K ignored, = m)."""
    _check(m, m, updates, k_le_m=True)
    return _sync_family(delay_or_jobs, m, m, updates, rng, batch=False, name="sync")


def k_sync(delay_or_jobs: Jobs, m: int, K: int, updates: int, rng: np.random.Generator) -> ModelResult:
    """K-sync SGD: all m start on w_j; the K-th finish ends the iteration; the others are interrupted."""
    _check(m, K, updates, k_le_m=True)
    return _sync_family(delay_or_jobs, m, K, updates, rng, batch=False, name="k-sync")


def k_batch_sync(delay_or_jobs: Jobs, m: int, K: int, updates: int, rng: np.random.Generator) -> ModelResult:
    """K-batch-sync SGD: all m start on w_j and a finishing worker starts another mini-batch on
    w_j at once; the K-th finish overall ends the iteration (K may exceed m); the rest are
    interrupted."""
    _check(m, K, updates, k_le_m=False)
    return _sync_family(delay_or_jobs, m, K, updates, rng, batch=True, name="k-batch-sync")


# ---------------------------------------------------------------------------------------
# k-async, async, k-batch-async: state carries over from one update to the next
# ---------------------------------------------------------------------------------------

def _async_worker(env: simpy.Environment, i: int, inbox: simpy.Store, jobs: JobSource,
                  count: list[int]):
    """A worker of the asynchronous schemes: compute on the version it read, push
    (worker, version, reply) and read the version the server's reply names."""
    v = 0                                         # everybody starts on w_0 at time 0
    while True:
        count[0] += 1
        yield env.timeout(jobs.next(i))           # worker i starts a mini-batch
        reply = env.event()
        inbox.put((i, v, reply))
        v = yield reply                           # k-async: at the update; k-batch-async: at once


def k_async(delay_or_jobs: Jobs, m: int, K: int, updates: int, rng: np.random.Generator) -> ModelResult:
    """K-async SGD: a finishing worker pushes and waits; when K pushes have arrived since the
    last update the server updates and those K read the new parameters and restart; the
    other workers are not interrupted (their gradients may be stale)."""
    _check(m, K, updates, k_le_m=True)
    jobs = _source(delay_or_jobs, m, rng)
    env = simpy.Environment()
    inbox = simpy.Store(env)
    count = [0]
    for i in range(m):
        env.process(_async_worker(env, i, inbox, jobs, count))
    times: list[float] = []
    stale: list[int] = []
    holds = [0] * m                               # version of the computation each worker holds

    def server():
        version = 0
        waiting: list[tuple[int, int, simpy.Event]] = []
        while version < updates:
            i, v, reply = yield inbox.get()
            waiting.append((i, v, reply))
            if len(waiting) == K:                 # K pushes since the last update
                stale.extend(version - v_ for _, v_, _ in waiting)   # update index = version
                version += 1
                times.append(env.now)
                for i_, _, reply_ in waiting:     # those K read w_{version} and restart
                    holds[i_] = version
                    reply_.succeed(version)
                waiting.clear()

    env.run(until=env.process(server()))
    return ModelResult("async" if K == 1 else "k-async", m, K, np.asarray(times),
                       np.asarray(stale, dtype=np.int64),
                       pending_staleness=updates - np.asarray(holds, dtype=np.int64), draws=count[0])


def async_(delay_or_jobs: Jobs, m: int, K: int | None, updates: int, rng: np.random.Generator) -> ModelResult:
    """Asynchronous SGD: k-async with K = 1 (every push is an update; K ignored)."""
    return k_async(delay_or_jobs, m, 1, updates, rng)


def k_batch_async(delay_or_jobs: Jobs, m: int, K: int, updates: int, rng: np.random.Generator) -> ModelResult:
    """K-batch-async SGD: nobody waits; on finishing a worker pushes, reads the current
    parameters and restarts; the server updates after every K pushes, and the worker whose
    push triggered the update reads the post-update parameters.  K may exceed m."""
    _check(m, K, updates, k_le_m=False)
    jobs = _source(delay_or_jobs, m, rng)
    env = simpy.Environment()
    inbox = simpy.Store(env)
    count = [0]
    for i in range(m):
        env.process(_async_worker(env, i, inbox, jobs, count))
    times: list[float] = []
    stale: list[int] = []
    holds = [0] * m

    def server():
        version = 0
        buffered: list[int] = []                  # versions of the gradients pushed since the last update
        while version < updates:
            i, v, reply = yield inbox.get()
            buffered.append(v)
            if len(buffered) == K:
                stale.extend(version - v_ for v_ in buffered)
                version += 1
                times.append(env.now)
                buffered.clear()
            holds[i] = version
            reply.succeed(version)                # the pusher reads the current w (post-update if it triggered one)

    env.run(until=env.process(server()))
    return ModelResult("k-batch-async", m, K, np.asarray(times), np.asarray(stale, dtype=np.int64),
                       pending_staleness=updates - np.asarray(holds, dtype=np.int64), draws=count[0])


# ---------------------------------------------------------------------------------------
# local SGD
# ---------------------------------------------------------------------------------------

def local_sgd(delay_or_jobs: Jobs, m: int, K: int | None, updates: int, rng: np.random.Generator,
              *, H: int = 1, comm_delay: float = 0.0) -> ModelResult:
    """Local SGD: each round every worker takes H sequential local steps from the common w;
    the round ends when the slowest has finished, plus the averaging time D.  ``updates`` is
    the number of rounds; ``update_times`` are the round ends (K ignored)."""
    _check(m, 1, updates, k_le_m=False)
    if H < 1 or comm_delay < 0:
        raise ValueError(f"need H ≥ 1 and comm_delay ≥ 0 (got H={H}, comm_delay={comm_delay})")
    jobs = _source(delay_or_jobs, m, rng)
    env = simpy.Environment()
    done = simpy.Store(env)
    starts = _Signals(env)
    times: list[float] = []
    draws = 0

    def worker(i: int):
        nonlocal draws
        r = 0
        while True:
            yield starts[r]                       # the averaged model of round r
            for _ in range(H):
                draws += 1
                yield env.timeout(jobs.next(i))   # local step: worker i starts a mini-batch
            done.put(i)
            r += 1

    for i in range(m):
        env.process(worker(i))

    def server():
        for r in range(updates):
            starts.fire(r, r)
            for _ in range(m):                    # wait for the slowest
                yield done.get()
            if comm_delay:
                yield env.timeout(comm_delay)     # averaging the m models
            times.append(env.now)

    env.run(until=env.process(server()))
    res = ModelResult("local-sgd", m, None, np.asarray(times), np.zeros(m * H * updates, dtype=np.int64),
                      steps_per_update=H, pending_staleness=np.zeros(m, dtype=np.int64), draws=draws)
    return res


# ---------------------------------------------------------------------------------------
# dispatch on a distsgd scheme
# ---------------------------------------------------------------------------------------

MODELS: dict[str, Callable[..., ModelResult]] = {
    "sync": sync,
    "k-sync": k_sync,
    "k-batch-sync": k_batch_sync,
    "async": async_,
    "k-async": k_async,
    "k-batch-async": k_batch_async,
    "local-sgd": local_sgd,
}


def simulate(scheme: Scheme, delay_or_jobs: Jobs, updates: int,
             rng: np.random.Generator | int | None = None) -> ModelResult:
    """Run the reference model of ``scheme`` (a ``distsgd.schemes`` object) for ``updates``
    updates (rounds for local SGD), on a Delay (i.i.d. workers, drawn from ``rng``) or on a
    job source (tests/reference/cluster_jobs.py) with ``scheme.m`` workers."""
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    fn = MODELS[scheme.name]
    K = getattr(scheme, "K", None)
    if scheme.name == "local-sgd":
        return fn(delay_or_jobs, scheme.m, None, updates, rng, H=scheme.H, comm_delay=scheme.comm_delay)
    return fn(delay_or_jobs, scheme.m, K, updates, rng)

"""Every cap, budget and size of the dashboard, with its unit and the reason for it.

The library bounds every call anyone can make (:mod:`distsgd.limits` and the parameter domains
of :mod:`distsgd.schemes` and :mod:`distsgd.sgd`): about a minute of one core and a GiB of
memory at worst.  The dashboard is one process shared by a class of 30 (DESIGN §11): a rerun
after a slider move must take a fraction of a second, so the UI asks for less.  Each value
below narrows a library value, named (and imported) beside it; :data:`NARROWS` lists the
pairs so a test can check that the UI never asks for more than the library allows.  Pages and
the other ``distsgd.ui`` modules use these names, never bare numbers.

Units: counts unless said; *cost* is the unit of :func:`distsgd.montecarlo.iteration_cost`
(≈ 1 ns of one core of the development machine); *time* is the model's time unit.
"""

from __future__ import annotations

from .. import error as sgd
from .. import limits as lib
from ..delays import TruncatedNormal
from ..random import SEED
from ..schemes import H_MAX, K_BATCH_MAX, M_MAX
from .host import setting

# -- workers, wait-for count, local period -------------------------------------------------

#: largest m on any page, of schemes.M_MAX = 100 000: the per-worker engines (renewal
#: schemes, simulated SGD, timelines) grow with m, and 1000 keeps a chart within its budget
#: while still showing the fan-out of the maximum at data-centre scale
UI_M_MAX = 1000
#: largest K, of schemes.K_BATCH_MAX = 1 000 000: the K-of-m schemes need K ≤ m anyway
UI_K_MAX = UI_M_MAX
#: largest H, of schemes.H_MAX = 10 000: a local SGD round draws H·m delays; 100 keeps the
#: timeline's worst case (30 updates × 40 workers × 100 steps = 120 000 jobs) within
#: limits.TIMELINE_MAX_JOBS_VECTORISED
UI_H_MAX = 100
#: largest seed, of random.SEED (up to 2⁶³ − 1): a number box holds integers exactly only up
#: to 2⁵³ (JavaScript numbers); the familiar 32-bit range is plenty
UI_SEED_MAX = 2**31 - 1

# -- the "Your cluster" page -------------------------------------------------------------------

#: the what-if table's Monte Carlo budget, as a multiple of the sidebar's per-chart budget (it
#: has up to 5 readings × the chosen schemes, each a point of a runtime chart)
WHATIF_BUDGET_FACTOR = 5
#: updates of the replayed timeline offered as Perfetto JSON (of limits.TIMELINE_MAX_ITERATIONS),
#: for traces of at most limits.TIMELINE_MAX_M workers (the timeline's own limit)
PERFETTO_UPDATES = 20
TIMELINE_WORKERS_MAX = lib.TIMELINE_MAX_M

# -- Monte Carlo runtime: work per chart -----------------------------------------------------

#: the sidebar's "Monte Carlo budget" choices (cost per chart), of curves.DEFAULT_BUDGET = 6e7
#: and limits.TIME_BUDGET = 6e10 (a minute): fast ≈ 15 ms for a class of 30 on one server,
#: accurate ≈ 0.4 s for one person's closer look
UI_BUDGETS = {"fast": 1.5e7, "balanced": 4e7, "accurate": 4e8}


# -- the host: set by whoever runs the server (README, "Deploying as a shared app"; the worker
#    processes in distsgd.ui.host) ---------------------------------------------------------

#: the budget a new session starts with (``DISTSGD_BUDGET``): "balanced" for one person; a class
#: on one host sets "fast" (≈ 15 ms of Monte Carlo per chart), and a student can still ask for more
#: in the sidebar's Simulation section
UI_DEFAULT_BUDGET = setting("DISTSGD_BUDGET", "balanced", tuple(UI_BUDGETS))
#: iterations of one point's run in a chart, of limits.MAX_ITERATIONS = 10⁷ (a cheap point
#: would otherwise spend the whole chart's spare budget on itself)
CHART_MAX_ITERATIONS = 200_000
#: work of one analytic lattice computation in a chart (≈ 0.05 s; beyond it a bound), of
#: limits.ANALYTIC_WORK = 1e9
CHART_ANALYTIC_WORK = 3e7

# -- simulated SGD (error, local SGD and trade-off charts) ----------------------------------

#: updates summed over the schemes of one chart (≈ 50 µs each), of sgd.MAX_UPDATES = 200 000
UI_MAX_UPDATES = 8_000
#: array work of the simulated SGD of one chart (replicas × updates × d × K, element
#: operations), of sgd.MAX_WORK = 4e9
UI_MAX_WORK = 6e7
#: the same on a data set (its SGD and the evaluation of each recorded model on all the data's
#: rows, distsgd.error.general.problem_work): digits' four schemes of the Error page at 10
#: replicas and 21–27 grid points each, ≈ 0.3 s (an evaluation is ≈ 0.25 ns an element)
UI_MAX_PROBLEM_WORK = 1.2e9
#: cost of simulating the timing (when each update happens) of one chart's runs, ≈ 0.5 s, of
#: limits.TIME_BUDGET = 6e10
UI_MAX_TIMING_COST = 5e8
#: SGD replicas on the error page (slider range), of sgd.MAX_REPLICAS = 10 000: at least 10
#: for a meaningful 95% band, at most 400 for the work cap above
UI_REPLICAS_MIN = 10
UI_REPLICAS_MAX = 400
#: replicas of the local SGD page's error chart and of each trade-off point (no slider there:
#: a sweep simulates 8–10 points, so fewer replicas per point)
LOCAL_ERROR_REPLICAS = 40
TARGET_REPLICAS = 30


def replicas_at(budget: float, replicas: int) -> int:
    """Replicas of a page's simulated SGD for the chosen Monte Carlo budget: ``replicas`` at
    "balanced" and above, proportionally fewer below (never under UI_REPLICAS_MIN): the "fast"
    budget of a class's host bounds the SGD of the local SGD and trade-off pages too."""
    return max(UI_REPLICAS_MIN, min(replicas, round(replicas * budget / UI_BUDGETS["balanced"])))
#: points on the time grid of an error curve, of sgd.POINTS (up to 10 000): one per 1% of
#: the horizon on the error page and for the time-to-target search, fewer on the local SGD page
ERROR_POINTS = 101
LOCAL_ERROR_POINTS = 81
TARGET_POINTS = 101
#: horizon T (time), of sgd.TIME (up to 1e12): the number of updates is capped above anyway
UI_HORIZON_MIN = 0.1
UI_HORIZON_MAX = 1e5
#: model dimension d, of sgd.DIM (up to 1000): the SGD work grows with d; 50 shows the spread
#: of curvatures μ … L
UI_DIM_MAX = 50
#: mini-batch size b, of sgd.BATCH (up to 1 000 000): b only scales the noise σ²/b
UI_BATCH_MAX = 4096

# -- the delay page ------------------------------------------------------------------------

#: samples drawn for each histogram (X and X_{K:m}), of limits.MAX_SAMPLE_SIZE = 2²⁵: enough
#: for 60–70 bins, 160 KB per cached entry
SAMPLES = 20_000
#: the quantile table under the delay chart: 199 levels from 0.5% to 99.5%
QUANTILE_LEVELS = 199
QUANTILE_LOW, QUANTILE_HIGH = 0.005, 0.995
#: the order-statistic histogram: its x range (quantiles of the sample: the far right tail of
#: a heavy law would squash the bins), its bins, and points of the theory line
ORDER_STAT_RANGE = (0.0005, 0.995)
ORDER_STAT_BINS = 70
ORDER_STAT_GRID = 400
#: the fan-out chart (E[max of m] against m): m up to UI_M_MAX, 13 log-spaced values and the
#: round ones, each simulated with FANOUT_ITERATIONS iterations (of limits.MAX_ITERATIONS =
#: 10 000 000; 4000 give a CI of about 1% for light tails, the chart costs ≈ 0.1 s)
FANOUT_M_MAX = UI_M_MAX
FANOUT_M_POINTS = 13
FANOUT_M_EXTRA = (10, 100, 1000)
FANOUT_ITERATIONS = 4000

# -- the runtime page ----------------------------------------------------------------------

#: values of K in the chart against K (denser at both ends) and of m against m (log-spaced)
RUNTIME_K_POINTS = 16
RUNTIME_M_POINTS = 12

#: D (time) of local SGD on the pages without a D control (runtime, error): averaging is free
#: there, and a caption says so; the local SGD, timeline and trade-off pages draw D
LOCAL_SGD_FREE_D = 0.0

# -- the timeline page ---------------------------------------------------------------------

#: workers drawn, of limits.TIMELINE_MAX_M = 200: more bars than a screen shows
TIMELINE_WORKERS = 40
#: the graph page draws the graph up to this many nodes (a drawing of more is a blur of edges)
GRAPH_DRAWN_NODES = 200
#: the graphs the graph page compares against m (the complete graph is sync, drawn as sync)
GRAPH_PAGE_GRAPHS = ("ring", "torus", "hypercube", "exponential")
#: updates drawn (slider), of limits.TIMELINE_MAX_ITERATIONS = 200: 30 fill the chart's width
TIMELINE_MAX_UPDATES = 30

# -- the local SGD page --------------------------------------------------------------------

#: H values of the runtime chart against H (the sidebar's H and 2H are added)
LOCAL_H_GRID = (1, 2, 4, 8, 16, 32)
#: the error chart compares H = 1, the sidebar's H and this multiple of it (≤ UI_H_MAX)
LOCAL_H_COMPARE_FACTOR = 4
#: m values of the communication chart (up to UI_M_MAX) and of the speed-up chart (up to the
#: sidebar's m)
COMM_M_POINTS = 12
SPEEDUP_M_POINTS = 10

# -- the trade-offs page -------------------------------------------------------------------

#: points of a sweep: each runs a simulated SGD (TARGET_REPLICAS replicas), so fewer than on
#: the runtime page
SWEEP_K_POINTS = 8
SWEEP_M_POINTS = 10
SWEEP_H_VALUES = (1, 2, 4, 8, 16, 32, 64)

# -- uploads, caches, messages -------------------------------------------------------------

#: bytes of an uploaded trace, of limits.EMPIRICAL_MAX_BYTES = 64 MiB (the same 5 MB as
#: ``maxUploadSize`` in .streamlit/config.toml): parsing holds a session's run
TRACE_MAX_BYTES = 5 * 2**20
#: bytes and rows of a sweep's results file opened on the "Sweep results" page: the same upload
#: cap; 200 000 rows of ~40 columns are ~60 MB as a DataFrame, read once per file
SWEEP_MAX_BYTES = TRACE_MAX_BYTES
SWEEP_MAX_ROWS = 200_000
#: entries of each cached function, and seconds an idle entry is kept: each entry is rows of
#: numbers or ≤ SAMPLES values (≤ 1 MB), so a cache stays within tens of MB
CACHE_MAX_ENTRIES = 64
CACHE_TTL_S = 3600
#: entries of each view (a chart's rows and its plotly figure, kept as objects by
#: st.cache_resource): a figure holds its traces' arrays, ≤ a few hundred points per trace
#: (≤ 0.5 MB), so 64 of them per chart stay within tens of MB like the data caches
FIGURE_CACHE_ENTRIES = 64
#: a timeline entry holds up to limits.TIMELINE_MAX_JOBS_VECTORISED intervals (≈ 10 MB):
#: fewer of them
TIMELINE_CACHE_ENTRIES = 16
#: characters of a notice shown to the user, and of user text quoted in one
NOTICE_MAX_CHARS = 300
QUOTE_MAX_CHARS = 40

#: the truncated normal's mean ≥ this many standard deviations, so that P(N ≥ 0) is representable
#: (the library's joint check in delays.TruncatedNormal): the mean slider's minimum follows the
#: std slider, so the pair is never refused
NORMAL_MEAN_MIN_STDS = TruncatedNormal.MIN_MEAN_STDS

# -- slider ranges -------------------------------------------------------------------------

#: (low, high) of every numeric control.  The cost caps are the names above; the others are
#: ranges a class explores: a slider over a parameter's whole library domain (a rate from
#: 1e-6 to 1e9, a horizon up to 1e12) could not be set to a useful value.  ``state`` intersects
#: each with the library's domain of the parameter; a test checks the intersection is the range.
#: A delay family's parameter is keyed by its control key (the family's ``VIEWS``); a family
#: registered without an entry here gets its parameters' whole declared domains.
RANGES: dict[str, tuple[float, float]] = {
    # delay laws (domains in distsgd.delays, from limits.TIME_SCALE_MIN/MAX and the tail caps)
    "lam": (0.01, 100.0), "delta": (0.0, 100.0), "xm": (0.01, 100.0),
    "alpha": (0.3, 20.0),  # heavier than α = 0.3 only piles every sample at one huge value
    "ln_mu": (-10.0, 10.0), "ln_sigma": (0.05, 3.0), "n_mean": (-10.0, 100.0), "n_std": (0.01, 100.0),
    "w_shape": (0.2, 20.0), "w_scale": (0.01, 100.0), "u_low": (0.0, 100.0), "u_high": (0.01, 200.0),
    # workers and schemes (schemes.M, K_DOMAIN, H_DOMAIN), seed (random.SEED)
    "m": (1, UI_M_MAX), "K": (1, UI_K_MAX), "H": (1, UI_H_MAX), "seed": (0, UI_SEED_MAX),
    # an adaptive schedule's start and checkpoint period (DESIGN §13; schedules.PERIOD): a period
    # under 0.5 asks for more checkpoints than a chart's horizon can use
    "K0": (1, UI_K_MAX), "H0": (1, UI_H_MAX), "period": (0.5, 1e4),
    # the SGD problem and its simulation (sgd.ETA, L_SMOOTH, MU, SIGMA2, BATCH, F0, DIM, C_ADAPT,
    # TIME, REPLICAS; ε of sgd.bound_time_to_target, (0, 1e12])
    "eta": (1e-4, 2.0), "L": (0.01, 100.0), "mu": (0.001, 100.0), "sigma2": (0.0, 100.0),
    "b": (1, UI_BATCH_MAX), "f0": (1e-3, 1e3), "dim": (1, UI_DIM_MAX), "C": (1e-5, 10.0),
    "eps": (1e-6, 1e3), "horizon": (UI_HORIZON_MIN, UI_HORIZON_MAX),
    # a real problem's L2 regularisation λ (problems.LAM; key l2: "lam" is the delay's rate): below
    # 1e-4 the bound's L/μ passes 10⁴ (a curve nobody can read) and Newton's f* needs more steps
    "l2": (1e-4, 1.0),
    # the test accuracy to reach (problems.TARGET_ACCURACY, (0, 1]): below one half a binary
    # classifier's start already has it
    "acc_target": (0.5, 1.0),
    "replicas": (UI_REPLICAS_MIN, UI_REPLICAS_MAX),
    # communication (comm.COMM_DELAY, PARAMS_D in parameters, BANDWIDTH in bytes/s, LATENCY in s;
    # the UI's units are 10⁶ parameters, Gbit/s and ms)
    "D": (0.0, 1e3), "params_m": (0.001, 1e5), "gbps": (0.01, 1e4), "latency_ms": (0.0, 1e4),
    # the timeline (limits.TIMELINE_MAX_ITERATIONS)
    "tl_iters": (1, TIMELINE_MAX_UPDATES),
    # stragglers (clusters.SLOW, SLOWDOWN, SLOW_FRACTION, PERSISTENCE): a slowdown past 50 only
    # stretches the axes; ρ up to 0.99 (slow spells of ~100 mini-batches and more)
    "slow": (0, UI_M_MAX), "slowdown": (1.0, 50.0), "slow_fraction": (0.0, 0.9), "persistence": (0.0, 0.99),
    # the "Your cluster" page (traces.THRESHOLD, [1, 100])
    "threshold": (1.0, 5.0),
}

#: (UI value, library value it narrows): the UI never asks for more than the library allows
NARROWS: dict[str, tuple[float, float]] = {
    "UI_M_MAX": (UI_M_MAX, M_MAX),
    "UI_K_MAX": (UI_K_MAX, K_BATCH_MAX),
    "UI_H_MAX": (UI_H_MAX, H_MAX),
    "UI_SEED_MAX": (UI_SEED_MAX, SEED.high),
    "UI_BUDGETS": (max(UI_BUDGETS.values()), lib.TIME_BUDGET),
    "CHART_MAX_ITERATIONS": (CHART_MAX_ITERATIONS, lib.MAX_ITERATIONS),
    "CHART_ANALYTIC_WORK": (CHART_ANALYTIC_WORK, lib.ANALYTIC_WORK),
    "UI_MAX_UPDATES": (UI_MAX_UPDATES, sgd.MAX_UPDATES),
    "UI_MAX_WORK": (UI_MAX_WORK, sgd.MAX_WORK),
    "UI_MAX_PROBLEM_WORK": (UI_MAX_PROBLEM_WORK, sgd.MAX_WORK),
    "UI_MAX_TIMING_COST": (UI_MAX_TIMING_COST, lib.TIME_BUDGET),
    "UI_REPLICAS_MAX": (max(UI_REPLICAS_MAX, LOCAL_ERROR_REPLICAS, TARGET_REPLICAS), sgd.MAX_REPLICAS),
    "ERROR_POINTS": (max(ERROR_POINTS, LOCAL_ERROR_POINTS, TARGET_POINTS), sgd.POINTS.high),
    "UI_HORIZON_MAX": (UI_HORIZON_MAX, sgd.TIME.high),
    "UI_DIM_MAX": (UI_DIM_MAX, sgd.DIM.high),
    "UI_BATCH_MAX": (UI_BATCH_MAX, sgd.BATCH.high),
    "SAMPLES": (SAMPLES, lib.MAX_SAMPLE_SIZE),
    "FANOUT_M_MAX": (max(FANOUT_M_MAX, *FANOUT_M_EXTRA), M_MAX),
    "FANOUT_ITERATIONS": (FANOUT_ITERATIONS, lib.MAX_ITERATIONS),
    "TIMELINE_WORKERS": (TIMELINE_WORKERS, lib.TIMELINE_MAX_M),
    "TIMELINE_MAX_UPDATES": (TIMELINE_MAX_UPDATES, lib.TIMELINE_MAX_ITERATIONS),
    "TIMELINE_JOBS": (TIMELINE_MAX_UPDATES * TIMELINE_WORKERS * UI_H_MAX, lib.TIMELINE_MAX_JOBS_VECTORISED),
    "SWEEP_H_VALUES": (max(SWEEP_H_VALUES), UI_H_MAX),
    "LOCAL_H_GRID": (max(LOCAL_H_GRID), UI_H_MAX),
    "TRACE_MAX_BYTES": (TRACE_MAX_BYTES, lib.EMPIRICAL_MAX_BYTES),
}

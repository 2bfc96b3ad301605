"""Every cap and budget of the library, with its unit and the reason for it (DESIGN §6).

The library promises that every input its API and CLI accept runs in at most
:data:`MEMORY_BYTES` of working memory and about :data:`TIME_BUDGET_SECONDS` of CPU time on
one core, or is refused with a :class:`~distsgd.params.ParameterError` naming the parameter
to change.  The figures below are what makes that true; each says why it has its value.

Units: *time* is the model's time unit (whatever the delays are measured in); *cost* is the
calibrated unit of :func:`distsgd.montecarlo.iteration_cost`, about one nanosecond of one
core of the development machine; sizes are counts of float64 values unless said otherwise.
"""

from __future__ import annotations

__all__ = [
    "TIME_SCALE_MIN", "TIME_SCALE_MAX", "MAX_TRACE_TIME", "PARETO_ALPHA_MIN", "WEIBULL_SHAPE_MIN",
    "LOGNORMAL_MU_MIN", "LOGNORMAL_MU_MAX", "LOGNORMAL_SIGMA_MAX",
    "EMPIRICAL_MAX_VALUES", "EMPIRICAL_MAX_BYTES", "SPEC_MAX_CHARS", "TRACE_MAX_CELLS",
    "TABLE_MAX_BYTES", "TABLE_MAX_COLUMNS", "TABLE_MAX_FOOTER_BYTES", "TABLE_MAX_PAGES", "TABLE_BATCH_BYTES",
    "RESULTS_MAX_BYTES",
    "MEMORY_BYTES", "TIME_BUDGET_SECONDS", "TIME_BUDGET", "MAX_ITERATIONS", "MIN_ITERATIONS",
    "CHUNK", "RENEWAL_WINDOW", "WARMUP_PUSHES_PER_WORKER", "WARMUP_PUSHES_PER_CV2",
    "WARMUP_MAX_PUSHES_PER_WORKER", "MAX_KEPT_TIMES", "MAX_SAMPLE_SIZE",
    "MAX_TRACE_VALUES", "TIMELINE_MAX_M", "TIMELINE_MAX_ITERATIONS", "TIMELINE_MAX_JOBS",
    "TIMELINE_MAX_JOBS_VECTORISED",
    "ANALYTIC_WORK", "ANALYTIC_MAX_ELEMENTS", "MAX_WORKERS", "K_BATCH_MAX", "H_MAX",
    "SCHEDULE_MAX_CHECKPOINTS", "SCHEDULE_MAX_STEPS",
    "MAX_REPLICAS", "MAX_UPDATES", "MAX_SGD_WORK", "SGD_GROUP_BYTES", "MODEL_PATHS_GROUP", "AXIS_ANALYTIC_WORK",
    "AXIS_MC_COST", "GRAPH_MAX_MODELS", "GRAPH_EXACT_MAX_M", "GRAPH_EXACT_WORK", "SWEEP_CONFIRM_POINTS",
    "SWEEP_MAX_POINTS",
    "PROBLEM_MAX_BYTES", "PROBLEM_MAX_ROWS", "PROBLEM_MAX_FEATURES", "PROBLEM_MAX_CLASSES", "PROBLEM_MAX_DIM",
    "PROBLEM_MAX_NEWTON_DIM", "PROBLEM_MAX_VALUES",
    "TOPOLOGY_MAX_NODES", "TOPOLOGY_MAX_EDGES", "TOPOLOGY_MAX_PADDED", "TOPOLOGY_DENSE_EIGEN_MAX",
    "TOPOLOGY_LANCZOS_RESTARTS", "TOPOLOGY_REGULAR_TRIES", "TOPOLOGY_PAIRING_ROUNDS", "TOPOLOGY_FILE_MAX_BYTES",
    "GRAPH_CHAIN_MAX_STATES", "GRAPH_CHAIN_STATE_WORK",
]

# -- representable delay laws (the domains in delays.py are built from these) -----------------

#: smallest and largest *time scale* of a delay family (a rate's inverse, a Pareto x_m, a
#: Weibull scale, a normal's σ, the width of a uniform; time).  Above 1e6 a single delay
#: drawn at a tail probability of 1e-30 (x_m·q^{-1/α} with the smallest α, s·(-ln q)^{1/k}),
#: its square and the sum of squares of 1e7 of them (the Monte Carlo variance) would no longer
#: be guaranteed finite; below 1e-9 the variable part of a delay is lost in rounding next to
#: the largest shift (1e6 + 1e-9·… is 1e6 in float64) and a run's update times stop moving.
TIME_SCALE_MIN = 1e-9
TIME_SCALE_MAX = 1e6
#: largest single time of a measured trace (time): values, squares and sums of 1e7 of them
#: stay far from overflow; a trace holding 1e308 used to give a mean of −inf.
MAX_TRACE_TIME = 1e9
#: smallest Pareto tail index α.  Samples are x_m·U^{-1/α} with U ≥ ~1e-30 in any run the
#: caps allow; with α ≥ 1/4 and x_m ≤ 1e6 a sample is ≤ 1e126, its square ≤ 1e252 and 1e7
#: squares sum to ≤ 1e259 < 1.8e308.  (α ≤ 1 already has an infinite mean.)
PARETO_ALPHA_MIN = 0.25
#: smallest Weibull shape k.  Var = s²(Γ(1+2/k) − Γ(1+1/k)²) is representable (Γ(101) ≈ 9e157
#: at k = 0.02; at k = 0.01 Γ(201) overflows and the variance came out NaN), and a sample
#: s·E^{1/k} with E ≤ 100 stays ≤ 1e106.
WEIBULL_SHAPE_MIN = 0.02
#: lognormal μ (the log of the median, a time scale) within [ln 1e-9, ln 1e6], rounded.
LOGNORMAL_MU_MIN = -20.0
LOGNORMAL_MU_MAX = 14.0
#: largest lognormal σ: the mean exp(μ + σ²/2) ≤ e^64 and the variance ≤ e^228 stay finite,
#: and a sample at 10 standard deviations is ≤ e^114.
LOGNORMAL_SIGMA_MAX = 10.0

# -- measured traces ---------------------------------------------------------------------------

#: values in one trace (count): 8 MB of float64, sorted copies and order statistics stay small
EMPIRICAL_MAX_VALUES = 1_000_000
#: bytes read from one trace file: at most this + 1 are ever read (a larger file, /dev/zero, is
#: refused without reading it all); 64 MiB holds 1e6 lines of any sensible width
EMPIRICAL_MAX_BYTES = 64 * 2**20
#: characters in one delay spec string
SPEC_MAX_CHARS = 4096
#: cells of the columns read from one trace file (count): a long file has three a time, and a
#: CSV's ignored columns are parsed too (Alibaba PAI's has five); parsing takes ≈ 85 bytes a cell
TRACE_MAX_CELLS = 6 * EMPIRICAL_MAX_VALUES

# -- table files: traces and sweep results, CSV/TSV and Parquet (distsgd/tables.py, issue 22) -------
# A file's bytes bound nothing its decoder makes of them (44 KB of Parquet decode to 1 GiB), so
# these bound what is decoded; they hold for the dashboard's uploads and the CLI alike (the CLI
# reads a sweep's own results for --resume under RESULTS_MAX_BYTES).

#: bytes the columns read from one table file take decoded (Arrow's size: values, offsets,
#: validity; dictionaries expanded).  A trace of EMPIRICAL_MAX_VALUES times needs ≈ 30 MB (worker
#: ids of ~10 characters, steps, times), a sweep's results ≈ 400 bytes a point; reading a file up to
#: this cap and converting it for the pages stays within ≈ 200 MB, what one upload may cost the
#: dashboard's shared process (measured: benchmarks/results/uploads.md)
TABLE_MAX_BYTES = 64 * 2**20
#: columns of one table file (count): pandas' CSV parser spends ≈ 0.3 ms a column (a 400 KB header
#: of 200 000 columns kept it busy for minutes), so 2048 columns are ≤ 1 s; a wide trace has one
#: column per worker (a larger cluster is a long file: one row per worker and step)
TABLE_MAX_COLUMNS = 2048
#: bytes of a Parquet file's footer (its metadata): parsed, it takes ≈ 9 times as much (measured:
#: a 6 MB footer, 52 MB and 0.2 s); 8 MiB describes ~50 000 column chunks
TABLE_MAX_FOOTER_BYTES = 8 * 2**20
#: pages and column chunks of the columns read from one Parquet file (count): every page header is
#: parsed in Python before decoding, to learn what the decoder will allocate (≈ 25–60 µs each:
#: ≤ 1 s); writers make pages of ~1 MiB or 20 000 rows, so a legitimate file has hundreds
TABLE_MAX_PAGES = 20_000
#: bytes a batch of DELTA_BYTE_ARRAY text may decode to at worst (each value is at most its page):
#: such a column's decoded size is known only by decoding it, so it is decoded this much at a time
TABLE_BATCH_BYTES = 16 * 2**20

# -- the schemes' parameters ---------------------------------------------------------------

#: workers m (count): the order-statistic engines are O(1) in m, the renewal engines O(m)
#: memory per replica; 100 000 keeps every per-worker array of one call within CHUNK
MAX_WORKERS = 100_000
#: gradients per update K of the batch schemes (count; K may exceed m there): one k-batch-sync
#: iteration draws about K + m delays, one k-batch-async update K pushes
K_BATCH_MAX = 1_000_000
#: local steps H per averaging round (count): one round draws m·H delays
H_MAX = 10_000

# -- adaptive schedules (distsgd/schedules.py, DESIGN §13) ---------------------------------------

#: checkpoints of one scheduled run (count): each evaluates every replica's training loss (one
#: pass over the training set on a real problem) and splits the run's Python loop once
SCHEDULE_MAX_CHECKPOINTS = 1000
#: (time, value) pairs of one ``steps`` schedule (count)
SCHEDULE_MAX_STEPS = 64

# -- graphs for decentralised SGD (distsgd/topology/, DESIGN §12.1) ---------------------------

#: nodes of one graph (count): issue 24's Monte Carlo of the max-plus recursion targets m ≤ 10 000.
#: At this cap the spectral gap of a graph that is not a Cayley graph takes 0.03–0.8 s with a few
#: edges a node (star, random 3-regular, grid, path; measured on one core), 7 s at the edge cap
TOPOLOGY_MAX_NODES = 10_000
#: edges of one graph, and rows of an edge list before repeats are merged (count): the complete
#: graph fits up to m = 2048 (2 096 128 edges).  At the cap a graph's arrays (E × 2 and 2E int64, the
#: sparse W) and the work of building it and its δ peak at ≈ 420 MB (measured: a random 419-regular
#: graph on 10 000 nodes, 3 s to draw and 7 s for δ), within MEMORY_BYTES; the complete graph on
#: 10 000 nodes (5·10^7 edges, > 1 GiB of arrays) is refused
TOPOLOGY_MAX_EDGES = 2**21
#: entries of the padded closed-neighbourhood array m × (Δ+1) (count; int64, 64 MiB): a graph with a
#: hub (the star on m nodes needs m²) is refused there and served by the CSR arrays instead
TOPOLOGY_MAX_PADDED = 2**23
#: nodes up to which the spectral gap is computed from every eigenvalue of the dense m × m matrix
#: I − W (numpy eigvalsh, O(m³)): 0.2 s at m = 1000 and 1.4 s at 2000 on one core (measured);
#: above, a Cayley graph (ring, torus, hypercube, exponential, complete) takes its eigenvalues
#: from an FFT over its group (≤ 0.3 s), any other graph sparse Lanczos, then shift-invert
TOPOLOGY_DENSE_EIGEN_MAX = 1024
#: restarts of the Lanczos iteration (ARPACK, 40 vectors) before the spectral gap falls back to
#: shift-invert: ≤ 4000 sparse products.  Measured at m = 10 000: a random 3-regular graph and a
#: 100 × 100 grid converge within 50 (not within 50 with 20 vectors); a path, whose gap is ~1/m², would
#: need ~10⁵ products (300 s), and falls back after ≈ 0.8 s to a shift-invert of 0.02 s
TOPOLOGY_LANCZOS_RESTARTS = 100
#: draws of a random regular graph before giving up (count): a draw is repeated when it is
#: disconnected (d ≥ 3: rarely, more often for small m) or its last stubs find no edge to switch with
TOPOLOGY_REGULAR_TRIES = 100
#: rounds of one stub pairing (count): each round pairs the free stubs at random and keeps the
#: pairs that make new edges; ~20–40 rounds at d ≈ m/2, a handful for small d (measured)
TOPOLOGY_PAIRING_ROUNDS = 1000
#: bytes of an edge-list file (CSV/TSV): TOPOLOGY_MAX_EDGES lines of two ids ≤ 9999 are ≤ 11 bytes
#: each (23 MiB), with room for a header and spaces.  Measured: a 20 MB file of 2.1·10⁶ edges is read
#: in 2.6 s with ≈ 230 MB at its peak (pandas' text cells, then the graph)
TOPOLOGY_FILE_MAX_BYTES = 32 * 2**20
#: states of the exact Markov chain of d-psgd's iteration-count gaps (count; numerics/graph_chain.py,
#: DESIGN §12.3): enumerating, indexing and solving them by Gauss–Seidel sweeps takes 2–3 µs a state
#: with the compiled sweep (measured on a loaded 2-core machine: a ring of 13 nodes, 212 941 states,
#: 0.5 s; a path of 12, 177 147 states and 78 sweeps, 0.45 s; benchmarks/results/graph.md), so ≤ 1 s
#: at this cap.  The states are the 1-Lipschitz functions of the graph modulo constants — at least
#: 2^m − 1, about 3^m/√m on a ring — so a graph of m > 17 nodes is refused at once, any other above the
#: cap after its enumeration (≤ 0.2 s), and the caller falls back to the bounds
GRAPH_CHAIN_MAX_STATES = 250_000
#: analytic work (the unit of ANALYTIC_WORK, ≈ ns) of one state of the gap chain, enumerated and solved
#: (the 2–3 µs above): a call with ``work`` W solves a chain of at most W / this states, so the library's
#: default work allows GRAPH_CHAIN_MAX_STATES and a dashboard chart's (3e7, ≈ 0.05 s) 12 000 states
GRAPH_CHAIN_STATE_WORK = 2_500

# -- the per-call bounds --------------------------------------------------------------------

#: working memory of any one library call (bytes); the chunk sizes below keep every engine
#: one or two orders of magnitude under it
MEMORY_BYTES = 2**30
#: CPU time of any one Monte Carlo call (seconds on one core), and the same in cost units
TIME_BUDGET_SECONDS = 60.0
TIME_BUDGET = TIME_BUDGET_SECONDS * 1e9
#: Monte Carlo iterations of one simulate_runtime call (count).  At least 2: the confidence
#: interval needs a variance, and one iteration gave NaN for it.
MAX_ITERATIONS = 10_000_000
MIN_ITERATIONS = 2
#: floats in one working array of the i.i.d.-iteration engines (16 MiB)
CHUNK = 2**21
#: pushes merged in one window of the k-batch-async / async engine (count); its working
#: arrays are about 10 times this in float64/int64, ≈ 20–40 MiB
RENEWAL_WINDOW = 2**18
#: warm-up of the renewal schemes (pushes per worker): every worker starts a fresh job at
#: time 0, and the in-flight ages (hence the update rate and the staleness) settle only after
#: a number of pushes that grows with the law's variability: about 20·(1 + CV²) pushes per
#: worker (CV² = Var[X]/E[X]²; measured: Weibull k = 0.2, CV² = 251, and lognormal σ = 2.5,
#: CV² = 517, were 10–40 % low after 40 pushes, right after 4 000), at least 40, at most
#: 10 000 (then, or with an infinite variance, the result carries a note that it may be biased).
#: The warm-up is ⌈W·m/K⌉ updates.
WARMUP_PUSHES_PER_WORKER = 40
WARMUP_PUSHES_PER_CV2 = 20
WARMUP_MAX_PUSHES_PER_WORKER = 10_000
#: per-iteration times kept in a RuntimeSample (count; the mean uses all of them)
MAX_KEPT_TIMES = 1_000_000
#: values drawn by one Delay.sample call (count): 256 MiB of float64
MAX_SAMPLE_SIZE = 2**25
#: values held by one UpdateTrace (replicas × updates × K gradients), workers and staleness
#: as int32 plus the times: ≈ 8 bytes per value, 128 MiB
MAX_TRACE_VALUES = 2**24

# -- timelines (drawn, not estimated: event by event in Python) -----------------------------

TIMELINE_MAX_M = 200
TIMELINE_MAX_ITERATIONS = 200
#: jobs simulated for one timeline (count).  Event by event (sync, k-sync, k-batch-sync, the
#: asynchronous schemes) each costs 10–40 µs of Python: ≤ 50 000 of them, ≤ 2 s.  Local SGD
#: is vectorised (≈ 0.3 µs and ~150 bytes per drawn interval): ≤ 200 000, which holds the
#: dashboard's worst case, 30 updates with m = 40 and H = 100 (120 000 jobs).
TIMELINE_MAX_JOBS = 50_000
TIMELINE_MAX_JOBS_VECTORISED = 200_000

# -- the error curves (distsgd/error) ---------------------------------------------------------

#: SGD runs of one simulate_error call (count)
MAX_REPLICAS = 10_000
#: updates of one simulated SGD run (count): the time grid is read off each run's update times
MAX_UPDATES = 200_000
#: replicas × updates × K × d of one simulation (array-element work): ≈ 4e9 multiply-adds, a
#: minute of numpy on one core; on a real problem b rows a gradient, and the evaluation of every
#: recorded model on the data's rows (distsgd.error.general.problem_work)
MAX_SGD_WORK = 4e9
#: bytes of timing trace and SGD state per group of replicas simulated together (64 MiB)
SGD_GROUP_BYTES = 64 * 2**20
#: update times per group of timing paths of the exact model curve (count; 16 MiB of float64)
MODEL_PATHS_GROUP = 2**21
#: numbers held per copy of the node models of a graph simulation (error/graph_simulate.py), replicas ×
#: max(nodes m, grid points) × d: every node's model is simulated (R × m × d), and each grid point keeps
#: a mean model per replica (R × P × d).  A d-psgd step holds about five such arrays (the models, the
#: mixed models, the gradient, the noise, the merged grid moments): 5 × 32 MiB, well within MEMORY_BYTES
GRAPH_MAX_MODELS = 2**22
#: nodes of the exact d-psgd curve (count): it diagonalises the dense m × m mixing matrix, O(m³):
#: 0.6–1.6 s at m = 1000 and 5–10 s at 2000 on the development machine (measured, numpy eigvalsh);
#: a larger graph with a known spectrum passes it (MixingSpectrum.from_eigenvalues) instead
GRAPH_EXACT_MAX_M = 1000
#: iterations × distinct eigenvalues × d of one exact d-psgd curve (array elements, an expm1 and a
#: multiply-add each: measured 0.9 s for 5e7 — 10 001 iterations of a ring of 1000 nodes, d = 10 —
#: so ≈ 4 s at the cap)
GRAPH_EXACT_WORK = 2e8
#: the E[T] that sets the time axis of the error curves: analytic lattice work (FFT
#: butterflies, ≈ 0.05 s), else a Monte Carlo run of at most this cost (≈ ns, 0.1 s)
AXIS_ANALYTIC_WORK = 3e7
AXIS_MC_COST = 1e8

# -- analytic ----------------------------------------------------------------------------------

#: work of one lattice computation (FFT butterflies; ≈ 1–2 s of numpy FFT)
ANALYTIC_WORK = 1.0e9
#: elements of any one float64 work array of the analytic lattices (8e6 → 64 MB)
ANALYTIC_MAX_ELEMENTS = 8_000_000

# -- sweeps (distsgd/sweeps, DESIGN §8) --------------------------------------------------------

#: points of one sweep that run without being confirmed (count).  Every point is bounded by the
#: caps above (≤ TIME_BUDGET_SECONDS of Monte Carlo and ≤ MEMORY_BYTES), but a list added to a
#: grid multiplies it: 10 000 points at the default 100 000 iterations are 0.5–5 core-hours for
#: the cheap schemes and up to days for the dear ones, so beyond this the CLI asks for --yes
#: (``yes=True`` in :func:`distsgd.sweep`) — a typo should not book a cluster for a week.
SWEEP_CONFIRM_POINTS = 10_000
#: points of one sweep, confirmed or not (count).  The driver holds every planned point's
#: parameters (≈ 350 B) and every finished row (≈ 400 B as Arrow, twice that while a checkpoint
#: concatenates) to write the sorted file: ≈ 1.1 KB a point, about 0.55 GB at this cap, half of
#: MEMORY_BYTES (measured: benchmarks/results/sweep.md); a larger study is several grid files.
SWEEP_MAX_POINTS = 500_000
#: bytes a sweep's results file may decode to when ``--resume`` reads it (the CLI's own file, read
#: whole to be continued): SWEEP_MAX_POINTS rows of ≈ 400 bytes are ≈ 200 MB, and labels, notes and
#: error messages may be longer; within MEMORY_BYTES with the rows the driver then holds
RESULTS_MAX_BYTES = 512 * 2**20

# -- real problems (DESIGN §9) -------------------------------------------------------------

#: bytes of one data file (CSV, TSV, LIBSVM): the dashboard's upload cap is 5 MiB; the API and
#: CLI read larger files, up to this.  Parsed, a CSV cell costs ≈ 85 bytes and a LIBSVM entry
#: ≈ 24 (value, column, row pointer), so 64 MiB of text stays well under MEMORY_BYTES
PROBLEM_MAX_BYTES = 64 * 2**20
#: training and test rows together (count): the loss on the time grid reads every row for
#: every recorded model (rows × d per model), and f* needs a few Newton steps over them
PROBLEM_MAX_ROWS = 200_000
#: features p (count): the dense Newton step factors a d × d Hessian (d = C·(p + 1)); above
#: PROBLEM_MAX_NEWTON_DIM it is solved by conjugate gradients on Hessian-vector products
PROBLEM_MAX_FEATURES = 100_000
#: classes C (count): the multinomial model holds C·(p + 1) numbers per replica
PROBLEM_MAX_CLASSES = 100
#: model dimension d = C·(p + 1) (count): R replicas × m stale copies × d float64 must fit
#: SGD_GROUP_BYTES for at least one replica of the largest m
PROBLEM_MAX_DIM = 200_000
#: dense Hessian side for Newton's method (count; 2000² float64 = 32 MiB, a Cholesky ≈ 0.1 s)
PROBLEM_MAX_NEWTON_DIM = 2000
#: stored values of the design matrix, dense cells or sparse entries (count, 8 bytes each)
PROBLEM_MAX_VALUES = 20_000_000

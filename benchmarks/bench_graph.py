"""d-psgd and ad-psgd on a graph (DESIGN §12.3), measured, not asserted.

    python -m benchmarks.bench_graph            # full run (~2 min), writes benchmarks/results/graph.md
    python -m benchmarks.bench_graph --quick    # shorter runs (~30 s), writes graph-quick.md

(1) d-psgd Monte Carlo on a ring of 1000 nodes, R = 4 replicas: the engine (the compiled kernel and
    its draws, ``distsgd.engines.graph.maxplus_blocks``) against
    (a) its floor: the same draws alone, ``delay.sample`` in the engine's block shapes;
    (b) the numpy reference path: one iteration at a time, vectorised over replicas and nodes;
    (c) a SimPy model of the same recursion (one process per node; per iteration it waits for an
        ``AllOf`` of its closed neighbourhood's finish events, then for its draw).  The draws are made
        beforehand and handed in, so SimPy's time is its event handling alone; its finish times are
        checked equal to the engine's for the same draws.
    Laws: exp(rate=1), uniform(low=0.5, high=1.5), lognormal(mu=0, sigma=1).
(2) m = 10 000 (a ring and a 100 × 100 torus): the engine's time per iteration, the library's layout
    for 100 000 iterations (``batchmeans.layout`` with K = m) and its predicted (``dpsgd_cost``) and
    measured total, against ``limits.TIME_BUDGET_SECONDS``.
(3) The exact chain of the gaps on the largest graphs it accepts (≤ ``limits.GRAPH_CHAIN_MAX_STATES``
    states): states, sweeps, wall time (median of 3, its cache cleared); the first refused graphs and
    how long a refusal takes.
(4) ad-psgd: gradients per second of ``adpsgd_batch_means`` against async's
    ``renewal.merged_batch_means`` on the same ring.
(5) The flat start: on a ring of 1000 nodes with Exp(1), the mean increment of (1/m) Σ_i t_i(k) over
    windows k ∈ [2^j, 2^{j+1}), 8 replicas, against the last window: how fast it approaches γ (the
    bias of a run that starts from t(0) = 0).

Each timing of (1) is the best of five interleaved calls (engine, floor, numpy in turn; one with --quick),
the others the median of three: the machine is shared, and its load comes and goes.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy
import simpy

from distsgd import jit, limits
from distsgd.delays import Delay, parse_delay
from distsgd.engines import batchmeans, renewal
from distsgd.engines import graph as eg
from distsgd.numerics import graph_chain as gc

from .bench_clusters import cpu_model, fmt_time, fmt_x, numba_version, table

RESULTS = Path(__file__).resolve().parent / "results"
LAWS = ["exp(rate=1)", "uniform(low=0.5, high=1.5)", "lognormal(mu=0, sigma=1)"]
R = 4


def csr(m: int, edges: list[tuple[int, int]]) -> gc.CSR:
    """A graph from its edges (both directions, sorted neighbours)."""
    e = np.array(edges, dtype=np.int64)
    rows = np.concatenate([e[:, 0], e[:, 1]])
    cols = np.concatenate([e[:, 1], e[:, 0]])
    order = np.lexsort((cols, rows))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=m))])
    return gc.CSR(indptr, cols[order])


def ring(m: int) -> gc.CSR:
    return csr(m, [(i, (i + 1) % m) for i in range(m)])


def path(m: int) -> gc.CSR:
    return csr(m, [(i, i + 1) for i in range(m - 1)])


def star(m: int) -> gc.CSR:
    return csr(m, [(0, i) for i in range(1, m)])


def torus(a: int, b: int) -> gc.CSR:
    at = lambda i, j: (i % a) * b + j % b  # noqa: E731
    return csr(a * b, [(at(i, j), at(i + 1, j)) for i in range(a) for j in range(b)]
               + [(at(i, j), at(i, j + 1)) for i in range(a) for j in range(b)])


def hypercube(d: int) -> gc.CSR:
    return csr(2**d, [(i, i ^ (1 << k)) for i in range(2**d) for k in range(d) if i < i ^ (1 << k)])


def median_time(fn: Callable[[], object], repeats: int) -> float:
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


# -- (1) the ring of 1000 --------------------------------------------------------------------------------

def run_engine(delay: Delay, g: gc.CSR, n: int, seed: int) -> None:
    for _ in eg.maxplus_blocks(delay, g, R, n, np.random.default_rng(seed), False):
        pass


def run_numpy(delay: Delay, g: gc.CSR, n: int, seed: int) -> None:
    for _ in eg._maxplus_numpy(delay, g, R, n, np.random.default_rng(seed), False):
        pass


def run_floor(delay: Delay, m: int, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    b = max(1, limits.CHUNK // (R * m))
    for s in range(0, n, b):
        delay.sample(rng, (R, min(b, n - s), m))


def simpy_maxplus(g: gc.CSR, X: np.ndarray) -> np.ndarray:
    """The recursion as a SimPy model: X (n, m) the draws; returns t (n + 1, m)."""
    n, m = X.shape
    env = simpy.Environment()
    nb = [g.indices[g.indptr[i]:g.indptr[i + 1]].tolist() for i in range(m)]
    done = [[env.event() for _ in range(m)] for _ in range(n + 1)]
    t = np.zeros((n + 1, m))

    def node(i: int):  # type: ignore[no-untyped-def]
        for k in range(n):
            if k:
                yield simpy.AllOf(env, [done[k][j] for j in [i, *nb[i]]])
            yield env.timeout(float(X[k, i]))
            t[k + 1, i] = env.now
            done[k + 1][i].succeed()

    for i in range(m):
        env.process(node(i))
    env.run()
    return t


def section_ring(quick: bool) -> tuple[list[str], dict[str, float]]:
    g = ring(1000)
    m = 1000
    repeats = 1 if quick else 3
    rows, facts = [], {}
    for spec in LAWS:
        delay = parse_delay(spec)
        n = 2000 if quick else 10_000
        n_np = n // 5
        runs: dict[str, list[float]] = {"engine": [], "floor": [], "numpy": []}
        for _ in range(2 * repeats - 1):  # interleaved, the best of each: a shared machine's load comes and goes
            runs["engine"].append(median_time(lambda: run_engine(delay, g, n, 1), 1))  # noqa: B023
            runs["floor"].append(median_time(lambda: run_floor(delay, m, n, 1), 1))  # noqa: B023
            runs["numpy"].append(median_time(lambda: run_numpy(delay, g, n_np, 1), 1) * n / n_np)  # noqa: B023
        engine, floor, numpy_t = (min(runs[k]) for k in ("engine", "floor", "numpy"))
        per = R * n * m
        rows.append([spec, f"{engine / per * 1e9:.1f}", f"{floor / per * 1e9:.1f}", fmt_x(engine / floor),
                     f"{numpy_t / per * 1e9:.1f}", fmt_x(numpy_t / engine),
                     f"{eg.dpsgd_cost(g, R) / m:.1f}"])
        facts["floor_lo"] = min(facts.get("floor_lo", np.inf), engine / floor)
        facts["floor_hi"] = max(facts.get("floor_hi", 0.0), engine / floor)
        facts["numpy_lo"] = min(facts.get("numpy_lo", np.inf), numpy_t / engine)
        facts["numpy_hi"] = max(facts.get("numpy_hi", 0.0), numpy_t / engine)
    # SimPy, exponential draws made beforehand
    n_sim = 10 if quick else 40
    X = parse_delay(LAWS[0]).sample(np.random.default_rng(3), (1, n_sim, m))
    t0 = time.perf_counter()
    ts = simpy_maxplus(g, X[0])
    sim = time.perf_counter() - t0
    te = eg.dpsgd_finish_times(parse_delay(LAWS[0]), g, 1, n_sim, np.random.default_rng(3))
    equal = bool(np.array_equal(ts, te[0]))
    n = 2000 if quick else 10_000
    engine = median_time(lambda: run_engine(parse_delay(LAWS[0]), g, n, 1), repeats)
    ratio = (sim / (n_sim * m)) / (engine / (R * n * m))
    facts["simpy"] = ratio
    simpy_rows = [[LAWS[0], f"{n_sim} × {m}", fmt_time(sim), f"{sim / (n_sim * m) * 1e9:,.0f}",
                   f"{engine / (R * n * m) * 1e9:.1f}", fmt_x(ratio), "yes" if equal else "NO"]]
    out = ["## (1) d-psgd on a ring of 1000 nodes: the engine, its floor, numpy, SimPy", "",
           f"R = {R} replicas; ns per node and iteration (one replica), best of five interleaved calls. *engine*: "
           "`maxplus_blocks` (draws + compiled kernel); *floor*: the same draws alone; *numpy*: the "
           "reference path; *model*: `dpsgd_cost` ÷ m (≈ ns).", "",
           table(["law", "engine ns", "floor ns", "engine / floor", "numpy ns", "numpy / engine", "model ns"], rows),
           "",
           "SimPy: one process per node, an `AllOf` over its closed neighbourhood per iteration, the draws "
           "handed in (its time is event handling alone); its finish times against the engine's for the "
           "same draws.", "",
           table(["law", "iterations × nodes", "SimPy wall", "SimPy ns / node-iteration", "engine ns",
                  "engine speed-up", "same times"], simpy_rows), ""]
    return out, facts


# -- (2) m = 10 000 --------------------------------------------------------------------------------------

def section_large(quick: bool) -> list[str]:
    rows = []
    delay = parse_delay("exp(rate=1)")
    for name, g in [("ring", ring(10_000)), ("torus 100 × 100", torus(100, 100))]:
        m = 10_000
        n = 200 if quick else 1000
        el = median_time(lambda: run_engine(delay, g, n, 2), 1 if quick else 3)  # noqa: B023
        per_iter = el / (R * n)
        Rl, w, nl, _ = batchmeans.layout(m, m, 100_000, delay, False)
        total_iters = Rl * (w + nl)
        predicted = eg.dpsgd_cost(g, Rl) * total_iters / 1e9
        rows.append([name, fmt_time(per_iter), f"{per_iter / m * 1e9:.1f}", f"R={Rl}, w={w}, n={nl}",
                     f"{total_iters:,}", fmt_time(per_iter * total_iters), fmt_time(predicted),
                     f"{limits.TIME_BUDGET_SECONDS:.0f} s"])
    return ["## (2) m = 10 000", "",
            "The engine's time per iteration of one replica (measured on R = 4), and the library's layout for "
            "100 000 iterations (`batchmeans.layout(m, K=m, …)`: every iteration is m gradients), "
            "extrapolated and as `dpsgd_cost` predicts it.", "",
            table(["graph", "per iteration", "ns / node", "layout", "iterations run", "measured total",
                   "predicted total", "budget"], rows), ""]


# -- (3) the chain ---------------------------------------------------------------------------------------

def section_chain(quick: bool) -> list[str]:
    rows = []
    cases = [("ring 12", ring(12)), ("ring 13", ring(13)), ("path 12", path(12)), ("star 12", star(12)),
             ("star 13", star(13)), ("torus 4 × 4", torus(4, 4)), ("hypercube 16", hypercube(4)),
             ("torus 3 × 3", torus(3, 3)), ("hypercube 8", hypercube(3)), ("ring 20", ring(20))]
    for name, g in cases:
        def solve(g: gc.CSR = g) -> gc.ChainSolution | None:
            gc._SOLVED.clear()
            return gc.solve_gap_chain(g)
        sol = solve()
        el = median_time(solve, 1 if quick else 3)
        if sol is None:
            rows.append([name, "refused", "—", "—", fmt_time(el)])
        else:
            rows.append([name, f"{sol.states:,}", str(sol.sweeps), f"{sol.cycle_time:.12g}", fmt_time(el)])
    return ["## (3) The exact chain of the gaps (Exp(1))", "",
            f"Cap: `limits.GRAPH_CHAIN_MAX_STATES` = {limits.GRAPH_CHAIN_MAX_STATES:,} states.  Wall time of "
            "`solve_gap_chain` (enumeration, transitions, Gauss–Seidel), its cache cleared; a refused graph "
            "(γ then comes from the bounds) with the time the refusal takes.  The torus 4 × 4 *is* the "
            "hypercube on 16 nodes (C4 × C4): the same γ.", "",
            table(["graph", "states", "sweeps", "γ (Exp(1))", "wall"], rows), ""]


# -- (4) ad-psgd ----------------------------------------------------------------------------------------

def section_adpsgd(quick: bool) -> list[str]:
    rows = []
    delay = parse_delay("exp(rate=1)")
    for m in (1000, 10_000):
        g = ring(m)
        n = (200_000 if quick else 1_000_000)
        ad = median_time(lambda: eg.adpsgd_batch_means(delay, g, 1, 0, n, 8, np.random.default_rng(1), False),  # noqa: B023
                         1 if quick else 3)
        asy = median_time(lambda: renewal.merged_batch_means(delay, m, 1, 1, 0, n, 8, np.random.default_rng(1),  # noqa: B023
                                                             False), 1 if quick else 3)
        rows.append([str(m), f"{n:,}", f"{ad / n * 1e9:.0f}", f"{asy / n * 1e9:.0f}", fmt_x(ad / asy),
                     f"{eg.adpsgd_cost(g):.0f}"])
    return ["## (4) ad-psgd against async's merged stream (ring, Exp(1))", "",
            table(["m", "gradients", "ad-psgd ns / gradient", "async ns / gradient", "ratio", "model ns"], rows), ""]


# -- (5) the flat start ----------------------------------------------------------------------------------

def section_flat(quick: bool) -> list[str]:
    reps, K = 8, (2**11 if quick else 2**14)
    means = np.concatenate([mm for mm, _ in eg.maxplus_blocks(parse_delay("exp(rate=1)"), ring(1000), reps, K,
                                                               np.random.default_rng(4), False)], axis=1)
    inc = np.diff(np.concatenate([np.zeros((reps, 1)), means], axis=1), axis=1)
    last = inc[:, K // 2:].mean()
    rows = []
    j = 1
    while 2 ** (j + 1) <= K:
        w = inc[:, 2**j:2 ** (j + 1)].mean(axis=1)
        hw = 1.96 * w.std(ddof=1) / np.sqrt(reps)
        rows.append([f"[{2**j}, {2 ** (j + 1)})", f"{w.mean():.4f} ± {hw:.4f}", f"{w.mean() - last:+.4f}",
                     f"{(w.mean() - last) * (1.5 * 2**j) ** (2 / 3):+.2f}"])
        j += 1
    return ["## (5) The flat start (ring of 1000, Exp(1), 8 replicas)", "",
            "Mean increment of (1/m) Σ_i t_i(k) per window of k, ± its 95 % half-width over the replicas; its "
            f"difference from the last half of the run ({last:.4f}); and that difference × k^(2/3) at the "
            "window's middle (constant if the mean increment approaches γ as c·k^(−2/3), KPZ growth from a "
            "flat start; the bias of a run of n iterations is then about 3c·n^(−2/3)).", "",
            table(["k", "mean increment", "− last half", "× k^(2/3)"], rows), ""]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_graph", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="shorter runs, one timing each")
    args = p.parse_args(argv)
    start = time.time()
    load0 = os.getloadavg()[0]
    run_engine(parse_delay("exp(rate=1)"), ring(16), 4, 0)  # compile / load the kernels first
    eg.adpsgd_events(parse_delay("exp(rate=1)"), ring(16), 1, 100, np.random.default_rng(0))
    ring_part, facts = section_ring(args.quick)
    body = ring_part + section_large(args.quick) + section_chain(args.quick) + section_adpsgd(args.quick) \
        + section_flat(args.quick)
    stamp = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    cmd = "python -m benchmarks.bench_graph" + (" --quick" if args.quick else "")
    head = ["# Graph benchmarks (d-psgd, ad-psgd)", "",
            f"**Reading.** On a ring of 1000 nodes the engine runs at {facts['floor_lo']:.2f}–"
            f"{facts['floor_hi']:.2f}× its floor (the draws alone), {facts['numpy_lo']:.1f}–{facts['numpy_hi']:.1f}× "
            f"faster than the numpy loop and {facts['simpy']:,.0f}× faster than SimPy's event handling; see (2) for "
            "m = 10 000 against the 60 s budget, (3) for the chain at its cap, (5) for the flat start's bias.", "",
            f"{stamp}; `{cmd}`, {time.time() - start:.0f} s in all.", "",
            f"Machine: {cpu_model()}, `os.cpu_count()` = {os.cpu_count()}, {platform.machine()}; Python "
            f"{platform.python_version()}, numpy {np.__version__}, numba {numba_version()} (kernels "
            f"{'on' if jit.ENABLED else 'off'}), scipy {scipy.__version__}, simpy {simpy.__version__}; load "
            f"average (1 min) {load0:.2f} at the start, {os.getloadavg()[0]:.2f} at the end.", ""]
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / ("graph-quick.md" if args.quick else "graph.md")
    out.write_text("\n".join(head + body))
    print(out.read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""d-psgd and ad-psgd on a graph (DESIGN §12.3): the Monte Carlo engines, the exact chain of the
iteration-count gaps, the bounds and the moment-generating functions they use.

Graphs are built by hand here (CSR arrays, no Topology).  Expected values are computed in this file:
closed forms (E[max of m exponentials] = H_m/λ, the two-node chain), a plain BFS over the chain's
transitions, and an event-driven simulation of d-psgd written from the process definition (a node
starts iteration k + 1 when the last of it and its neighbours finished iteration k).  Monte Carlo
tolerances are 4 half-widths of a 95 % interval from batch means, with fixed seeds.
"""

from __future__ import annotations

import heapq
import math
from collections import deque

import numpy as np
import pytest
from scipy import special

from distsgd import make_cluster
from distsgd.delays import parse_delay
from distsgd.delays.empirical import Empirical
from distsgd.engines import graph as eg
from distsgd.engines import renewal
from distsgd.engines.batchmeans import t95
from distsgd.numerics import graph_chain as gc

TOL = 4.0  # half-widths


def csr(m: int, edges: list[tuple[int, int]]) -> gc.CSR:
    nb: list[set[int]] = [set() for _ in range(m)]
    for a, b in edges:
        nb[a].add(b)
        nb[b].add(a)
    indptr = np.concatenate([[0], np.cumsum([len(s) for s in nb])]).astype(np.int64)
    indices = np.array([j for s in nb for j in sorted(s)], dtype=np.int64)
    return gc.CSR(indptr, indices)


def ring(m: int) -> gc.CSR:
    return csr(m, [(i, (i + 1) % m) for i in range(m)])


def path(m: int) -> gc.CSR:
    return csr(m, [(i, i + 1) for i in range(m - 1)])


def star(m: int) -> gc.CSR:
    return csr(m, [(0, i) for i in range(1, m)])


def complete(m: int) -> gc.CSR:
    return csr(m, [(i, j) for i in range(m) for j in range(i + 1, m)])


def torus(a: int, b: int) -> gc.CSR:
    at = lambda i, j: (i % a) * b + j % b  # noqa: E731
    return csr(a * b, [(at(i, j), at(i + 1, j)) for i in range(a) for j in range(b)]
               + [(at(i, j), at(i, j + 1)) for i in range(a) for j in range(b)])


def hypercube(d: int) -> gc.CSR:
    return csr(2**d, [(i, i ^ (1 << k)) for i in range(2**d) for k in range(d) if i < i ^ (1 << k)])


def random_graph(m: int, extra: int, seed: int) -> gc.CSR:
    """A random tree (node i joins a random earlier node) plus ``extra`` random edges: connected."""
    rng = np.random.default_rng(seed)
    edges = [(int(rng.integers(0, i)), i) for i in range(1, m)]
    while len(edges) < m - 1 + extra:
        a, b = (int(v) for v in rng.integers(0, m, 2))
        if a != b:
            edges.append((a, b))
    return csr(m, edges)


def neighbours(g: gc.CSR) -> list[list[int]]:
    return [g.indices[g.indptr[i]:g.indptr[i + 1]].tolist() for i in range(g.indptr.size - 1)]


def batch_ci(x: np.ndarray, batches: int = 20) -> tuple[float, float]:
    """Mean and 95 % half-width of a stationary series from contiguous batch means."""
    n = x.size // batches * batches
    b = x[x.size - n:].reshape(batches, -1).mean(axis=1)
    return float(b.mean()), float(t95(batches - 1) * b.std(ddof=1) / math.sqrt(batches))


def bm_ci(bms: list) -> tuple[float, float]:
    means = np.concatenate([b.sums.ravel() / (b.n // b.B) for b in bms])
    return float(means.mean()), float(t95(means.size - 1) * means.std(ddof=1) / math.sqrt(means.size))


EXP = parse_delay("exp(rate=1)")
LAWS = {"exp": EXP, "lognormal": parse_delay("lognormal(mu=0, sigma=1.2)"),
        "ties": Empirical.from_values([1.0, 1.0, 2.0, 3.5], name="ties")}
GRAPHS = {"ring": ring(7), "star": star(9), "path": path(5), "random": random_graph(30, 12, 3), "single": csr(1, [])}


# -- the Monte Carlo of d-psgd -------------------------------------------------------------------------

@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small draw blocks, so a short run crosses many of them (the times carried over)."""
    monkeypatch.setattr(eg.limits, "CHUNK", 200)


@pytest.mark.parametrize("law", sorted(LAWS))
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_kernel_matches_numpy(law: str, name: str, small_blocks: None) -> None:
    g, delay = GRAPHS[name], LAWS[law]
    a = list(eg._maxplus_kernel(delay, g, 3, 100, np.random.default_rng(7), True))
    b = list(eg._maxplus_numpy(delay, g, 3, 100, np.random.default_rng(7), True))
    assert len(a) == len(b) > 1
    for (ma, ta), (mb, tb) in zip(a, b, strict=True):
        np.testing.assert_array_equal(ta, tb)  # the same floats added and compared: bit for bit
        np.testing.assert_allclose(ma, mb, rtol=1e-13)  # sums in another order
        np.testing.assert_allclose(ma, ta.mean(axis=2), rtol=1e-13)


def test_kernel_matches_numpy_on_a_cluster(small_blocks: None) -> None:
    cluster = make_cluster(m=9, delay="exp(rate=1)", slow_fraction=0.3, persistence=0.8, slowdown=4)
    a = list(eg._maxplus_kernel(cluster, star(9), 2, 30, np.random.default_rng(3), True))
    b = list(eg._maxplus_numpy(cluster, star(9), 2, 30, np.random.default_rng(3), True))
    for (_, ta), (_, tb) in zip(a, b, strict=True):
        np.testing.assert_array_equal(ta, tb)


@pytest.mark.parametrize("m", [1, 2, 6])
def test_complete_graph_is_sync_pathwise(m: int) -> None:
    """Every node waits for every other: max_i t_i(k) is the running sum of the iterations' maxima,
    and t_i(k) that sum up to k − 1 plus node i's own draw — exactly, draw for draw."""
    R, n = 3, 50
    X = parse_delay("weibull(shape=0.7, scale=1)").sample(np.random.default_rng(11), (R, n, m))
    t = eg.dpsgd_finish_times(parse_delay("weibull(shape=0.7, scale=1)"), complete(m), R, n,
                              np.random.default_rng(11))
    assert t.shape == (R, n + 1, m) and not t[:, 0].any()
    sync = np.cumsum(X.max(axis=2), axis=1)
    np.testing.assert_array_equal(t[:, 1:].max(axis=2), sync)
    np.testing.assert_array_equal(t[:, 2:], sync[:, :-1, None] + X[:, 1:])


def test_finish_times_follow_the_definition_on_a_path() -> None:
    """t_i(k+1) = max(t_{i−1}(k), t_i(k), t_{i+1}(k)) + X_i(k), written out for a path."""
    R, n, m = 2, 30, 5
    X = EXP.sample(np.random.default_rng(4), (R, n, m))
    t = eg.dpsgd_finish_times(EXP, path(m), R, n, np.random.default_rng(4))
    for k in range(n):
        for i in range(m):
            wait = t[:, k, max(i - 1, 0):i + 2].max(axis=1)
            np.testing.assert_array_equal(t[:, k + 1, i], wait + X[:, k, i])


def test_finish_times_are_capped() -> None:
    with pytest.raises(eg.ParameterError) as err:
        eg.dpsgd_finish_times(EXP, ring(10_000), 1, 2000, np.random.default_rng(0))
    assert err.value.parameter == "updates"


def test_csr_arrays_are_checked() -> None:
    with pytest.raises(ValueError):
        gc.csr_arrays(gc.CSR(np.array([0, 1, 2]), np.array([0, 1])))  # self-loops
    with pytest.raises(ValueError):
        gc.csr_arrays(gc.CSR(np.array([0, 2, 1]), np.array([1, 0])))  # indptr decreases


# -- the exact chain ---------------------------------------------------------------------------------

def reachable_states(g: gc.CSR) -> set[tuple[int, ...]]:
    """A plain BFS over the chain's transitions from 0: a busy node (≤ every neighbour) adds 1,
    then everything is shifted down so that the minimum is 0."""
    nb = neighbours(g)
    start = (0,) * len(nb)
    seen, queue = {start}, deque([start])
    while queue:
        s = queue.popleft()
        for i, ns in enumerate(nb):
            if all(s[i] <= s[j] for j in ns):
                t = list(s)
                t[i] += 1
                low = min(t)
                u = tuple(v - low for v in t)
                if u not in seen:
                    seen.add(u)
                    queue.append(u)
    return seen


@pytest.mark.parametrize("name, g", [("path4", path(4)), ("star5", star(5)), ("ring6", ring(6)),
                                     ("torus3x3", torus(3, 3)), ("hypercube8", hypercube(3))])
def test_chain_states_are_the_reachable_ones(name: str, g: gc.CSR) -> None:
    F = gc.gap_states(g)
    assert F is not None
    got = {tuple(int(v) for v in row) for row in F}
    assert len(got) == F.shape[0]
    assert got == reachable_states(g)


@pytest.mark.parametrize("m", [2, 3, 4, 5, 6])
def test_chain_on_the_complete_graph_is_the_maximum(m: int) -> None:
    """Forced through the chain, K_m gives E[max of m Exp(1)] = H_m exactly (2 nodes: 3/2; a ring
    of 3 is K_3: 11/6)."""
    sol = gc.solve_gap_chain(complete(m))
    assert sol is not None and sol.states == 2**m - 1
    assert sol.cycle_time == pytest.approx(sum(1.0 / i for i in range(1, m + 1)), rel=1e-12)
    if m == 3:
        assert gc.solve_gap_chain(ring(3)).cycle_time == pytest.approx(11 / 6, rel=1e-12)


@pytest.mark.parametrize("g", [ring(9), torus(3, 3), star(7)])
def test_chain_sweep_compiled_matches_numpy(g: gc.CSR, monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled Gauss–Seidel sweep and the numpy one level by level: the same iteration."""
    gc._SOLVED.clear()
    a = gc.solve_gap_chain(g, np.linspace(1.0, 2.0, g.indptr.size - 1))
    gc._SOLVED.clear()
    monkeypatch.setattr(gc.jit, "ENABLED", not gc.jit.ENABLED)
    b = gc.solve_gap_chain(g, np.linspace(1.0, 2.0, g.indptr.size - 1))
    gc._SOLVED.clear()
    assert a is not None and b is not None and a.states == b.states
    assert a.cycle_time == pytest.approx(b.cycle_time, rel=1e-12)


def test_chain_scales_with_the_rate() -> None:
    est = gc.dpsgd_cycle_time(parse_delay("exp(rate=4)"), csr(2, [(0, 1)]))
    assert est.kind == "exact" and est.value == pytest.approx(1.5 / 4, rel=1e-12)


def test_the_chain_is_solved_only_as_far_as_the_work_allows() -> None:
    """A ring of 10 nodes has 8 953 states: exact with the library's work and a chart's (3e7 pays for
    12 000), the upper bound with a third of a chart's; a cluster of exponential nodes alike."""
    exp, g = parse_delay("exp(rate=2)"), ring(10)
    assert gc.dpsgd_cycle_time(exp, g).kind == "exact"
    assert gc.dpsgd_cycle_time(exp, g, work=3e7).kind == "exact"
    small = gc.dpsgd_cycle_time(exp, g, work=1e7)
    assert small.kind == "upper_bound" and small.value > gc.dpsgd_cycle_time(exp, g).value
    cluster = make_cluster(m=10, delay=exp, slow=2, slowdown=3.0)  # two slow exponential nodes
    assert gc.dpsgd_cluster_cycle_time(cluster, g).kind == "exact"
    assert gc.dpsgd_cluster_cycle_time(cluster, g, work=1e7).kind == "upper_bound"


def simulate_events(g: gc.CSR, rates: np.ndarray, iters: int, seed: int) -> np.ndarray:
    """d-psgd as events, from its definition: node i starts iteration k + 1 (drawing Exp(rates[i]))
    at the moment the last of itself and its neighbours finishes iteration k.  Returns the mean
    finish time of each iteration, (1/m) Σ_i t_i(k), k = 1 … iters."""
    nb = neighbours(g)
    m = len(nb)
    rng = np.random.default_rng(seed)
    done = [0] * m
    fin = np.zeros((iters + 1, m))
    heap = [(rng.exponential(1 / rates[i]), i) for i in range(m)]
    heapq.heapify(heap)
    running = [True] * m
    while heap:
        t, i = heapq.heappop(heap)
        done[i] += 1
        fin[done[i], i] = t
        running[i] = False
        for j in [i, *nb[i]]:
            if not running[j] and done[j] < iters and all(done[k] >= done[j] for k in nb[j]):
                running[j] = True
                heapq.heappush(heap, (t + rng.exponential(1 / rates[j]), j))
    assert done == [iters] * m
    return fin[1:].mean(axis=1)


CHAIN_GRAPHS = [("path5", path(5)), ("star6", star(6)), ("ring5", ring(5)), ("ring8", ring(8)),
                ("hypercube8", hypercube(3)), ("torus3x3", torus(3, 3))]


@pytest.mark.parametrize("name, g", CHAIN_GRAPHS)
def test_chain_against_an_event_simulation(name: str, g: gc.CSR) -> None:
    m = g.indptr.size - 1
    exact = gc.dpsgd_cycle_time(EXP, g)
    assert exact.kind == "exact"
    inc = np.diff(simulate_events(g, np.ones(m), 2400, seed=sum(map(ord, name))))[200:]
    mean, hw = batch_ci(inc)
    assert abs(mean - exact.value) <= TOL * hw, (name, mean, hw, exact.value)
    lower, upper = gc.dpsgd_bounds(EXP, g)
    assert lower.value <= exact.value <= upper.value


def test_chain_with_one_slow_node_against_the_simulation() -> None:
    """Independent exponential nodes, one 3× slower (static stragglers): the chain with rates λ_i."""
    cluster = make_cluster(m=6, delay="exp(rate=1)", slow=1, slowdown=3)
    g = path(6)
    est = gc.dpsgd_cluster_cycle_time(cluster, g)
    assert est.kind == "exact"
    inc = np.diff(simulate_events(g, 1.0 / cluster.worker_means(), 2400, seed=5))[200:]
    mean, hw = batch_ci(inc)
    assert abs(mean - est.value) <= TOL * hw, (mean, hw, est.value)
    assert est.value >= 3.0  # the slow node's own mean


def test_chain_refuses_large_graphs() -> None:
    assert gc.gap_states(ring(20)) is None  # 2^20 − 1 states at least: refused at once
    assert gc.solve_gap_chain(ring(12), max_states=10_000) is None
    est = gc.dpsgd_cycle_time(EXP, ring(40))
    assert est.kind == "upper_bound" and "more than" in est.method


# -- bounds ------------------------------------------------------------------------------------------

BOUND_LAWS = ["uniform(low=0.5, high=1.5)", "shifted-exp(rate=2, shift=0.5)", "weibull(shape=1.5, scale=1)",
              "lognormal(mu=0, sigma=0.5)"]
BOUND_GRAPHS = {"tree+": random_graph(40, 8, 1), "sparse": random_graph(60, 2, 2),
                "dense": random_graph(30, 120, 3), "star+ring": csr(24, [(0, i) for i in range(1, 12)]
                                                                    + [(i, i + 1) for i in range(11, 23)])}


@pytest.mark.parametrize("spec", BOUND_LAWS)
@pytest.mark.parametrize("name", sorted(BOUND_GRAPHS))
def test_monte_carlo_within_the_bounds(spec: str, name: str) -> None:
    g, delay = BOUND_GRAPHS[name], parse_delay(spec)
    lower, upper = gc.dpsgd_bounds(delay, g)
    assert (lower.kind, upper.kind) == ("lower_bound", "upper_bound")
    mean, hw = bm_ci(eg.dpsgd_batch_means(delay, g, 4, 100, 1600, 8, np.random.default_rng(9), False)[0])
    assert lower.value - TOL * hw <= mean <= upper.value + TOL * hw, (lower.value, mean, hw, upper.value)
    assert gc.dpsgd_cycle_time(delay, g).value == upper.value


def test_upper_bound_names_the_tighter() -> None:
    d = parse_delay("uniform(low=0.5, high=1.5)")
    assert "ln(Δ+1)" in gc.dpsgd_bounds(d, ring(1000))[1].method.split("(tighter")[0]
    assert "complete graph" in gc.dpsgd_bounds(d, ring(4))[1].method.split("(tighter")[0]
    heavy = gc.dpsgd_bounds(parse_delay("pareto(xm=1, alpha=2.5)"), ring(50))[1]
    assert heavy.kind == "upper_bound" and "complete graph" in heavy.method  # no MGF: sync only


def test_moment_bound_in_closed_form() -> None:
    """Exp(1): inf_θ [ln 3 − ln(1 − θ)]/θ, minimised by hand on a fine grid."""
    theta = np.linspace(1e-4, 1 - 1e-6, 2_000_001)
    want = float(np.min((math.log(3.0) - np.log1p(-theta)) / theta))
    value, _ = gc.mgf_bound(EXP.log_mgf, 1.0, 1.0, 2)
    assert value == pytest.approx(want, rel=1e-9)


def test_cluster_bounds_and_the_complete_graph() -> None:
    cluster = make_cluster(m=8, delay="uniform(low=0.5, high=1.5)", slow=2, slowdown=2)
    lower, upper = gc.dpsgd_bounds(cluster, ring(8))
    assert lower.value == pytest.approx(2.0) and lower.kind == "lower_bound"
    sync = gc.dpsgd_cluster_cycle_time(cluster, complete(8))
    assert sync.kind in ("exact", "numerical") and upper.value <= sync.value + 1e-9
    mean, hw = bm_ci(eg.dpsgd_batch_means(cluster, ring(8), 4, 100, 1600, 8, np.random.default_rng(2), False)[0])
    assert lower.value - TOL * hw <= mean <= upper.value + TOL * hw
    markov = make_cluster(m=8, delay="exp(rate=1)", slow_fraction=0.2, persistence=0.9, slowdown=3)
    low, up = gc.dpsgd_bounds(markov, ring(8))
    assert "sync" in up.method and low.value == pytest.approx(1.4)


# -- the moment-generating function ------------------------------------------------------------------

def test_log_mgf_closed_forms_and_quadrature() -> None:
    # Weibull k = 1 is Exp(1/s): its closed form, and the generic quadrature, against −ln(1 − θs)
    w = parse_delay("weibull(shape=1, scale=2)")
    assert w._log_mgf_generic(0.3) == pytest.approx(-math.log(1 - 0.6), rel=1e-10)
    # Weibull k = 2 (Rayleigh, σ = s/√2): M(θ) = 1 + σθ e^{σ²θ²/2} √(π/2) (1 + erf(σθ/√2))
    s, theta = 1.3, 2.0
    sig = s / math.sqrt(2)
    ray = 1 + sig * theta * math.exp((sig * theta) ** 2 / 2) * math.sqrt(math.pi / 2) \
        * (1 + special.erf(sig * theta / math.sqrt(2)))
    assert parse_delay(f"weibull(shape=2, scale={s})").log_mgf(theta) == pytest.approx(math.log(ray), rel=1e-10)
    # the shift adds θΔ; the uniform's and the truncated normal's closed forms against the generic path
    for spec, th in [("uniform(low=0.5, high=2, shift=1)", 3.0), ("normal(mean=1, std=0.5)", 2.0),
                     ("normal(mean=-1, std=2)", 0.3), ("shifted-exp(rate=2, shift=0.5)", 1.5)]:
        d = parse_delay(spec)
        assert d.log_mgf(th) == pytest.approx(th * d.shift + d._log_mgf_generic(th), rel=1e-9), spec
    # a trace: the finite sum
    tr = Empirical.from_values([1.0, 1.0, 2.0, 5.0])
    assert tr.log_mgf(0.7) == pytest.approx(math.log((2 * math.e**0.7 + math.e**1.4 + math.e**3.5) / 4), rel=1e-12)


def test_log_mgf_radius() -> None:
    assert EXP.log_mgf(1.0) == math.inf and math.isfinite(EXP.log_mgf(0.999))
    assert EXP.log_mgf(0.0) == 0.0
    for spec in ["pareto(xm=1, alpha=3)", "lognormal(mu=0, sigma=0.5)", "weibull(shape=0.5, scale=1)"]:
        assert parse_delay(spec).log_mgf(1e-3) == math.inf, spec
    with pytest.raises(eg.ParameterError):
        EXP.log_mgf(-1.0)


# -- ad-psgd -----------------------------------------------------------------------------------------

def test_adpsgd_times_are_async_and_the_staleness_counts_the_peers() -> None:
    g = random_graph(12, 6, 4)
    ev = eg.adpsgd_events(EXP, g, 2, 3000, np.random.default_rng(21))
    ref = renewal.merged_trace(EXP, 12, 1, 2, 3000, np.random.default_rng(21), True)
    np.testing.assert_array_equal(ev.times, ref.times)
    np.testing.assert_array_equal(ev.nodes, ref.workers[:, :, 0])
    nb = neighbours(g)
    for r in range(2):
        since = [0] * 12
        for e in range(3000):
            i, j = int(ev.nodes[r, e]), int(ev.peers[r, e])
            assert j in nb[i]
            assert ev.staleness[r, e] == since[i]
            since[i] = 0
            since[j] += 1
    # every averaging is counted by the peer's next gradient, if it comes within the run
    for r in range(2):
        later = sum(1 for e in range(3000) if np.any(ev.nodes[r, e + 1:] == ev.peers[r, e]))
        assert ev.staleness[r].sum() == later


def test_gossip_staleness_kernel_matches_numpy() -> None:
    rng = np.random.default_rng(8)
    nodes = rng.integers(0, 7, 500)
    peers = (nodes + rng.integers(1, 7, 500)) % 7
    peers[::37] = -1
    s1, s2 = np.zeros(7, dtype=np.int64), np.zeros(7, dtype=np.int64)
    parts1 = [eg.gossip_staleness(nodes[a:a + 90], peers[a:a + 90], s1) for a in range(0, 500, 90)]
    parts2 = [eg._gossip_staleness_numpy(nodes[a:a + 90], peers[a:a + 90], s2) for a in range(0, 500, 90)]
    np.testing.assert_array_equal(np.concatenate(parts1), np.concatenate(parts2))
    np.testing.assert_array_equal(s1, s2)


def test_adpsgd_two_nodes() -> None:
    """Two Exp(1) nodes: each gradient's staleness is the other's finishes while it computed,
    geometric with mean 1 (each race is a fair coin)."""
    ev = eg.adpsgd_events(EXP, csr(2, [(0, 1)]), 1, 40_000, np.random.default_rng(6))
    assert (ev.peers == 1 - ev.nodes).all()
    mean, hw = batch_ci(ev.staleness[0].astype(float))
    assert abs(mean - 1.0) <= TOL * hw
    assert np.mean(ev.staleness[0] == 0) == pytest.approx(0.5, abs=0.02)


def test_adpsgd_rate_and_node_staleness_on_a_cluster() -> None:
    """Static stragglers on a star: one gradient every 1/Σ_i 1/E[X_i]; node i's staleness
    μ_i Σ_{k∈N(i)} 1/(d_k μ_k) (the hub collects an averaging from every leaf's gradient)."""
    cluster = make_cluster(m=6, delay="exp(rate=1)", slow=2, slowdown=3)
    g = star(6)
    bms, _ = eg.adpsgd_batch_means(cluster, g, 4, 500, 80_000, 8, np.random.default_rng(12), False)
    mean, hw = bm_ci(bms)
    mu = cluster.worker_means()
    assert abs(mean - 1.0 / np.sum(1.0 / mu)) <= TOL * hw
    N = sum(b.n for b in bms)
    assert sum(b.stale for b in bms) / N == pytest.approx(1.0, abs=0.03)
    want = gc.adpsgd_node_staleness(mu, g)
    assert want[0] == pytest.approx(3 * (1 / 3 + 4))  # the hub (μ = 3) takes every leaf's averaging: leaf 1 slow
    ev = eg.adpsgd_events(cluster, g, 1, 30_000, np.random.default_rng(13))
    for i in range(6):
        got = ev.staleness[0][ev.nodes[0] == i].astype(float)
        m_i, h_i = batch_ci(got)
        assert abs(m_i - want[i]) <= TOL * h_i + 1e-9, (i, m_i, h_i, want[i])
    w = np.sum(want / mu) / np.sum(1.0 / mu)  # weighted by the nodes' rates: exactly 1
    assert w == pytest.approx(1.0, rel=1e-12)

"""The error of decentralised SGD on a graph (DESIGN §12.4): the exact d-psgd curves against sync's
exact curve and an independent covariance recursion, the node simulations against Monte Carlo,
independent SGD runs and reference loops written here, ad-psgd checked by hand, on both of its paths
(the compiled kernel and the numpy reference)."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from distsgd import ParameterError, jit, make_scheme
from distsgd.error import Problem, exact_error
from distsgd.error.graph import MixingSpectrum, dpsgd_exact, koloskova_guide
from distsgd.error.graph_simulate import simulate_adpsgd, simulate_dpsgd

P = Problem(eta=0.1, L=2.0, mu=0.5, sigma2=1.0, b=1, f0=1.0, dim=3)


def mh(m, edges):
    """Metropolis–Hastings weights w_ij = 1/(1 + max(d_i, d_j)), w_ii = 1 − Σ_j w_ij (written here)."""
    deg = np.zeros(m, dtype=int)
    for i, j in edges:
        deg[i] += 1
        deg[j] += 1
    W = np.zeros((m, m))
    for i, j in edges:
        W[i, j] = W[j, i] = 1.0 / (1 + max(deg[i], deg[j]))
    W[np.diag_indices(m)] = 1.0 - W.sum(axis=1)
    return W


def ring(m):
    return mh(m, [(i, (i + 1) % m) for i in range(m)])


def neighbours(W):
    return [np.flatnonzero(W[i]) for i in range(W.shape[0])]  # including i itself (w_ii > 0)


def maxplus_times(W, R, n, rng):
    """t_i(0) = 0, t_i(k+1) = max over i and its neighbours of t_j(k) + X_i(k), X ~ Exp(1)."""
    m = W.shape[0]
    nb = neighbours(W)
    t = np.zeros((R, n + 1, m))
    for k in range(n):
        x = rng.exponential(1.0, (R, m))
        for i in range(m):
            t[:, k + 1, i] = t[:, k, nb[i]].max(axis=1) + x[:, i]
    return t


def covariance_recursion(problem, W, n):
    """E f(x̄), E mean f(x_i), E consensus after k = 0..n by the m × m mean and covariance of every
    coordinate: μ ← Aμ, C ← A C Aᵀ + η² σ²/(b d) I with A = W − η h_c I (no eigenvectors)."""
    m = W.shape[0]
    h, eta = problem.h, problem.eta
    v = eta**2 * problem.sigma2 / (problem.b * problem.dim)
    out = np.zeros((3, n + 1))
    for c, hc in enumerate(h):
        A = W - eta * hc * np.eye(m)
        mu, C = np.full(m, problem.w0[c]), np.zeros((m, m))
        for k in range(n + 1):
            xbar2 = mu.mean() ** 2 + C.sum() / m**2
            node2 = (mu**2 + np.diag(C)).mean()
            out[0, k] += 0.5 * hc * xbar2
            out[1, k] += 0.5 * hc * node2
            out[2, k] += node2 - xbar2
            mu, C = A @ mu, A @ C @ A.T + v * np.eye(m)
    return out


# -- the exact curve ---------------------------------------------------------------------------------

@pytest.mark.parametrize("m", [1, 3, 8])
def test_the_complete_graph_is_sync_exactly(m):
    """W = 11ᵀ/m averages every model each step: x̄ is sync's w with m workers, f(x̄) its exact curve."""
    k = np.arange(300)
    W = np.full((m, m), 1.0 / m)
    ex = dpsgd_exact(P, W, k)
    sync = exact_error(make_scheme("sync", m=m), P, k)
    np.testing.assert_allclose(ex.average, sync, rtol=1e-12, atol=0)
    np.testing.assert_allclose(dpsgd_exact(P, sp.csr_array(W), k).average, sync, rtol=1e-12, atol=0)
    # after one step the models differ by their own noise only: (m − 1)/m of one gradient's η²σ²/b
    assert ex.consensus[0] == 0 and ex.consensus[1] == pytest.approx((m - 1) / m * P.eta**2 * P.sigma2 / P.b, rel=1e-12)


@pytest.mark.parametrize("name,W", [
    ("ring 6", ring(6)),
    ("star 5", mh(5, [(0, i) for i in range(1, 5)])),
    ("path 4", mh(4, [(0, 1), (1, 2), (2, 3)])),
    ("two triangles (disconnected)", mh(6, [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3)])),
    ("random", mh(7, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (0, 3), (2, 6), (1, 5)])),
])
def test_the_exact_curves_match_the_covariance_recursion(name, W):
    n = 60
    want = covariance_recursion(P, W, n)
    got = dpsgd_exact(P, W, np.arange(n + 1))
    for g, w in zip((got.average, got.nodes, got.consensus), want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-15)


def test_the_graph_changes_only_the_consensus_noise():
    k = np.arange(200)
    rg, full = dpsgd_exact(P, ring(10), k), dpsgd_exact(P, np.full((10, 10), 0.1), k)
    np.testing.assert_allclose(rg.average, full.average, rtol=1e-12)
    assert (rg.consensus[2:] > full.consensus[2:]).all() and (rg.nodes[2:] > full.nodes[2:]).all()


def test_spectral_gap_of_the_ring_and_the_spectrum_from_a_closed_form():
    for m in (3, 6, 11):
        want = 2 / 3 * (1 - math.cos(2 * math.pi / m))
        assert MixingSpectrum.from_matrix(ring(m)).spectral_gap == pytest.approx(want, rel=1e-9)
        closed = MixingSpectrum.from_eigenvalues(1 / 3 + 2 / 3 * np.cos(2 * np.pi * np.arange(m) / m))
        k = np.arange(50)
        np.testing.assert_allclose(dpsgd_exact(P, closed, k).nodes, dpsgd_exact(P, ring(m), k).nodes, rtol=1e-12)
    assert MixingSpectrum.from_matrix(np.eye(4)).spectral_gap == 0.0


# -- the simulation of every node ----------------------------------------------------------------

def test_the_simulation_matches_the_exact_curve_in_the_mean():
    """Ring of 6, nodes in lockstep (t_i(k) = k): the replica means agree with the exact expectations
    within 4 standard errors (fixed seed)."""
    W, n, R = ring(6), 30, 4000
    times = np.broadcast_to(np.arange(n + 1.0)[None, :, None], (R, n + 1, 6))
    grid = np.array([0.0, 1, 2, 5, 10, 30])
    sim = simulate_dpsgd(P, W, times, grid, seed=11, keep=True)
    ex = dpsgd_exact(P, W, grid.astype(int))
    for band, want in ((sim.average, ex.average), (sim.nodes, ex.nodes), (sim.consensus, ex.consensus)):
        se = band.values.std(axis=0, ddof=1) / math.sqrt(R)
        assert np.all(np.abs(band.mean - want) <= 4 * se + 1e-15), (band.mean, want, se)
        assert np.all((band.ci95_low <= band.mean) & (band.mean <= band.ci95_high))


def test_with_no_edges_every_node_is_an_independent_sgd_run():
    """W = I: node i is SGD on its own noise; with t_i(k) = k·(i + 1) it holds step ⌊t/(i + 1)⌋ at t."""
    m, n, R, d = 4, 40, 3, P.dim
    times = np.broadcast_to((np.arange(n + 1.0)[:, None] * np.arange(1, m + 1))[None], (R, n + 1, m))
    grid = np.linspace(0, n, 23)
    sim = simulate_dpsgd(P, np.eye(m), times, grid, seed=5, keep=True)
    rng = np.random.default_rng(5)
    x = np.broadcast_to(P.w0, (m, R, d)).copy()
    path = [x]
    for _ in range(n):
        x = x - P.eta * (P.h * x + P.noise_sd * rng.standard_normal((m, R, d)))
        path.append(x)
    path = np.array(path)  # (n + 1, m, R, d)
    steps = np.minimum(np.floor(grid[:, None] / np.arange(1, m + 1)).astype(int), n)  # (P, m)
    models = path[steps, np.arange(m)[None, :]]  # (P, m, R, d)
    xbar = models.mean(axis=1)
    f = lambda w: 0.5 * (w * w) @ P.h  # noqa: E731
    np.testing.assert_allclose(sim.average.values, f(xbar).T, rtol=1e-12)
    np.testing.assert_allclose(sim.nodes.values, f(models).mean(axis=1).T, rtol=1e-12)
    np.testing.assert_allclose(sim.consensus.values, ((models - xbar[:, None]) ** 2).sum(-1).mean(1).T, rtol=1e-10)


def test_the_model_at_time_t_is_each_node_s_latest_model_on_max_plus_times():
    """Random max-plus finish times on a path: the three numbers on the grid equal those of a reference
    that keeps every x_i(k) and picks, for each node, the largest k with t_i(k) ≤ t."""
    W = mh(5, [(0, 1), (1, 2), (2, 3), (3, 4)])
    m, n, R, d = 5, 25, 4, P.dim
    times = maxplus_times(W, R, n, np.random.default_rng(3))
    grid = np.linspace(0, times[:, n].min(), 37)
    sim = simulate_dpsgd(P, W, times, grid, seed=8, keep=True)
    rng = np.random.default_rng(8)
    x = np.broadcast_to(P.w0, (m, R, d)).copy()
    path = [x]
    for _ in range(n):
        x = np.einsum("ij,jrd->ird", W, x) - P.eta * (P.h * x + P.noise_sd * rng.standard_normal((m, R, d)))
        path.append(x)
    for r in range(R):
        for p, t in enumerate(grid):
            models = np.array([path[int((times[r, 1:, i] <= t).sum())][i, r] for i in range(m)])
            xbar = models.mean(axis=0)
            assert sim.average.values[r, p] == pytest.approx(0.5 * xbar**2 @ P.h, rel=1e-12)
            assert sim.nodes.values[r, p] == pytest.approx((0.5 * models**2 @ P.h).mean(), rel=1e-12)
            assert sim.consensus.values[r, p] == pytest.approx(((models - xbar) ** 2).sum(1).mean(), rel=1e-9)


def test_consensus_vanishes_without_noise_on_a_connected_graph_only():
    quiet = Problem(eta=0.05, L=2.0, mu=0.5, sigma2=0.0, b=1, f0=1.0, dim=2)
    n, R = 300, 2
    x0 = np.random.default_rng(1).normal(size=(8, 2))
    times = np.broadcast_to(np.arange(n + 1.0)[None, :, None], (R, n + 1, 8))
    grid = np.array([0.0, 10, 100, 300])
    connected = simulate_dpsgd(quiet, ring(8), times, grid, x0=x0).consensus.mean
    assert connected[0] > 0.1 and connected[-1] < 1e-30 * connected[0]
    assert np.all(np.diff(connected) < 0)
    two_rings = mh(8, [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4)])
    split = simulate_dpsgd(quiet, two_rings, times, grid, x0=x0)
    assert split.consensus.mean[-1] > 1e-3 * split.average.mean[-1]  # the two halves never agree


# -- ad-psgd ---------------------------------------------------------------------------------------------

@pytest.fixture(params=["kernel", "numpy"])
def adpsgd_path(request, monkeypatch):
    """Run ad-psgd through the compiled kernel (its Python function under DISTSGD_JIT=0) or the numpy
    reference."""
    monkeypatch.setattr(jit, "ENABLED", request.param == "kernel")
    return request.param


def test_adpsgd_by_hand_on_two_nodes(adpsgd_path):
    """d = 1, h = 1, η = 0.1, w₀ = 1, no noise.  Replica 0: node 0 (t=1), node 1 (t=1.5), node 0 (t=2):
    (1, 1) → (0.9, 1) → avg 0.95, x₁ = 0.95 − 0.1·1 (stale read 1) = 0.85 → avg 0.9, x₀ = 0.9 − 0.1·0.9
    = 0.81.  Replica 1: node 1 three times: (1, 0.9) → (0.95, 0.95 − 0.1·0.9) → (0.905, 0.905 − 0.1·0.86)."""
    p = Problem(eta=0.1, L=1.0, mu=1.0, sigma2=0.0, b=1, f0=0.5, dim=1)
    times = np.array([[1.0, 1.5, 2.0], [1.0, 1.5, 2.0]])
    nodes = np.array([[0, 1, 0], [1, 1, 1]])
    sim = simulate_adpsgd(p, 2, times, nodes, 1 - nodes, [0.0, 1.0, 1.5, 2.0], keep=True)
    states = [[(1, 1), (0.9, 1), (0.95, 0.85), (0.81, 0.9)], [(1, 1), (1, 0.9), (0.95, 0.86), (0.905, 0.819)]]
    for r, rows in enumerate(states):
        for q, (a, b) in enumerate(rows):
            xbar = (a + b) / 2
            assert sim.average.values[r, q] == pytest.approx(xbar**2 / 2, rel=1e-12)
            assert sim.nodes.values[r, q] == pytest.approx((a * a + b * b) / 4, rel=1e-12)
            assert sim.consensus.values[r, q] == pytest.approx(((a - b) / 2) ** 2, rel=1e-9)


def test_adpsgd_matches_an_event_by_event_reference_with_noise(adpsgd_path):
    m, R, E, d = 4, 3, 60, P.dim
    rng = np.random.default_rng(2)
    times = np.cumsum(rng.exponential(0.2, (R, E)), axis=1)
    nodes = rng.integers(0, m, (R, E))
    peers = (nodes + rng.integers(1, m, (R, E))) % m
    grid = np.linspace(0, times[:, -1].min(), 17)
    sim = simulate_adpsgd(P, m, times, nodes, peers, grid, seed=4, keep=True)
    used = sim.steps
    noise = np.random.default_rng(4).standard_normal((used, R, d))
    for r in range(R):
        x = np.tile(P.w0, (m, 1))
        read = x.copy()
        snaps, e = [], 0
        for t in grid:
            while e < E and times[r, e] <= t:
                i, j = nodes[r, e], peers[r, e]
                avg = (x[i] + x[j]) / 2
                x[j] = avg
                x[i] = avg - P.eta * (P.h * read[i] + P.noise_sd * noise[e, r])
                read[i] = x[i]
                e += 1
            snaps.append(x.copy())
        for q, s in enumerate(snaps):
            xbar = s.mean(axis=0)
            assert sim.average.values[r, q] == pytest.approx(0.5 * xbar**2 @ P.h, rel=1e-12)
            assert sim.nodes.values[r, q] == pytest.approx((0.5 * s**2 @ P.h).mean(), rel=1e-12)
            assert sim.consensus.values[r, q] == pytest.approx(((s - xbar) ** 2).sum(1).mean(), rel=1e-9)


def test_the_adpsgd_kernel_gives_the_numpy_reference_s_numbers(monkeypatch):
    m, R, E = 5, 4, 300
    rng = np.random.default_rng(6)
    times = np.cumsum(rng.exponential(0.1, (R, E)), axis=1)
    nodes = rng.integers(0, m, (R, E))
    peers = (nodes + rng.integers(1, m, (R, E))) % m
    grid = np.linspace(0, times[:, -1].min(), 13)
    runs = []
    for enabled in (True, False):
        monkeypatch.setattr(jit, "ENABLED", enabled)
        runs.append(simulate_adpsgd(P, m, times, nodes, peers, grid, seed=3, keep=True))
    for name in ("average", "nodes", "consensus"):
        np.testing.assert_allclose(getattr(runs[0], name).values, getattr(runs[1], name).values, rtol=1e-12)


# -- Koloskova et al.'s rate and the refusals ---------------------------------------------------------

def test_koloskova_guide_is_labelled_a_guide_and_needs_a_connected_graph():
    T = np.array([1.0, 10, 100, 1000])
    m, delta = 6, 2 / 3 * (1 - math.cos(2 * math.pi / 6))
    g = koloskova_guide(P, m, delta, T)
    assert g.kind == "order_of_magnitude" and "not a bound" in g.METHOD
    p = delta * (2 - delta)
    s2, mu, L = P.sigma2 / P.b, P.mu, P.L
    want = s2 / (mu * m * T) + L * s2 / (mu**2 * p * T**2) + P.f0 * np.exp(-mu * p * T / L)
    np.testing.assert_allclose(g.values, want)
    assert g.p == pytest.approx(p)
    assert (koloskova_guide(P, m, 1.0, T).values < g.values).all()  # the complete graph mixes best
    off = koloskova_guide(P, m, 0.0, T)
    assert off.values is None and "connected" in off.note


def test_refusals_name_the_parameter():
    times = np.zeros((1, 3, 3))
    times[:, 1], times[:, 2] = 1.0, 2.0
    cases = [
        (lambda: dpsgd_exact(P, np.array([[0.5, 0.5, 0], [0.2, 0.4, 0.4], [0.3, 0.1, 0.6]]), [1]), "W"),
        (lambda: dpsgd_exact(P, ring(3), [0.5]), "iterations"),
        (lambda: dpsgd_exact(P, ring(3), ["1"]), "iterations"),
        (lambda: dpsgd_exact(P, ring(3), [-1]), "iterations"),
        (lambda: dpsgd_exact(P, np.ones((2, 3)), [1]), "W"),
        (lambda: simulate_dpsgd(P, ring(3), times, [0.0, 3.0]), "time"),
        (lambda: simulate_dpsgd(P, ring(4), times, [0.0, 1.0]), "finish_times"),
        (lambda: simulate_dpsgd(P, ring(3), times[:, ::-1], [0.0]), "finish_times"),
        (lambda: simulate_dpsgd(P, ring(3), times, [0.0], max_models=8), "replicas"),
        (lambda: simulate_adpsgd(P, 2, [[1.0]], [[0]], [[0]], [0.5]), "nodes"),
        (lambda: simulate_adpsgd(P, 2, [[1.0]], [[0]], [[1]], [1.5]), "time"),
        (lambda: simulate_adpsgd(P, 2, [[1.0, 0.5]], [[0, 1]], [[1, 0]], [0.5]), "times"),
    ]
    for call, name in cases:
        with pytest.raises(ParameterError) as e:
            call()
        assert e.value.parameter == name, (name, str(e.value))


# -- any problem of §9: the general path against the model problem's own, in law ------------------------


@pytest.mark.parametrize("name", ["d-psgd", "ad-psgd"])
def test_a_graph_scheme_on_a_problem_of_the_protocol_is_the_model_problem_s_process(name):
    """The model problem run as a problem of the protocol (one ``grad`` call per step, the losses of
    every node's model at the grid) against its own simulation (exact Gaussian steps, the moments
    of h): the average model's error, the mean node error and the consensus distance agree within
    their bands — what a step at the wrong model (the mixed one, or a fresh one for ad-psgd) breaks."""
    from distsgd import parse_delay
    from distsgd.error import simulate_error
    from distsgd.error.general import simulate_problem

    model = Problem(eta=0.4, L=2.0, mu=0.5, sigma2=0.5, dim=3, f0=1.0)
    scheme, delay, R = make_scheme(name, 6, topology="ring"), parse_delay("exp(rate=1)"), 600
    a = simulate_error(scheme, delay, model, 8.0, points=9, replicas=R, seed=1, keep_errors=True)
    b = simulate_problem(scheme, delay, model.gradient_problem(), model.eta, model.b, 8.0, points=9, replicas=R,
                         seed=2, keep_errors=True)
    assert a.errors is not None and b.errors is not None
    se = np.sqrt(a.errors.var(axis=0, ddof=1) / R + b.errors.var(axis=0, ddof=1) / R)
    assert (np.abs(a.mean - b.mean)[1:] / se[1:]).max() < 4.0
    for key in ("node_error", "consensus"):
        (ma, la, ha), (mb, lb, hb) = a.metrics[key], b.metrics[key]
        se = np.hypot((ha - la) / 3.92, (hb - lb) / 3.92)[1:]
        assert (np.abs(ma - mb)[1:] / se).max() < 4.0, key
    assert (b.staleness_mean is None) == (name == "d-psgd")


def test_leaving_out_the_mean_node_error_changes_nothing_else():
    """``graph_node_error=False`` (the dashboard's: it saves m training losses per grid point)
    gives the same run, without that one metric."""
    from distsgd import parse_delay
    from distsgd.error.general import simulate_problem
    from distsgd.problems import bundled

    pb = bundled("breast_cancer", 1e-2, 0.25, 0)
    runs = [simulate_problem(make_scheme("d-psgd", 4), parse_delay("exp(rate=1)"), pb, 0.5, 4, 6.0, points=4,
                             replicas=3, seed=9, graph_node_error=flag) for flag in (True, False)]
    assert np.array_equal(runs[0].mean, runs[1].mean)
    assert set(runs[0].metrics) - set(runs[1].metrics) == {"node_error"}
    assert np.array_equal(runs[0].metrics["consensus"][0], runs[1].metrics["consensus"][0])
    assert (runs[0].metrics["node_error"][0] >= runs[0].mean - 1e-12).all()  # f convex: mean of f ≥ f of the mean

"""The decentralised schemes as registry members (DESIGN §12): built, refused, on the command line,
in the JSON and the sweeps, their timelines and their error curves against wall-clock time."""

import json
import math

import numpy as np
import pytest

from distsgd import make_scheme, parse_delay
from distsgd.clusters import make_cluster
from distsgd.error import Problem, exact_error_vs_time, simulate_error
from distsgd.montecarlo import simulate_timeline
from distsgd.params import ParameterError
from distsgd.schemes import DPSGD, SCHEMES, scheme_for
from distsgd.topology import topology
from tests.test_cli import cli

EXP = parse_delay("exp(rate=1)")


def test_the_two_schemes_are_registered_and_take_a_graph_of_their_m():
    assert {"d-psgd", "ad-psgd"} <= set(SCHEMES)
    s = make_scheme("d-psgd", 8)  # the ring by default
    assert isinstance(s, DPSGD) and s.topology.spec == "ring" and s.topology.m == 8
    t = topology("torus", 12)
    assert make_scheme("ad-psgd", 12, topology=t).topology is t
    assert make_scheme("d-psgd", 8, topology="hypercube").topology.max_degree == 3
    assert scheme_for("d-psgd", 9, K=4, H=3, graph="torus").topology.degrees.tolist() == [4] * 9
    for bad in (lambda: make_scheme("d-psgd", 6, topology="hypercube"),      # m not a power of 2
                lambda: make_scheme("d-psgd", 8, topology=topology("ring", 9)),  # another m
                lambda: make_scheme("sync", 8, topology="ring"),             # a scheme without a graph
                lambda: DPSGD(4, "ring")):                                    # not a Topology
        with pytest.raises(ParameterError) as e:
            bad()
        assert e.value.parameter == "topology"


def test_ad_psgd_runs_at_the_renewal_rate_on_every_source():
    """No node waits: one gradient every 1/Σ_i 1/E[X_i] (E[X]/m on i.i.d. nodes), exactly."""
    from distsgd.analytic import expected_runtime
    est = expected_runtime(make_scheme("ad-psgd", 10), parse_delay("uniform(low=1, high=3)"))
    assert est.kind == "exact" and est.value == pytest.approx(2.0 / 10)
    cluster = make_cluster(m=10, delay="exp(rate=1)", slow=2, slowdown=4.0)
    rate = 8 / 1.0 + 2 / 4.0
    assert expected_runtime(make_scheme("ad-psgd", 10), cluster).value == pytest.approx(1 / rate)


def test_the_command_line_gives_the_topology_object_and_refuses_with_exit_2():
    code, out, err = cli("runtime", "--scheme", "d-psgd", "--m", "8", "--topology", "hypercube",
                         "--delay", "exp(rate=1)", "--iterations", "2000", "--seed", "3", "--json")
    assert code == 0, err
    js = json.loads(out)
    # the hypercube on 8 nodes: 3-regular, δ = 2/(1 + log2 m) (DESIGN §12)
    assert js["topology"] == {"spec": "hypercube", "m": 8, "min_degree": 3, "max_degree": 3,
                              "spectral_gap": pytest.approx(0.5)}
    assert js["scheme"] == "d-psgd" and js["analytic"]["kind"] == "exact"
    for args in (("--scheme", "sync", "--m", "8", "--topology", "ring"),
                 ("--scheme", "d-psgd", "--m", "6", "--topology", "hypercube"),
                 ("--scheme", "ad-psgd", "--m", "8", "--topology", "wheel")):
        code, out, err = cli("runtime", *args, "--delay", "exp(rate=1)", "--iterations", "1000")
        assert code == 2 and err.startswith("distsgd: error: topology:") and "Traceback" not in err, err


def _replay(intervals, m):
    """Each node's (start, end) of its used work and of its waits, in order."""
    used = {i: [] for i in range(m)}
    wait = {i: [] for i in range(m)}
    for r in intervals:
        (used if r["outcome"] == "used" else wait if r["outcome"] == "waiting" else {}).setdefault(
            r["worker"], []).append((r["start"], r["end"]))
    return used, wait


def test_the_d_psgd_timeline_is_the_max_plus_recursion_with_waits_drawn():
    """Read back from the drawn bars alone: each node starts iteration k + 1 exactly when the
    last of it and its neighbours ended iteration k, and waits (grey) from its own end to then."""
    topo = topology("ring", 6)
    tl = simulate_timeline(make_scheme("d-psgd", 6, topology=topo), EXP, 5, seed=4)
    used, wait = _replay(tl.rows(), 6)
    ends = np.array([[e for _, e in used[i]] for i in range(6)])  # (m, iterations)
    starts = np.array([[s for s, _ in used[i]] for i in range(6)])
    assert ends.shape == (6, 5)
    for k in range(1, 5):
        for i in range(6):
            closed = [i, (i - 1) % 6, (i + 1) % 6]
            assert starts[i, k] == pytest.approx(ends[closed, k - 1].max())
    assert sum(len(w) for w in wait.values()) > 0
    for i in range(6):  # a wait runs from the node's own end of iteration k to its start of k + 1
        for s, e in wait[i]:
            k = int(np.argmin(abs(ends[i] - s)))
            assert s == pytest.approx(ends[i, k]) and e == pytest.approx(starts[i, k + 1])
    assert np.allclose(tl.update_times, ends.max(axis=0))


def test_the_ad_psgd_timeline_counts_the_averagings_a_gradient_missed():
    """No waiting bars; a bar's staleness is the number of times a neighbour's finish landed on
    this node while it computed (recounted here from the peers the bars imply is impossible, so
    checked on a path of two nodes, where the peer is always the other node)."""
    tl = simulate_timeline(make_scheme("ad-psgd", 2, topology="ring"), EXP, 40, seed=2)
    rows = [r for r in tl.rows() if r["outcome"] in ("used", "stale")]
    assert not [r for r in tl.rows() if r["outcome"] == "waiting"]
    for r in rows:
        other = [q for q in rows if q["worker"] != r["worker"] and r["start"] < q["end"] < r["end"]]
        assert r["staleness"] == len(other)


def test_d_psgd_error_on_a_graph_agrees_with_its_exact_curve_on_the_time_axis():
    """The simulated error of the average model against the exact per-mode curve put on the time
    axis (DESIGN §12.4), within 4 standard errors at every grid time; the consensus distance is
    reported and vanishes at t = 0 (every node starts at w₀)."""
    P = Problem()
    for graph in ("ring", "star"):
        s = make_scheme("d-psgd", 12, topology=graph)
        sim = simulate_error(s, EXP, P, 25.0, 11, 400, seed=5)
        model = exact_error_vs_time(s, EXP, P, sim.time, seed=6)
        se = (sim.ci95_high - sim.mean) / 1.966  # t quantile at 399 dof
        gap = np.abs(sim.mean - model.mean)[1:]
        assert (gap <= 4 * np.hypot(se[1:], model.stderr[1:])).all(), (graph, gap, se)
        assert set(sim.metrics) == {"node_error", "consensus"} and sim.metrics["consensus"][0][0] < 1e-20
        assert (sim.metrics["node_error"][0] >= sim.mean - 1e-12).all()  # f convex: mean f(x_i) ≥ f(x̄)


def test_ad_psgd_error_reports_its_staleness():
    sim = simulate_error(make_scheme("ad-psgd", 6), EXP, Problem(), 10.0, 6, 50, seed=1)
    assert 0 < sim.staleness_mean < 6 and 0 < sim.fresh_fraction < 1
    counts = sim.staleness_counts
    assert math.isclose((np.arange(counts.size) * counts).sum() / counts.sum(), sim.staleness_mean)


def test_the_graph_page_sentences_follow_the_numbers_shown():
    """The graph page's claims (DESIGN §12.2) say a ratio only when it holds: with γ exact, sync's
    E[T] over γ; with γ only an upper bound, "at least" that ratio, and nothing when the bound is
    above sync's value; the chart's sentence quotes the ring and sync at its smallest and largest
    m of three nodes or more."""
    from distsgd.estimate import Estimate
    from distsgd.ui import claims

    def rows(g, kind, s=3.0):
        return [{"scheme": "d-psgd", "analytic": g, "kind": kind}, {"scheme": "sync", "analytic": s, "kind": "exact"},
                {"scheme": "async", "analytic": 0.25, "kind": "exact"}]
    facts = {"min_degree": 2, "max_degree": 2}
    b = (Estimate(1.5, "lower_bound", "x"), Estimate(3.5, "upper_bound", "y"))
    assert f"{3.0 / 2.0:.3g}× as fast" in claims.graph_runtime(rows(2.0, "exact"), *b, facts, 8)
    assert f"at least {3.0 / 2.4:.3g}×" in claims.graph_runtime(rows(2.4, "upper_bound"), *b, facts, 8)
    assert "as fast" not in claims.graph_runtime(rows(3.5, "upper_bound"), *b, facts, 8)
    assert "as fast" not in claims.graph_runtime(rows(3.2, "exact"), *b, facts, 8)  # slower: no speed-up claimed
    chart = [{"scheme": "d-psgd", "graph": "ring", "m": m, "analytic": a, "kind": "exact"}
             for m, a in ((1, 1.0), (4, 1.9), (16, 2.2))] + \
            [{"scheme": "sync", "graph": None, "m": m, "analytic": a, "kind": "exact"}
             for m, a in ((1, 1.0), (4, 2.08), (16, 3.38))]
    text = claims.graph_vs_m(chart)
    assert "At m = 4," in text and "1.9" in text and "2.08" in text and "m = 16" in text and "3.38" in text


def test_a_graph_the_m_cannot_form_shows_the_ring_with_the_reason():
    """?graph=hypercube&m=6: the sidebar keeps the choice, says why (the library's refusal, in the
    reader's language) and the graph page draws the ring of 6 (δ = (2/3)(1 − cos(2π/6)) = 1/3)."""
    from tests.apptest_support import open_app
    at = open_app("pages/graph.py", {"graph": "hypercube", "m": "6"})
    assert not at.exception
    notices = " ".join(w.value for w in at.warning)
    assert "hypercube" in notices and "power of 2" in notices and "ring" in notices, notices
    assert [m.value for m in at.metric][0] == f"{(2 / 3) * (1 - math.cos(2 * math.pi / 6)):.4g}"

"""Topologies for decentralised SGD (DESIGN §12.1): the spectral gap against closed forms derived
here, the Metropolis–Hastings matrix against the edge list, neighbourhood arrays against loops,
random regular graphs, edge-list files, and every refusal naming ``topology``."""

from __future__ import annotations

import itertools
import json
import math
import os
import pickle

import numpy as np
import pytest

from distsgd import limits
from distsgd.params import ParameterError
from distsgd.topology import GAP_METHODS, Topology, check_topology, topology, topology_from_edges

CAP = limits.TOPOLOGY_DENSE_EIGEN_MAX


# -- closed forms, written from the definitions (not from the code under test) ---------------------

def ring_gap(m: int) -> float:
    """Ring, m ≥ 3: W = (I + A)/3 is circulant, λ_p = (1 + 2 cos(2πp/m))/3; λ₂ at p = 1, λ_m ≥ −1/3."""
    return 2 / 3 * (1 - math.cos(2 * math.pi / m))


def circulant_gap(m: int, offsets: set[int]) -> float:
    """A regular circulant graph (i ~ i + s, s ∈ S = −S): every weight 1/(1 + |S|), so
    λ_p = (1 + Σ_s cos(2π p s / m))/(1 + |S|); δ = 1 − max_{p ≠ 0} |λ_p|."""
    lam = [(1 + sum(math.cos(2 * math.pi * p * s / m) for s in offsets)) / (1 + len(offsets)) for p in range(1, m)]
    return 1 - max(abs(x) for x in lam)


def exponential_offsets(m: int) -> set[int]:
    return {s % m for k in range(m.bit_length()) if 2**k < m for s in (2**k, -(2**k))} - {0}


def torus_gap(a: int, b: int) -> float:
    """A product of two rings: A = A_a ⊗ I + I ⊗ A_b, eigenvalues α_p + β_q with a ring's adjacency
    eigenvalues 2cos(2πp/n) (n ≥ 3), ±1 for n = 2 (one edge), 0 for n = 1; regular of degree
    d_a + d_b, so W = (I + A)/(1 + d) (for a, b ≥ 3: 1/5 (1 + 2cos(2πp/a) + 2cos(2πq/b)))."""
    def ring(n: int) -> tuple[list[float], int]:
        if n == 1:
            return [0.0], 0
        if n == 2:
            return [1.0, -1.0], 1
        return [2 * math.cos(2 * math.pi * p / n) for p in range(n)], 2
    (alpha, da), (beta, db) = ring(a), ring(b)
    lam = [(1 + x + y) / (1 + da + db) for (i, x), (j, y) in itertools.product(enumerate(alpha), enumerate(beta))
           if (i, j) != (0, 0)]
    return 1 - max(abs(x) for x in lam)


def path_edges(m: int) -> np.ndarray:
    return np.stack([np.arange(m - 1), np.arange(1, m)], axis=1)


def path_gap(m: int) -> float:
    """Path, m ≥ 3: every edge touches a node of degree 2, so every weight is 1/3 and W = I − L/3 with
    L the path's Laplacian, eigenvalues 2 − 2cos(πk/m): δ = (2/3)(1 − cos(π/m))."""
    return 2 / 3 * (1 - math.cos(math.pi / m))


CLOSED_FORMS = [
    *(("complete", m, 1.0) for m in (2, 3, 5, 16)),
    *(("star", m, 1 / m) for m in (3, 5, 12, 40)),
    *(("hypercube", m, 2 / (1 + math.log2(m))) for m in (2, 4, 8, 64)),
    *(("ring", m, ring_gap(m)) for m in (3, 4, 5, 12, 101)),
    *((f"torus(a={a}, b={b})", a * b, torus_gap(a, b)) for a, b in ((3, 3), (3, 4), (4, 4), (5, 7), (2, 5), (2, 6))),
    *(("exponential", m, circulant_gap(m, exponential_offsets(m))) for m in (5, 8, 12, 33)),
]


@pytest.mark.parametrize("spec, m, want", CLOSED_FORMS, ids=[f"{s}-{m}" for s, m, _ in CLOSED_FORMS])
def test_spectral_gap_matches_its_closed_form(spec: str, m: int, want: float) -> None:
    t = topology(spec, m)
    assert t.spectral_method == "dense"
    assert t.spectral_gap == pytest.approx(want, rel=1e-10, abs=1e-13)
    assert t.as_dict()["spectral_gap"] == t.spectral_gap


@pytest.mark.parametrize("spec, m, want, method", [
    ("ring", CAP + 76, ring_gap(CAP + 76), "group"),
    ("torus", 33 * 34, torus_gap(33, 34), "group"),
    ("hypercube", 2048, 2 / 12, "group"),
    ("exponential", CAP + 6, circulant_gap(CAP + 6, exponential_offsets(CAP + 6)), "group"),
    ("complete", CAP + 1, 1.0, "group"),
    ("star", CAP + 76, 1 / (CAP + 76), "Lanczos"),
])
def test_spectral_gap_above_the_dense_cap(spec: str, m: int, want: float, method: str) -> None:
    t = topology(spec, m)
    assert m > CAP and t.spectral_method == method
    assert t.spectral_gap == pytest.approx(want, rel=1e-9)


def test_a_path_s_gap_by_shift_invert_and_lanczos() -> None:
    """The path's gap ~ 1/m² is where Lanczos stalls: shift-invert finds it (and Lanczos, given its
    restarts, agrees or hands over)."""
    m = CAP + 76
    t = topology_from_edges(path_edges(m), m)
    assert t.spectral_gap_by("shift-invert") == pytest.approx(path_gap(m), rel=1e-8)
    assert t.spectral_gap == pytest.approx(path_gap(m), rel=1e-8)
    small = topology_from_edges(path_edges(40), 40)
    assert small.spectral_gap == pytest.approx(path_gap(40), rel=1e-10)


@pytest.mark.parametrize("a", [2, 3, 5, (CAP + 16) // 2])
def test_the_gap_of_a_bipartite_graph_is_set_by_its_smallest_eigenvalue(a: int) -> None:
    """K_{a,a}: every degree a, W = (I + A)/(1 + a), A's eigenvalues a, −a and 0, so W's are 1,
    (1 − a)/(1 + a) and 1/(1 + a): δ = 1 − (a − 1)/(a + 1) = 2/(a + 1), from λ_m, not λ₂."""
    left, right = np.meshgrid(np.arange(a), np.arange(a, 2 * a), indexing="ij")
    t = topology_from_edges(np.stack([left.ravel(), right.ravel()], axis=1), 2 * a)
    assert t.spectral_method == ("dense" if 2 * a <= CAP else "Lanczos")
    assert t.spectral_gap == pytest.approx(2 / (a + 1), rel=1e-9)


@pytest.mark.parametrize("spec, m", [("ring", 30), ("torus(a=4, b=6)", 24), ("torus(a=2, b=7)", 14),
                                     ("hypercube", 32), ("exponential", 40), ("complete", 9), ("star", 20),
                                     ("random-regular(d=5, seed=3)", 40)])
def test_every_gap_method_agrees(spec: str, m: int) -> None:
    t = topology(spec, m)
    methods = [k for k in GAP_METHODS if t.group or k != "group"]
    got = {k: t.spectral_gap_by(k) for k in methods}
    for k in methods:
        assert got[k] == pytest.approx(got["dense"], rel=1e-9), (k, got)
    assert t.spectral_gap_by("lanczos", restarts=0) == pytest.approx(got["dense"], rel=1e-9)  # (shift-invert)


def test_one_node_and_two() -> None:
    one = topology("ring", 1)
    assert one.edges.shape == (0, 2) and one.degrees.tolist() == [0] and one.spectral_gap == 1.0
    assert one.closed.tolist() == [[0]] and one.mixing().toarray().tolist() == [[1.0]]
    two = topology("ring", 2)
    assert two.edges.tolist() == [[0, 1]] and two.spectral_gap == pytest.approx(1.0)
    assert two.mixing_dense().tolist() == [[0.5, 0.5], [0.5, 0.5]]


# -- the mixing matrix, degrees and neighbours -------------------------------------------------------

IRREGULAR = np.array([[0, 1], [0, 2], [0, 3], [1, 2], [3, 4], [4, 5], [5, 6], [6, 4], [2, 7]])
GRAPHS = [("ring", 9), ("torus(a=3, b=5)", 15), ("hypercube", 16), ("exponential", 10), ("complete", 6), ("star", 7),
          ("random-regular(d=3, seed=5)", 12), ("edges", 8)]


def build(spec: str, m: int) -> Topology:
    return topology_from_edges(IRREGULAR, m) if spec == "edges" else topology(spec, m)


@pytest.mark.parametrize("spec, m", GRAPHS)
def test_mixing_matrix_is_metropolis_hastings(spec: str, m: int) -> None:
    t = build(spec, m)
    nbrs = {i: set() for i in range(m)}
    for i, j in t.edges.tolist():
        nbrs[i].add(j)
        nbrs[j].add(i)
    W = np.zeros((m, m))
    for i in range(m):
        for j in nbrs[i]:
            W[i, j] = 1 / (1 + max(len(nbrs[i]), len(nbrs[j])))
        W[i, i] = 1 - sum(W[i, j] for j in nbrs[i])
    got = t.mixing()
    np.testing.assert_allclose(got.toarray(), W, atol=1e-15)
    np.testing.assert_allclose(t.mixing_dense(), W, atol=1e-15)
    assert (got.toarray() == got.toarray().T).all() and (got.toarray() >= 0).all()
    np.testing.assert_allclose(got.sum(axis=0), 1.0, atol=1e-14)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-14)
    np.testing.assert_allclose(t.eigenvalues(), np.linalg.eigvalsh(W), atol=1e-12)
    assert t.degrees.tolist() == [len(nbrs[i]) for i in range(m)]
    assert (t.min_degree, t.max_degree) == (min(map(len, nbrs.values())), max(map(len, nbrs.values())))


@pytest.mark.parametrize("spec, m", GRAPHS)
def test_edges_csr_and_closed_neighbourhoods(spec: str, m: int) -> None:
    t = build(spec, m)
    e = t.edges
    assert e.dtype == np.int64 and (e[:, 0] < e[:, 1]).all()
    assert (np.diff(e[:, 0] * m + e[:, 1]) > 0).all()  # sorted, no repeats
    indptr, indices = t.neighbours
    closed = t.closed
    assert closed.shape == (m, t.max_degree + 1)
    rng = np.random.default_rng(1)
    times = rng.random((3, m))
    for i in range(m):
        mine = sorted({j for a, b in e.tolist() for j in (a, b) if i in (a, b)} - {i})
        assert indices[indptr[i]:indptr[i + 1]].tolist() == mine
        assert closed[i, 0] == i and sorted(set(closed[i].tolist())) == sorted([i, *mine])
        assert (closed[i, 1 + len(mine):] == i).all()  # padded by itself
        np.testing.assert_array_equal(np.max(times[:, closed[i]], axis=-1), times[:, [i, *mine]].max(axis=-1))
    with pytest.raises(ValueError):
        e[0, 0] = 5  # read-only


def test_named_graphs_have_their_shapes() -> None:
    assert topology("ring", 7).degrees.tolist() == [2] * 7
    torus = topology("torus", 12)
    assert torus.spec == "torus(a=3, b=4)" and torus.label == "torus 3×4" and set(torus.degrees) == {4}
    assert len(torus.edges) == 24
    assert topology("torus", 7).spec == "torus(a=1, b=7)"  # a prime: the 1×7 torus is the ring
    assert (topology("torus", 7).edges == topology("ring", 7).edges).all()
    prism = topology("torus", 8)
    assert prism.spec == "torus(a=2, b=4)" and set(prism.degrees) == {3} and len(prism.edges) == 12
    assert set(topology("hypercube", 32).degrees) == {5}
    star = topology("star", 6)
    assert star.degrees.tolist() == [5, 1, 1, 1, 1, 1] and star.edges[:, 0].tolist() == [0] * 5
    assert set(topology("exponential", 16).degrees) == {2 * 4 - 1}  # ±1, ±2, ±4 and 8 once
    assert set(topology("exponential", 12).degrees) == {len(exponential_offsets(12))}
    assert set(topology("complete", 5).degrees) == {4}
    assert topology(" Random_Regular ( d = 3 , seed = 2 ) ", 8) == topology("random-regular(d=3, seed=2)", 8)


# -- random regular graphs ------------------------------------------------------------------------

@pytest.mark.parametrize("m, d", [(10, 3), (11, 4), (50, 7), (200, 3), (12, 2), (9, 6), (10, 9), (60, 31), (2, 1)])
def test_random_regular_is_regular_connected_and_seeded(m: int, d: int) -> None:
    t = topology(f"random-regular(d={d})", m, seed=7)
    assert set(t.degrees) == {d} and t.is_connected and len(t.edges) == m * d // 2
    assert t.spec == f"random-regular(d={d}, seed=7)" and t.label == f"random {d}-regular"
    assert topology(t.spec, m) == t and topology(f"random-regular(d={d})", m, seed=np.int64(7)) == t
    if math.comb(m, 2) > m * d // 2 + 1 and m > 3:  # more than one such graph
        others = {topology(f"random-regular(d={d})", m, seed=s).digest for s in range(8, 12)}
        assert len(others | {t.digest}) > 1


def test_random_regular_without_a_seed_records_the_one_it_drew() -> None:
    t = topology("random-regular(d=4)", 30)
    assert topology(t.spec, 30) == t
    drawn = topology("random-regular(d=3)", 30, seed=np.random.default_rng(3))
    assert drawn.spec.startswith("random-regular(d=3, seed=") and topology(drawn.spec, 30) == drawn



def test_a_named_graph_is_built_once_a_fresh_draw_and_a_file_every_time(tmp_path: os.PathLike[str]) -> None:
    """topology() keeps the graphs it built (the charts ask for each at every rerun), but never one
    that depends on more than its arguments: a random graph without a fixed seed, an edge-list file."""
    assert topology("torus", 12) is topology("torus", 12) is topology("torus", 12, seed=5)
    assert topology("random-regular(d=3)", 30, seed=4) is topology("random-regular(d=3)", 30, seed=4)
    assert topology("random-regular(d=3)", 30, seed=4) != topology("random-regular(d=3)", 30, seed=5)
    drawn = {topology("random-regular(d=3)", 30).spec for _ in range(4)}  # seeds from fresh entropy
    assert len(drawn) == 4
    rng = np.random.default_rng(7)
    assert topology("random-regular(d=3)", 30, seed=rng) != topology("random-regular(d=3)", 30, seed=rng)
    path = os.path.join(tmp_path, "g.csv")
    with open(path, "w") as f:
        f.write("0,1\n1,2\n")
    first = topology(f"edges(file={path})", 3)
    with open(path, "w") as f:
        f.write("0,1\n1,2\n2,0\n")
    assert len(topology(f"edges(file={path})", 3).edges) == 3 != len(first.edges)

# -- refusals ---------------------------------------------------------------------------------------

REFUSALS = [
    ("hexagon", 6, "unknown topology 'hexagon'"),
    ("ring(", 6, "malformed"),
    ("", 6, "expected a topology"),
    (42, 6, "expected a topology"),
    ("ring(d=3)", 6, "ring takes no parameters"),
    ("torus(a=3)", 12, "torus needs a, b"),
    ("torus(a=3, c=4)", 12, "not a parameter of torus"),
    ("torus(a=3, a=4)", 12, "given twice"),
    ("torus(a=, b=4)", 12, "has no value"),
    ("torus(a 3, b=4)", 12, "malformed argument"),
    ("torus(a=3, b=5)", 12, "a·b = 15 nodes, not m = 12"),
    ("torus(a=0, b=12)", 12, "a: must be an integer"),
    ("torus(a=2.5, b=4)", 10, "a: must be an integer"),
    ("hypercube", 12, "power of 2"),
    ("random-regular", 10, "random-regular needs d"),
    ("random-regular(d=0)", 10, "d: must be an integer"),
    ("random-regular(d=3)", 9, "m·d even"),
    ("random-regular(d=10)", 10, "more than 10 nodes"),
    ("random-regular(d=1)", 6, "matching"),
    ("random-regular(d=3, seed=-1)", 10, "seed: must be an integer"),
    ("ring", 0, "m: must be an integer in [1, 10000]"),
    ("ring", limits.TOPOLOGY_MAX_NODES + 1, "m: must be an integer"),
    ("ring", 2.5, "m: must be an integer"),
    ("complete", 3000, "over the cap of 2097152"),
    ("random-regular(d=500)", 10000, "over the cap"),
    ("ring" + " " * limits.SPEC_MAX_CHARS, 5, "longer than"),
    ("edges", 5, "edges needs file"),
    ("edges(sha1=abc)", 5, "sha1: not a parameter of edges; expected file"),
]


@pytest.mark.parametrize("spec, m, words", REFUSALS, ids=[str(r[0])[:30] + f"-{r[1]}" for r in REFUSALS])
def test_bad_specs_are_refused_naming_topology(spec: object, m: object, words: str) -> None:
    with pytest.raises(ParameterError) as info:
        topology(spec, m)  # type: ignore[arg-type]
    assert info.value.parameter == "topology" and words in str(info.value), str(info.value)


def test_two_different_seeds_are_refused() -> None:
    assert topology("random-regular(d=3, seed=4)", 10, seed=4).spec == "random-regular(d=3, seed=4)"
    with pytest.raises(ParameterError, match="give one") as info:
        topology("random-regular(d=3, seed=4)", 10, seed=5)
    assert info.value.parameter == "topology"


EDGE_REFUSALS = [
    ([[0, 1], [1, 1]], 3, "edges[1]: node 1 is joined to itself"),
    ([[0, 1], [1, 3]], 3, "edges[1]: node 3 is not one of the nodes 0…2"),
    ([[0, 1], [-1, 2]], 3, "edges[1]: node -1 is not one of the nodes 0…2"),
    ([[0, 1], [1, 2.5]], 3, "edges[1]: 2.5 is not a node id"),
    ([[0, 1], [1, float("nan")]], 3, "edges[1]: nan is not a node id"),
    ([[0, 1], [2, 3]], 4, "not connected (2 components: node 2 cannot reach node 0)"),
    ([], 3, "not connected (3 components"),
    ([0, 1, 2], 3, "E × 2 array"),
    ([[0, 1, 2]], 3, "E × 2 array"),
    ([[True, False]], 2, "E × 2 array"),
    ([["a", "b"]], 2, "E × 2 array"),
    ([[0, 1], [1]], 2, "E × 2 array"),
    ([[0, 1]], 0, "m: must be an integer"),
]


@pytest.mark.parametrize("edges, m, words", EDGE_REFUSALS, ids=[w[:24] for _, _, w in EDGE_REFUSALS])
def test_bad_edge_arrays_are_refused_naming_topology(edges: object, m: int, words: str) -> None:
    with pytest.raises(ParameterError) as info:
        topology_from_edges(edges, m)
    assert info.value.parameter == "topology" and words in str(info.value), str(info.value)


def test_other_refusals_name_topology(monkeypatch: pytest.MonkeyPatch) -> None:
    hub = topology("star", 3000)  # m·(Δ+1) = 9·10⁶ entries: over the padded cap
    refusals = [
        lambda: hub.closed, lambda: hub.mixing_dense(), lambda: hub.eigenvalues(),
        lambda: hub.spectral_gap_by("dense"), lambda: hub.spectral_gap_by("group"),
        lambda: hub.spectral_gap_by("magic"), lambda: check_topology("ring"),
        lambda: topology(topology("ring", 5), 6),
        lambda: Topology("ring", 3, np.array([[1, 0], [1, 2]])),
        lambda: Topology("ring", 3, np.array([[0, 1], [0, 1], [1, 2]])),
        lambda: Topology("star", 4, np.array([[0, 1], [0, 2], [0, 3]]), group=(4,)),
    ]
    for refuse in refusals:
        with pytest.raises(ParameterError) as info:
            refuse()
        assert info.value.parameter == "topology", info.value
    assert topology(hub, 3000) is hub and check_topology(hub) is hub
    monkeypatch.setattr(limits, "TOPOLOGY_MAX_EDGES", 5)
    with pytest.raises(ParameterError, match="6 edges listed, over the cap of 5"):
        topology_from_edges(path_edges(7), 7)


# -- edge-list files --------------------------------------------------------------------------------

def edges_of(tmp_path: os.PathLike[str], text: str | bytes, m: int, name: str = "g.csv") -> Topology:
    path = os.path.join(tmp_path, name)
    with open(path, "wb") as fh:
        fh.write(text.encode() if isinstance(text, str) else text)
    return topology(f"edges(file={path})", m)


def test_an_edge_list_file(tmp_path: os.PathLike[str]) -> None:
    t = edges_of(tmp_path, "# my graph\nsource,target\n0,1\n1,2\n\n2,0\n2,1\n 3 , 0\n", 4, name="a, b.csv")
    assert t.edges.tolist() == [[0, 1], [0, 2], [0, 3], [1, 2]]  # 2,1 repeats 1,2: merged
    assert t.spec == f"edges(file={os.path.join(tmp_path, 'a, b.csv')})" and t.label == "edge list a, b.csv"
    tsv = edges_of(tmp_path, "0\t1\n1\t2\n2\t3\n", 4, name="g.tsv")
    assert tsv.edges.tolist() == [[0, 1], [1, 2], [2, 3]]
    assert tsv.spectral_gap == pytest.approx(path_gap(4))
    assert edges_of(tmp_path, "0,1\n1,2\n", 3).edges.tolist() == [[0, 1], [1, 2]]  # no header
    assert topology_from_edges([[2, 1], [1, 0], [0, 1]], 3).spec == topology_from_edges([[0, 1], [1, 2]], 3).spec


@pytest.mark.parametrize("text, m, words", [
    ("u,v\n0,1\n1,2.5\n", 3, "g.csv, line 3: 2.5 is not a node id (an integer in 0…2)"),
    ("# a comment\nu,v\n0,1\n1,x\n", 3, "g.csv, line 4: 'x' is not a node id"),
    ("0,1\n1,7\n", 3, "g.csv, line 2: node 7 is not one of the nodes 0…2"),
    ("0,1\n-1,2\n", 3, "line 2: node -1 is not one"),
    ("0,1\n1,1e300\n", 3, "line 2: node 1e+300 is not one"),
    ("0,1\n2,2\n", 3, "line 2: node 2 is joined to itself"),
    ("0,1\n1,\n", 3, "line 2: '' is not a node id"),
    ("0,1,2\n", 3, "an edge list has two columns of node ids (got 3)"),
    ("#\n#\n0,1\n1,2,3\n", 3, "cannot read it as CSV: Error tokenizing data. C error: Expected 2 fields in line 4"),
    ("0,1\n2,3\n", 4, "not connected"),
    ("u,v\n", 2, "not connected"),
    ("", 2, "the file is empty"),
    (b"0,1\n\xff\xfe,2\n", 3, "line 2"),
])
def test_hostile_edge_list_files_are_refused(tmp_path: os.PathLike[str], text: str | bytes, m: int,
                                             words: str) -> None:
    with pytest.raises(ParameterError) as info:
        edges_of(tmp_path, text, m)
    assert info.value.parameter == "topology" and words in str(info.value), str(info.value)


def test_edge_list_files_are_capped_before_they_are_read(tmp_path: os.PathLike[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    huge = os.path.join(tmp_path, "huge.csv")
    with open(huge, "wb") as fh:
        fh.truncate(limits.TOPOLOGY_FILE_MAX_BYTES + 1)  # sparse: no disk written
    for spec, words in [(f"edges(file={huge})", "over the cap of 33554432 bytes"),
                        ("edges(file=/dev/zero)", "not a regular file"),
                        (f"edges(file={tmp_path})", "not a regular file"),
                        (f"edges(file={os.path.join(tmp_path, 'none.csv')})", "cannot read it")]:
        with pytest.raises(ParameterError) as info:
            topology(spec, 3)
        assert info.value.parameter == "topology" and words in str(info.value), str(info.value)
    monkeypatch.setattr(limits, "TOPOLOGY_MAX_EDGES", 10)
    with pytest.raises(ParameterError, match="12 lines, over the cap of 10 edges"):
        edges_of(tmp_path, "0,1\n" * 11 + "1,2", 3)


# -- identity, views, the public API ------------------------------------------------------------------

def test_identity_pickling_and_json() -> None:
    t = topology("random-regular(d=3, seed=1)", 10)
    again = pickle.loads(pickle.dumps(t))
    assert again == t and hash(again) == hash(t) and again.spectral_gap == t.spectral_gap
    assert not again.edges.flags.writeable and not again.indices.flags.writeable
    triangle, k3 = topology("ring", 3), topology("complete", 3)
    assert triangle != k3 and triangle.digest == k3.digest  # the same graph under two specs
    assert len({topology("ring", 5), topology("ring", 5), topology("star", 5)}) == 2
    d = json.loads(json.dumps(topology("torus", 16).as_dict()))
    assert d == {"spec": "torus(a=4, b=4)", "m": 16, "min_degree": 4, "max_degree": 4,
                 "spectral_gap": pytest.approx(torus_gap(4, 4))}
    assert str(t) == t.spec and Topology("x", 2, np.array([[0, 1]])).label == "x"


def test_public_api() -> None:
    import distsgd

    assert distsgd.topology is topology and distsgd.Topology is Topology
    assert {"topology", "Topology"} <= set(distsgd.__all__)

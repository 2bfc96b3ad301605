"""The named graphs of DESIGN §12.1 and the user's edge list, each built into a checked Topology.

A builder takes (m, the spec's keyword texts, seed).  The Cayley graphs (ring, torus, hypercube,
complete, exponential) carry their group, which gives their spectrum by an FFT.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow.compute as pc  # type: ignore[import-untyped]
import scipy.sparse as sp
from scipy.sparse import csgraph

from .. import limits, tables
from ..params import Domain, ParameterError
from ..random import SEED, Seed, generator
from ..reasons import Phrase
from .graph import Topology, edge_digest

__all__ = ["BUILDERS", "DEGREE", "SIDE", "from_array"]

#: the degree d of a random regular graph, a side a or b of a torus
DEGREE = Domain("d", 1, limits.TOPOLOGY_MAX_NODES - 1, integer=True, symbol="d", doc="degree of every node")
SIDE = Domain("side", 1, limits.TOPOLOGY_MAX_NODES, integer=True, doc="nodes along one side of a torus")


def _made(spec: str, m: int, pairs: np.ndarray, label: str, group: tuple[int, ...] = ()) -> Topology:
    """A Topology of generated pairs: a wrapped-around pair (i, i) dropped, repeats merged."""
    u, v = np.minimum(pairs[:, 0], pairs[:, 1]), np.maximum(pairs[:, 0], pairs[:, 1])
    keys = _distinct((u * m + v)[u != v])
    return Topology(spec, m, np.stack(np.divmod(keys, m), axis=1), label, group)


def _circulant(m: int, offsets: list[int]) -> np.ndarray:
    i = np.arange(m, dtype=np.int64)
    return np.concatenate([np.stack([i, (i + s) % m], axis=1) for s in offsets]) if offsets else np.empty((0, 2), int)


def _ring(m: int, args: dict[str, str], seed: Seed) -> Topology:
    return _made("ring", m, _circulant(m, [1]), "ring", (m,))


def _torus(m: int, args: dict[str, str], seed: Seed) -> Topology:
    """The Cartesian product of a ring of a and a ring of b nodes (a ring of 2 is one edge, of 1 a
    point, so a 2×b torus is a prism and a 1×m torus a ring); by default a ≤ b the divisors of m
    closest to √m."""
    if args:
        if len(args) < 2:
            raise ParameterError("a" if "a" not in args else "b", "family_needs", family="torus", keys="a, b")
        a, b = SIDE.check(args["a"], "a"), SIDE.check(args["b"], "b")
        if a * b != m:
            raise ParameterError("topology", "topology_torus_m", a=a, b=b, nodes=a * b, m=m)
    else:
        a = next(k for k in range(math.isqrt(m), 0, -1) if m % k == 0)
        b = m // a
    r, c = np.divmod(np.arange(m, dtype=np.int64), b)
    node = r * b + c
    pairs = np.concatenate([np.stack([node, r * b + (c + 1) % b], 1), np.stack([node, (r + 1) % a * b + c], 1)])
    return _made(f"torus(a={a}, b={b})", m, pairs, f"torus {a}×{b}", (a, b))


def _hypercube(m: int, args: dict[str, str], seed: Seed) -> Topology:
    if m & (m - 1):
        raise ParameterError("topology", "topology_hypercube_m", m=m)
    n, i = m.bit_length() - 1, np.arange(m, dtype=np.int64)
    pairs = np.concatenate([np.stack([i, i ^ (1 << k)], 1) for k in range(n)]) if n else np.empty((0, 2), int)
    return _made("hypercube", m, pairs, f"hypercube of dimension {n}", (2,) * n if n else (1,))


def _edge_cap(name: str, m: int, edges: int) -> None:
    if edges > limits.TOPOLOGY_MAX_EDGES:
        raise ParameterError("topology", "topology_edges_cap", name=name, m=m, edges=edges,
                             cap=limits.TOPOLOGY_MAX_EDGES)


def _complete(m: int, args: dict[str, str], seed: Seed) -> Topology:
    _edge_cap("complete", m, m * (m - 1) // 2)
    return Topology("complete", m, np.stack(np.triu_indices(m, 1), axis=1), "complete graph", (m,))


def _star(m: int, args: dict[str, str], seed: Seed) -> Topology:
    leaves = np.arange(1, m, dtype=np.int64)
    return Topology("star", m, np.stack([np.zeros_like(leaves), leaves], axis=1), "star")


def _exponential(m: int, args: dict[str, str], seed: Seed) -> Topology:
    """i ~ i ± 2^k (mod m) for every k with 2^k < m (Assran et al. 2019's one-peer graph, all peers)."""
    return _made("exponential", m, _circulant(m, [1 << k for k in range(m.bit_length()) if 1 << k < m]),
                 "exponential graph", (m,))


def _random_regular(m: int, args: dict[str, str], seed: Seed) -> Topology:
    """A connected d-regular graph: d = 2 a ring through a uniform random order (every Hamiltonian
    cycle equally likely: the uniform connected 2-regular graph), otherwise :func:`_pairing`, drawn
    again when it gets stuck or is disconnected."""
    if "d" not in args:
        raise ParameterError("d", "family_needs", family="random-regular", keys="d")
    d = DEGREE.check(args["d"], "d")
    if "seed" in args:
        given = SEED.check(args["seed"], "seed")
        if seed is not None and not (isinstance(seed, (int, np.integer)) and seed == given):
            raise ParameterError("topology", "topology_seed_twice", given=given, seed=seed)
        seed = given
    if d >= m:
        raise ParameterError("topology", "topology_regular_degree", d=d, m=m)
    if m * d % 2:
        raise ParameterError("topology", "topology_regular_odd", m=m, d=d)
    if d == 1 and m > 2:
        raise ParameterError("topology", "topology_regular_matching", m=m)
    _edge_cap("random-regular", m, m * d // 2)
    drawn = SEED.check(seed, "seed") if isinstance(seed, (int, np.integer)) else int(generator(seed).integers(2**63))
    rng = generator(drawn)
    spec, label = f"random-regular(d={d}, seed={drawn})", f"random {d}-regular"
    if d == 2:
        order = rng.permutation(m)
        return _made(spec, m, np.stack([order, np.roll(order, -1)], axis=1), label)
    for _ in range(limits.TOPOLOGY_REGULAR_TRIES):
        pairs = _pairing(m, d, rng) if 2 * d <= m - 1 else _complement(m, _pairing(m, m - 1 - d, rng))
        if pairs is not None and _connected(m, pairs):
            return _made(spec, m, pairs, label)
    raise ParameterError("topology", "topology_regular_failed", d=d, m=m, tries=limits.TOPOLOGY_REGULAR_TRIES)


def _connected(m: int, pairs: np.ndarray) -> bool:
    graph = sp.coo_array((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(m, m))
    return bool(csgraph.connected_components(graph, directed=False)[0] == 1)


def _member(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    at = np.minimum(np.searchsorted(sorted_keys, keys), max(sorted_keys.size - 1, 0))
    return sorted_keys[at] == keys if sorted_keys.size else np.zeros(keys.shape, bool)


def _key(a: Any, b: Any, m: int) -> Any:
    return np.minimum(a, b) * m + np.maximum(a, b)


def _pairing(m: int, d: int, rng: np.random.Generator) -> np.ndarray | None:
    """The pairs of a d-regular simple graph (None if it cannot be finished): m·d stubs (d per node)
    paired at random in rounds, keeping each round's pairs that are new edges (not a loop, not an edge
    already made, the first of repeats) and pairing the others' stubs again in the next round (Steger &
    Wormald 1999, as networkx's random_regular_graph); when the stubs left can make no new edge (their
    nodes already joined, or one node), :func:`_switch` places them.  Approximately uniform."""
    stubs, keys = np.repeat(np.arange(m, dtype=np.int64), d), np.empty(0, np.int64)
    for _ in range(limits.TOPOLOGY_PAIRING_ROUNDS):
        if not stubs.size:
            break
        rng.shuffle(stubs)
        k = _key(stubs[0::2], stubs[1::2], m)
        fresh = np.flatnonzero((stubs[0::2] != stubs[1::2]) & ~_member(keys, k))
        take = np.zeros(k.size, bool)
        take[fresh[np.unique(k[fresh], return_index=True)[1]]] = True
        keys = np.sort(np.concatenate([keys, np.sort(k[take])]), kind="stable")  # (two sorted runs: merged)
        stubs = np.concatenate([stubs[0::2][~take], stubs[1::2][~take]])
        nodes = _distinct(stubs)
        if nodes.size <= d:  # (more than d nodes left: one of them has a non-neighbour among them)
            i, j = np.triu_indices(nodes.size, 1)
            if _member(keys, nodes[i] * m + nodes[j]).all():
                break
    done = _switch(keys, stubs, m, rng) if stubs.size else keys
    return None if done is None else np.stack(np.divmod(done, m), axis=1)


def _switch(keys: np.ndarray, stubs: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray | None:
    """Place stubs that no new edge can join: for each two (a, b; a = b allowed), an edge (x, y) drawn at
    random with x, y ∉ {a, b}, x not joined to a and y not to b is replaced by (a, x) and (b, y) — every
    degree kept, no loop or repeat made.  None when no such edge turns up in 64·100 draws."""
    for a, b in rng.permutation(stubs).reshape(-1, 2):
        for _ in range(100):
            if not keys.size:
                return None
            x, y = np.divmod(keys[rng.integers(keys.size, size=64)], m)
            x, y = (np.where(flip := rng.random(64) < 0.5, y, x), np.where(flip, x, y))
            ok = np.flatnonzero((x != a) & (x != b) & (y != a) & (y != b) & ~_member(keys, _key(a, x, m))
                                & ~_member(keys, _key(b, y, m)))
            if ok.size:
                i = int(ok[0])
                kept = np.delete(keys, np.searchsorted(keys, _key(x[i], y[i], m)))
                keys = np.sort(np.concatenate([kept, [_key(a, x[i], m), _key(b, y[i], m)]]))
                break
        else:
            return None
    return keys


def _complement(m: int, pairs: np.ndarray | None) -> np.ndarray | None:
    """The edges of the complement (of an (m−1−d)-regular graph: d-regular), for d > (m−1)/2."""
    if pairs is None:
        return None
    adjacent = np.eye(m, dtype=bool)
    adjacent[pairs[:, 0], pairs[:, 1]] = adjacent[pairs[:, 1], pairs[:, 0]] = True
    return np.stack(np.nonzero(np.triu(~adjacent, 1)), axis=1)


# -- edge lists ----------------------------------------------------------------------------------------

def _edge_list(v: np.ndarray, m: int, where: Callable[[int], Phrase]) -> np.ndarray:
    """The canonical edges of an E × 2 array of node ids (floats allowed if whole): each id an integer
    in 0…m−1, no self-loop; an edge listed twice (in either direction) is one edge."""
    if v.dtype.kind == "f":
        bad = np.flatnonzero((~np.isfinite(v) | (v != np.round(v))).any(axis=1))
        if bad.size:
            row = int(bad[0])
            value = v[row][~np.isfinite(v[row]) | (v[row] != np.round(v[row]))][0]
            raise ParameterError("topology", "topology_node_id", where=where(row), value=float(value), last=m - 1)
    out = np.flatnonzero(((v < 0) | (v > m - 1)).any(axis=1))
    if out.size:
        row = int(out[0])
        node = v[row][(v[row] < 0) | (v[row] > m - 1)][0]
        raise ParameterError("topology", "topology_node_range", where=where(row), node=f"{node:g}", last=m - 1)
    ids = v.astype(np.int64)
    if (loops := np.flatnonzero(ids[:, 0] == ids[:, 1])).size:
        row = int(loops[0])
        raise ParameterError("topology", "topology_self_loop", where=where(row), node=int(ids[row, 0]))
    u, w = np.minimum(ids[:, 0], ids[:, 1]), np.maximum(ids[:, 0], ids[:, 1])
    return np.stack(np.divmod(_distinct(u * m + w), m), axis=1)


def _distinct(keys: np.ndarray) -> np.ndarray:
    """The distinct values, sorted (a sort and a comparison: numpy's hash-based unique took 2 s for 2·10⁶)."""
    keys = np.sort(keys)
    return keys[np.concatenate([[True], keys[1:] != keys[:-1]])] if keys.size else keys


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def from_array(edges: Any, m: int) -> Topology:
    """The graph of an E × 2 array of node ids (:func:`distsgd.topology.topology_from_edges`); its spec
    is ``edges(sha1=…)``, the first 12 hex digits of :attr:`Topology.digest`."""
    try:
        v = np.asarray(edges)
    except (ValueError, TypeError):  # a ragged list: refused with what it is
        raise ParameterError("topology", "topology_edges_array", what=type(edges).__name__) from None
    v = v.reshape(0, 2) if v.size == 0 else v
    if v.ndim != 2 or v.shape[1] != 2 or v.dtype.kind not in "iuf":
        raise ParameterError("topology", "topology_edges_array", what=f"shape {v.shape}, {v.dtype}")
    if len(v) > limits.TOPOLOGY_MAX_EDGES:
        raise ParameterError("topology", "topology_rows_cap", rows=len(v), cap=limits.TOPOLOGY_MAX_EDGES)
    e = _edge_list(v, m, lambda row: Phrase("topology_at_row", row=row))
    return Topology(f"edges(sha1={edge_digest(m, e)[:12]})", m, e, "edge list")


def _edges_file(m: int, args: dict[str, str], seed: Seed) -> Topology:
    """``edges(file=…)``: a CSV or TSV of two integer columns (a header line allowed: one whose two
    cells are not numbers; blank lines skipped), read within ``limits.TOPOLOGY_FILE_MAX_BYTES`` and
    ``TOPOLOGY_MAX_EDGES`` lines before it is parsed (:mod:`distsgd.tables`)."""
    if "file" not in args:
        raise ParameterError("file", "family_needs", family="edges", keys="file")
    path = args["file"]
    data, shown = tables.read_source(path, None, parameter="topology", max_bytes=limits.TOPOLOGY_FILE_MAX_BYTES)
    body, skipped, fmt, sep = tables.text_body(data, shown, None, parameter="topology")
    if (columns := tables.csv_fields(body, sep, shown, parameter="topology")) != 2:
        raise ParameterError("topology", "topology_file_columns", file=shown, columns=columns)
    if (lines := body.count(b"\n") + 1) > limits.TOPOLOGY_MAX_EDGES + 1:
        raise ParameterError("topology", "topology_file_lines", file=shown, lines=lines, cap=limits.TOPOLOGY_MAX_EDGES)
    try:
        cols = tables.read_csv(body, sep, 2)
    except ValueError as exc:  # pandas' ParserError (a line of three fields, …): worded with the file's name
        why = (str(exc).strip() or type(exc).__name__).splitlines()[-1]
        why = re.sub(r"line (\d+)", lambda g: f"line {int(g[1]) + skipped}", why)  # (the file's line numbers)
        raise ParameterError("topology", "cannot_parse", file=shown, format=fmt.upper(), why=why) from None
    header = len(cols[0]) > 0 and not any(_is_number(str(c[0])) for c in cols)  # (then Arrow parses the rest)
    cols = [c.slice(int(header)) for c in cols]
    values = np.stack([tables.numbers(c) for c in cols], axis=1)
    keep = ~np.logical_and.reduce([pc.equal(pc.utf8_trim_whitespace(c), "").to_numpy() for c in cols])  # blank
    line = skipped + 1 + int(header) + np.arange(len(values))
    if (bad := np.flatnonzero(keep & ~np.isfinite(values).all(axis=1))).size:  # a cell as it is written
        row, col = int(bad[0]), int(np.flatnonzero(~np.isfinite(values[bad[0]]))[0])
        raise ParameterError("topology", "topology_node_id", value=str(cols[col][row]).strip()[:40], last=m - 1,
                             where=Phrase("topology_at_line", file=shown, line=int(line[row])))
    values, line = values[keep], line[keep]
    e = _edge_list(values, m, lambda row: Phrase("topology_at_line", file=shown, line=int(line[row])))
    return Topology(f"edges(file={path})", m, e, f"edge list {os.path.basename(shown)}")


#: spec name → builder
BUILDERS: dict[str, Callable[[int, dict[str, str], Seed], Topology]] = {
    "ring": _ring, "torus": _torus, "hypercube": _hypercube, "complete": _complete, "star": _star,
    "exponential": _exponential, "random-regular": _random_regular, "edges": _edges_file,
}

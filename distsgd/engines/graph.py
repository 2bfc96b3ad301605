"""Monte Carlo of the schemes on a graph (DESIGN §12.3): d-psgd's max-plus recursion and ad-psgd's
event sequence.

* d-psgd: ``t_i(k+1) = max_{j ∈ N(i) ∪ {i}} t_j(k) + X_i(k)``, t(0) = 0, for R replicas; each node
  starts exactly one mini-batch per iteration, so its k-th draw (i.i.d. from a Delay, or its own
  k-th mini-batch of a cluster) is X_i(k).  The loop over nodes and neighbours is a compiled kernel
  (:func:`~distsgd.engines.runtime_kernels.maxplus_steps`); the numpy reference steps one iteration
  at a time, vectorised over replicas and nodes (``np.maximum.reduceat`` over the closed
  neighbourhoods in CSR order: no padded m × (Δ+1) array, which a hub would make m²).  Both read the
  same draws and give the same finish times bit for bit.
  The runtime statistic is the cycle time γ = lim t_i(k)/k (the same for every node of a connected
  graph): the increments of the mean finish time (1/m) Σ_i t_i(k), batch means after a warm-up.  The
  mean over nodes averages m correlated increments of one stationary gap process, so it has less
  variance than one node's, and the same limit.  From the flat start t(0) = 0 a sparse graph's front
  roughens before it is stationary (on a ring like a KPZ interface: the mean increment approaches γ
  from below about as 0.6·k^{−2/3} on a ring of 1000 nodes with Exp(1), benchmarks/results/graph.md),
  so a run of n iterations there reads about 1.8·n^{−2/3} low (0.1 % of γ for n = 25 000), which a
  longer warm-up hardly changes.
* ad-psgd: nobody waits, so the gradient finish times are async's merged renewal stream
  (:func:`~distsgd.engines.renewal.merged_stream`, reused as it is: the same seed gives async's
  times); each finishing node averages with a uniformly random neighbour, drawn from a stream spawned
  off the run's (so the times do not depend on the graph), and each gradient's staleness is the
  number of averagings a neighbour started with its node while it was computed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .. import jit, limits
from ..clusters import Cluster
from ..delays import Delay
from ..numerics.graph_chain import Graph, csr_arrays
from ..params import ParameterError
from . import runtime_kernels as kernels
from .batchmeans import BatchMeans
from .renewal import merged_cost, merged_stream

__all__ = ["Source", "closed_csr", "dpsgd_cost", "adpsgd_cost", "maxplus_blocks", "dpsgd_finish_times",
           "dpsgd_batch_means", "GossipEvents", "adpsgd_events", "adpsgd_batch_means", "gossip_staleness"]

#: what the engines draw mini-batch times from: one law for every node, or a cluster (DESIGN §7)
Source = Delay | Cluster

#: d-psgd cost (≈ ns) of one iteration of one replica: per node (its draw, ≈ 5–12 ns for the
#: exponential on the development machine, more for the lognormal and Weibull; the kernel's own
#: work), per neighbour entry, and, on the numpy path, the per-iteration overhead shared by the
#: replicas plus ≈ 8 ns per closed-neighbourhood entry (benchmarks/results/graph.md)
DPSGD_KERNEL = (0.0, 14.0, 1.5)
DPSGD_NUMPY = (25_000.0, 14.0, 8.0)


def dpsgd_cost(graph: Graph, replicas: int = 4) -> float:
    """One d-psgd iteration of one replica (≈ ns) on the path in force: the numpy path's
    per-iteration overhead shared by the ``replicas``, then per node and per neighbour entry."""
    indptr, indices = csr_arrays(graph)
    step, node, entry = DPSGD_KERNEL if jit.ENABLED else DPSGD_NUMPY
    m = indptr.size - 1
    return step / max(1, replicas) + node * m + entry * (indices.size + (0 if jit.ENABLED else m))


def adpsgd_cost(graph: Graph) -> float:
    """One ad-psgd gradient (≈ ns): a push of the merged renewal stream, plus its neighbour's draw
    and its staleness."""
    indptr, _ = csr_arrays(graph)
    return merged_cost(indptr.size - 1, 1) + 40.0


def closed_csr(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """The closed neighbourhoods N(i) ∪ {i} as CSR arrays, each node first then its neighbours."""
    indptr, indices = csr_arrays(graph)
    m = indptr.size - 1
    deg = np.diff(indptr)
    cptr = indptr + np.arange(m + 1)
    cidx = np.empty(indices.size + m, dtype=np.int64)
    cidx[cptr[:-1]] = np.arange(m)
    rest = np.ones(cidx.size, dtype=bool)
    rest[cptr[:-1]] = False
    cidx[rest] = indices
    assert np.array_equal(np.diff(cptr), deg + 1)
    return cptr, cidx


# -- d-psgd ------------------------------------------------------------------------------------------

def _draw_blocks(source: Source, R: int, m: int, total: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """(R, b, m) blocks of draws, b·R·m ≤ limits.CHUNK (b ≥ 1), adding up to ``total`` iterations:
    X_i(k) i.i.d. from a Delay, or node i's next mini-batches of a cluster (its state carried)."""
    b = max(1, limits.CHUNK // (R * m))
    state = source.start(rng, R) if isinstance(source, Cluster) else None
    for s in range(0, total, b):
        k = min(b, total - s)
        if isinstance(source, Cluster):
            yield np.ascontiguousarray(source.jobs(rng, state, R, k).transpose(0, 2, 1))
        else:
            yield source.sample(rng, (R, k, m))


def maxplus_blocks(source: Source, graph: Graph, R: int, total: int, rng: np.random.Generator,
                   record: bool) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    """d-psgd, R replicas from t(0) = 0, in blocks adding up to ``total`` iterations: each block is
    (means (R, b): (1/m) Σ_i t_i(k) for its iterations k, times (R, b, m) t(k) when ``record``, else
    None).  The compiled kernel when kernels are compiled, else the numpy reference (module doc)."""
    blocks = _maxplus_kernel if jit.ENABLED else _maxplus_numpy
    return blocks(source, graph, R, total, rng, record)


def _maxplus_kernel(source: Source, graph: Graph, R: int, total: int, rng: np.random.Generator,
                    record: bool) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    indptr, indices = csr_arrays(graph)
    m = indptr.size - 1
    t = np.zeros((R, m))
    for x in _draw_blocks(source, R, m, total, rng):
        means = np.empty(x.shape[:2])
        kernels.maxplus_steps(t, x, indptr, indices, means, record)
        yield means, (x if record else None)


def _maxplus_numpy(source: Source, graph: Graph, R: int, total: int, rng: np.random.Generator,
                   record: bool) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    """The reference: one iteration at a time, t ← max over each closed neighbourhood + the draws."""
    cptr, cidx = closed_csr(graph)
    m = cptr.size - 1
    t = np.zeros((R, m))
    starts = cptr[:-1]
    for x in _draw_blocks(source, R, m, total, rng):
        means = np.empty(x.shape[:2])
        for k in range(x.shape[1]):
            t = np.maximum.reduceat(t[:, cidx], starts, axis=1) + x[:, k]
            means[:, k] = t.mean(axis=1)
            if record:
                x[:, k] = t
        yield means, (x if record else None)


def _trace_cap(R: int, n: int, per: int, scheme: str) -> None:
    """Refuse a trace of more than limits.MAX_TRACE_VALUES values (replicas × iterations × per)."""
    cap = limits.MAX_TRACE_VALUES
    if R * n * per > cap:
        if n * per > cap:
            raise ParameterError("updates", "gradient_trace_updates", scheme=scheme, cap=cap, fit=max(1, cap // per))
        raise ParameterError("replicas", "gradient_trace_replicas", scheme=scheme, cap=cap, updates=n,
                             fit=cap // (n * per))


def dpsgd_finish_times(source: Source, graph: Graph, R: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """(R, n + 1, m): every node's finish times t_i(k) of d-psgd for k = 0 … n (t(0) = 0), R replicas
    (for the error simulation and the timeline).  At most limits.MAX_TRACE_VALUES values (a
    ParameterError naming ``updates`` or ``replicas`` beyond)."""
    indptr, _ = csr_arrays(graph)
    m = indptr.size - 1
    _trace_cap(R, n + 1, m, "d-psgd")
    out = np.zeros((R, n + 1, m))
    k = 1
    for _, times in maxplus_blocks(source, graph, R, n, rng, True):
        assert times is not None
        out[:, k:k + times.shape[1]] = times
        k += times.shape[1]
    return out


def dpsgd_batch_means(source: Source, graph: Graph, R: int, w: int, n: int, B: int, rng: np.random.Generator,
                      keep: bool) -> tuple[list[BatchMeans], str]:
    """The cycle time by batch means: R replicas, w warm-up iterations, then n measured ones in B
    batches per replica, of the increments of the mean finish time (module doc).  Every gradient is
    fresh: the staleness totals count m fresh gradients per measured iteration."""
    indptr, _ = csr_arrays(graph)
    m = indptr.size - 1
    bm = BatchMeans(R, w, n, B, keep)
    for means, _ in maxplus_blocks(source, graph, R, w + n, rng, False):
        j0 = bm.j
        measured = max(0, min(j0 + means.shape[1], w + n) - max(j0, w))
        bm.fresh += float(R * m * measured)
        if bm.add_times(means):
            break
    path = "compiled kernel" if jit.ENABLED else "numpy"
    return [bm], f"max-plus recursion over the neighbours ({path}), increments of the mean finish time"


# -- ad-psgd -----------------------------------------------------------------------------------------

@dataclass(eq=False)
class GossipEvents:
    """n consecutive gradients of ad-psgd in each of R independent replicas, in time order.

    times      (R, n) float  when each gradient finished
    nodes      (R, n) int32  the node that finished it
    peers      (R, n) int32  the neighbour it averaged with (uniform among its neighbours; −1 for a
                             node without one)
    staleness  (R, n) int32  averagings a neighbour started with that node while it computed
    """

    times: np.ndarray
    nodes: np.ndarray
    peers: np.ndarray
    staleness: np.ndarray

    @property
    def mean_staleness(self) -> float:
        """The mean staleness of the gradients (tends to 1: every averaging lands on one gradient in
        progress, that of the peer)."""
        return float(self.staleness.mean()) if self.staleness.size else 0.0


def gossip_staleness(nodes: np.ndarray, peers: np.ndarray, since: np.ndarray) -> np.ndarray:
    """The staleness of consecutive events (kernel doc: :func:`~distsgd.engines.runtime_kernels.gossip_staleness`),
    ``since`` updated: the compiled loop when kernels are compiled, else :func:`_gossip_staleness_numpy`."""
    if not jit.ENABLED:
        return _gossip_staleness_numpy(nodes, peers, since)
    out = np.empty(nodes.size, dtype=np.int64)
    kernels.gossip_staleness(nodes.astype(np.int64), peers.astype(np.int64), since, out)
    return out


def _gossip_staleness_numpy(nodes: np.ndarray, peers: np.ndarray, since: np.ndarray) -> np.ndarray:
    """The reference, by sorting: with M_e = #{e' < e : peers[e'] = nodes[e]} (the averagings that
    reached node nodes[e] before event e), event e's staleness is M_e − M_p for p its node's previous
    event (no event picks its own node), or since[node] + M_e for its first."""
    E, m = nodes.size, since.size
    i, j = nodes.astype(np.int64), peers.astype(np.int64)
    pos = np.arange(E, dtype=np.int64)
    got = j >= 0
    marks = np.sort(j[got] * E + pos[got])  # (peer, position) of every averaging
    M = np.searchsorted(marks, i * E + pos) - np.searchsorted(marks, i * E)
    order = np.argsort(i * E + pos)  # by node, then time
    first = np.ones(E, dtype=bool)
    first[1:] = i[order][1:] != i[order][:-1]
    prev_M = np.empty(E, dtype=np.int64)
    prev_M[1:] = M[order][:-1]
    out = np.empty(E, dtype=np.int64)
    out[order] = np.where(first, since[i[order]] + M[order], M[order] - prev_M)
    total = np.bincount(j[got], minlength=m)
    last = np.ones(E, dtype=bool)
    last[:-1] = first[1:]
    since += total
    since[i[order][last]] = total[i[order][last]] - M[order][last]
    return out


def _gossip_stream(source: Source, indptr: np.ndarray, indices: np.ndarray, n: int, rng: np.random.Generator,
                   peer_rng: np.random.Generator) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray,
                                                                    np.ndarray]]:
    """One run's first n gradients in blocks (g0, times, nodes, peers, staleness)."""
    m = indptr.size - 1
    deg = np.diff(indptr)
    since = np.zeros(m, dtype=np.int64)
    for g0, t, w, _ in merged_stream(source, m, 1, n, rng):
        node = w.astype(np.int64)
        d = deg[node]
        has = d > 0
        peer = np.full(node.size, -1, dtype=np.int64)
        peer[has] = indices[indptr[node[has]] + peer_rng.integers(0, d[has])]
        yield g0, t, node, peer, gossip_staleness(node, peer, since)


def adpsgd_events(source: Source, graph: Graph, R: int, n: int, rng: np.random.Generator) -> GossipEvents:
    """The first n gradients of R independent ad-psgd runs (:class:`GossipEvents`): the times and
    nodes are async's merged renewal stream for the same ``rng`` (replica after replica), the peers
    come from a stream spawned off ``rng`` first.  At most limits.MAX_TRACE_VALUES events in all."""
    indptr, indices = csr_arrays(graph)
    _trace_cap(R, n, 1, "ad-psgd")
    peer_rng = rng.spawn(1)[0]
    times = np.empty((R, n))
    nodes = np.empty((R, n), dtype=np.int32)
    peers = np.empty((R, n), dtype=np.int32)
    stale = np.empty((R, n), dtype=np.int32)
    for r in range(R):
        for g0, t, node, peer, st in _gossip_stream(source, indptr, indices, n, rng, peer_rng):
            e = slice(g0, g0 + t.size)
            times[r, e], nodes[r, e], peers[r, e], stale[r, e] = t, node, peer, st
    return GossipEvents(times, nodes, peers, stale)


def adpsgd_batch_means(source: Source, graph: Graph, R: int, w: int, n: int, B: int, rng: np.random.Generator,
                       keep: bool) -> tuple[list[BatchMeans], str]:
    """The time per gradient and the staleness by batch means, replica by replica, each streamed
    window by window (as async's :func:`~distsgd.engines.renewal.merged_batch_means`, with the
    staleness of ad-psgd)."""
    indptr, indices = csr_arrays(graph)
    peer_rng = rng.spawn(1)[0]
    acc = []
    for r in range(R):
        bm = BatchMeans(1, w, n, B, keep and r == 0)
        for g0, t, _, _, st in _gossip_stream(source, indptr, indices, w + n, rng, peer_rng):
            bm.add_staleness(np.arange(g0, g0 + t.size), st)
            bm.add_times(t[None, :])
        acc.append(bm)
    return acc, "merged renewal processes (no node waits), a random neighbour per gradient"

"""The graph of decentralised SGD (DESIGN §12.1): a checked edge list, its neighbours, the
Metropolis–Hastings mixing matrix W and its spectral gap δ.

W has w_ij = 1/(1 + max(d_i, d_j)) on each edge and w_ii = 1 − Σ_j w_ij (Xiao & Boyd 2004): symmetric,
doubly stochastic and, with w_ii ≥ 1/(1 + d_i) > 0, with every eigenvalue in (−1, 1].  The gap
δ = 1 − max(|λ₂(W)|, |λ_m(W)|) is computed from I − W (no cancellation in 1 − λ): every eigenvalue of the
dense matrix up to ``limits.TOPOLOGY_DENSE_EIGEN_MAX`` nodes; above, the Fourier transform of a Cayley
graph's first row over its group, or sparse Lanczos, then shift-invert.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

from .. import limits
from ..params import Domain, ParameterError
from ..random import generator

__all__ = ["Topology", "NODES", "GAP_METHODS", "edge_digest"]

#: nodes m of a graph
NODES = Domain("m", 1, limits.TOPOLOGY_MAX_NODES, integer=True, symbol="m", doc="nodes of the graph")
#: the ways :meth:`Topology.spectral_gap_by` computes δ
GAP_METHODS = ("dense", "group", "lanczos", "shift-invert")
_NCV, _TOL, _SHIFT = 40, 1e-12, 1e-10  # Lanczos vectors, ARPACK's relative tolerance, shift-invert's offset


def edge_digest(m: int, edges: np.ndarray) -> str:
    """SHA-1 of m and the canonical int64 edges."""
    return hashlib.sha1(np.int64(m).tobytes() + np.ascontiguousarray(edges, dtype=np.int64).tobytes()).hexdigest()


@dataclass(frozen=True, eq=False)
class Topology:
    """A connected undirected graph on nodes 0…m−1, checked on construction.

    ``edges`` is E × 2 int64, each row i < j, rows in increasing order, no repeats (build one with
    :func:`topology` or :func:`topology_from_edges`); ``group`` the shape of the abelian group whose
    Cayley graph it is (node i the i-th element in C order; () when it is not one), which gives the
    spectrum by an FFT; ``label`` a short English name (``torus 4×8``, ``random 4-regular``; the spec
    when none is given).  Equal (and hashed) by spec, m and edges.  Arrays are read-only.
    """

    spec: str
    m: int
    edges: np.ndarray = field(repr=False)
    label: str = ""
    group: tuple[int, ...] = field(default=(), repr=False)
    #: degree of each node (m,); CSR neighbours without self: node i's are indices[indptr[i]:indptr[i+1]], sorted
    degrees: np.ndarray = field(init=False, repr=False)
    indptr: np.ndarray = field(init=False, repr=False)
    indices: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        m = NODES.check(self.m, "m")
        e = np.asarray(self.edges)
        if e.ndim != 2 or e.shape[1] != 2 or (e.size and e.dtype.kind not in "iu"):
            raise ParameterError("topology", "topology_edges_array", what=f"shape {e.shape}, {e.dtype}")
        e = e.astype(np.int64)
        if len(e) > limits.TOPOLOGY_MAX_EDGES:
            raise ParameterError("topology", "topology_rows_cap", rows=len(e), cap=limits.TOPOLOGY_MAX_EDGES)
        keys = e[:, 0] * m + e[:, 1]
        if e.size and (e.min() < 0 or e.max() >= m or (e[:, 0] >= e[:, 1]).any() or (np.diff(keys) <= 0).any()):
            raise ParameterError("topology", "topology_not_canonical")
        degrees = np.bincount(e.ravel(), minlength=m)
        rows, cols = np.concatenate([e[:, 0], e[:, 1]]), np.concatenate([e[:, 1], e[:, 0]])
        order = np.lexsort((cols, rows))
        indptr = np.concatenate([[0], np.cumsum(degrees)])
        for name, value in (("m", m), ("edges", e), ("degrees", degrees), ("indptr", indptr),
                            ("indices", cols[order]), ("group", tuple(int(g) for g in self.group)),
                            ("label", self.label or self.spec)):
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
            object.__setattr__(self, name, value)
        count, labels = csgraph.connected_components(self._adjacency(), directed=False)
        if count > 1:
            raise ParameterError("topology", "topology_disconnected", components=count,
                                 node=int(np.flatnonzero(labels != labels[0])[0]))
        if self.group and not self._is_cayley():
            raise ParameterError("topology", "topology_not_cayley", group="×".join(map(str, self.group)))

    def _adjacency(self) -> sp.csr_array:
        return sp.csr_array((np.ones(self.indices.size), self.indices, self.indptr), shape=(self.m, self.m))

    def _is_cayley(self) -> bool:
        """Whether node i's neighbours are i + S in the group (S: node 0's neighbours), for every i."""
        if math.prod(self.group) != self.m or self.min_degree != self.max_degree:
            return False
        coords = np.stack(np.unravel_index(np.arange(self.m), self.group), axis=1)  # m × r
        offsets = coords[self.indices[: self.max_degree]]  # S (node 0's neighbours; node 0 is the identity)
        moved = (coords[:, None, :] + offsets[None, :, :]) % np.asarray(self.group)
        expected = np.sort(np.ravel_multi_index(tuple(np.moveaxis(moved, -1, 0)), self.group), axis=1)
        return bool(np.array_equal(expected.ravel(), self.indices))

    # -- identity -----------------------------------------------------------------------------------
    @cached_property
    def digest(self) -> str:
        """SHA-1 of m and the edges: the graph, whatever its spec."""
        return edge_digest(self.m, self.edges)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Topology) and (self.spec, self.m, self.digest) == (other.spec, other.m, other.digest)

    def __hash__(self) -> int:
        return hash((self.spec, self.m, self.digest))

    def __reduce__(self) -> tuple[Any, ...]:  # its parts (checked again), not its caches
        return (Topology, (self.spec, self.m, np.asarray(self.edges), self.label, self.group))

    def __str__(self) -> str:
        return self.spec

    # -- degrees and neighbours -----------------------------------------------------------------------
    @property
    def min_degree(self) -> int:
        return int(self.degrees.min())

    @property
    def max_degree(self) -> int:
        return int(self.degrees.max())

    @property
    def neighbours(self) -> tuple[np.ndarray, np.ndarray]:
        """The CSR arrays ``(indptr, indices)``: node i's neighbours (itself excluded, sorted) are
        ``indices[indptr[i]:indptr[i + 1]]``."""
        return self.indptr, self.indices

    @property
    def is_connected(self) -> bool:
        """Always True: a disconnected graph is refused on construction (decentralised SGD cannot mix)."""
        return bool(csgraph.connected_components(self._adjacency(), directed=False)[0] == 1)

    @cached_property
    def closed(self) -> np.ndarray:
        """m × (Δ+1) int64: row i is i, then its neighbours, padded by repeating i, so that
        ``np.max(t[..., closed], axis=-1)`` is the latest time in each closed neighbourhood.
        Refused above ``limits.TOPOLOGY_MAX_PADDED`` entries (a hub: use :attr:`neighbours`)."""
        width = self.max_degree + 1
        if self.m * width > limits.TOPOLOGY_MAX_PADDED:
            raise ParameterError("topology", "topology_padded_cap", size=self.m * width,
                                 cap=limits.TOPOLOGY_MAX_PADDED)
        out = np.repeat(np.arange(self.m, dtype=np.int64)[:, None], width, axis=1)
        rows = np.repeat(np.arange(self.m), self.degrees)
        out[rows, 1 + np.arange(self.indices.size) - self.indptr[rows]] = self.indices
        out.setflags(write=False)
        return out

    # -- the mixing matrix and its spectrum ------------------------------------------------------------
    def weights(self) -> np.ndarray:
        """The Metropolis–Hastings weight 1/(1 + max(d_i, d_j)) of each edge (E,)."""
        return 1.0 / (1.0 + np.maximum(self.degrees[self.edges[:, 0]], self.degrees[self.edges[:, 1]]))

    def _matrix(self, laplacian: bool) -> sp.csr_array:
        """W, or I − W (built from the weights, without the cancellation 1 − (1 − Σ w))."""
        w, e, m = self.weights(), self.edges, self.m
        out = np.bincount(e[:, 0], w, m) + np.bincount(e[:, 1], w, m)  # Σ_j w_ij
        sign, diag = (-1.0, out) if laplacian else (1.0, 1.0 - out)
        rows = np.concatenate([e[:, 0], e[:, 1], np.arange(m)])
        cols = np.concatenate([e[:, 1], e[:, 0], np.arange(m)])
        return sp.csr_array((np.concatenate([sign * w, sign * w, diag]), (rows, cols)), shape=(m, m))

    def mixing(self) -> sp.csr_array:
        """The mixing matrix W as a scipy.sparse CSR array (m + 2E entries): symmetric, doubly
        stochastic, nonnegative (w_ii ≥ 1/(1 + d_i) > 0)."""
        return self._matrix(laplacian=False)

    def mixing_dense(self) -> np.ndarray:
        """W as a dense m × m array, for m ≤ ``limits.TOPOLOGY_DENSE_EIGEN_MAX``."""
        if self.m > limits.TOPOLOGY_DENSE_EIGEN_MAX:
            raise ParameterError("topology", "topology_dense_cap", cap=limits.TOPOLOGY_DENSE_EIGEN_MAX, m=self.m)
        return np.asarray(self.mixing().toarray())

    def eigenvalues(self) -> np.ndarray:
        """Every eigenvalue of W, ascending: 1 − those of I − W, of the dense matrix for m ≤
        ``limits.TOPOLOGY_DENSE_EIGEN_MAX``, else by the FFT of a Cayley graph (refused for another)."""
        if self.m > limits.TOPOLOGY_DENSE_EIGEN_MAX and not self.group:
            raise ParameterError("topology", "topology_dense_cap", cap=limits.TOPOLOGY_DENSE_EIGEN_MAX, m=self.m)
        return (1.0 - _spectrum(self, "dense" if self.m <= limits.TOPOLOGY_DENSE_EIGEN_MAX else "group"))[::-1]

    @cached_property
    def _gap(self) -> tuple[float, str]:
        if self.m == 1:
            return 1.0, "one node"
        method = "dense" if self.m <= limits.TOPOLOGY_DENSE_EIGEN_MAX else "group" if self.group else "sparse"
        return _spectral_gap(self, method)

    @property
    def spectral_gap(self) -> float:
        """δ = 1 − max(|λ₂(W)|, |λ_m(W)|): from every eigenvalue of I − W for m ≤
        ``limits.TOPOLOGY_DENSE_EIGEN_MAX``, above by an FFT over the group of a Cayley graph, else
        sparse (Lanczos, then shift-invert); 1 for a single node (by convention: it is its own average)."""
        return self._gap[0]

    @property
    def spectral_method(self) -> str:
        """How :attr:`spectral_gap` was computed: dense, group, Lanczos, shift-invert or one node."""
        return self._gap[1]

    def spectral_gap_by(self, method: str, restarts: int = limits.TOPOLOGY_LANCZOS_RESTARTS) -> float:
        """δ by one method of :data:`GAP_METHODS` (for cross-checks): ``lanczos`` falls back to
        shift-invert when ``restarts`` do not converge, ``shift-invert`` goes there at once."""
        if method not in GAP_METHODS:
            raise ParameterError("topology", "topology_gap_method", method=method, choices=", ".join(GAP_METHODS))
        if method == "group" and not self.group:
            raise ParameterError("topology", "topology_not_cayley", group="()")
        kind = "sparse" if method in ("lanczos", "shift-invert") else method
        return _spectral_gap(self, kind, 0 if method == "shift-invert" else restarts)[0]

    # -- views ---------------------------------------------------------------------------------------
    def as_dict(self) -> dict[str, Any]:
        """The JSON object of DESIGN §12.1: ``{"spec", "m", "min_degree", "max_degree", "spectral_gap"}``."""
        return {"spec": self.spec, "m": self.m, "min_degree": self.min_degree, "max_degree": self.max_degree,
                "spectral_gap": self.spectral_gap}


def _ends(mu_low: float, mu_high: float) -> float:
    """δ from the eigenvalues of I − W: μ₂ = 1 − λ₂ and μ_max = 1 − λ_m give δ = min(μ₂, 2 − μ_max)."""
    return float(min(1.0, mu_low, 2.0 - mu_high))


def _spectral_gap(t: Topology, method: str, restarts: int = limits.TOPOLOGY_LANCZOS_RESTARTS) -> tuple[float, str]:
    """δ of ``t`` by ``dense`` (numpy eigvalsh of I − W), ``group`` (the eigenvalues of a Cayley graph's
    I − W are the Fourier transform of its first row over the group) or ``sparse`` (below)."""
    if method in ("dense", "group"):
        mu = _spectrum(t, method)
        return _ends(mu[1], mu[-1]), method
    return _sparse_gap(t._matrix(laplacian=True), restarts)


def _spectrum(t: Topology, method: str) -> np.ndarray:
    """Every eigenvalue of I − W, ascending: numpy eigvalsh of the dense matrix, or the Fourier
    transform over the group of a Cayley graph's first row (its I − W is a convolution on the group)."""
    lap = t._matrix(laplacian=True)
    if method == "dense":
        if t.m > limits.TOPOLOGY_DENSE_EIGEN_MAX:
            raise ParameterError("topology", "topology_dense_cap", cap=limits.TOPOLOGY_DENSE_EIGEN_MAX, m=t.m)
        return np.asarray(np.linalg.eigvalsh(lap.toarray()))
    return np.sort(np.fft.fftn(lap[[0], :].toarray().reshape(t.group)).real.ravel())


def _sparse_gap(lap: sp.csr_array, restarts: int) -> tuple[float, str]:
    """δ from the two ends of the spectrum of L = I − W: μ₂ the smallest eigenvalue of L + (2/m)·11ᵀ
    (the constant vector's 0 moved to 2, above every other), μ_max the largest of L — needed only when
    μ₂ > 2 − 2·max_i L_ii, since Gershgorin's discs put μ_max ≤ 2·max_i L_ii (the path, the ring: μ₂ ~ 1/m²
    while the top of their spectrum is too crowded for Lanczos).  Each end by Lanczos (ARPACK) for
    ``restarts`` restarts, fast when the gap is large, else by shift-invert about −ε or 2 + ε, whose
    sparse factorisation stays small on the low-dimensional graphs that have small gaps."""
    m = lap.shape[0]
    start = generator(0).standard_normal(m)  # (fixed: the same δ on every call)
    deflated = LinearOperator((m, m), matvec=lambda x: lap @ x + 2.0 * np.sum(x) / m, dtype=float)
    low, how_low = _end(deflated, lap, "SA", start, restarts)
    if low <= 2.0 - 2.0 * float(lap.diagonal().max()):
        return _ends(low, 0.0), how_low
    high, how_high = _end(lap, lap, "LA", start, restarts)
    return _ends(low, high), how_low if how_low == how_high else f"{how_low} and {how_high}"


def _end(op: Any, lap: sp.csr_array, which: str, start: np.ndarray, restarts: int) -> tuple[float, str]:
    """The smallest (``SA``) or largest (``LA``) eigenvalue of ``op``, and how it was found."""
    if restarts > 0:
        try:
            return float(eigsh(op, k=1, which=which, v0=start, ncv=_NCV, maxiter=restarts, tol=_TOL,
                               return_eigenvectors=False)[0]), "Lanczos"
        except ArpackNoConvergence:  # not an error: a small gap; shift-invert below finds the same end
            pass
    sigma = -_SHIFT if which == "SA" else 2.0 + _SHIFT
    vals = eigsh(lap.tocsc(), k=2 if which == "SA" else 1, sigma=sigma, which="LM", v0=start, tol=_TOL,
                 return_eigenvectors=False)
    return float(np.max(vals)), "shift-invert"  # SA: {0, μ₂} nearest −ε; LA: μ_max nearest 2 + ε

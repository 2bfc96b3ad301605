"""A graph as CSR arrays, the form the graph engines and the gap chain read (DESIGN §12.3): node i's
neighbours, itself excluded, are ``indices[indptr[i]:indptr[i + 1]]``.  A
:class:`~distsgd.topology.Topology` is one; :class:`CSR` makes one from plain arrays."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Protocol

import numpy as np

__all__ = ["Graph", "CSR", "csr_arrays"]


class Graph(Protocol):
    """A graph as CSR arrays: node i's neighbours (itself excluded) are ``indices[indptr[i]:indptr[i+1]]``."""

    @property
    def indptr(self) -> np.ndarray: ...

    @property
    def indices(self) -> np.ndarray: ...


@dataclass(frozen=True, eq=False)
class CSR:
    """A graph from plain CSR arrays (see :class:`Graph`)."""

    indptr: np.ndarray
    indices: np.ndarray


def csr_arrays(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """``(indptr, indices)`` as int64, checked for what a compiled loop relies on: indptr starts at 0,
    never decreases and ends at len(indices); every index is a node and none is its own neighbour.
    ValueError otherwise — a broken contract, not a user's input (a Topology is checked when built;
    it also guarantees symmetry and connectedness, which this does not re-check).  The arrays of a
    graph already checked are given again without a check (the charts ask for them thousands of times
    a rerun, through the cost models)."""
    try:
        return _CHECKED[graph]
    except (KeyError, TypeError):  # not yet seen, or not weakly referenceable
        pass
    indptr = np.ascontiguousarray(graph.indptr, dtype=np.int64)
    indices = np.ascontiguousarray(graph.indices, dtype=np.int64)
    m = indptr.size - 1
    if indptr.ndim != 1 or indices.ndim != 1 or m < 1 or indptr[0] != 0 or indptr[-1] != indices.size \
            or np.any(np.diff(indptr) < 0):
        raise ValueError("graph: indptr must run from 0 to len(indices), never decreasing")
    if indices.size and (indices.min() < 0 or indices.max() >= m
                         or np.any(indices == np.repeat(np.arange(m), np.diff(indptr)))):
        raise ValueError("graph: every index must be another node, in [0, m)")
    if not (indptr.flags.writeable or indices.flags.writeable):  # a Topology's: cannot change later
        try:
            _CHECKED[graph] = (indptr, indices)
        except TypeError:
            pass
    return indptr, indices


_CHECKED: weakref.WeakKeyDictionary[Graph, tuple[np.ndarray, np.ndarray]] = weakref.WeakKeyDictionary()

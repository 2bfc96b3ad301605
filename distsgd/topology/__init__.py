"""Graphs for decentralised SGD (DESIGN §12.1): which nodes talk, how they weigh each other, and δ.

A :class:`Topology` is an undirected connected graph on nodes 0…m−1 with its Metropolis–Hastings
mixing matrix W (w_ij = 1/(1 + max(d_i, d_j)) on each edge, w_ii = 1 − Σ_j w_ij) and its spectral gap
δ = 1 − max(|λ₂(W)|, |λ_m(W)|).  :func:`topology` reads a spec string, as
:func:`~distsgd.delays.parse_delay` does a delay law; :func:`topology_from_edges` takes an array.
``graph`` holds the Topology and its spectrum, ``families`` the named graphs and edge lists.

>>> t = topology("torus", 12)
>>> t.spec, t.m, len(t.edges), t.min_degree, t.max_degree
('torus(a=3, b=4)', 12, 24, 4, 4)
>>> import math
>>> abs(topology("ring", 8).spectral_gap - 2 / 3 * (1 - math.cos(2 * math.pi / 8))) < 1e-12
True

Every refusal is a :class:`~distsgd.params.ParameterError` naming ``topology``.  (``distsgd.topology``
is the function; import this package's other names with ``from distsgd.topology import …``.)
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .. import limits
from ..memo import Memo
from ..params import ParameterError
from ..random import Seed
from .families import BUILDERS, DEGREE, SIDE, from_array
from .graph import GAP_METHODS, NODES, Topology

__all__ = ["Topology", "topology", "topology_from_edges", "check_topology", "graph_fits", "canonical_spec",
           "TOPOLOGY_NAMES", "NODES", "DEGREE", "SIDE", "GAP_METHODS"]

# -- the spec string ---------------------------------------------------------------------------------

_SPEC = re.compile(r"^\s*([A-Za-z][\w-]*)\s*(?:\((.*)\))?\s*$", re.S)
#: spec name → its keywords
_KEYS: dict[str, tuple[str, ...]] = {"ring": (), "torus": ("a", "b"), "hypercube": (), "complete": (), "star": (),
                                     "exponential": (), "random-regular": ("d", "seed"), "edges": ("file",)}
TOPOLOGY_NAMES: tuple[str, ...] = tuple(_KEYS)


def check_topology(value: object) -> Topology:
    """``value`` itself if it is a Topology, else a ParameterError naming ``topology``."""
    if not isinstance(value, Topology):
        raise ParameterError("topology", "topology_expected", type=type(value).__name__)
    return value


@contextmanager
def _naming(shown: str) -> Iterator[None]:
    """A refusal of a part (``d``, ``m``, ``a``) re-raised as one naming ``topology``, the part nested."""
    try:
        yield
    except ParameterError as exc:
        if exc.parameter == "topology":
            raise
        raise ParameterError("topology", "in_spec", spec=shown, error=exc) from None


def _parse(spec: str) -> tuple[str, dict[str, str]]:
    """(name, {keyword: text}) of a spec such as ``torus(a=4, b=8)``; ``edges(file=…)`` keeps the
    whole rest as the path (commas included)."""
    if len(spec) > limits.SPEC_MAX_CHARS:
        raise ParameterError("topology", "spec_too_long", cap=limits.SPEC_MAX_CHARS)
    match = _SPEC.match(spec)
    if not match or spec.count("(") != spec.count(")") and not spec.lstrip().lower().startswith("edges"):
        raise ParameterError("topology", "spec_malformed", spec=spec.strip()[:80])
    name, body = match.group(1).lower().replace("_", "-"), (match.group(2) or "").strip()
    if name not in _KEYS:
        raise ParameterError("topology", "topology_unknown", name=name, choices=", ".join(TOPOLOGY_NAMES))
    if body and not _KEYS[name]:
        raise ParameterError("topology", "topology_no_parameters", name=name)
    parts = [body] if name == "edges" and body else body.split(",") if body else []
    args: dict[str, str] = {}
    for part in parts:
        if "=" not in part:
            raise ParameterError("topology", "argument_malformed", argument=part.strip(), family=name)
        key, value = (s.strip() for s in part.split("=", 1))
        if key.lower() not in _KEYS[name]:
            raise ParameterError(key or "topology", "not_a_family_parameter", family=name, keys=", ".join(_KEYS[name]))
        if key.lower() in args:
            raise ParameterError(key, "given_twice", family=name)
        if not value:
            raise ParameterError(key, "no_value", family=name)
        args[key.lower()] = value
    return name, args


def topology(spec: str | Topology, m: int, seed: Seed = None) -> Topology:
    """The graph named by ``spec`` on ``m`` nodes (DESIGN §12.1): ``ring``, ``torus``, ``torus(a=…, b=…)``,
    ``hypercube``, ``complete``, ``star``, ``exponential``, ``random-regular(d=…)`` (drawn from ``seed``,
    or ``seed=`` in the spec; the spec it gives back records the seed), ``edges(file=…)``.  A Topology is
    passed through when it has m nodes.

    >>> topology("random-regular(d=3)", 10, seed=1) == topology("random-regular(d=3, seed=1)", 10)
    True
    """
    if isinstance(spec, Topology):
        if spec.m != m:
            raise ParameterError("topology", "topology_m_mismatch", nodes=spec.m, m=m)
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise ParameterError("topology", "topology_expected_spec", value=spec)
    with _naming(spec.strip()[:80]):
        name, args = _parse(spec)
        m = NODES.check(m, "m")
        if name == "edges" or (name == "random-regular" and not _fixed(seed)):  # a file read now, a fresh draw
            return BUILDERS[name](m, args, seed)
        key = (name, tuple(sorted(args.items())), m, seed if name == "random-regular" else None)
        return _BUILT.cached(key, lambda: BUILDERS[name](m, args, seed),
                             keep=lambda g: g.m * (g.max_degree + 1) <= _KEEP_ENTRIES)


#: the graphs :func:`topology` built last, by (family, arguments, m, seed): a Topology is immutable and
#: the charts ask for the same graphs at every rerun (each scheme of a chart, each m of a curve);
#: a graph is kept when its closed neighbourhoods padded to the largest degree have at most
#: _KEEP_ENTRIES entries (≈ 0.5 MB), so the memo holds at most ≈ 64 × 2 MB
_KEEP_ENTRIES = 2**16
_BUILT: Memo[tuple[Any, ...], Topology] = Memo(64)


def _fixed(seed: Seed) -> bool:
    """A seed that names one graph: an integer (a Generator or SeedSequence is consumed, None fresh)."""
    return isinstance(seed, (int, np.integer)) and not isinstance(seed, bool)


def topology_from_edges(edges: Any, m: int) -> Topology:
    """The graph of an E × 2 array of node ids 0…m−1 (DESIGN §12.1): refused with a self-loop, an id
    out of range or not an integer, or disconnected; repeats (either direction) are merged.  Its spec
    is ``edges(sha1=…)``, the first 12 hex digits of :attr:`Topology.digest`.

    >>> topology_from_edges([[0, 1], [1, 2], [2, 1]], 3).edges.tolist()
    [[0, 1], [1, 2]]
    """
    with _naming("edges"):
        return from_array(edges, NODES.check(m, "m"))


@functools.lru_cache(maxsize=1024)
def graph_fits(spec: str, m: int) -> bool:
    """True when ``spec`` builds a graph on m nodes (a hypercube needs m a power of 2, a random
    d-regular graph m·d even and d < m, …): the charts over m keep a graph's points where it
    exists.  The answer is :func:`topology`'s own (with seed 0): a refusal is False."""
    try:
        topology(spec, m, seed=0)
    except ParameterError as exc:
        if exc.parameter != "topology":
            raise
        return False
    return True


def canonical_spec(spec: str) -> str:
    """``spec`` with its name and parameters checked and written one way (``Torus( a = 4 ,b=8)`` is
    ``torus(a=4, b=8)``), before m is known (a sweep's grid names a graph for every m; whether the
    graph exists on a point's m is decided when the point is built)."""
    with _naming(str(spec).strip()[:80]):
        name, args = _parse(spec)
    return name + (f"({', '.join(f'{k}={v}' for k, v in args.items())})" if args else "")

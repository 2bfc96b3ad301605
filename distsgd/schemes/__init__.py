"""The seven distributed-SGD schemes: one class per scheme, and everything the cores need to
know about it lives on that class (DESIGN §2) — the registry.

A scheme is a frozen, validated dataclass (its parameters m, K, H, D) whose class declares
the *process* the workers and the parameter server follow, and implements:

==============================  =============================================================
``expected_runtime(delay, w)``  the analytic E[T] (:mod:`distsgd.analytic` validates, then asks)
``iteration_times(delay, n, r)`` n independent per-iteration runtimes (fresh-gradient schemes)
``update_trace(…)``, ``batch_means(…)``  the long runs of the renewal schemes
``iteration_cost(delay, R)``    the Monte Carlo cost model (≈ ns per iteration of one replica)
``timeline(delay, it, rng, out)`` the event-by-event run the Gantt chart draws
``fresh``, ``renewal``, ``waits``, ``grads_per_update``, ``steps_per_update``, ``tail_jobs``
                                the facts the SGD simulation, the bounds and the notes read
==============================  =============================================================

:data:`SCHEMES` maps a name to its class; :func:`register` adds one (a new scheme is one class
and one ``@register`` — see ``docs/DESIGN.md``).  Backup workers are :func:`backup_workers`:
k-sync with m = N + b and K = N (Chen et al. 2016).

>>> s = make_scheme("k-sync", m=4, K=2)
>>> s.label, s.grads_per_update
('k-sync (m=4, K=2)', 2)
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from ..params import Domain, ParameterError

# isort: split
# each module registers its schemes as it is imported, so this order is the registry's (and the
# dashboard's): sync, k-sync, k-batch-sync, then async, k-async, k-batch-async, then local-sgd,
# then the decentralised d-psgd and ad-psgd
from .synchronous import KBatchSync, KSync, Sync

# isort: split
from .asynchronous import Async, KAsync, KBatchAsync
from .base import (
    COMM_DELAY,
    H_DOMAIN,
    H_MAX,
    K_BATCH_MAX,
    K_DOMAIN,
    M_MAX,
    SCHEMES,
    M,
    Scheme,
    register,
)
from .local import LocalSGD

# isort: split
from ..topology import Topology
from ..topology import topology as build_topology
from .decentralised import ADPSGD, DPSGD, GraphScheme

__all__ = [
    "Scheme", "Sync", "KSync", "KBatchSync", "Async", "KAsync", "KBatchAsync", "LocalSGD",
    "GraphScheme", "DPSGD", "ADPSGD", "SCHEMES", "register", "make_scheme", "scheme_for", "backup_workers",
    "check_scheme", "scheme_class",
    "scheme_parameters", "SCHEME_NAMES", "M", "K_DOMAIN", "H_DOMAIN", "COMM_DELAY",
    "M_MAX", "K_BATCH_MAX", "H_MAX",
]

#: the seven schemes of DESIGN §2 and the two of §12, in the order the dashboard lists them: the
#: registry as imported (the dashboard reads :data:`SCHEMES` itself, which also holds any scheme
#: registered later)
SCHEME_NAMES: tuple[str, ...] = tuple(SCHEMES)


def scheme_class(name: str) -> type[Scheme]:
    key = str(name).strip().lower().replace("_", "-")
    if key not in SCHEMES:
        known = ", ".join(dict.fromkeys((*SCHEME_NAMES, *SCHEMES)))
        raise ParameterError("scheme", "unknown_scheme", name=name, choices=known)
    return SCHEMES[key]


def scheme_parameters(name: str) -> tuple[str, ...]:
    """The parameters a scheme takes besides m, e.g. ``("K",)`` or ``("H", "comm_delay")``."""
    return tuple(f.name for f in fields(scheme_class(name)) if f.name != "m")


def make_scheme(name: str, m: int, K: int | None = None, H: int | None = None,
                comm_delay: float = 0.0, topology: Topology | str | None = None) -> Scheme:
    """Build and validate a scheme.

    K is required for k-sync, k-batch-sync, k-async and k-batch-async (1 ≤ K ≤ m for the
    k-of-m schemes, K ≥ 1 for the batch ones) and must be left out otherwise; H ≥ 1 is
    required for local-sgd, and comm_delay D ≥ 0 belongs to local-sgd only.  ``topology`` (a
    :class:`~distsgd.topology.Topology` of m nodes, or a spec string such as ``"ring"``, built
    on m nodes; default ``"ring"``) belongs to d-psgd and ad-psgd only (DESIGN §12).
    """
    cls = scheme_class(name)
    takes = scheme_parameters(cls.name)
    M.check(m, "m")
    if "K" in takes:
        if K is None:
            raise ParameterError("K", "scheme_needs", scheme=cls.name, parameter="K", range=K_DOMAIN.phrase())
    elif K is not None:
        raise ParameterError("K", "not_a_scheme_parameter", scheme=cls.name)
    if "H" in takes:
        if H is None:
            raise ParameterError("H", "scheme_needs", scheme=cls.name, parameter="H", range=H_DOMAIN.phrase())
    elif H is not None:
        raise ParameterError("H", "not_a_scheme_parameter", scheme=cls.name)
    if "comm_delay" not in takes and not (comm_delay is None or (isinstance(comm_delay, (int, float))
                                                                  and comm_delay == 0)):
        raise ParameterError("comm_delay", "comm_delay_local_only", scheme=cls.name)
    if "topology" not in takes and topology is not None:
        raise ParameterError("topology", "not_a_scheme_parameter", scheme=cls.name)
    kwargs: dict[str, Any] = {"m": m}
    if "K" in takes:
        kwargs["K"] = K
    if "H" in takes:
        kwargs["H"] = H
        kwargs["comm_delay"] = 0.0 if comm_delay is None else comm_delay
    if "topology" in takes:
        kwargs["topology"] = (topology if isinstance(topology, Topology)
                              else build_topology("ring" if topology is None else topology, m))
    return cls(**kwargs)


def scheme_for(name: str, m: int, K: int | None = None, H: int | None = None, comm_delay: float = 0.0,
               graph: str = "ring") -> Scheme:
    """:func:`make_scheme` from a full set of controls, with only the parameters ``name`` takes:
    K clamped to m for the k-of-m schemes (the scheme says K ≤ m), H, D, and the graph's spec
    for the decentralised schemes (built on m nodes; a random one from seed 0).  The dashboard's
    charts and the what-if table build their schemes here."""
    cls = scheme_class(name)
    takes = scheme_parameters(cls.name)
    kw: dict[str, Any] = {}
    if "K" in takes:
        kw["K"] = min(K or 1, m) if cls.k_le_m else (K or 1)
    if "H" in takes:
        kw["H"] = H or 1
        kw["comm_delay"] = comm_delay
    if "topology" in takes:  # a random graph drawn from seed 0: the same graph on every chart
        kw["topology"] = build_topology(graph, m, seed=0)
    return make_scheme(cls.name, m, **kw)


def check_scheme(scheme: object) -> Scheme:
    """``scheme`` itself if it is a Scheme, else a ParameterError naming ``scheme``."""
    if not isinstance(scheme, Scheme):
        raise ParameterError("scheme", "expected_scheme", type=type(scheme).__name__)
    return scheme


def backup_workers(N: int, b: int) -> KSync:
    """Synchronous SGD with b backup workers: N + b start, the first N gradients are used."""
    N = M.check(N, "N")
    b = Domain("b", 0, M_MAX, integer=True).check(b, "b")
    return KSync(m=N + b, K=N)

"""distsgd: stragglers and staleness in distributed SGD — runtime and error, simulated and analytic.

The public API of DESIGN §5: ``parse_delay``, ``make_scheme``, ``expected_runtime`` (an
:class:`Estimate`) and ``simulate_runtime`` (a :class:`RuntimeSample`); clusters and traces
(§7: ``make_cluster``, ``load_trace``); ``sweep`` (§8: a grid of points, serial or on Dask); ``topology``
(§12: a graph for decentralised SGD, a :class:`Topology`).  Every bad input
raises :class:`ParameterError` naming the parameter.
"""
from .analytic import Estimate, expected_runtime
from .clusters import Cluster, make_cluster
from .delays import Delay, parse_delay
from .montecarlo import RuntimeSample, simulate_runtime
from .params import ParameterError
from .schemes import Scheme, backup_workers, make_scheme
from .sweeps import sweep
from .topology import Topology, topology
from .traces import Trace, load_trace

__all__ = ["Cluster", "make_cluster", "Trace", "load_trace", "Topology", "topology",
           "Delay", "Estimate", "ParameterError", "RuntimeSample", "Scheme", "backup_workers",
           "expected_runtime", "make_scheme", "parse_delay", "simulate_runtime", "sweep"]

"""The public API of DESIGN §5 (loaded lazily by ``__init__.py``)."""
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

"""distsgd: stragglers and staleness in distributed SGD — runtime and error, simulated and analytic."""
from .delays import Delay, parse_delay
from .params import ParameterError
from .schemes import Scheme, backup_workers, make_scheme

__all__ = ["Delay", "ParameterError", "Scheme", "backup_workers", "make_scheme", "parse_delay"]

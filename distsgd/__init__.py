"""distsgd: stragglers and staleness in distributed SGD — runtime and error, simulated and analytic.

The public API of DESIGN §5: ``parse_delay``, ``make_scheme``, ``expected_runtime`` (an
:class:`Estimate`) and ``simulate_runtime`` (a :class:`RuntimeSample`); clusters and traces
(§7: ``make_cluster``, ``load_trace``); ``sweep`` (§8: a grid of points, serial or on Dask); ``topology``
(§12: a graph for decentralised SGD, a :class:`Topology`).  Every bad input
raises :class:`ParameterError` naming the parameter.

The names are loaded on first use (``lazy_loader``, from ``__init__.pyi``, which lists them once for
the reader and the type checker): ``import distsgd.jit`` or ``python -m distsgd.ui.serve`` does not
import the whole library first, so the dashboard's server can start its kernel compiler at once.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)

"""Compiled kernels: one switch, one decorator.

The loops that cannot be vectorised (the asynchronous SGD step, the k-async stepper, …) are
written once as plain Python over numpy arrays and compiled by numba with ``nogil=True``, so a
kernel releases the GIL and two dashboard sessions use two cores (DESIGN §11).  The same
function, uncompiled, is the reference path the tests check the compiled one against.

* ``DISTSGD_JIT=0`` in the environment runs every kernel as plain Python (the reference path);
  so does a machine without numba.  :data:`ENABLED` says which is in force.
* ``cache=True``: compiled code is kept in numba's cache directory (``NUMBA_CACHE_DIR``, else
  ``__pycache__`` beside the source, else a per-user directory), so only the first process
  after an install pays the compile time.  A hosted app whose source tree is read-only needs
  ``NUMBA_CACHE_DIR`` pointing at a writable directory; numba falls back by itself when it can.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["ENABLED", "kernel"]

F = TypeVar("F", bound=Callable[..., Any])

try:
    import numba
except ImportError:  # numba is a requirement; a machine without it still runs the reference path
    numba = None  # type: ignore[assignment]

#: True when kernels are compiled (numba present and DISTSGD_JIT not set to 0)
ENABLED: bool = numba is not None and os.environ.get("DISTSGD_JIT", "1").strip().lower() not in ("0", "false", "no")


def kernel(fn: F) -> F:
    """Compile ``fn`` with ``numba.njit(nogil=True, cache=True)`` when :data:`ENABLED`, else
    return it unchanged; the plain function stays reachable as ``kernel.py_func`` either way."""
    if not ENABLED:
        fn.py_func = fn  # type: ignore[attr-defined]
        return fn
    assert numba is not None
    return numba.njit(nogil=True, cache=True)(fn)  # type: ignore[return-value]

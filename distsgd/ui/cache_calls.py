"""Streamlit's two caches, called with every argument by keyword.

``st.cache_data`` and ``st.cache_resource`` name each positional argument of a call from the
function's signature, and compute that signature again for each positional argument on every
call (``streamlit.type_util.get_func_parameters`` is not memoised): ≈ 40 µs an argument, 0.5 ms
for a view of 13 arguments, on every rerun of every session.  These decorators read the names
once and pass every argument by keyword.  A cache key is the same either way (each argument is
hashed under its name, in the signature's order), and so is everything else the cached function
does; ``clear`` is the cache's own.

Streamlit hashes an argument by its value unless told otherwise: :data:`HASH` keys the library's
objects by what identifies them (a delay law by its spec string, a measured trace or a user's data
set by its digest), never by their arrays, which for an upload are megabytes.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import streamlit as st

from ..clusters import Stragglers
from ..delays import Delay
from ..error.general import RealProblem
from ..topology import Topology
from ..traces import Trace

__all__ = ["HASH", "cache_data", "cache_resource"]

P = ParamSpec("P")
T = TypeVar("T")
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _subclasses(cls: type) -> list[type]:
    out: list[type] = [cls]
    subs: list[type] = cls.__subclasses__()
    for sub in subs:
        out += _subclasses(sub)
    return out


#: Streamlit matches hash_funcs by exact type: every delay family and the stragglers, hashed by
#: their key (a trace's by its digest), and a loaded trace by its digest
HASH: dict[Any, Any] = {cls: (lambda d: d.key) for cls in [*_subclasses(Delay), Stragglers]}
HASH[Trace] = lambda t: t.digest
HASH[Topology] = lambda t: t.digest
# a user's data set by its digest: Streamlit would hash a dataclass field by field, arrays included
HASH[RealProblem] = lambda p: (p.name, p.lam, p.eta, p.b, p.test_fraction, p.split_seed,
                                None if p.data is None else p.data.digest)


def cache_data(**options: Any) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """``st.cache_data(**options)``, called by keyword."""
    return functools.partial(_keyworded, st.cache_data(**options))


def cache_resource(**options: Any) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """``st.cache_resource(**options)``, called by keyword."""
    return functools.partial(_keyworded, st.cache_resource(**options))


def _keyworded(cache: Callable[[Callable[P, T]], Any], fn: Callable[P, T]) -> Callable[P, T]:
    cached = cache(fn)
    names = [p.name for p in inspect.signature(fn).parameters.values() if p.kind in _POSITIONAL]

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> T:
        return cached(**dict(zip(names, args, strict=False)), **kwargs)

    call.clear = cached.clear  # type: ignore[attr-defined]
    return call

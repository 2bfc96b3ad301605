"""Streamlit's two caches, called with every argument by keyword.

``st.cache_data`` and ``st.cache_resource`` name each positional argument of a call from the
function's signature, and compute that signature again for each positional argument on every
call (``streamlit.type_util.get_func_parameters`` is not memoised): ≈ 40 µs an argument, 0.5 ms
for a view of 13 arguments, on every rerun of every session.  These decorators read the names
once and pass every argument by keyword.  A cache key is the same either way (each argument is
hashed under its name, in the signature's order), and so is everything else the cached function
does; ``clear`` is the cache's own.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import streamlit as st

__all__ = ["cache_data", "cache_resource"]

P = ParamSpec("P")
T = TypeVar("T")
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


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

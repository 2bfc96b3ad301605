"""A small thread-safe memo for values the charts ask for again and again: at most ``size`` entries,
the least recently used dropped first.  The dashboard's server runs many sessions' reruns in threads
of one process, so every lookup and store holds the memo's lock; a value is computed outside it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Generic, TypeVar

__all__ = ["Memo"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Memo(Generic[K, V]):
    """``key → value``, at most ``size`` entries (least recently used dropped first)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def cached(self, key: K, make: Callable[[], V], keep: Callable[[V], bool] = lambda value: True) -> V:
        """The value kept for ``key``, else ``make()``, kept when ``keep`` says so (None is a value)."""
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        value = make()
        if keep(value):
            with self._lock:
                self._entries[key] = value
                while len(self._entries) > self.size:
                    self._entries.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[K]:
        with self._lock:
            return iter(list(self._entries))

"""Seeds: the one way the library turns a seed into random numbers.

Every random function takes ``seed``: an ``int`` (validated by :data:`SEED`, exactly — a
63-bit seed is used as given, never rounded through a float), a
:class:`numpy.random.SeedSequence`, a :class:`numpy.random.Generator` (used as is), or None
(fresh entropy).  Independent streams come from :class:`~numpy.random.SeedSequence`, never
from arithmetic on seeds:

* :func:`streams` — ``SeedSequence(seed).spawn(n)``: n independent children, by position;
* :func:`keyed` — the child of ``seed`` named by a key such as a point's parameters
  ``("k-sync", 16, 4)``, so the same point gets the same stream wherever it is computed
  (a chart and a table showing one point show one result).
"""

from __future__ import annotations

import hashlib
from typing import TypeAlias

import numpy as np

from .params import Domain

__all__ = ["SEED", "Seed", "generator", "streams", "keyed", "seed_int"]

SEED = Domain("seed", 0, 2**63 - 1, integer=True, doc="random seed")

Seed: TypeAlias = int | np.random.SeedSequence | np.random.Generator | None


def generator(seed: Seed = None) -> np.random.Generator:
    """A Generator from a seed (int, SeedSequence, Generator or None).

    The same int gives the same numbers; a Generator is passed through, so a caller can
    share one stream between calls.

    >>> generator(7).integers(100, size=4).tolist() == generator(7).integers(100, size=4).tolist()
    True
    >>> rng = generator(7)
    >>> generator(rng) is rng
    True
    >>> generator(-1)
    Traceback (most recent call last):
    ...
    distsgd.params.ParameterError: seed: must be an integer in [0, 9223372036854775807] (got -1)
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    if seed is not None:
        seed = SEED.check(seed, "seed")
    return np.random.default_rng(seed)


def seed_int(seed: Seed) -> int | None:
    """The integer seed to report for a seed argument (None unless it was an int).

    >>> seed_int(42), seed_int("42"), seed_int(np.random.SeedSequence(42))
    (42, 42, None)
    """
    if seed is None or isinstance(seed, (np.random.SeedSequence, np.random.Generator)):
        return None
    return SEED.check(seed, "seed")


def _root(seed: int | np.random.SeedSequence | None) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    return np.random.SeedSequence(None if seed is None else SEED.check(seed, "seed"))


def streams(seed: int | np.random.SeedSequence | None, n: int) -> list[np.random.SeedSequence]:
    """n independent child streams of ``seed`` (``SeedSequence(seed).spawn(n)``), by position.

    >>> a, b = streams(1, 2)
    >>> a.entropy, a.spawn_key, b.spawn_key
    (1, (0,), (1,))
    >>> generator(a).random() != generator(b).random()
    True
    """
    return _root(seed).spawn(int(n))


def _words(key: object) -> tuple[int, ...]:
    # a stable digest (not Python's salted hash) of the key's text, as four 32-bit words
    digest = hashlib.blake2b(repr(key).encode(), digest_size=16).digest()
    return tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))


def keyed(seed: int | np.random.SeedSequence | None, *key: object) -> np.random.SeedSequence:
    """The child stream of ``seed`` named by ``key`` (e.g. a point's scheme and parameters).

    It is ``SeedSequence`` with a ``spawn_key`` derived from the key, appended to the
    parent's, so keyed streams are independent of each other and of positional children.

    >>> point = keyed(1, "k-sync", 16, 4)
    >>> point.entropy, len(point.spawn_key)
    (1, 4)
    >>> point.generate_state(2).tolist() == keyed(1, "k-sync", 16, 4).generate_state(2).tolist()
    True
    >>> point.generate_state(2).tolist() == keyed(1, "k-sync", 16, 5).generate_state(2).tolist()
    False
    """
    root = _root(seed)
    return np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key + _words(key),
                                  pool_size=root.pool_size)

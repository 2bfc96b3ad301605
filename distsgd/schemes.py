"""The seven distributed-SGD schemes as frozen, validated dataclasses (DESIGN §2).

Each scheme is the *process* the workers and the parameter server follow; the
analytic core (``analytic.py``) and the Monte Carlo core (``montecarlo.py``) both
dispatch on these classes.  Backup workers are :func:`backup_workers` — k-sync with
m = N + b and K = N (Chen et al. 2016).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

from .params import Domain, ParameterError

__all__ = [
    "Scheme", "Sync", "KSync", "KBatchSync", "Async", "KAsync", "KBatchAsync", "LocalSGD",
    "make_scheme", "backup_workers", "check_scheme", "check_order_statistic", "scheme_class",
    "scheme_parameters", "SCHEME_NAMES",
    "M", "K_DOMAIN", "H_DOMAIN", "COMM_DELAY",
    "M_MAX", "K_BATCH_MAX", "H_MAX",
]

M_MAX = 100_000
K_BATCH_MAX = 1_000_000
H_MAX = 10_000

M = Domain("m", 1, M_MAX, integer=True, symbol="m", doc="number of workers")
K_DOMAIN = Domain("K", 1, K_BATCH_MAX, integer=True, symbol="K", doc="gradients per update")
H_DOMAIN = Domain("H", 1, H_MAX, integer=True, symbol="H", doc="local steps per averaging round")
COMM_DELAY = Domain("comm_delay", 0.0, 1e9, symbol="D", doc="time to average the models, per round")


@dataclass(frozen=True)
class Scheme:
    """Common part: ``m`` workers.  ``K`` is the number of gradients averaged per update."""

    m: int
    name: ClassVar[str]
    title: ClassVar[str]
    #: every gradient is computed on the current parameters (no staleness)
    fresh: ClassVar[bool] = True
    #: needs K ≤ m (k-of-m schemes); the batch schemes allow K > m
    k_le_m: ClassVar[bool] = False
    process: ClassVar[str] = ""
    #: the Monte Carlo statistic is a long-run mean over a renewal process (not i.i.d. iterations)
    renewal: ClassVar[bool] = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "m", M.check(self.m, "m"))

    @property
    def grads_per_update(self) -> int:
        """How many gradients one update averages (m for sync, 1 for async, K otherwise)."""
        return self.m

    @property
    def tail_jobs(self) -> int:
        """How many independent jobs must all be long for one iteration to be long.

        With a power-law delay tail P(X > x) ~ x^{-α} (``Delay.tail_index``), the p-th moment
        of the simulated statistic is finite iff ``tail_jobs · α > p``: sync waits for one
        slow job (1); k-sync needs m − K + 1 of the m first jobs slow; k-batch-sync needs all
        m workers stuck on long jobs (m); one long round of local SGD needs one long step (1);
        the renewal schemes' long-run mean needs E[X] < ∞ and its batch-means interval
        Var[X] < ∞ (1).
        """
        return 1

    def as_dict(self) -> dict[str, object]:
        """``{"scheme", "m", "K", "H"}`` with None for parameters the scheme does not have."""
        out: dict[str, object] = {"scheme": self.name, "m": self.m,
                                  "K": getattr(self, "K", None), "H": getattr(self, "H", None)}
        if isinstance(self, LocalSGD):
            out["comm_delay"] = self.comm_delay
        return out

    @property
    def label(self) -> str:
        parts = [f"{f.name if f.name != 'comm_delay' else 'D'}={getattr(self, f.name):g}"
                 for f in fields(self) if not (f.name == "comm_delay" and not getattr(self, f.name))]
        return f"{self.name} ({', '.join(parts)})"


@dataclass(frozen=True)
class _WithK(Scheme):
    K: int

    @property
    def grads_per_update(self) -> int:
        return self.K

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "K", K_DOMAIN.check(self.K, "K"))
        if self.k_le_m and self.K > self.m:
            raise ParameterError("K", f"{self.name} needs 1 ≤ K ≤ m = {self.m} (got {self.K})")


@dataclass(frozen=True)
class Sync(Scheme):
    name: ClassVar[str] = "sync"
    title: ClassVar[str] = "Synchronous SGD"
    process: ClassVar[str] = ("All m workers start on w_j; the update waits for the slowest and "
                              "averages all m gradients.")


@dataclass(frozen=True)
class KSync(_WithK):
    name: ClassVar[str] = "k-sync"
    title: ClassVar[str] = "K-sync SGD"
    k_le_m: ClassVar[bool] = True
    process: ClassVar[str] = ("All m workers start on w_j; the update uses the first K to finish; "
                              "the other m − K computations are cancelled.")

    @property
    def tail_jobs(self) -> int:
        return self.m - self.K + 1  # X_{K:m} is long only if m − K + 1 first jobs are


@dataclass(frozen=True)
class KBatchSync(_WithK):
    name: ClassVar[str] = "k-batch-sync"
    title: ClassVar[str] = "K-batch-sync SGD"
    process: ClassVar[str] = ("All m workers start on w_j; a worker that finishes starts another "
                              "mini-batch on w_j; the update uses the first K gradients overall.")

    @property
    def tail_jobs(self) -> int:
        return self.m  # fewer than K completions by t needs every worker stuck on a long job


@dataclass(frozen=True)
class Async(Scheme):
    name: ClassVar[str] = "async"
    title: ClassVar[str] = "Asynchronous SGD"
    fresh: ClassVar[bool] = False
    renewal: ClassVar[bool] = True
    process: ClassVar[str] = ("Every push is an update; the pushing worker reads the new "
                              "parameters and starts again; the others keep computing.")

    @property
    def grads_per_update(self) -> int:
        return 1


@dataclass(frozen=True)
class KAsync(_WithK):
    name: ClassVar[str] = "k-async"
    title: ClassVar[str] = "K-async SGD"
    fresh: ClassVar[bool] = False
    renewal: ClassVar[bool] = True
    k_le_m: ClassVar[bool] = True
    process: ClassVar[str] = ("A worker that finishes pushes and waits; after K pushes the server "
                              "updates and those K restart on the new parameters; the others are "
                              "not interrupted.")


@dataclass(frozen=True)
class KBatchAsync(_WithK):
    name: ClassVar[str] = "k-batch-async"
    title: ClassVar[str] = "K-batch-async SGD"
    fresh: ClassVar[bool] = False
    renewal: ClassVar[bool] = True
    process: ClassVar[str] = ("No worker ever waits: on finishing it pushes, reads the current "
                              "parameters and starts again; the server updates after every K pushes.")


@dataclass(frozen=True)
class LocalSGD(Scheme):
    H: int
    comm_delay: float = 0.0
    name: ClassVar[str] = "local-sgd"
    title: ClassVar[str] = "Local SGD"
    process: ClassVar[str] = ("Each worker takes H local steps from the common w, then all wait for "
                              "the slowest and spend D averaging; runtime is reported per local step.")

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "H", H_DOMAIN.check(self.H, "H"))
        object.__setattr__(self, "comm_delay", COMM_DELAY.check(self.comm_delay, "comm_delay"))


_CLASSES: dict[str, type[Scheme]] = {
    c.name: c for c in (Sync, KSync, KBatchSync, Async, KAsync, KBatchAsync, LocalSGD)
}
SCHEME_NAMES: tuple[str, ...] = tuple(_CLASSES)


def scheme_class(name: str) -> type[Scheme]:
    key = str(name).strip().lower().replace("_", "-")
    if key not in _CLASSES:
        raise ParameterError("scheme", f"unknown scheme {name!r}; choose one of {', '.join(SCHEME_NAMES)}")
    return _CLASSES[key]


def scheme_parameters(name: str) -> tuple[str, ...]:
    """The parameters a scheme takes besides m, e.g. ``("K",)`` or ``("H", "comm_delay")``."""
    cls = scheme_class(name)
    return tuple(f.name for f in fields(cls) if f.name != "m")


def make_scheme(name: str, m: int, K: int | None = None, H: int | None = None,
                comm_delay: float = 0.0) -> Scheme:
    """Build and validate a scheme.

    K is required for k-sync, k-batch-sync, k-async and k-batch-async (1 ≤ K ≤ m for the
    k-of-m schemes, K ≥ 1 for the batch ones) and must be left out otherwise; H ≥ 1 is
    required for local-sgd, and comm_delay D ≥ 0 belongs to local-sgd only.
    """
    cls = scheme_class(name)
    takes = scheme_parameters(cls.name)
    M.check(m, "m")
    if "K" in takes:
        if K is None:
            raise ParameterError("K", f"{cls.name} needs K ({K_DOMAIN.describe()})")
    elif K is not None:
        raise ParameterError("K", f"not a parameter of {cls.name}")
    if "H" in takes:
        if H is None:
            raise ParameterError("H", f"{cls.name} needs H ({H_DOMAIN.describe()})")
    elif H is not None:
        raise ParameterError("H", f"not a parameter of {cls.name}")
    if "comm_delay" not in takes and not (comm_delay is None or (isinstance(comm_delay, (int, float))
                                                                  and comm_delay == 0)):
        raise ParameterError("comm_delay", f"not a parameter of {cls.name} (only local-sgd has a "
                             "communication round; for the others put it in the delay's shift Δ)")
    kwargs: dict[str, object] = {"m": m}
    if "K" in takes:
        kwargs["K"] = K
    if "H" in takes:
        kwargs["H"] = H
        kwargs["comm_delay"] = 0.0 if comm_delay is None else comm_delay
    return cls(**kwargs)  # type: ignore[arg-type]


def check_scheme(scheme: object) -> Scheme:
    """``scheme`` itself if it is a Scheme, else a ParameterError naming ``scheme``."""
    if not isinstance(scheme, Scheme):
        raise ParameterError("scheme", f"expected a Scheme from make_scheme (got {type(scheme).__name__})")
    return scheme


def check_order_statistic(k: int, n: int) -> tuple[int, int]:
    """(k, n) of an order statistic X_{k:n}: 1 ≤ k ≤ n ≤ M_MAX (ParameterError naming k or n)."""
    n = int(M.check(n, "n"))
    return int(Domain("k", 1, n, integer=True).check(k, "k")), n


def backup_workers(N: int, b: int) -> KSync:
    """Synchronous SGD with b backup workers: N + b start, the first N gradients are used."""
    N = M.check(N, "N")
    b = Domain("b", 0, M_MAX, integer=True).check(b, "b")
    return KSync(m=N + b, K=N)

"""The common part of every scheme: its parameters' domains, the methods each scheme implements
(the registry's columns), and :func:`register`."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar, TypeVar

import numpy as np

from .. import limits
from ..clusters import Cluster
from ..delays import Delay
from ..engines import clusters, iid, timeline
from ..engines.batchmeans import BatchMeans
from ..engines.renewal import UpdateTrace
from ..estimate import Estimate, unavailable
from ..params import Domain, ParameterError
from ..reasons import Phrase, Text

__all__ = ["Scheme", "SCHEMES", "register", "M", "K_DOMAIN", "H_DOMAIN", "COMM_DELAY", "M_MAX", "K_BATCH_MAX", "H_MAX"]

M_MAX = limits.MAX_WORKERS
K_BATCH_MAX = limits.K_BATCH_MAX
H_MAX = limits.H_MAX

M = Domain("m", 1, M_MAX, integer=True, symbol="m", doc="number of workers")
K_DOMAIN = Domain("K", 1, K_BATCH_MAX, integer=True, symbol="K", doc="gradients per update")
H_DOMAIN = Domain("H", 1, H_MAX, integer=True, symbol="H", doc="local steps per averaging round")
COMM_DELAY = Domain("comm_delay", 0.0, 1e9, symbol="D", doc="time to average the models, per round")


@dataclass(frozen=True)
class Scheme:
    """Common part: ``m`` workers.  Subclasses declare the process and implement the methods."""

    m: int
    name: ClassVar[str]
    title: ClassVar[str]
    process: ClassVar[str] = ""
    #: every gradient is computed on the current parameters (no staleness)
    fresh: ClassVar[bool] = True
    #: the Monte Carlo statistic is a long-run mean over a renewal process (not i.i.d. iterations)
    renewal: ClassVar[bool] = False
    #: a worker that pushed waits for the update before it computes again (k-async)
    waits: ClassVar[bool] = False
    #: every worker steps on its own model and the models are averaged each round (local SGD)
    averages_models: ClassVar[bool] = False
    #: needs K ≤ m (k-of-m schemes); the batch schemes allow K > m
    k_le_m: ClassVar[bool] = False
    #: the parameter the timeline's job count grows with (named when it is too big)
    timeline_parameter: ClassVar[str] = "K"
    #: the parameter an adaptive schedule may change during a run (DESIGN §13), or None
    schedulable: ClassVar[str | None] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "m", M.check(self.m, "m"))

    # -- facts ---------------------------------------------------------------------------
    @property
    def grads_per_update(self) -> int:
        """How many gradients one update averages (m for sync, 1 for async, K otherwise)."""
        return self.m

    @property
    def steps_per_update(self) -> int:
        """Runtime steps per update: an "iteration" of local SGD is one of its H local steps."""
        return 1

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
        return {"scheme": self.name, "m": self.m, "K": getattr(self, "K", None), "H": getattr(self, "H", None)}

    @property
    def label(self) -> str:
        parts = [f"{f.name if f.name != 'comm_delay' else 'D'}={getattr(self, f.name):g}"
                 for f in fields(self) if not (f.name == "comm_delay" and not getattr(self, f.name))]
        return f"{self.name} ({', '.join(parts)})"

    # -- analytic ------------------------------------------------------------------------
    def expected_runtime(self, delay: Delay, work: float) -> Estimate:
        """E[T] per iteration under i.i.d. ``delay`` (already validated); ``work`` caps the
        lattice computations (FFT-butterfly units)."""
        raise NotImplementedError

    def cluster_runtime(self, cluster: Cluster, work: float) -> Estimate:
        """E[T] per iteration on a cluster other than i.i.d. (validated, m matching; DESIGN §7)."""
        return unavailable(Text.of("method_cluster_none", scheme=self.name, kind=cluster.kind))

    # -- Monte Carlo ---------------------------------------------------------------------
    def cluster_times(self, cluster: Cluster, R: int, n: int, rng: np.random.Generator) -> np.ndarray:
        """(R, n) per-iteration runtimes of R replicas on a cluster other than i.i.d. (the schemes
        whose iterations start together; the renewal schemes take a cluster in :meth:`batch_means`)."""
        raise NotImplementedError(f"{self.name} is a renewal scheme: use batch_means")

    def cluster_cost(self, cluster: Cluster, replicas: int) -> float:
        """Cost of one iteration (update) of one replica on a cluster (≈ ns)."""
        return clusters.cluster_cost(cluster, 1)

    def iteration_times(self, delay: Delay, n: int, rng: np.random.Generator) -> np.ndarray:
        """n independent per-iteration runtimes (schemes whose iterations are independent)."""
        raise NotImplementedError(f"{self.name} is a renewal scheme: use update_trace")

    @property
    def lockstep(self) -> bool:
        """True when the renewal engine steps R replicas update by update (k-async with K > 1)."""
        return False

    def update_trace(self, delay: Delay | Cluster, replicas: int, updates: int, rng: np.random.Generator,
                     record: bool) -> UpdateTrace:
        """``updates`` updates of ``replicas`` runs from time 0, with workers and staleness (renewal
        schemes), on i.i.d. workers or a cluster."""
        raise NotImplementedError(f"{self.name} has independent iterations: use iteration_times")

    def batch_means(self, delay: Delay | Cluster, R: int, w: int, n: int, B: int, rng: np.random.Generator,
                    keep: bool) -> tuple[list[BatchMeans], str]:
        """Stream R runs of w warm-up + n measured updates into batch means (renewal schemes)."""
        raise NotImplementedError(f"{self.name} has independent iterations: use iteration_times")

    @property
    def staleness_formula(self) -> str:
        """The long-run mean staleness of a gradient ("" for fresh-gradient schemes)."""
        return ""

    def mc_method(self, delay: Delay) -> str:
        """How :meth:`iteration_times` draws (shown with the result)."""
        return "exact order-statistic sampling F⁻¹(Beta(k, n−k+1))"

    def iteration_cost(self, delay: Delay | None, replicas: int) -> float:
        """Cost of one simulated iteration of one replica (≈ ns on one core)."""
        return iid.ORDER_STATISTIC_COST

    def costly_parameter(self) -> str:
        """The parameter that makes even the smallest run too costly."""
        return "m"

    def cost_advice(self, parameter: str) -> Phrase:
        """What to change when :meth:`costly_parameter` names ``parameter`` (a phrase of a refusal)."""
        return Phrase("advice_smaller_K" if parameter == "K" else "advice_fewer_workers")

    # -- timeline ------------------------------------------------------------------------
    def timeline_jobs(self, iterations: int) -> int:
        """Jobs (bars) a timeline of ``iterations`` updates simulates, about."""
        return iterations * self.m

    @property
    def timeline_cap(self) -> int:
        return limits.TIMELINE_MAX_JOBS

    def timeline(self, delay: Delay | Cluster, iterations: int, rng: np.random.Generator,
                 out: timeline.Intervals) -> list[float]:
        """Run ``iterations`` updates event by event into ``out``; return the update times."""
        raise NotImplementedError


@dataclass(frozen=True)
class WithK(Scheme):
    """A scheme with a wait-for count K."""

    K: int

    @property
    def grads_per_update(self) -> int:
        return self.K

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "K", K_DOMAIN.check(self.K, "K"))
        if self.k_le_m and self.K > self.m:
            raise ParameterError("K", "K_range", scheme=self.name, m=self.m, K=self.K)


_S = TypeVar("_S", bound=type[Scheme])
#: name → scheme class, in the order the dashboard lists them
SCHEMES: dict[str, type[Scheme]] = {}


def register(cls: _S) -> _S:
    """Add a scheme class to :data:`SCHEMES` under its ``name`` (a class decorator)."""
    if not (isinstance(cls, type) and issubclass(cls, Scheme)) or not getattr(cls, "name", ""):
        raise ParameterError("scheme", "register_scheme")
    SCHEMES[cls.name] = cls
    return cls



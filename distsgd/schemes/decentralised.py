"""The decentralised schemes (DESIGN §12): no parameter server, m nodes on a graph.

D-PSGD (Lian et al. 2017) waits for the neighbours: node i starts iteration k + 1 once it and
every neighbour finished iteration k, so the finish times are a max-plus linear system and the
time per iteration is its cycle time γ.  AD-PSGD (Lian et al. 2018) never waits: each node is a
renewal process, and a finished gradient comes with an averaging with one random neighbour.
Both hold their :class:`~distsgd.topology.Topology`; everything else is the registry's
(:mod:`distsgd.schemes.base`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..clusters import Cluster
from ..delays import Delay
from ..engines import graph, timeline
from ..engines.batchmeans import BatchMeans
from ..engines.renewal import UpdateTrace
from ..estimate import Estimate, infinite
from ..numerics import graph_chain
from ..params import ParameterError
from ..reasons import Text
from ..topology import Topology, check_topology
from .base import Scheme, register

__all__ = ["GraphScheme", "DPSGD", "ADPSGD"]


@dataclass(frozen=True)
class GraphScheme(Scheme):
    """A scheme on a graph of m nodes: ``topology`` (its m must be the scheme's)."""

    topology: Topology
    timeline_parameter: ClassVar[str] = "m"
    #: a node averages with one random neighbour per gradient, without waiting (ad-psgd); else it
    #: waits for its neighbours and averages with all of them (d-psgd)
    gossip: ClassVar[bool] = False

    def __post_init__(self) -> None:
        super().__post_init__()
        check_topology(self.topology)
        if self.topology.m != self.m:
            raise ParameterError("topology", "topology_m_mismatch", nodes=self.topology.m, m=self.m)

    def as_dict(self) -> dict[str, object]:
        return {**super().as_dict(), "topology": self.topology.spec}

    @property
    def label(self) -> str:
        return f"{self.name} (m={self.m}, {self.topology.spec})"

    def topology_json(self) -> dict[str, Any]:
        """The JSON ``topology`` object of DESIGN §12: spec, m, degrees and the spectral gap."""
        return self.topology.as_dict()

    def runtime_bounds(self, source: Delay | Cluster, work: float) -> tuple[Estimate, Estimate]:
        """(lower, upper) bounds on the time per iteration (DESIGN §12.3); here both the exact value."""
        est = self.cluster_runtime(source, work) if isinstance(source, Cluster) else self.expected_runtime(source, work)
        return est, est


@register
@dataclass(frozen=True)
class DPSGD(GraphScheme):
    name: ClassVar[str] = "d-psgd"
    title: ClassVar[str] = "Decentralised parallel SGD (D-PSGD)"
    process: ClassVar[str] = ("Node i starts iteration k + 1 once it and every neighbour finished "
                              "iteration k; it averages its neighbours' models (Metropolis–Hastings "
                              "weights) and steps with its own gradient.")
    #: the cycle time is a long-run mean (batch means after a warm-up), as for the renewal schemes
    renewal: ClassVar[bool] = True

    @property
    def grads_per_update(self) -> int:
        return self.m  # an iteration: every node one gradient

    @property
    def tail_jobs(self) -> int:
        return 1  # one long job delays its neighbourhood, and through it everyone

    def expected_runtime(self, delay: Delay, work: float) -> Estimate:
        """The cycle time γ: the complete graph is sync (E[X_{m:m}]); exponential times on a small
        graph exactly by the Markov chain of the iteration-count gaps; otherwise the tighter
        upper bound (E[X_{m:m}], or the moment-generating-function bound of the largest degree)."""
        return graph_chain.dpsgd_cycle_time(delay, self.topology, work)

    def runtime_bounds(self, source: Delay | Cluster, work: float) -> tuple[Estimate, Estimate]:
        """(lower, upper) bounds on the cycle time (DESIGN §12.3)."""
        return graph_chain.dpsgd_bounds(source, self.topology, work)

    def cluster_runtime(self, cluster: Cluster, work: float) -> Estimate:
        return graph_chain.dpsgd_cluster_cycle_time(cluster, self.topology, work)

    def batch_means(self, delay: Delay | Cluster, R: int, w: int, n: int, B: int, rng: np.random.Generator,
                    keep: bool) -> tuple[list[BatchMeans], str]:
        return graph.dpsgd_batch_means(delay, self.topology, R, w, n, B, rng, keep)

    def update_trace(self, delay: Delay | Cluster, replicas: int, updates: int, rng: np.random.Generator,
                     record: bool) -> UpdateTrace:
        """The iterations' times: when the last node ends iteration k (every gradient fresh)."""
        return UpdateTrace(graph.dpsgd_finish_times(delay, self.topology, replicas, updates, rng)[:, 1:].max(axis=2))

    def iteration_cost(self, delay: Delay | None, replicas: int) -> float:
        return graph.dpsgd_cost(self.topology)

    def cluster_cost(self, cluster: Cluster, replicas: int) -> float:
        return graph.dpsgd_cost(self.topology) + super().cluster_cost(cluster, replicas)

    def mc_method(self, delay: Delay) -> str:
        return "max-plus recursion t_i(k+1) = max_{j ∈ N(i) ∪ {i}} t_j(k) + X_i(k), batch means"

    def timeline_jobs(self, iterations: int) -> int:
        return 2 * iterations * self.m  # a job and a wait per node and iteration

    def timeline(self, delay: Delay | Cluster, iterations: int, rng: np.random.Generator,
                 out: timeline.Intervals) -> list[float]:
        return timeline.dpsgd_timeline(delay, self.topology.closed, iterations, rng, out)


@register
@dataclass(frozen=True)
class ADPSGD(GraphScheme):
    name: ClassVar[str] = "ad-psgd"
    title: ClassVar[str] = "Asynchronous decentralised parallel SGD (AD-PSGD)"
    process: ClassVar[str] = ("No node waits: a node that finishes a gradient averages its model with "
                              "one random neighbour, applies the gradient (computed on the model it "
                              "read when it started) and starts again.")
    fresh: ClassVar[bool] = False
    renewal: ClassVar[bool] = True
    gossip: ClassVar[bool] = True

    @property
    def grads_per_update(self) -> int:
        return 1  # every finished gradient is an update of one node's model

    def expected_runtime(self, delay: Delay, work: float) -> Estimate:
        """Long-run time per gradient E[X]/m: every node is a renewal process that never waits
        (elementary renewal theorem, as async)."""
        if not math.isfinite(delay.mean):
            return infinite(Text.of("method_mean_infinite_m", scheme=self.name))
        return Estimate(delay.mean / self.m, "exact", Text.of("method_renewal_nodes"))

    def cluster_runtime(self, cluster: Cluster, work: float) -> Estimate:
        """1 / Σ_i 1/E[X_i] (renewal–reward, as async on a cluster)."""
        rate = float(np.sum(1.0 / cluster.worker_means()))
        if rate == 0.0:
            return infinite(Text.of("method_nodes_infinite", scheme=self.name))
        return Estimate(1.0 / rate, "exact", Text.of("method_renewal_reward_nodes"))

    def update_trace(self, delay: Delay | Cluster, replicas: int, updates: int, rng: np.random.Generator,
                     record: bool) -> UpdateTrace:
        """Every gradient an update of its node's model: its time, its node, and its staleness
        (averagings a neighbour started with that node while it computed)."""
        ev = graph.adpsgd_events(delay, self.topology, replicas, updates, rng)
        return UpdateTrace(ev.times, ev.nodes[..., None], ev.staleness[..., None])

    def batch_means(self, delay: Delay | Cluster, R: int, w: int, n: int, B: int, rng: np.random.Generator,
                    keep: bool) -> tuple[list[BatchMeans], str]:
        return graph.adpsgd_batch_means(delay, self.topology, R, w, n, B, rng, keep)

    def iteration_cost(self, delay: Delay | None, replicas: int) -> float:
        return graph.adpsgd_cost(self.topology)

    def cluster_cost(self, cluster: Cluster, replicas: int) -> float:
        return graph.adpsgd_cost(self.topology) + super().cluster_cost(cluster, replicas) / self.m

    @property
    def staleness_formula(self) -> str:
        return "averagings a neighbour started while the gradient was computed"

    def timeline_jobs(self, iterations: int) -> int:
        return iterations + self.m

    def timeline(self, delay: Delay | Cluster, iterations: int, rng: np.random.Generator,
                 out: timeline.Intervals) -> list[float]:
        return timeline.adpsgd_timeline(delay, self.topology.indptr, self.topology.indices, iterations, rng, out)

"""The synchronous schemes: every gradient is computed on the current parameters.

Sync and k-sync wait for the first K of the m jobs started together (an order statistic);
k-batch-sync restarts finished workers on the same parameters until K gradients exist (the
K-th point of m superposed renewal processes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..clusters import Cluster
from ..clusters.grouped_lattice import kbatch_sync_of_groups
from ..clusters.independent_orderstats import kth_of_independent
from ..delays import Delay
from ..engines import clusters, iid, timeline
from ..estimate import Estimate, infinite
from ..numerics.superposition import kbatch_sync_runtime
from ..orderstats import order_statistic_mean, sample_order_statistic
from ..params import ceil_div
from ..reasons import Text
from .base import Scheme, WithK, register

__all__ = ["Sync", "KSync", "KBatchSync"]


class _KOfM(Scheme):
    """Sync and k-sync: all m start on w_j, the update takes the first K to finish (an order
    statistic), the rest is cancelled."""

    def expected_runtime(self, delay: Delay, work: float) -> Estimate:
        return order_statistic_mean(delay, self.grads_per_update, self.m)

    def iteration_times(self, delay: Delay, n: int, rng: np.random.Generator) -> np.ndarray:
        return sample_order_statistic(delay, self.grads_per_update, self.m, rng, n)

    def cluster_runtime(self, cluster: Cluster, work: float) -> Estimate:
        """E[X_{K:m}] for independent non-identical workers; under Markov slowdowns every worker
        starts one mini-batch per iteration, so the states are i.i.d. stationary whatever ρ and
        each mini-batch has the mixture law (1 − π)F(x) + πF(x/s): exact for every ρ.  A
        replayed trace: the mean over its steps of the K-th smallest time (exact)."""
        K = self.grads_per_update
        exact = cluster.exact_kth_mean(K)
        if exact is not None:
            return Estimate(exact, "exact", Text.of("method_replay_largest" if K == self.m else "method_replay_kth"))
        return kth_of_independent(cluster.marginals(), K, work)

    def cluster_times(self, cluster: Cluster, R: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return clusters.kofm_times(cluster, self.grads_per_update, R, n, rng)

    def timeline(self, delay: Delay | Cluster, iterations: int, rng: np.random.Generator,
                 out: timeline.Intervals) -> list[float]:
        return timeline.k_of_m_timeline(delay, self.m, self.grads_per_update, iterations, rng, out)



@register
@dataclass(frozen=True)
class Sync(_KOfM, Scheme):
    name: ClassVar[str] = "sync"
    title: ClassVar[str] = "Synchronous SGD"
    process: ClassVar[str] = ("All m workers start on w_j; the update waits for the slowest and "
                              "averages all m gradients.")


@register
@dataclass(frozen=True)
class KSync(_KOfM, WithK):
    name: ClassVar[str] = "k-sync"
    title: ClassVar[str] = "K-sync SGD"
    k_le_m: ClassVar[bool] = True
    schedulable: ClassVar[str | None] = "K"
    process: ClassVar[str] = ("All m workers start on w_j; the update uses the first K to finish; "
                              "the other m − K computations are cancelled.")

    @property
    def tail_jobs(self) -> int:
        return self.m - self.K + 1  # X_{K:m} is long only if m − K + 1 first jobs are


@register
@dataclass(frozen=True)
class KBatchSync(WithK):
    name: ClassVar[str] = "k-batch-sync"
    title: ClassVar[str] = "K-batch-sync SGD"
    process: ClassVar[str] = ("All m workers start on w_j; a worker that finishes starts another "
                              "mini-batch on w_j; the update uses the first K gradients overall.")

    @property
    def tail_jobs(self) -> int:
        return self.m  # fewer than K completions by t needs every worker stuck on a long job

    def expected_runtime(self, delay: Delay, work: float) -> Estimate:
        """Memoryless: m superposed Poisson(λ) processes are Poisson(mλ), so T ~ Gamma(K, mλ);
        K = 1 is E[X_{1:m}]; otherwise the renewal superposition on lattices."""
        m, K = self.m, self.K
        if delay.memoryless:  # 1/λ = E[X]
            return Estimate(K * delay.mean / m, "exact", Text.of("method_poisson_superposition"),
                            std=math.sqrt(K) * delay.mean / m)
        if K == 1:
            return order_statistic_mean(delay, 1, m)
        x = delay.constant
        if x is not None:
            return Estimate(ceil_div(K, m) * x, "exact", Text.of("method_constant_kbatch"), std=0.0)
        if m == 1:
            if not math.isfinite(delay.mean):
                return infinite(Text.of("method_kbatch_one_worker_infinite"))
            return Estimate(K * delay.mean, "exact", Text.of("method_kbatch_one_worker"),
                            std=math.sqrt(K * delay.var) if math.isfinite(delay.var) else math.inf)
        if m * delay.tail_index <= 1.0:
            return infinite(Text.of("method_kbatch_infinite", x=m * delay.tail_index))
        return kbatch_sync_runtime(delay, m, K, work=work)

    def iteration_times(self, delay: Delay, n: int, rng: np.random.Generator) -> np.ndarray:
        if self.K == 1:
            return sample_order_statistic(delay, 1, self.m, rng, n)
        return iid.kbatch_sync_times(delay, self.m, self.K, n, rng)

    def mc_method(self, delay: Delay) -> str:
        if self.K == 1:
            return super().mc_method(delay)
        return "per-iteration superposition of m renewal processes (K-th completion)"

    def iteration_cost(self, delay: Delay | None, replicas: int) -> float:
        return iid.ORDER_STATISTIC_COST if self.K == 1 else iid.kbatch_sync_cost(self.m, self.K)

    def cluster_runtime(self, cluster: Cluster, work: float) -> Estimate:
        """Independent workers (DESIGN §7): memoryless groups superpose into one Poisson process
        of rate Λ = Σ_i 1/E[X_i], T ~ Gamma(K, Λ); K = 1 is E[X_{1:m}]; otherwise the renewal
        superposition with one renewal function per group.  Workers with a state (slow spells,
        a replayed trace) have no analytic result."""
        groups = cluster.groups
        if groups is None:
            return super().cluster_runtime(cluster, work)
        if all(g.delay.memoryless for g in groups):
            rate = float(np.sum(1.0 / cluster.worker_means()))
            return Estimate(self.K / rate, "exact", Text.of("method_poisson_superposition_groups"),
                            std=math.sqrt(self.K) / rate)
        if self.K == 1:
            return kth_of_independent(cluster.marginals(), 1, work)
        return kbatch_sync_of_groups(groups, self.K, work)

    def cluster_times(self, cluster: Cluster, R: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return clusters.kbatch_sync_times(cluster, self.K, R, n, rng)

    def cluster_cost(self, cluster: Cluster, replicas: int) -> float:
        return clusters.kbatch_sync_cost(cluster, self.K, replicas)

    def costly_parameter(self) -> str:
        return "K" if self.K >= self.m else "m"

    def timeline_jobs(self, iterations: int) -> int:
        return iterations * (self.K + self.m)

    def timeline(self, delay: Delay | Cluster, iterations: int, rng: np.random.Generator,
                 out: timeline.Intervals) -> list[float]:
        return timeline.kbatch_sync_timeline(delay, self.m, self.K, iterations, rng, out)

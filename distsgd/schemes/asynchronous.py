"""The asynchronous schemes: gradients may be stale, and the runtime is a long-run mean.

Async and k-batch-async never make a worker wait (each worker is a renewal process, the run
merges them); k-async makes the K pushers of an update wait for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .. import limits
from ..clusters import Cluster
from ..clusters.independent_orderstats import kth_of_independent
from ..delays import Delay
from ..engines import clusters, renewal, timeline
from ..engines.batchmeans import BatchMeans
from ..engines.renewal import UpdateTrace
from ..estimate import Estimate, infinite, unavailable
from ..orderstats import order_statistic_mean
from ..reasons import Phrase, Text
from .base import Scheme, WithK, register

__all__ = ["Async", "KAsync", "KBatchAsync"]


class _Renewal(Scheme):
    """The asynchronous schemes: a long run of a renewal process, its long-run mean by batch
    means after a warm-up.  Workers never wait here (async, k-batch-async): each is its own
    renewal process and the run merges them (:func:`distsgd.engines.renewal.merged_stream`)."""

    fresh: ClassVar[bool] = False
    renewal: ClassVar[bool] = True

    def expected_runtime(self, delay: Delay, work: float) -> Estimate:
        """Long-run time per update K·E[X]/m (elementary renewal theorem: m workers that never
        wait complete m/E[X] gradients per unit time; an update takes K of them)."""
        K = self.grads_per_update
        what = "E[X]/m" if K == 1 else "K·E[X]/m"
        if not math.isfinite(delay.mean):
            return infinite(Text.of("method_renewal_infinite", scheme=self.name, what=what))
        return Estimate(K * delay.mean / self.m, "exact", Text.of("method_renewal", what=what))

    def cluster_runtime(self, cluster: Cluster, work: float) -> Estimate:
        """Long-run time per update K / Σ_i 1/E[X_i] (renewal–reward: worker i completes 1/E[X_i]
        gradients per unit time; under Markov slowdowns E[X_i] = (1 − π + πs)·E[X])."""
        K = self.grads_per_update
        rate = float(np.sum(1.0 / cluster.worker_means()))
        if rate == 0.0:
            return infinite(Text.of("method_workers_infinite", scheme=self.name))
        return Estimate(K / rate, "exact", Text.of("method_renewal_reward", K=1 if K == 1 else "K"))

    def update_trace(self, delay: Delay | Cluster, replicas: int, updates: int, rng: np.random.Generator,
                     record: bool) -> UpdateTrace:
        return renewal.merged_trace(delay, self.m, self.grads_per_update, replicas, updates, rng, record)

    def batch_means(self, delay: Delay | Cluster, R: int, w: int, n: int, B: int, rng: np.random.Generator,
                    keep: bool) -> tuple[list[BatchMeans], str]:
        return renewal.merged_batch_means(delay, self.m, self.grads_per_update, R, w, n, B, rng, keep)

    def iteration_cost(self, delay: Delay | None, replicas: int) -> float:
        return renewal.merged_cost(self.m, self.grads_per_update)

    def cluster_cost(self, cluster: Cluster, replicas: int) -> float:
        # per push: the merge, and one job drawn from its worker's law (≈ 25 ns, 60 with a state)
        per_job = clusters.cluster_cost(cluster, 1) / cluster.m
        return renewal.merged_cost(self.m, self.grads_per_update) + per_job * self.grads_per_update

    @property
    def staleness_formula(self) -> str:
        """The long-run mean staleness of a gradient."""
        return "(m − 1)/K"

    def costly_parameter(self) -> str:
        # the smallest run: 40·m warm-up pushes against ~128 updates of K pushes
        K = self.grads_per_update
        return "K" if 128 * K >= 4 * limits.WARMUP_PUSHES_PER_WORKER * self.m and K > 1 else "m"

    def timeline_jobs(self, iterations: int) -> int:
        return iterations * self.grads_per_update + self.m

    def timeline(self, delay: Delay | Cluster, iterations: int, rng: np.random.Generator,
                 out: timeline.Intervals) -> list[float]:
        return timeline.renewal_timeline(delay, self.m, self.grads_per_update, self.waits, iterations, rng, out)


@register
@dataclass(frozen=True)
class Async(_Renewal):
    name: ClassVar[str] = "async"
    title: ClassVar[str] = "Asynchronous SGD"
    process: ClassVar[str] = ("Every push is an update; the pushing worker reads the new "
                              "parameters and starts again; the others keep computing.")

    @property
    def grads_per_update(self) -> int:
        return 1


@register
@dataclass(frozen=True)
class KAsync(_Renewal, WithK):
    name: ClassVar[str] = "k-async"
    title: ClassVar[str] = "K-async SGD"
    waits: ClassVar[bool] = True
    k_le_m: ClassVar[bool] = True
    schedulable: ClassVar[str | None] = "K"
    process: ClassVar[str] = ("A worker that finishes pushes and waits; after K pushes the server "
                              "updates and those K restart on the new parameters; the others are "
                              "not interrupted.")

    @property
    def lockstep(self) -> bool:
        return self.K > 1  # K = 1 is async: nobody waits, the merged engine runs it

    def expected_runtime(self, delay: Delay, work: float) -> Estimate:
        """K = 1 is async, K = m is sync; memoryless delays give (H_m − H_{m−K})/λ (Dutta et al.
        2018); otherwise E[X_{K:m}] bounds it for new-longer-than-used delays, else unavailable."""
        m, K = self.m, self.K
        if K == 1:
            est = super().expected_runtime(delay, work)
            return est.renamed(Text.of("method_k1_async", method=est.method)) if est.value is not None else est
        if K == m:
            est = order_statistic_mean(delay, m, m)
            return est.renamed(Text.of("method_km_sync", method=est.method)) if est.value is not None else est
        if delay.memoryless:
            est = order_statistic_mean(delay, K, m)
            return Estimate(est.value, "exact", Text.of("method_memoryless_kasync"), est.std)
        if delay.is_nlu:
            est = order_statistic_mean(delay, K, m)
            if est.value is None:
                return est
            return Estimate(est.value, "upper_bound", Text.of("method_nlu_bound", method=est.method), error=est.error)
        return unavailable(Text.of("method_kasync_no_form"))

    def cluster_runtime(self, cluster: Cluster, work: float) -> Estimate:
        """K = 1 is async; K = m is sync (everyone waits, all restart together); otherwise the
        non-identical E[X_{K:m}] bounds it when every worker's law is NLU (DESIGN §7) — not under
        Markov slowdowns, whose one-mini-batch law is a mixture and not NLU."""
        m, K = self.m, self.K
        if K == 1:
            return super().cluster_runtime(cluster, work)
        if K == m:
            est = kth_of_independent(cluster.marginals(), m, work)
            return est.renamed(Text.of("method_km_sync", method=est.method)) if est.value is not None else est
        groups = cluster.groups
        if groups is None:
            if cluster.kind != "markov":
                return unavailable(Text.of("method_kasync_dependent", kind=cluster.kind))
            return unavailable(Text.of("method_kasync_markov"))
        if not all(g.delay.is_nlu for g in groups):
            return unavailable(Text.of("method_kasync_group_not_nlu"))
        est = kth_of_independent(cluster.marginals(), K, work)
        if est.value is None:
            return est
        return Estimate(est.value, "upper_bound", Text.of("method_cluster_nlu_bound", method=est.method),
                        error=est.error)

    def update_trace(self, delay: Delay | Cluster, replicas: int, updates: int, rng: np.random.Generator,
                     record: bool) -> UpdateTrace:
        if not self.lockstep:
            return super().update_trace(delay, replicas, updates, rng, record)
        return renewal.kasync_trace(delay, self.m, self.K, replicas, updates, rng, record)

    def batch_means(self, delay: Delay | Cluster, R: int, w: int, n: int, B: int, rng: np.random.Generator,
                    keep: bool) -> tuple[list[BatchMeans], str]:
        if not self.lockstep:
            return super().batch_means(delay, R, w, n, B, rng, keep)
        return renewal.kasync_batch_means(delay, self.m, self.K, R, w, n, B, rng, keep)

    def iteration_cost(self, delay: Delay | None, replicas: int) -> float:
        if not self.lockstep:
            return super().iteration_cost(delay, replicas)
        return renewal.kasync_cost(self.m, self.K, replicas)

    def cluster_cost(self, cluster: Cluster, replicas: int) -> float:
        if not self.lockstep:
            return super().cluster_cost(cluster, replicas)
        return renewal.kasync_cluster_cost(self.m, self.K, replicas)

    @property
    def staleness_formula(self) -> str:
        return "(m − K)/K" if self.K > 1 else "(m − 1)/K"

    def costly_parameter(self) -> str:
        return "m" if self.lockstep else super().costly_parameter()  # warm-up 40·m/K updates of cost ∝ m

    def cost_advice(self, parameter: str) -> Phrase:
        return Phrase("advice_warm_up")


@register
@dataclass(frozen=True)
class KBatchAsync(_Renewal, WithK):
    name: ClassVar[str] = "k-batch-async"
    title: ClassVar[str] = "K-batch-async SGD"
    process: ClassVar[str] = ("No worker ever waits: on finishing it pushes, reads the current "
                              "parameters and starts again; the server updates after every K pushes.")

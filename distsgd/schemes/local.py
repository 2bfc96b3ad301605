"""Local SGD: H local steps per worker, then all wait for the slowest and average (time D)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .. import limits
from ..clusters import Cluster
from ..clusters.grouped_lattice import local_sgd_of_groups
from ..clusters.independent_orderstats import kth_of_independent
from ..delays import Delay
from ..engines import clusters, iid, timeline
from ..estimate import Estimate, infinite, numeric_kind
from ..numerics.maxsum import max_of_sums_mean
from ..orderstats import affine_quadrature_moments, order_statistic_mean
from ..reasons import Phrase, Text
from .base import COMM_DELAY, H_DOMAIN, Scheme, register

__all__ = ["LocalSGD"]


@register
@dataclass(frozen=True)
class LocalSGD(Scheme):
    H: int
    comm_delay: float = 0.0
    name: ClassVar[str] = "local-sgd"
    title: ClassVar[str] = "Local SGD"
    process: ClassVar[str] = ("Each worker takes H local steps from the common w, then all wait for "
                              "the slowest and spend D averaging; runtime is reported per local step.")
    timeline_parameter: ClassVar[str] = "H"
    averages_models: ClassVar[bool] = True
    schedulable: ClassVar[str | None] = "H"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "H", H_DOMAIN.check(self.H, "H"))
        object.__setattr__(self, "comm_delay", COMM_DELAY.check(self.comm_delay, "comm_delay"))

    @property
    def steps_per_update(self) -> int:
        return self.H

    def as_dict(self) -> dict[str, object]:
        return {**super().as_dict(), "comm_delay": self.comm_delay}

    def cluster_runtime(self, cluster: Cluster, work: float) -> Estimate:
        """A replayed trace: the exact mean over one cycle of rounds.  H = 1: (E[max_i X_i] + D)
        over the cluster's workers (non-identical, or the Markov mixture); larger H on independent
        workers: (E[max_i S_i] + D)/H with one law of a sum of H per group (DESIGN §7); under
        slow spells the H times of a round are correlated: no analytic result."""
        exact = cluster.exact_local_sgd_mean(self.H, self.comm_delay)
        if exact is not None:
            return Estimate(exact, "exact", Text.of("method_replay_local"))
        if self.H != 1:
            groups = cluster.groups
            if groups is None:
                return super().cluster_runtime(cluster, work)
            est = local_sgd_of_groups(groups, self.H, work)
            return est if est.value is None else est.scaled(1.0 / self.H, self.comm_delay / self.H,
                                                            Text.of("method_per_local_step", method=est.method))
        est = kth_of_independent(cluster.marginals(), self.m, work)
        if est.value is None:
            return est
        return est.scaled(1.0, self.comm_delay,
                          Text.of("method_plus_d_h1" if self.comm_delay else "method_h1", method=est.method))

    def cluster_times(self, cluster: Cluster, R: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return clusters.local_sgd_times(cluster, self.H, self.comm_delay, R, n, rng)

    def cluster_cost(self, cluster: Cluster, replicas: int) -> float:
        return clusters.cluster_cost(cluster, self.H)

    def expected_runtime(self, delay: Delay, work: float) -> Estimate:
        """Per local step ``(E[max_i S_i] + D)/H``, S_i a sum of H delays (Wang & Joshi,
        Cooperative SGD): H = 1 is an order statistic; a family that knows the law of a sum
        (exponential: Gamma) by quadrature; otherwise on lattices, with the bound
        E[max S] ≤ H·E[X_{m:m}] when that is over its budget."""
        m, H, D = self.m, self.H, self.comm_delay
        per_step = Phrase("method_per_step", H=H)
        if H == 1:
            est = order_statistic_mean(delay, m, m)
            return est.scaled(1.0, D, Text.of("method_plus_d_h1", method=est.method) if D else est.method)
        if not math.isfinite(delay.mean):
            return infinite(Text.of("method_local_infinite", alpha=delay.tail_index))
        x = delay.constant
        if x is not None:
            return Estimate((H * x + D) / H, "exact", Text.of("method_constant_local"), std=0.0)
        if m == 1:
            std = math.sqrt(H * delay.var) / H if math.isfinite(delay.var) else math.inf
            return Estimate((H * delay.mean + D) / H, "exact", Text.of("method_local_one_worker"), std=std)
        law = delay.sum_law(H)
        if law is not None:
            r = affine_quadrature_moments(law[0], law[1], m, m)
            est = Estimate(r.mean, numeric_kind(r.mean, r.error), Text.of("method_gamma_quadrature", per_step=per_step),
                           std=math.sqrt(r.var), error=r.error)
            return est.scaled(1.0 / H, D / H)
        est = max_of_sums_mean(delay, m, H, work=work)
        if est.value is None:
            # max_i Σ_h X_ih ≤ Σ_h max_i X_ih, and ≥ (the worker with the slowest first step) X_{m:m} + (H−1)E[X]
            top = order_statistic_mean(delay, m, m)
            if top.value is None:
                return est
            lower = (top.value + (H - 1) * delay.mean + D) / H
            return Estimate(top.value + D / H, "upper_bound",
                            Text.of("method_local_bound", lower=lower, method=est.method))
        return est.scaled(1.0 / H, D / H, Text.of("method_then", method=est.method, then=per_step))

    def iteration_times(self, delay: Delay, n: int, rng: np.random.Generator) -> np.ndarray:
        return iid.local_sgd_times(delay, self.m, self.H, self.comm_delay, n, rng)

    def mc_method(self, delay: Delay) -> str:
        if self.H == 1:
            return super().mc_method(delay)
        if delay.sum_law(self.H) is not None:
            return "max of m Gamma(H, λ) sums by order-statistic sampling"
        return "per-round sums of H delays, max over m workers"

    def iteration_cost(self, delay: Delay | None, replicas: int) -> float:
        if self.H == 1:
            return iid.ORDER_STATISTIC_COST
        if delay is not None and delay.sum_law(self.H) is not None:
            return iid.sum_law_cost(self.H)
        return iid.local_sgd_cost(self.m, self.H)

    def costly_parameter(self) -> str:
        return "H" if self.H > 1 else "m"

    def cost_advice(self, parameter: str) -> Phrase:
        return Phrase("advice_local_sgd", delays=self.m * self.H)

    def timeline_jobs(self, iterations: int) -> int:
        return iterations * self.m * self.H

    @property
    def timeline_cap(self) -> int:
        return limits.TIMELINE_MAX_JOBS_VECTORISED

    def timeline(self, delay: Delay | Cluster, iterations: int, rng: np.random.Generator,
                 out: timeline.Intervals) -> list[float]:
        return timeline.local_sgd_timeline(delay, self.m, self.H, self.comm_delay, iterations, rng, out)

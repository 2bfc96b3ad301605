"""The registry is real: a new scheme is one class and one ``@register``, and the analytic core,
the Monte Carlo core, the sweeps, the charts and make_scheme all take it with no other edit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

from distsgd import curves, expected_runtime, make_scheme, parse_delay, plots, simulate_runtime
from distsgd.delays import Delay
from distsgd.engines import timeline
from distsgd.estimate import Estimate
from distsgd.montecarlo import simulate_timeline
from distsgd.orderstats import order_statistic_mean, sample_order_statistic
from distsgd.schemes import SCHEMES, Scheme, register


@pytest.fixture
def median_sync():
    """A toy scheme: all m workers start together and the update waits for the median one."""

    @register
    @dataclass(frozen=True)
    class MedianSync(Scheme):
        name: ClassVar[str] = "median-sync"
        title: ClassVar[str] = "Median-sync SGD"
        process: ClassVar[str] = "All m start on w_j; the update uses the first ⌈m/2⌉ gradients."

        @property
        def grads_per_update(self) -> int:
            return (self.m + 1) // 2

        def expected_runtime(self, delay: Delay, work: float) -> Estimate:
            return order_statistic_mean(delay, self.grads_per_update, self.m)

        def iteration_times(self, delay: Delay, n: int, rng: np.random.Generator) -> np.ndarray:
            return sample_order_statistic(delay, self.grads_per_update, self.m, rng, n)

        def timeline(self, delay, iterations, rng, out):
            return timeline.k_of_m_timeline(delay, self.m, self.grads_per_update, iterations, rng, out)

    yield MedianSync
    SCHEMES.pop("median-sync")


def test_a_toy_scheme_gets_analytic_monte_carlo_and_a_chart(median_sync):
    s = make_scheme("median-sync", m=7)
    assert isinstance(s, median_sync) and s.label == "median-sync (m=7)"
    d = parse_delay("exp(rate=2)")
    # E[X_{4:7}] = (H_7 − H_3)/λ, written out here (not taken from the library)
    exact = (1 / 4 + 1 / 5 + 1 / 6 + 1 / 7) / 2
    est = expected_runtime(s, d)
    assert est.kind == "exact" and est.value == pytest.approx(exact, rel=1e-12)
    mc = simulate_runtime(s, d, 40_000, seed=3)
    assert mc.ci95[0] - 0.5 * mc.half_width <= exact <= mc.ci95[1] + 0.5 * mc.half_width
    tl = simulate_timeline(s, d, iterations=3, seed=1)
    assert len(tl.update_times) == 3 and (tl.outcome == "used").sum() == 3 * 4
    rows = curves.runtime_rows([s], d, seed=1)
    fig = plots.runtime_figure(rows, "m", "workers m", "toy")
    names = " ".join(t.name for t in fig.data)
    assert "analytic" in names and "Monte Carlo" in names
    assert plots.timeline_figure(tl).data


def test_the_registry_refuses_what_is_not_a_scheme():
    from distsgd import ParameterError
    with pytest.raises(ParameterError, match="scheme"):
        register(int)  # type: ignore[arg-type]

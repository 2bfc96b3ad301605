"""What a simulated error curve holds (:class:`ErrorSimulation`) and, for a scheduled run, what its
schedule did (:class:`ScheduleRun`, DESIGN §13)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..schedules import Schedule

__all__ = ["ErrorSimulation", "ScheduleRun"]


@dataclass(frozen=True)
class ScheduleRun:
    """What a schedule did in a run: the ``checkpoints``, the mean over replicas of the value in
    force after each (``value``) and of F(w_t)/F(w₀) at each (``loss_ratio``), and on the time grid
    the value of the update in progress at each grid time, mean and 95 % band over replicas."""

    schedule: Schedule
    checkpoints: np.ndarray
    value: np.ndarray
    loss_ratio: np.ndarray
    grid_value: tuple[np.ndarray, np.ndarray, np.ndarray]

    def as_json(self) -> dict[str, Any]:
        """The JSON ``schedule`` object of DESIGN §13."""
        return {"spec": self.schedule.spec, "parameter": self.schedule.parameter,
                "checkpoints": self.checkpoints.tolist(), "value": self.value.tolist(),
                "loss_ratio": self.loss_ratio.tolist()}


@dataclass(eq=False)
class ErrorSimulation:
    """Simulated f(w) − f* on the time grid: mean and 95% band over replicas."""

    time: np.ndarray
    mean: np.ndarray
    ci95_low: np.ndarray
    ci95_high: np.ndarray
    replicas: int
    updates: int
    staleness_mean: float | None = None
    fresh_fraction: float | None = None
    gamma_measured: float | None = None
    staleness_counts: np.ndarray | None = None
    errors: np.ndarray | None = field(default=None, repr=False)
    #: each metric of a problem (test accuracy, test loss): (mean, ci95_low, ci95_high) on the grid
    metrics: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)
    #: a scheduled run's record (DESIGN §13); None for a fixed K or H
    schedule: ScheduleRun | None = field(default=None, repr=False)

    def bound_constants(self, gamma: float | None = None, p0: float | None = None) -> tuple[float | None, float | None]:
        """γ and p₀ for Dutta et al.'s asynchronous bound (DESIGN §3): each as given, else as
        measured in this run (the staleness factor and the fraction of fresh gradients; None
        for a scheme whose gradients are all fresh, which measures neither)."""
        return (self.gamma_measured if gamma is None else gamma, self.fresh_fraction if p0 is None else p0)

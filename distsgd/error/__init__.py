"""Error against wall-clock time (DESIGN §3): the model problem, bounds, the exact model curve,
simulated SGD and the time to reach a target.

``problem``   the model problem and SGD hyper-parameters, with their domains
``timing``    the update-count process: E[T] for the time axis, covering traces, N(t)
``bounds``    Dutta et al.'s bounds against iterations and time
``exact``     the exact expected error of the model problem (fresh schemes, local SGD)
``simulate``  simulated SGD driven by the runtime Monte Carlo's update traces
``targets``   time to reach ε
"""

from .bounds import BoundCurve, bound_vs_time, error_bound
from .exact import ModelCurve, exact_error, exact_error_vs_time
from .problem import (
                      BATCH,
                      C_ADAPT,
                      DIM,
                      ETA,
                      ETA_MAX,
                      F0,
                      GAMMA,
                      L_SMOOTH,
                      MAX_REPLICAS,
                      MAX_UPDATES,
                      MAX_WORK,
                      MU,
                      P0,
                      POINTS,
                      REPLICAS,
                      SIGMA2,
                      TIME,
                      LearningRate,
                      Problem,
                      QuadraticProblem,
)
from .simulate import ErrorSimulation, simulate_error
from .targets import (
                      TargetTime,
                      bound_time_to_target,
                      simulated_time_to_target,
                      time_to_target,
)

__all__ = [
    "Problem", "QuadraticProblem", "LearningRate", "BoundCurve", "ErrorSimulation", "TargetTime", "ModelCurve",
    "error_bound", "bound_vs_time", "exact_error", "exact_error_vs_time", "simulate_error",
    "time_to_target", "bound_time_to_target", "simulated_time_to_target",
    "ETA", "L_SMOOTH", "MU", "SIGMA2", "BATCH", "F0", "DIM", "GAMMA", "P0", "TIME", "POINTS",
    "REPLICAS", "MAX_REPLICAS", "MAX_UPDATES", "MAX_WORK", "ETA_MAX", "C_ADAPT",
]

"""Monte Carlo of the schemes whose workers all start together, on any cluster (DESIGN §7).

Sync and k-sync: every worker starts one mini-batch per iteration, the K-th finish is the
iteration's time; local SGD: every worker runs H mini-batches back to back per round, the
slowest sum plus D, per local step.  The mini-batch times come from :meth:`Cluster.jobs`, worker
by worker, so a Markov state advances once per started mini-batch (a cancelled one included)
and carries over from one iteration to the next.  Without a state the iterations are
independent (the t-interval applies); with one they are a stationary sequence (the states
start from the stationary law), averaged by batch means over independent replicas.
"""

from __future__ import annotations

import numpy as np

from .. import limits
from ..clusters import Cluster

__all__ = ["kofm_times", "local_sgd_times", "cluster_cost", "REPLICAS", "BATCHES"]

#: replicas and batches per replica of a run on a cluster with a state (32 batch means)
REPLICAS, BATCHES = 4, 8


def cluster_cost(cluster: Cluster, jobs_per_iteration: int) -> float:
    """One iteration (≈ ns): ≈ 25 ns per mini-batch drawn and ranked, 60 with a Markov state."""
    return (60.0 if cluster.stateful else 25.0) * cluster.m * jobs_per_iteration


def _blocks(cluster: Cluster, R: int, n: int, per: int, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    """(R, m, b·per) mini-batch times, block after block, b·per·m·R ≤ limits.CHUNK."""
    state = cluster.start(rng, R)
    b = max(1, limits.CHUNK // (R * cluster.m * per))
    for s in range(0, n, b):
        k = min(b, n - s)
        yield k, cluster.jobs(rng, state, R, k * per)


def kofm_times(cluster: Cluster, K: int, R: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """(R, n): the K-th of the m mini-batches started together, n iterations of R replicas."""
    out = np.empty((R, n))
    s = 0
    for k, x in _blocks(cluster, R, n, 1, rng):
        out[:, s:s + k] = np.partition(x, K - 1, axis=1)[:, K - 1, :]
        s += k
    return out


def local_sgd_times(cluster: Cluster, H: int, D: float, R: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """(R, n): per local step, (max_i Σ_h X_ih + D)/H of n rounds of R replicas."""
    out = np.empty((R, n))
    s = 0
    for k, x in _blocks(cluster, R, n, H, rng):
        sums = x.reshape(R, cluster.m, k, H).sum(axis=3)
        out[:, s:s + k] = (sums.max(axis=1) + D) / H
        s += k
    return out

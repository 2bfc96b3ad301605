"""Long-run means of the renewal schemes: warm-up, layout of replicas, batch means.

Every worker starts a fresh job at time 0; with a decreasing hazard fresh jobs are shorter than
stationary in-flight ones, so the in-flight ages (the update rate and the staleness) settle only
after a warm-up that grows with the law's variability (:func:`warmup`).  After it, each replica's
updates are cut into B batches; the batch means of R independent replicas give a confidence
interval that respects the correlation between consecutive updates.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .. import limits
from ..delays import Delay
from ..params import ceil_div

__all__ = ["BatchMeans", "warmup", "cv2", "t95", "layout", "MAX_KEPT_TIMES"]

#: per-iteration times kept in a RuntimeSample (the first ones; the mean uses all)
MAX_KEPT_TIMES = limits.MAX_KEPT_TIMES


def t95(dof: int) -> float:
    """The two-sided 95% quantile of Student's t with ``dof`` degrees of freedom: the function
    ``scipy.stats.t.ppf`` evaluates (``special.stdtrit``), without its ≈ 0.1 ms of argument
    handling a call (a chart asks at every point)."""
    return float(special.stdtrit(max(dof, 1), 0.975))


def cv2(delay: Delay) -> float:
    """Var[X]/E[X]², the squared coefficient of variation (inf if either moment is)."""
    mean, var = delay.mean, delay.var
    if not (math.isfinite(mean) and math.isfinite(var)):
        return math.inf
    if mean <= 0:
        return 0.0
    r = math.sqrt(var) / mean  # not var/mean²: mean² underflows for tiny times
    return r * r


def warmup(delay: Delay | None) -> tuple[int, bool]:
    """Warm-up pushes per worker for ``delay``, and whether that is short of what the law needs.

    Every worker starts a fresh job at time 0; the in-flight ages (so the update rate and the
    staleness) settle after about 20·(1 + CV²) pushes per worker, at least 40, capped at
    ``limits.WARMUP_MAX_PUSHES_PER_WORKER`` (see limits.py for the measurements)."""
    if delay is None:
        return limits.WARMUP_PUSHES_PER_WORKER, False
    c2 = cv2(delay)
    if not math.isfinite(c2):
        return limits.WARMUP_MAX_PUSHES_PER_WORKER, True
    need = limits.WARMUP_PUSHES_PER_CV2 * (1.0 + c2)
    w = max(limits.WARMUP_PUSHES_PER_WORKER, math.ceil(min(need, 1e18)))
    return min(w, limits.WARMUP_MAX_PUSHES_PER_WORKER), need > limits.WARMUP_MAX_PUSHES_PER_WORKER


class BatchMeans:
    """Streams update times, block by block, into batch sums of the post-warm-up intervals
    (B batches of n/B updates per replica), staleness totals and the first kept intervals."""

    def __init__(self, R: int, w: int, n: int, B: int, keep: bool) -> None:
        self.R, self.w, self.n, self.B, self.batch_len = R, w, n, B, n // B
        self.sums = np.zeros((R, B))
        self.prev = np.zeros(R)
        self.j = 0
        self.total = self.total2 = self.stale = self.fresh = 0.0
        self.kept: list[np.ndarray] = []
        self.n_kept = 0 if keep else MAX_KEPT_TIMES

    def add_times(self, times: np.ndarray) -> bool:
        """Take the next block (R, b) of consecutive update times; True when done."""
        b = times.shape[1]
        if b == 0:
            return self.j >= self.w + self.n
        x = np.diff(np.concatenate([self.prev[:, None], times], axis=1), axis=1)
        self.prev = times[:, -1].copy()
        j = np.arange(self.j, self.j + b)
        self.j += b
        sel = (j >= self.w) & (j < self.w + self.n)
        if sel.any():
            xs, js = x[:, sel], j[sel] - self.w
            ids = (js // self.batch_len)[None, :] + (np.arange(self.R) * self.B)[:, None]
            self.sums += np.bincount(ids.ravel(), xs.ravel(), self.R * self.B).reshape(self.R, self.B)
            self.total += float(xs.sum())
            self.total2 += float((xs * xs).sum())
            if self.n_kept < MAX_KEPT_TIMES:
                self.kept.append(xs.ravel()[: MAX_KEPT_TIMES - self.n_kept])
                self.n_kept += self.kept[-1].size
        return self.j >= self.w + self.n

    def add_staleness(self, update: np.ndarray, stale: np.ndarray) -> None:
        """Staleness of gradients used in the given updates (``update`` broadcasts to ``stale``)."""
        sel = np.broadcast_to((update >= self.w) & (update < self.w + self.n), stale.shape)
        st = stale[sel]
        self.stale += float(st.sum())
        self.fresh += float(np.count_nonzero(st == 0))


def layout(m: int, K: int, iterations: int, delay: Delay | None, lockstep: bool) -> tuple[int, int, int, int]:
    """Replicas R, warm-up w and measured updates n per replica, batches per replica B.

    The warm-up is counted in pushes per worker, W of them (:func:`warmup`), ⌈W·m/K⌉ updates
    (whether K is below or above m: one update of K ≥ 40·m pushes is already 40 per worker);
    each replica then measures ⌈iterations/R⌉ updates (at least 4 per batch), and R·B ≥ 32
    batch means give the confidence interval.  A ``lockstep`` engine (k-async) amortises its
    per-step overhead over many replicas; a streamed one (merged renewal processes) pays every
    replica's warm-up, so it takes few long replicas.  Memory does not depend on the layout
    (the engines stream), only the cost does.
    """
    w = ceil_div(warmup(delay)[0] * m, K)
    if lockstep:
        R_cap = max(4, min(256, 2**16 // m))
        R = int(min(R_cap, max(4, iterations // max(w, 200))))
    else:
        R = int(min(8, max(4, iterations // (10 * w))))
    B = ceil_div(32, R)
    n = max(B * 4, ceil_div(iterations, R))
    n = ceil_div(n, B) * B
    return R, w, n, B

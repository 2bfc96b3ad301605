"""Who is slow in a matrix of step times (DESIGN §7): slowdowns and emerging stragglers.

``times[i, j]`` is worker i's time at complete step j (steps in step order).  The ratio
r[i, j] = t[i, j] / median_i' t[i', j] compares a worker with its step's median; a worker's
slowdown is the median of its ratios.  An *emerging* straggler has a window of w consecutive
steps whose median ratio is ≥ the threshold — and, so that noise alone does not make one, more
ratios ≥ the threshold in that window than chance gives a worker like the others (below).
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage, stats

__all__ = ["ratios", "first_slow_window", "chance_counts", "FALSE_ALARM"]

#: chance that a trace of exchangeable workers shows an emerging straggler anywhere (the
#: Bonferroni bound over every worker and window of :func:`chance_counts`)
FALSE_ALARM = 0.01


def ratios(times: np.ndarray) -> np.ndarray:
    """r[i, j] = t[i, j] / median over workers of t[:, j] (numpy's median: for an even count
    the mean of the two middle values)."""
    return times / np.median(times, axis=0)


def chance_counts(ge: np.ndarray, persistent: np.ndarray, w: int, alpha: float = FALSE_ALARM) -> np.ndarray:
    """Per worker, the fewest ratios ≥ the threshold among w that chance does not explain.

    Under the null that worker i is like the others, each of its ratios is ≥ the threshold
    with probability p_i, estimated by the fraction among the ratios of the *other* workers
    that are not ``persistent`` stragglers (``ge`` marks the ratios ≥ the threshold); a window's
    count is then Binomial(w, p_i).  The answer is the smallest
    c with P(count ≥ c) ≤ alpha / (m · windows), so the chance of a false alarm anywhere in the
    trace is at most ``alpha``.  With p_i = 0 (the others never reach the threshold) it is 1,
    and the window's median alone decides.
    """
    m, n = ge.shape
    own = ge.sum(axis=1)
    usual = ~persistent
    total, count = np.sum(own * usual), np.sum(usual)
    others = count - usual  # usual workers other than i
    p = np.divide(total - own * usual, others * n, out=np.zeros(m), where=others > 0)
    level = alpha / (m * max(1, n - w + 1))
    c = np.arange(w + 1)
    tail = stats.binom.sf(c[None, :] - 1, w, p[:, None])  # P(count ≥ c)
    return np.argmax(tail <= level, axis=1) + np.where((tail <= level).any(axis=1), 0, w + 1)


def first_slow_window(ratio: np.ndarray, w: int, thr: float, alpha: float = FALSE_ALARM) -> np.ndarray:
    """Per row, the start of the first window of w columns whose median is ≥ thr and whose
    count c of ratios ≥ thr is at least :func:`chance_counts`; −1 if none.

    With c from cumulative sums, the median is ≥ thr when c > w/2, < thr when c < w/2, and for
    even w and c = w/2 it is the mean of the largest ratio < thr and the smallest ≥ thr."""
    ge = ratio >= thr
    cum: np.ndarray = np.pad(np.cumsum(ge, axis=1), ((0, 0), (1, 0)))  # [:, j]: #(ratios ≥ thr) in columns < j
    count = cum[:, w:] - cum[:, :-w]
    hit = count > w // 2
    if w % 2 == 0:
        n, at = count.shape[1], -(w // 2)  # origin: output j is the window [j, j + w)
        below = ndimage.maximum_filter1d(np.where(ge, -np.inf, ratio), w, axis=1, origin=at)[:, :n]
        above = ndimage.minimum_filter1d(np.where(ge, ratio, np.inf), w, axis=1, origin=at)[:, :n]
        hit |= (count == w // 2) & ((below + above) / 2 >= thr)
    hit &= count >= chance_counts(ge, np.median(ratio, axis=1) >= thr, w, alpha)[:, None]
    return np.where(hit.any(axis=1), hit.argmax(axis=1), -1)

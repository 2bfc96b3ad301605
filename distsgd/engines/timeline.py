"""Event-by-event runs that record every worker's intervals: the Gantt chart of the timeline page.

For drawing, not for estimating: each simulator fills :class:`Intervals` for a few iterations
and returns the update times.  Outcomes: a gradient that was ``used`` fresh or ``stale``, work
``cancelled`` at an update, a worker ``waiting`` idle, the local-SGD averaging round
(``communicating``), or work still running when the window ends (``in flight``).
"""

from __future__ import annotations

import numpy as np

from ..delays import Delay

__all__ = ["Intervals", "k_of_m_timeline", "kbatch_sync_timeline", "local_sgd_timeline", "renewal_timeline"]


class Intervals:
    """The timeline's intervals, column by column (empty waits and cancellations dropped)."""

    def __init__(self) -> None:
        self.worker: list[int] = []
        self.start: list[float] = []
        self.end: list[float] = []
        self.outcome: list[str] = []
        self.staleness: list[int] = []

    def add(self, w: int, s: float, e: float, outcome: str, staleness: int = 0) -> None:
        if e > s or outcome in ("used", "stale"):
            self.worker.append(int(w))
            self.start.append(float(s))
            self.end.append(float(e))
            self.outcome.append(outcome)
            self.staleness.append(int(staleness))

    def add_block(self, w: np.ndarray, s: np.ndarray, e: np.ndarray, outcome: np.ndarray) -> None:
        """Many intervals at once (vectorised; staleness 0), in the order given."""
        keep = (e > s) | (outcome == "used") | (outcome == "stale")
        self.worker.extend(w[keep].tolist())
        self.start.extend(s[keep].tolist())
        self.end.extend(e[keep].tolist())
        self.outcome.extend(outcome[keep].tolist())
        self.staleness.extend([0] * int(keep.sum()))


def k_of_m_timeline(delay: Delay, m: int, K: int, iterations: int, rng: np.random.Generator,
                    out: Intervals) -> list[float]:
    """Sync (K = m) and k-sync: all m start together; the update uses the first K, the other
    m − K computations are cancelled."""
    updates, t0 = [], 0.0
    for _ in range(iterations):
        x = t0 + delay.sample(rng, m)
        tK = np.sort(x)[K - 1]
        for i in range(m):
            if x[i] <= tK:
                out.add(i, t0, x[i], "used")
                out.add(i, x[i], tK, "waiting")
            else:
                out.add(i, t0, tK, "cancelled")
        t0 = tK
        updates.append(t0)
    return updates


def local_sgd_timeline(delay: Delay, m: int, H: int, D: float, iterations: int, rng: np.random.Generator,
                       out: Intervals) -> list[float]:
    """Per worker and round: H local steps, the wait for the slowest, the averaging round D (vectorised)."""
    updates, t0 = [], 0.0
    kinds = np.array(["used"] * H + ["waiting", "communicating"], dtype=object)
    for _ in range(iterations):
        steps = delay.sample(rng, (m, H))
        ends = t0 + np.cumsum(steps, axis=1)
        slowest = ends[:, -1].max()
        s_blk = np.concatenate([np.full((m, 1), t0), ends, np.full((m, 1), slowest)], axis=1)
        e_blk = np.concatenate([ends, np.full((m, 1), slowest), np.full((m, 1), slowest + D)], axis=1)
        out.add_block(np.repeat(np.arange(m), H + 2), s_blk.ravel(), e_blk.ravel(), np.tile(kinds, m))
        t0 = slowest + D
        updates.append(t0)
    return updates


def kbatch_sync_timeline(delay: Delay, m: int, K: int, iterations: int, rng: np.random.Generator,
                         out: Intervals) -> list[float]:
    """Each iteration, every worker computes back to back on the same parameters until K
    gradients exist overall; the rest is cancelled."""
    updates, t0 = [], 0.0
    for _ in range(iterations):
        t0 = _kbatch_sync_iteration(delay, m, K, t0, rng, out)
        updates.append(t0)
    return updates


def _kbatch_sync_iteration(delay: Delay, m: int, K: int, t0: float, rng: np.random.Generator,
                           out: Intervals) -> float:
    starts = np.full(m, t0)
    ends = t0 + delay.sample(rng, m)
    done: list[tuple[float, int, float]] = []
    while len(done) < K:
        i = int(np.argmin(ends))
        done.append((ends[i], i, starts[i]))
        starts[i] = ends[i]
        ends[i] = starts[i] + delay.sample(rng)
    T = done[-1][0]
    for e, i, s in done:
        out.add(i, s, e, "used")
    for i in range(m):
        out.add(i, starts[i], T, "cancelled")
    return T


def renewal_timeline(delay: Delay, m: int, K: int, waits: bool, iterations: int, rng: np.random.Generator,
                     out: Intervals) -> list[float]:
    """Event by event: a worker that finishes pushes; every K pushes the server updates.  With
    ``waits`` (k-async) the pushers wait for the update and restart on it; otherwise (async,
    k-batch-async) a pusher reads the current parameters and restarts at once."""
    start = np.zeros(m)
    finish = delay.sample(rng, m)
    read = np.zeros(m, dtype=int)
    version = 0
    pushed: list[tuple[int, float]] = []  # (worker, push time) since the last update
    updates: list[float] = []
    while version < iterations:
        busy = np.where(np.isinf(start), np.inf, finish)
        i = int(np.argmin(busy))
        t = float(finish[i])
        st = version - read[i]
        out.add(i, start[i], t, "used" if st == 0 else "stale", st)
        pushed.append((i, t))
        if waits:
            start[i] = np.inf  # waiting for the update
        else:
            read[i] = version + (1 if len(pushed) == K else 0)
            start[i] = t
            finish[i] = t + delay.sample(rng)
        if len(pushed) == K:
            version += 1
            updates.append(t)
            if waits:
                for w, tp in pushed:
                    out.add(w, tp, t, "waiting")
                    read[w] = version
                    start[w] = t
                    finish[w] = t + delay.sample(rng)
            pushed = []
    t_end = updates[-1]
    for i in range(m):
        if np.isfinite(start[i]) and start[i] < t_end:
            out.add(i, start[i], t_end, "in flight")
    return updates

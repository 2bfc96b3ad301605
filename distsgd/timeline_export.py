"""Exports of a run for other tools: a :class:`~distsgd.montecarlo.Timeline` as Chrome / Perfetto
trace JSON (the Trace Event Format, opened by ``ui.perfetto.dev`` and ``chrome://tracing``), and
as CSV; and the bars a timeline chart draws (:func:`timeline_bars`: intervals joined, bounded).

:func:`perfetto_trace` gives one process (``pid`` 1) named after the run, one thread per worker
(``tid`` = worker number i + 1, named ``worker i+1`` as on the timeline page, with the worker's id
when the run replays or resamples a trace per worker: ``worker 3 (gpu-03)``), one complete event
(``"ph": "X"``) per interval named by its outcome, and one global instant (``"ph": "i"``, ``"s":
"g"``) per update.  Times are microseconds: the model's time unit is ``time_unit_us`` µs (1 s by
default, the unit of a measured trace), rounded to the nanosecond.

>>> from distsgd import make_scheme, parse_delay
>>> from distsgd.montecarlo import simulate_timeline
>>> tl = simulate_timeline(make_scheme("sync", 2), parse_delay("exp(rate=1)"), 2, seed=1)
>>> doc = perfetto_trace(tl)
>>> sorted(doc), doc["displayTimeUnit"]
(['displayTimeUnit', 'otherData', 'traceEvents'], 'ms')
>>> [e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"]
['worker 1', 'worker 2']
>>> sum(e["ph"] == "i" for e in doc["traceEvents"])    # one instant per update
2
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .clusters import TraceCluster
from .curves import to_csv
from .montecarlo import Timeline
from .params import Domain, ParameterError

__all__ = ["perfetto_trace", "timeline_csv", "worker_names", "trace_ids", "CATEGORIES", "TIME_UNIT_US", "timeline_bars",
           "SLOW_MARK", "TIMELINE_MAX_BARS"]

#: the event category of each outcome
CATEGORIES = {"used": "work", "stale": "work", "cancelled": "work", "in flight": "work", "waiting": "idle",
              "communicating": "communication"}
#: microseconds per time unit of the model
TIME_UNIT_US = Domain("time_unit_us", 1e-6, 1e12, doc="microseconds per time unit of the model")
PID = 1


def trace_ids(timeline: Timeline) -> tuple[str, ...] | None:
    """The trace's worker ids when worker i of the run is worker i of a trace (replay or
    per-worker; not pooled, which forgets who is who), else None."""
    src = timeline.delay
    if isinstance(src, TraceCluster) and src.mode != "pooled" and len(src.trace.workers) == timeline.scheme.m:
        return src.trace.workers
    return None


def worker_names(timeline: Timeline) -> list[str]:
    """``worker i`` (from 1) for each of the m workers, followed by the trace's id in parentheses
    where :func:`trace_ids` has one: ``worker 3 (gpu-03)``."""
    ids = trace_ids(timeline)
    return [f"worker {i + 1}" + (f" ({ids[i]})" if ids else "") for i in range(timeline.scheme.m)]


def _columns(timeline: Timeline) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """worker, start and end as arrays, checked: as many of each as intervals, workers in 0..m−1,
    finite times with end ≥ start ≥ 0."""
    n, m = timeline.worker.size, timeline.scheme.m
    cols = [np.asarray(c) for c in (timeline.start, timeline.end, timeline.outcome, timeline.staleness)]
    if any(c.shape != (n,) for c in cols) or timeline.worker.shape != (n,):
        raise ParameterError("timeline", "timeline_lengths")
    w = np.asarray(timeline.worker, dtype=np.int64)
    s, e = np.asarray(timeline.start, dtype=float), np.asarray(timeline.end, dtype=float)
    u = np.asarray(timeline.update_times, dtype=float)
    if n and not ((w >= 0) & (w < m)).all():
        raise ParameterError("timeline", "timeline_worker_index", last=m - 1)
    if not (np.isfinite(s).all() and np.isfinite(e).all() and np.isfinite(u).all()):
        raise ParameterError("timeline", "timeline_not_finite")
    if (s < 0).any() or (e < s).any() or (u < 0).any():
        raise ParameterError("timeline", "timeline_order")
    return w, s, e


def _us(x: np.ndarray, unit: float) -> np.ndarray:
    """Times in microseconds, rounded to the nanosecond (finite, or a ParameterError)."""
    with np.errstate(over="ignore"):
        out = np.round(x * unit, 3)
    if not np.isfinite(out).all():
        raise ParameterError("time_unit_us", "time_unit_range", unit=unit)
    return out


def perfetto_trace(timeline: Timeline, *, time_unit_us: float = 1e6, name: str = "distsgd",
                   workers: Sequence[str] | None = None) -> dict[str, Any]:
    """The timeline as Chrome Trace Event Format JSON (a dict for :func:`json.dump`).

    ``traceEvents``: the metadata events first (``process_name`` ``name``, and per worker
    ``thread_name`` and ``thread_sort_index``), then every interval and update sorted by ``ts``
    (an interval before an update at the same time, intervals in the timeline's order).  An
    interval is ``{"name": outcome, "cat": CATEGORIES[outcome], "ph": "X", "ts", "dur", "pid": 1,
    "tid": worker + 1, "args": {"staleness", "slow"}}``, with ``dur`` = end − start (both rounded
    to the nanosecond first, so an interval ends where the next begins; ≥ 0); an update is
    ``{"name": "update", "cat": "update", "ph": "i", "s": "g", "ts", "pid": 1, "tid": 0,
    "args": {"iteration": n}}`` (n from 1).  Every number is a Python int or float, finite.
    ``workers`` replaces the thread names (default :func:`worker_names`).  ``otherData`` says what
    was run: scheme, m, what the workers draw from, the time unit, the counts.
    """
    unit = TIME_UNIT_US.check(time_unit_us)
    if not isinstance(name, str) or not name.strip():
        raise ParameterError("name", "process_name")
    m = timeline.scheme.m
    names = list(worker_names(timeline) if workers is None else workers)
    if len(names) != m or not all(isinstance(n, str) for n in names):
        raise ParameterError("workers", "worker_names", m=m, count=len(names))
    w, s, e = _columns(timeline)
    slow = timeline.slow if timeline.slow.size == w.size else np.zeros(w.size, dtype=bool)
    ts, te, tu = _us(s, unit), _us(e, unit), _us(np.asarray(timeline.update_times, dtype=float), unit)
    dur = np.maximum(np.round(te - ts, 3), 0.0)
    meta: list[dict[str, Any]] = [{"name": "process_name", "ph": "M", "pid": PID, "tid": 0, "args": {"name": name}}]
    for i, label in enumerate(names):
        meta.append({"name": "thread_name", "ph": "M", "pid": PID, "tid": i + 1, "args": {"name": label}})
        meta.append({"name": "thread_sort_index", "ph": "M", "pid": PID, "tid": i + 1, "args": {"sort_index": i}})
    timed: list[dict[str, Any]] = []
    for k in range(w.size):
        outcome = str(timeline.outcome[k])
        timed.append({"name": outcome, "cat": CATEGORIES.get(outcome, "other"), "ph": "X", "ts": float(ts[k]),
                      "dur": float(dur[k]), "pid": PID, "tid": int(w[k]) + 1,
                      "args": {"staleness": int(timeline.staleness[k]), "slow": bool(slow[k])}})
    for n, t in enumerate(tu.tolist(), 1):
        timed.append({"name": "update", "cat": "update", "ph": "i", "s": "g", "ts": float(t), "pid": PID, "tid": 0,
                      "args": {"iteration": n}})
    timed.sort(key=lambda ev: (ev["ts"], ev["ph"] == "i"))  # stable: the timeline's order among equals
    src = timeline.delay
    other = {"generator": "distsgd", "scheme": timeline.scheme.label, "m": m, "workers_draw_from": src.label,
             "time_unit_us": float(unit), "intervals": int(w.size), "updates": int(tu.size)}
    if isinstance(src, TraceCluster):
        other["trace_digest"] = src.trace.digest
    assert all(math.isfinite(ev["ts"]) and ev.get("dur", 0.0) >= 0 for ev in timed)
    return {"traceEvents": meta + timed, "displayTimeUnit": "ms", "otherData": other}


def timeline_csv(timeline: Timeline) -> str:
    """The timeline's intervals as CSV: :meth:`Timeline.rows` with ``worker`` counted from 1 (as
    on the page and in :func:`perfetto_trace`) and, after it, the trace's worker ``id`` where
    :func:`trace_ids` has one; written by :func:`distsgd.curves.to_csv`."""
    ids = trace_ids(timeline)
    rows = []
    for i, row in zip(timeline.worker.tolist(), timeline.rows(), strict=True):
        head = {"worker": i + 1, **({"id": ids[i]} if ids else {})}
        rows.append({**head, **{k: v for k, v in row.items() if k != "worker"}})
    return to_csv(rows)


#: bars one timeline chart sends (≈ 150 bytes each in the figure's JSON: ≤ 0.6 MB)
TIMELINE_MAX_BARS = 4000


#: appended to an outcome in :func:`timeline_bars` for the work on a mini-batch that ran slow
SLOW_MARK = " · slow"


def _merge_touching(worker: np.ndarray, start: np.ndarray, end: np.ndarray,
                    outcome: np.ndarray, slow: np.ndarray) -> tuple[np.ndarray, ...]:
    """Join back-to-back intervals of one worker with one outcome, slow or not alike (e.g. the H
    steps of a local-SGD round) into one bar; staleness is kept only where nothing was joined."""
    order = np.lexsort((start, worker))
    w, s, e, o, sl = worker[order], start[order], end[order], outcome[order], slow[order]
    new = np.ones(w.size, dtype=bool)
    new[1:] = (w[1:] != w[:-1]) | (o[1:] != o[:-1]) | (sl[1:] != sl[:-1]) | (s[1:] != e[:-1]) | (o[1:] == "stale")
    first = np.flatnonzero(new)
    last = np.append(first[1:], w.size) - 1
    o = np.where(sl, o.astype(str) + SLOW_MARK, o.astype(str)).astype(object)
    return w[first], s[first], e[last], o[first], order[first], (last == first)


def timeline_bars(tl: Timeline, max_workers: int = 40,
                  max_bars: int = TIMELINE_MAX_BARS) -> tuple[dict[str, np.ndarray], int]:
    """The bars to draw (at most ``max_bars``): back-to-back intervals of one worker with one
    outcome joined, then, if still too many, only the first updates; and how many updates that is."""
    show = tl.worker < max_workers
    slow = tl.slow if tl.slow.size == tl.worker.size else np.zeros(tl.worker.size, dtype=bool)
    # a slow mini-batch's bar is not joined with a normal one's; its outcome carries SLOW_MARK
    w, s, e, o, idx, single = _merge_touching(tl.worker[show], tl.start[show], tl.end[show], tl.outcome[show],
                                              slow[show])
    st = np.where(single, tl.staleness[show][idx], 0)
    shown = len(tl.update_times)
    if w.size > max_bars:
        # the largest number of updates whose bars (those starting before it) fit
        counts = np.searchsorted(np.sort(s), tl.update_times, side="left")
        shown = max(1, int(np.searchsorted(counts, max_bars, side="right")))
        keep = s < tl.update_times[shown - 1]
        keep &= np.cumsum(keep) <= max_bars
        w, s, e, o, st = w[keep], s[keep], np.minimum(e[keep], tl.update_times[shown - 1]), o[keep], st[keep]
    return {"worker": w, "start": s, "end": e, "outcome": o, "staleness": st}, shown

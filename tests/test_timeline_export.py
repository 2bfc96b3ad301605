"""distsgd.timeline_export: a timeline as Chrome / Perfetto trace JSON and as CSV.

The expected events are built by hand from the :class:`Timeline` arrays (seconds × 10⁶ = µs) and
compared with what :func:`perfetto_trace` writes, for a replayed bundled trace and for the other
schemes' timelines (waits, staleness, in-flight work, the local-SGD round)."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
from collections import Counter

import numpy as np
import pytest

from distsgd import make_cluster, make_scheme, parse_delay
from distsgd.examples import example_trace
from distsgd.montecarlo import simulate_timeline
from distsgd.params import ParameterError
from distsgd.timeline_export import CATEGORIES, perfetto_trace, timeline_csv, worker_names


def replayed(name="persistent-slow", K=6, mode="replay"):
    t = example_trace(name)
    return simulate_timeline(make_scheme("k-sync", t.m, K=K), make_cluster(trace=t, trace_mode=mode), 5, seed=1)


def events(doc, ph):
    return [e for e in doc["traceEvents"] if e["ph"] == ph]


def test_every_interval_once_with_its_times_in_microseconds():
    tl = replayed()
    doc = perfetto_trace(tl)
    want = Counter()
    for w, s, e, o, st, sl in zip(tl.worker, tl.start, tl.end, tl.outcome, tl.staleness, tl.slow, strict=True):
        want[(int(w) + 1, round(s * 1e6, 3), round(e * 1e6 - s * 1e6, 3), o, int(st), bool(sl))] += 1
    got = Counter()
    for ev in events(doc, "X"):
        assert ev["pid"] == 1 and ev["cat"] == CATEGORIES[ev["name"]]
        assert set(ev) == {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"}
        got[(ev["tid"], round(ev["ts"], 3), round(ev["dur"], 3), ev["name"], ev["args"]["staleness"],
             ev["args"]["slow"])] += 1
    assert got == want and sum(got.values()) == tl.worker.size
    # the replay's times are the trace's: step 0 of gpu-02 (0.4937 s) is worker 2's first used interval
    first = min((e for e in events(doc, "X") if e["tid"] == 2), key=lambda e: e["ts"])
    assert (first["name"], first["ts"], first["dur"]) == ("used", 0.0, 493_700.0)


def test_threads_updates_and_order():
    tl = replayed()
    doc = perfetto_trace(tl, name="my run")
    meta = events(doc, "M")
    assert doc["traceEvents"][:len(meta)] == meta  # metadata first
    assert [e["args"]["name"] for e in meta if e["name"] == "process_name"] == ["my run"]
    names = {e["tid"]: e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    assert names == {i + 1: f"worker {i + 1} (gpu-{i + 1:02d})" for i in range(8)}
    assert sorted(e["args"]["sort_index"] for e in meta if e["name"] == "thread_sort_index") == list(range(8))
    assert {e["tid"] for e in events(doc, "X")} == set(names)  # every worker has a thread and events on it
    updates = events(doc, "i")
    assert [(u["name"], u["s"], u["args"]["iteration"]) for u in updates] == [("update", "g", n) for n in range(1, 6)]
    assert [u["ts"] for u in updates] == [round(t * 1e6, 3) for t in tl.update_times]
    timed = [e for e in doc["traceEvents"] if e["ph"] != "M"]
    assert len(timed) == tl.worker.size + tl.update_times.size
    assert all(a["ts"] <= b["ts"] for a, b in zip(timed, timed[1:], strict=False))
    # every iteration of k-sync ends at its update: some interval ends exactly there
    ends = {round(e["ts"] + e["dur"], 3) for e in events(doc, "X")}
    assert all(u["ts"] in ends for u in updates)
    assert doc["displayTimeUnit"] == "ms"
    assert doc["otherData"]["scheme"] == "k-sync (m=8, K=6)" and doc["otherData"]["updates"] == 5
    assert doc["otherData"]["trace_digest"] == example_trace("persistent-slow").digest


def test_json_serialisable_with_plain_numbers():
    doc = perfetto_trace(replayed("emerging-straggler", K=9))
    text = json.dumps(doc, allow_nan=False)
    assert json.loads(text) == doc
    for ev in doc["traceEvents"]:
        for key in ("ts", "dur"):
            if key in ev:
                assert type(ev[key]) is float and math.isfinite(ev[key]) and ev[key] >= 0
        assert type(ev["pid"]) is int and type(ev["tid"]) is int


def test_time_unit():
    tl = replayed()
    a, b = perfetto_trace(tl), perfetto_trace(tl, time_unit_us=1e3)  # one time unit = 1 ms
    for x, y in zip(events(a, "X"), events(b, "X"), strict=True):
        assert y["ts"] == pytest.approx(x["ts"] / 1e3, abs=1e-3) and y["dur"] == pytest.approx(x["dur"] / 1e3,
                                                                                                 abs=2e-3)
    assert b["otherData"]["time_unit_us"] == 1e3
    for bad in (0, -1, math.nan, math.inf, 1e13, True, "fast"):
        with pytest.raises(ParameterError) as info:
            perfetto_trace(tl, time_unit_us=bad)
        assert info.value.parameter == "time_unit_us"


@pytest.mark.parametrize("scheme", ["sync", "async", "k-async", "k-batch-sync", "k-batch-async", "local-sgd"])
def test_every_scheme_exports(scheme):
    kw = {"async": {}, "sync": {}, "local-sgd": {"H": 3, "comm_delay": 0.5}}.get(scheme, {"K": 2})
    tl = simulate_timeline(make_scheme(scheme, 4, **kw), parse_delay("exp(rate=1)"), 6, seed=3)
    doc = perfetto_trace(tl)
    json.dumps(doc, allow_nan=False)
    xs = events(doc, "X")
    assert len(xs) == tl.worker.size and len(events(doc, "i")) == 6
    assert {e["name"] for e in xs} == set(tl.outcome.tolist())
    np.testing.assert_allclose(sorted(e["ts"] for e in xs), np.sort(tl.start) * 1e6, atol=1e-3)
    np.testing.assert_allclose(sorted(e["dur"] for e in xs), np.sort(tl.end - tl.start) * 1e6, atol=2e-3)
    assert sorted(e["args"]["staleness"] for e in xs) == sorted(tl.staleness.tolist())
    assert [e["args"]["name"] for e in events(doc, "M") if e["name"] == "thread_name"] == \
        ["worker 1", "worker 2", "worker 3", "worker 4"]
    # on each worker the intervals follow one another: a well-nested thread for the viewers
    for tid in range(1, 5):
        mine = sorted((e["ts"], e["ts"] + e["dur"]) for e in xs if e["tid"] == tid)
        assert all(a[1] <= b[0] + 1e-3 for a, b in zip(mine, mine[1:], strict=False))


def test_worker_names_and_bad_arguments():
    # pooled forgets who is who: the run draws from one law (simulate_timeline hands over the law itself)
    assert worker_names(replayed(mode="pooled"))[:2] == ["worker 1", "worker 2"]
    pooled = make_cluster(trace=example_trace("persistent-slow"), trace_mode="pooled")
    assert worker_names(dataclasses.replace(replayed(), delay=pooled))[:2] == ["worker 1", "worker 2"]
    assert worker_names(replayed(mode="per-worker"))[5] == "worker 6 (gpu-06)"
    tl = replayed()
    names = [f"w{i}" for i in range(8)]
    assert [e["args"]["name"] for e in events(perfetto_trace(tl, workers=names), "M")
            if e["name"] == "thread_name"] == names
    with pytest.raises(ParameterError, match="workers"):
        perfetto_trace(tl, workers=names[:3])
    with pytest.raises(ParameterError, match="name"):
        perfetto_trace(tl, name=" ")
    tl.end = tl.end.copy()
    tl.end[3] = tl.start[3] - 1
    with pytest.raises(ParameterError, match="timeline"):
        perfetto_trace(tl)


def test_timeline_csv():
    tl = replayed()
    rows = list(csv.DictReader(io.StringIO(timeline_csv(tl))))
    assert list(rows[0]) == ["worker", "id", "start", "end", "outcome", "staleness", "slow"]
    assert len(rows) == tl.worker.size
    for r, w, s, e, o in zip(rows, tl.worker, tl.start, tl.end, tl.outcome, strict=True):
        assert (int(r["worker"]), r["id"], float(r["start"]), float(r["end"]), r["outcome"]) == \
            (int(w) + 1, f"gpu-{int(w) + 1:02d}", s, e, o)
    plain = simulate_timeline(make_scheme("sync", 2), parse_delay("exp(rate=1)"), 2, seed=1)
    assert timeline_csv(plain).splitlines()[0] == "worker,start,end,outcome,staleness,slow"

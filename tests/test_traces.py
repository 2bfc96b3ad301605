"""distsgd.traces: reading measured step-time traces (DESIGN §7) and the per-worker summary.

Every trace is written by the test itself; every expected number is worked out by hand in the
test (or by a brute-force loop that mirrors the definition word for word).
"""

from __future__ import annotations

import hashlib
import io
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from distsgd import limits
from distsgd.params import ParameterError
from distsgd.slowdown import first_slow_window
from distsgd.traces import Trace, load_trace, trace_from_times


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def refused(source, columns=None, **kw) -> str:
    """The one-line message of the ParameterError ``load_trace`` raises."""
    with pytest.raises(ParameterError) as info:
        load_trace(source, columns, **kw)
    assert info.value.parameter == "trace"
    message = str(info.value)
    assert "\n" not in message
    return message


def long_csv(rows, header="worker,step,duration"):
    return header + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows)


# -- layouts -----------------------------------------------------------------------------------

def test_long_layout_with_string_ids(tmp_path):
    # workers appear in the order w-b, w-a, w-c; steps 10, 2, 1 are sorted as numbers
    rows = [("w-b", 10, 3.0), ("w-a", 10, 1.5), ("w-c", 10, 2.0),
            ("w-a", 2, 1.0), ("w-b", 2, 4.0), ("w-c", 2, 2.5),
            ("w-c", 1, 0.5), ("w-a", 1, 0.25), ("w-b", 1, 0.75)]
    path = write(tmp_path, "trace.csv", long_csv(rows))
    t = load_trace(path)
    assert isinstance(t, Trace) and t.layout == "long" and t.format == "csv"
    assert t.workers == ("w-b", "w-a", "w-c") and t.m == 3
    assert t.steps == ("1", "2", "10") and t.complete_steps == ("1", "2", "10")
    np.testing.assert_array_equal(t.times, [[0.75, 4.0, 3.0], [0.25, 1.0, 1.5], [0.5, 2.5, 2.0]])
    np.testing.assert_array_equal(t.per_worker[1], [0.25, 1.0, 1.5])
    np.testing.assert_array_equal(t.pooled, [r[2] for r in rows])  # file order
    assert (t.duplicates, t.missing, t.dropped_steps) == (0, 0, 0)
    assert t.digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert t.name == str(path)
    assert t.describe() == f"{path}: 3 workers × 3 complete steps (0 dropped, 0 duplicates, 0 missing)"
    assert t.columns == {"worker": "worker", "step": "step", "duration": "duration"}
    with pytest.raises(ValueError):
        t.times[0, 0] = 9.0  # read-only: a cached trace cannot be changed under its digest


def test_step_labels_that_are_not_numbers_keep_their_order_of_first_appearance():
    data = long_csv([("a", "warmup", 1), ("b", "warmup", 2), ("a", "s2", 3), ("b", "s2", 4),
                     ("a", "s10", 5), ("b", "s10", 6)])
    t = load_trace(data.encode())
    assert t.steps == ("warmup", "s2", "s10")
    np.testing.assert_array_equal(t.times, [[1, 3, 5], [2, 4, 6]])


def test_column_names_ignore_case_and_blanks_around_cells():
    t = load_trace(b"Rank, Iteration, Seconds\n 0 , 1 , 1.5\n1,1,2.5\n")
    assert t.layout == "long" and t.workers == ("0", "1") and t.steps == ("1",)
    np.testing.assert_array_equal(t.times, [[1.5], [2.5]])


def test_wide_layout_with_a_step_column(tmp_path):
    path = write(tmp_path, "wide.csv", "iteration,gpu0,gpu1,gpu2\n3,1.3,2.3,3.3\n1,1.1,2.1,3.1\n2,1.2,2.2,3.2\n")
    t = load_trace(path)
    assert t.layout == "wide" and t.workers == ("gpu0", "gpu1", "gpu2")
    assert t.steps == ("1", "2", "3")
    np.testing.assert_array_equal(t.times, [[1.1, 1.2, 1.3], [2.1, 2.2, 2.3], [3.1, 3.2, 3.3]])
    assert t.columns == {"step": "iteration"}


def test_wide_layout_without_a_step_column_numbers_rows_and_empty_cells_are_missing(tmp_path):
    path = write(tmp_path, "wide.csv", "a,b\n1,2\n3,\n5,6\n")
    t = load_trace(path)
    assert t.layout == "wide" and t.workers == ("a", "b") and t.steps == ("1", "2", "3")
    assert t.complete_steps == ("1", "3") and (t.missing, t.dropped_steps) == (1, 1)
    np.testing.assert_array_equal(t.times, [[1, 5], [2, 6]])
    np.testing.assert_array_equal(t.per_worker[0], [1, 3, 5])
    np.testing.assert_array_equal(t.pooled, [1, 2, 3, 5, 6])


def test_wide_csv_written_by_pandas_uses_its_index_as_the_step(tmp_path):
    path = tmp_path / "wide.csv"
    pd.DataFrame({"w1": [1.0, 2.0], "w2": [3.0, 4.0]}, index=[7, 8]).to_csv(path)  # header ",w1,w2"
    t = load_trace(path)
    assert t.workers == ("w1", "w2") and t.steps == ("7", "8")
    np.testing.assert_array_equal(t.times, [[1, 2], [3, 4]])


def test_one_column_with_or_without_a_header():
    plain = load_trace(b"1.5\n2\n0.25\n")
    assert plain.layout == "column" and plain.workers == () and plain.m == 0
    np.testing.assert_array_equal(plain.pooled, [1.5, 2, 0.25])
    assert plain.times.shape == (0, 0) and plain.summary() == [] and plain.stragglers() == []
    assert plain.describe() == "<bytes>: 3 times in one column (pooled use only)"
    headed = load_trace(b"latency\n1.5\n2\n")
    np.testing.assert_array_equal(headed.pooled, [1.5, 2])
    assert "line 3, column 1 (unnamed)" in refused(b"1\n2\nx\n")  # no header: the first line is data


def test_the_repository_sample_trace_is_a_column_of_times():
    # a '#' comment line, then "seconds,step": one time column beside a step column
    t = load_trace("tests/data/trace.csv")
    assert t.layout == "column" and t.pooled.size == 500 and t.columns == {"duration": "seconds"}


def test_ragged_long_trace_drops_incomplete_steps_and_counts_missing_pairs():
    # c has no time at steps 2 and 4; step 5 only has a
    rows = [(w, s, 10 * s + i) for s in (1, 2, 3, 4) for i, w in enumerate("abc") if not (w == "c" and s in (2, 4))]
    rows.append(("a", 5, 99))
    t = load_trace(long_csv(rows).encode())
    assert t.steps == ("1", "2", "3", "4", "5") and t.complete_steps == ("1", "3")
    assert t.dropped_steps == 3 and t.missing == 2 + 2 + 0  # (c,2), (c,4), (b,5), (c,5)
    np.testing.assert_array_equal(t.times, [[10, 30], [11, 31], [12, 32]])
    np.testing.assert_array_equal(t.per_worker[0], [10, 20, 30, 40, 99])
    np.testing.assert_array_equal(t.per_worker[2], [12, 32])
    assert t.pooled.size == len(rows)
    assert t.describe().endswith("3 workers × 2 complete steps (3 dropped, 0 duplicates, 4 missing)")


def test_duplicates_keep_the_first_time_and_are_counted():
    data = long_csv([("a", 1, 1.0), ("b", 1, 2.0), ("a", 1, 9.0), ("a", 2, 3.0), ("b", 2, 4.0), ("b", 2, 8.0),
                     ("b", 2, 7.0)])
    t = load_trace(data.encode())
    assert t.duplicates == 3 and t.missing == 0
    np.testing.assert_array_equal(t.times, [[1.0, 3.0], [2.0, 4.0]])
    np.testing.assert_array_equal(t.pooled, [1.0, 2.0, 3.0, 4.0])


def test_no_complete_step_loads_with_an_empty_times_matrix():
    t = load_trace(long_csv([("a", 1, 1.0), ("b", 2, 2.0)]).encode())
    assert t.times.shape == (2, 0) and t.complete_steps == () and t.dropped_steps == 2
    assert [row["slowdown"] for row in t.summary()] == [None, None]
    assert t.summary()[0]["mean"] == 1.0 and t.stragglers() == []


# -- sources and formats -----------------------------------------------------------------------

def test_bytes_and_a_named_bytesio_upload():
    text = "w\ts\tduration\nx\t1\t1.0\ny\t1\t2.0\n"
    upload = io.BytesIO(text.encode())
    upload.name = "upload.tsv"
    upload.read(5)  # a rerun of the page: the buffer is read whole whatever its position
    t = load_trace(upload, "worker=w,step=s")
    assert t.name == "upload.tsv" and t.format == "tsv" and t.workers == ("x", "y")
    assert load_trace(text.encode(), "worker=w,step=s", name="renamed.tsv").name == "renamed.tsv"
    assert load_trace(text.encode(), "worker=w,step=s").format == "tsv"  # a tab in the header line


def test_tsv_by_extension(tmp_path):
    path = write(tmp_path, "trace.tab", "worker\tstep\tduration\na\t1\t1.0\n")
    t = load_trace(path)
    assert t.format == "tsv" and t.times.tolist() == [[1.0]]


def test_parquet_loads_and_names_the_row(tmp_path):
    path = tmp_path / "trace.parquet"
    df = pd.DataFrame({"worker": [7, 8, 7, 8], "step": [1, 1, 2, 2], "duration": [1.0, 2.0, 3.0, 4.0]})
    df.to_parquet(path)
    t = load_trace(path)
    assert t.format == "parquet" and t.workers == ("7", "8") and t.steps == ("1", "2")
    np.testing.assert_array_equal(t.times, [[1, 3], [2, 4]])
    df = pd.DataFrame({"worker": ["a"] * 10, "step": range(10), "duration": [1.0] * 6 + [-2.0, 1.0, 0.0, 1.0]})
    buf = io.BytesIO()
    df.to_parquet(buf)
    message = refused(buf.getvalue())  # found by its magic bytes
    assert re.search(r"\brow 7, column 'duration': '-2(\.0)?' is negative\b", message), message
    assert "(2 bad cells in total)" in message


def test_broken_parquet_and_broken_csv_are_parameter_errors(tmp_path):
    assert "cannot read it as Parquet" in refused(b"PAR1 not really", name="x.parquet")
    message = refused(b"a,b\n1,2\n\n3,4,5\n")
    assert "line 4" in message and "cannot read it as CSV" in message


def test_paths_that_are_not_regular_files(tmp_path):
    assert "not a regular file" in refused(tmp_path)
    assert "cannot read it" in refused(tmp_path / "absent.csv")
    assert "expected a path" in str(pytest.raises(ParameterError, load_trace, 3.5).value)


# -- the PAI trace, mappings and ambiguous columns -----------------------------------------------

PAI = ",worker,gpu,time,batch_time_norm\n0,w1,0,1,100\n1,w2,0,1,300\n2,w1,0,2,110\n3,w2,0,2,330\n"


def test_pai_layout_needs_and_takes_the_documented_mapping(tmp_path):
    path = write(tmp_path, "pai.csv", PAI)
    message = refused(path)
    assert "'', 'worker', 'gpu', 'time', 'batch_time_norm'" in message
    assert "--trace-columns worker=COL,step=COL,duration=COL" in message and "no step column" in message
    t = load_trace(path, "worker=worker,step=time,duration=batch_time_norm")
    assert t.layout == "long" and t.workers == ("w1", "w2") and t.steps == ("1", "2")
    np.testing.assert_array_equal(t.times, [[100, 110], [300, 330]])
    same = load_trace(path, {"worker": "worker", "step": "time", "duration": "batch_time_norm"})
    np.testing.assert_array_equal(same.times, t.times)


@pytest.mark.parametrize("header", ["worker,host,step,duration", "step,duration,elapsed", "step,iter,a,b"])
def test_ambiguous_columns_ask_for_a_mapping_and_list_the_columns(header):
    message = refused((header + "\n" + ",".join(["1"] * len(header.split(","))) + "\n").encode())
    assert "cannot tell which column is what" in message and "--trace-columns" in message
    assert ", ".join(repr(c) for c in header.split(",")) in message


@pytest.mark.parametrize("mapping, expected", [
    ("wrker=worker,step=time,duration=batch_time_norm", "unknown key 'wrker'"),
    ("worker=,step=time,duration=batch_time_norm", "worker=: no column is given"),
    ("worker=nope,step=time,duration=batch_time_norm", "worker=nope: there is no column 'nope'"),
    ("worker=worker,step=worker,duration=batch_time_norm", "'worker' is mapped twice"),
    ("worker=worker,worker=gpu", "repeated key 'worker'"),
    ("worker worker", "is not KEY=COLUMN"),
    ({"duration": 3}, "duration=: no column is given"),
    (["worker"], "must be a dict or"),
])
def test_mapping_errors_name_the_key_or_column(mapping, expected):
    message = refused(PAI.encode(), mapping)
    assert expected in message
    if "column" in expected:
        assert "'', 'worker', 'gpu', 'time', 'batch_time_norm'" in message


def test_partial_mapping_detects_the_rest_and_step_alone_forces_wide():
    t = load_trace(b"node,t,d\na,1,1.0\nb,1,2.0\n", {"step": "t", "duration": "d"})
    assert t.layout == "long" and t.workers == ("a", "b")
    wide = load_trace(b"t,node,host\n1,1.0,2.0\n", "step=t")  # worker-like names, but step alone: wide
    assert wide.layout == "wide" and wide.workers == ("node", "host")


# -- bad cells: the file's line (or Parquet's row) and the column -----------------------------------

def test_a_bad_value_in_data_row_7_is_named_by_line_8_and_its_column(tmp_path):
    rows = [("a", s, 1.0) for s in range(1, 11)]
    rows[6] = ("a", 7, "slow")
    rows[9] = ("a", 10, "-1")
    message = refused(write(tmp_path, "t.csv", long_csv(rows)))
    assert re.search(r": line 8, column 'duration': 'slow' is not a number;", message), message
    assert "(2 bad cells in total)" in message


@pytest.mark.parametrize("cell, why", [
    ("abc", "'abc' is not a number"), ("1,5", None), ("-1", "'-1' is negative"), ("0", "'0' is zero"),
    ("0.0", "'0.0' is zero"), ("nan", "'nan' is NaN"), ("NaN", "'NaN' is NaN"), ("inf", "'inf' is infinite"),
    ("-inf", "'-inf' is infinite"), ("1e10", "'1e10' is too large"), ("", "empty cell"),
])
def test_each_kind_of_bad_time(cell, why):
    quoted = f'"{cell}"' if "," in cell else cell
    data = f"worker,step,duration\na,1,1.0\na,2,{quoted}\na,3,2.0\n".encode()
    message = refused(data)
    assert message.startswith("trace: <bytes>: line 3, column 'duration': ")
    assert why is None or why in message
    assert "every time must be a number in (0, 1e9]" in message and "(1 bad cell in total)" in message


def test_the_largest_allowed_time_loads():
    assert load_trace(b"x\n1e9\n").pooled.tolist() == [1e9]


def test_line_numbers_count_comments_blank_lines_and_quoted_newlines():
    data = b'# measured on cluster A\n\nworker,step,duration\n"w\na",1,1.0\n\nw-b,1,oops\n'
    assert "line 7, column 'duration'" in refused(data)
    assert "line 5, column 'duration'" in refused(b"# c\nworker,step,duration\na,1,1\n\na,2,x\n")
    assert "line 3, column 'duration'" in refused(b"\xef\xbb\xbfworker,step,duration\na,1,1\na,2,x\n")


def test_a_missing_worker_or_step_names_the_line():
    assert "line 3, column 'worker': no worker id (2 rows without one" in refused(
        b"worker,step,duration\na,1,1\n,2,1\n,3,1\n")
    assert "line 2, column 'step': no step label (1 row without one" in refused(b"worker,step,duration\na,,1\n")


def test_wide_bad_cell_names_the_worker_column():
    assert "line 3, column 'b': 'x' is not a number" in refused(b"a,b\n1,2\n3,x\n")


@pytest.mark.parametrize("data, expected", [
    (b"", "the file is empty"), (b" \n\n", "the file is empty"), (b"# only a comment\n", "the file is empty"),
    (b"worker,step,duration\n", "no data rows"), (b"worker,step,duration\n\n\n", "no data rows"),
])
def test_empty_files_and_header_only(data, expected):
    assert expected in refused(data)


def test_size_cap_is_checked_before_parsing(tmp_path, monkeypatch):
    data = long_csv([("a", s, 1.0) for s in range(50)])
    path = write(tmp_path, "big.csv", data)
    monkeypatch.setattr(limits, "EMPIRICAL_MAX_BYTES", 100)
    for source in (path, data.encode(), io.BytesIO(data.encode())):
        message = refused(source)
        assert f"{len(data)} bytes is over the cap of 100 bytes" in message


def test_cap_on_the_number_of_times(monkeypatch):
    monkeypatch.setattr(limits, "EMPIRICAL_MAX_VALUES", 5)
    assert "6 times: over the cap of 5 times" in refused(b"t\n1\n2\n3\n4\n5\n6\n")
    assert "6 times: over the cap of 5 times" in refused(b"a,b\n1,2\n3,4\n5,6\n")
    assert load_trace(b"a,b\n1,2\n3,4\n5,\n").pooled.size == 5


def test_trace_from_an_array():
    t = trace_from_times([[1.0, 2.0, np.nan], [3.0, 4.0, 5.0]])
    assert t.workers == ("1", "2") and t.steps == ("1", "2", "3") and t.complete_steps == ("1", "2")
    np.testing.assert_array_equal(t.times, [[1, 2], [3, 4]])
    assert t.missing == 1
    with pytest.raises(ParameterError, match=r"times\[1, 0\] = -3.0"):
        trace_from_times([[1.0], [-3.0]])
    with pytest.raises(ParameterError, match="shape"):
        trace_from_times([1.0, 2.0])


# -- the per-worker summary ------------------------------------------------------------------------

def test_a_worker_twice_as_slow_in_every_step_has_slowdown_exactly_2():
    base = [1.0, 3.0, 2.0, 5.0, 4.0]
    rows = [(w, s + 1, (2 if w == "c" else 1) * x) for s, x in enumerate(base) for w in "abcd"]
    t = load_trace(long_csv(rows).encode())
    summary = {row["worker"]: row for row in t.summary()}
    # each step's median of (x, x, 2x, x) is x: the ratios are 1, 1, 2, 1 in every step
    assert [summary[w]["slowdown"] for w in "abcd"] == [1.0, 1.0, 2.0, 1.0]
    assert summary["c"] == {"worker": "c", "mean": 6.0, "median": 6.0, "slowdown": 2.0, "straggler": True,
                            "from_step": None}  # 2·(1+3+2+5+4)/5 and 2·median(1..5)
    assert summary["a"]["mean"] == 3.0 and summary["a"]["straggler"] is False
    assert t.stragglers() == ["c"] and t.stragglers(threshold=2.0) == ["c"]
    assert t.stragglers(threshold=2.01) == []


def test_slowdown_uses_the_mean_of_the_two_middle_values():
    # two workers: the step median is (1 + 3)/2 = 2, so the ratios are 0.5 and 1.5
    t = load_trace(long_csv([("a", 1, 1.0), ("b", 1, 3.0)]).encode())
    assert [row["slowdown"] for row in t.summary()] == [0.5, 1.5]


def emerging_trace(steps=100, slow_from=61, factor=3.0):
    """Workers a, b, c take 1.0 at every step; d takes 1.0 before ``slow_from`` and ``factor`` after."""
    rows = [(w, s, factor if (w == "d" and s >= slow_from) else 1.0) for s in range(1, steps + 1) for w in "abcd"]
    return load_trace(long_csv(rows).encode())


def test_an_emerging_straggler_is_reported_from_the_first_slow_window():
    t = emerging_trace()
    d = t.summary()[3]
    # whole run: 60 ratios of 1 and 40 of 3, median 1: not persistent
    assert d["slowdown"] == 1.0
    # windows of 10 steps: the one starting at step 56 holds steps 56..65, five of them slow
    # (61..65): its median is (1 + 3)/2 = 2 ≥ 1.2; the window at 55 holds four: median 1
    assert d["straggler"] is True and d["from_step"] == "56"
    assert 52 <= int(d["from_step"]) <= 61  # within the 10 % window before step 61
    assert t.stragglers() == ["d"]
    # at threshold 2.5 the tie window (median 2) is not enough: six slow steps first at 57..66
    assert t.summary(threshold=2.5)[3]["from_step"] == "57"
    assert t.summary(threshold=3.5)[3]["straggler"] is False


def test_emerging_straggler_with_an_odd_window():
    t = emerging_trace(steps=50, slow_from=31)  # window of 5 steps: 3 slow ones first in 29..33
    assert t.summary()[3]["from_step"] == "29"


def test_a_persistent_straggler_has_no_from_step():
    t = emerging_trace(steps=100, slow_from=1)
    assert t.summary()[3] == {"worker": "d", "mean": 3.0, "median": 3.0, "slowdown": 3.0, "straggler": True,
                              "from_step": None}


def test_windows_follow_step_order_not_file_order():
    rows = [(w, s, 3.0 if (w == "d" and s >= 61) else 1.0) for s in range(100, 0, -1) for w in "abcd"]
    assert load_trace(long_csv(rows).encode()).summary()[3]["from_step"] == "56"


def brute_first_window(times, threshold, alpha=0.01):
    """The definition, step by step: the first window of ⌊C/10⌋ (≥ 1) steps whose median ratio ≥
    threshold and whose number of ratios ≥ threshold is improbable (P ≤ alpha/(m·windows)) for a
    Binomial(w, p) count, p the fraction of ratios ≥ threshold of the other workers whose median
    ratio is below it."""
    ratio = times / np.median(times, axis=0)
    m, C = times.shape
    w = max(1, C // 10)
    windows = C - w + 1
    out = []
    for i, row in enumerate(ratio):
        others = [r for k, r in enumerate(ratio) if k != i and np.median(r) < threshold]
        p = float(np.mean(np.array(others) >= threshold)) if others else 0.0
        starts = [j for j in range(windows) if np.median(row[j:j + w]) >= threshold
                  and stats.binom.sf(np.sum(row[j:j + w] >= threshold) - 1, w, p) <= alpha / (m * windows)]
        out.append(starts[0] if starts else None)
    return out


@pytest.mark.parametrize("steps", [7, 20, 37, 60, 101])
def test_the_vectorised_window_medians_agree_with_the_definition(steps):
    rng = np.random.default_rng(steps)
    # small integers make ties at the threshold (window medians exactly equal to it) common
    times = rng.integers(1, 5, size=(6, steps)).astype(float)
    ratio = times / np.median(times, axis=0)
    for threshold in (1.0, 1.2, 1.5, 2.0):  # alpha = inf: the median rule alone
        first = first_slow_window(ratio, max(1, steps // 10), threshold, alpha=np.inf)
        assert [None if f < 0 else int(f) for f in first] == brute_first_window(times, threshold, alpha=np.inf)


@pytest.mark.parametrize("steps", [7, 20, 37, 60, 101])
@pytest.mark.parametrize("quiet", [0, 4])
def test_the_summary_agrees_with_the_definition(steps, quiet):
    """With ``quiet`` workers at a constant time the others' noise is rarer, so the chance guard
    lets the slowing worker through; without, it holds most windows back: both sides are exercised."""
    rng = np.random.default_rng(steps)
    times = rng.integers(1, 5, size=(6, steps)).astype(float)
    times[:quiet] = 2.0
    times[5] = np.where(np.arange(steps) < 2 * steps // 3, 2.0, 4.0)  # a worker that slows down
    t = trace_from_times(times)
    flagged = 0
    for threshold in (1.0, 1.2, 1.5, 2.0):
        ratio = times / np.median(times, axis=0)
        persistent = np.median(ratio, axis=1) >= threshold
        first = brute_first_window(times, threshold)
        for i, row in enumerate(t.summary(threshold)):
            expected = None if persistent[i] or first[i] is None else str(first[i] + 1)
            assert row["from_step"] == expected
            assert row["straggler"] == bool(persistent[i] or first[i] is not None)
            flagged += expected is not None
    assert quiet == 0 or steps < 60 or flagged > 0  # below 60 steps (w < 6) no window is improbable enough


@pytest.mark.parametrize("sigma", [0.3, 0.6, 1.0])
def test_noise_alone_makes_no_emerging_straggler(sigma):
    """200 exchangeable lognormal workers × 400 steps: the bare window rule flags many workers
    (a window median of 40 noisy ratios reaches 1.2 by chance); the chance guard flags none."""
    rng = np.random.default_rng(7)
    times = rng.lognormal(0.0, sigma, size=(200, 400))
    ratio = times / np.median(times, axis=0)
    bare = first_slow_window(ratio, 40, 1.2, alpha=np.inf)
    assert np.sum(bare >= 0) > 5  # the problem the guard solves
    assert trace_from_times(times).stragglers() == []


def test_a_real_emerging_straggler_is_still_found_in_noise():
    rng = np.random.default_rng(8)
    times = rng.lognormal(0.0, 0.3, size=(200, 400))
    times[17, 250:] *= 1.6  # from step 251 (labels count from 1)
    t = trace_from_times(times)  # workers "1", "2", …: row 17 is "18"
    row = t.summary()[17]
    assert row["straggler"] and row["slowdown"] < 1.2
    assert abs(int(row["from_step"]) - 251) <= 40  # within the 10% window
    assert t.stragglers() == ["18"]


@pytest.mark.parametrize("threshold", [0.5, 0.999, 101, float("nan"), "abc", None])
def test_threshold_is_checked(threshold):
    t = emerging_trace(steps=10)
    with pytest.raises(ParameterError) as info:
        t.summary(threshold)
    assert info.value.parameter == "threshold"

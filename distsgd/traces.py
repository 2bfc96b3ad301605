"""Measured per-worker step times (DESIGN §7): reading a trace file, and who is slow in it.

:func:`load_trace` reads CSV, TSV or Parquet in one of three layouts: **long** (one row per
(worker, step): worker, step and duration columns, others ignored), **wide** (one row per step,
one column of times per worker, named by its id, optionally a step column; an empty cell is a
missing time) or **column** (times only: pooled use).  Without a mapping, one column is a column
of times; else names are compared, ignoring case, with :data:`NAMES`.  A worker column (or a
mapped worker or duration) means long: exactly one worker, step and duration column.  Without
one, the columns but the step column and unnamed index columns (``''``, ``Unnamed: N``,
``__index_level_N__``) hold times: one is a column of times (a step column beside it ignored),
two or more are wide (an index column is the step column if none is named) unless one is named
like a duration.  Else the error lists the columns and asks for ``--trace-columns
worker=COL,step=COL,duration=COL``; mapping ``step`` alone forces wide.

Worker ids and step labels are the file's text, stripped (Parquet values as text); workers come
in order of first appearance, steps sorted by value if every label is a number, else in order of
first appearance; a wide file without a step column numbers its rows 1, 2, …  Blank lines, and
``#`` lines before the header, are skipped; one column has a header unless its first line is a
number.  Every time must be in (0, limits.MAX_TRACE_TIME]: the first bad cell is named by its line
(the header is line 1), in Parquet by its data row (the first is row 1), with its column and the
number of bad cells.  A repeated (worker, step) keeps its first time.  Files are read by
:mod:`distsgd.tables`, within the caps of :mod:`distsgd.limits` whatever they decode to (issue 22).

>>> t = load_trace(b"worker,step,duration\\na,1,1.0\\nb,1,2.0\\na,2,1.0\\nb,2,2.0\\n", name="demo.csv")
>>> t.describe()
'demo.csv: 2 workers × 2 complete steps (0 dropped, 0 duplicates, 0 missing)'
>>> t.stragglers()    # b takes 2/1.5 = 1.33 times its step's median
['b']
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd  # type: ignore[import-untyped]
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

from . import limits, tables
from .delays.empirical import TRACE_TIME
from .params import Domain, ParameterError
from .reasons import Phrase
from .slowdown import first_slow_window, ratios

__all__ = ["Trace", "load_trace", "trace_columns", "trace_from_times", "NAMES", "THRESHOLD", "WINDOW_FRACTION"]

ROLES = ("worker", "step", "duration")
#: column names (lower case) recognised for each role of the long layout
NAMES: dict[str, frozenset[str]] = {
    "worker": frozenset({"worker", "worker_id", "rank", "node", "host", "machine"}),
    "step": frozenset({"step", "iteration", "iter", "batch", "step_id"}),
    "duration": frozenset({"duration", "step_time", "batch_time", "seconds", "time_s", "elapsed"}),
}
#: slowdown from which a worker is a straggler
THRESHOLD = Domain("threshold", 1.0, 100.0, doc="slowdown at which a worker counts as a straggler")
#: length of the window of an emerging straggler, as a fraction of the complete steps
WINDOW_FRACTION = 0.1
_INDEX = re.compile(r"(|Unnamed: \d+|__index_level_\d+__)")
_NUMBER = re.compile(r"\s*[-+]?(\d+\.?\d*(e[-+]?\d+)?|\.\d+(e[-+]?\d+)?|inf(inity)?|nan)\s*", re.IGNORECASE)
_EXTENSIONS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".parquet": "parquet", ".pq": "parquet"}

Source = tables.Source


@dataclass(frozen=True, eq=False)
class Trace:
    """A loaded trace.  ``times`` (m × complete steps, in step order) is what replay uses; it
    has no column when no step is complete (not refused at load: replay and the slowdown need
    ``times.shape[1] ≥ 1``, the caller decides).  ``per_worker[i]`` holds every time of worker i
    in step order, ``pooled`` every time of the file (duplicates dropped, file order).
    ``missing`` counts the pairs of the worker × step grid without a time, ``dropped_steps`` the
    steps that are not complete.  A column of times has no workers, no steps, ``times`` 0 × 0."""

    name: str
    layout: Literal["long", "wide", "column"]
    format: str
    workers: tuple[str, ...]
    steps: tuple[str, ...]
    complete_steps: tuple[str, ...]
    times: np.ndarray
    per_worker: tuple[np.ndarray, ...]
    pooled: np.ndarray
    duplicates: int
    missing: int
    dropped_steps: int
    digest: str
    columns: dict[str, str]

    @property
    def m(self) -> int:
        """Number of workers (0 for a column of times)."""
        return len(self.workers)

    def describe(self) -> str:
        """One line: ``name: m workers × S complete steps (d dropped, k duplicates, p missing)``."""
        if self.layout == "column":
            return f"{self.name}: {self.pooled.size} times in one column (pooled use only)"
        return (f"{self.name}: {self.m} workers × {len(self.complete_steps)} complete steps ({self.dropped_steps} "
                f"dropped, {self.duplicates} duplicates, {self.missing} missing)")

    def summary(self, threshold: float = 1.2) -> list[dict[str, Any]]:
        """Per worker: ``worker``, ``mean`` and ``median`` of every time it has, ``slowdown``,
        ``straggler`` and ``from_step`` (None where undefined: no time, or no complete step).

        slowdown = median over the complete steps j of t[i, j] / median_i' t[i', j] (numpy
        medians: the mean of the two middle values for an even count).  A worker whose slowdown
        is ≥ ``threshold`` is a persistent straggler (``from_step`` None).  Else, over windows of
        w = max(1, ⌊C/10⌋) consecutive complete steps (C of them, in step order), the window's
        slowdown is the median of the worker's w ratios in it; if one is ≥ ``threshold`` the
        worker is an emerging straggler and ``from_step`` is the label of the first step of the
        first such window (it may have recovered since) — if that window also holds more ratios
        ≥ ``threshold`` than chance gives a worker like the others
        (:func:`distsgd.slowdown.chance_counts`), so that noise alone does not make one.
        """
        thr, n = float(THRESHOLD.check(threshold)), self.times.shape[1]
        slow, first = np.full(self.m, np.nan), np.full(self.m, -1)
        if n and self.m:
            ratio = ratios(self.times)
            slow = np.median(ratio, axis=1)
            first = first_slow_window(ratio, max(1, int(n * WINDOW_FRACTION)), thr)
        out = []
        for i, (worker, v) in enumerate(zip(self.workers, self.per_worker, strict=True)):
            persistent, emerging = bool(slow[i] >= thr), bool(slow[i] < thr and first[i] >= 0)
            out.append({"worker": worker, "mean": float(v.mean()) if v.size else None,
                        "median": float(np.median(v)) if v.size else None,
                        "slowdown": None if np.isnan(slow[i]) else float(slow[i]), "straggler": persistent or emerging,
                        "from_step": self.complete_steps[first[i]] if emerging else None})
        return out

    def stragglers(self, threshold: float = 1.2) -> list[str]:
        """Ids of the workers :meth:`summary` flags, persistent or emerging."""
        return [row["worker"] for row in self.summary(threshold) if row["straggler"]]


def _error(shown: str, reason: str, /, **fields: Any) -> ParameterError:
    """A refusal of the trace file ``shown``: ``reason`` of :data:`distsgd.reasons.REASONS` (its
    template starts with ``{file}``)."""
    return ParameterError("trace", reason, file=shown, **fields)


def _listing(names: list[str]) -> str | Phrase:
    shown = ", ".join(repr(n) for n in names[:20])
    return Phrase("listing_more", names=shown, count=len(names)) if len(names) > 20 else shown


class _Table:
    """The data rows of a file as Arrow columns: ``text(j)`` the stripped cells of column j ('' when
    empty), ``numbers(j)`` them as floats (NaN when not a number), ``cells(cols)`` both for many
    columns at once (vectorised: a wide file may have thousands), ``where(i)`` data row i's place:
    its line (text: ``record`` of each row, 0 the first line after ``skipped`` ones), or its row
    (Parquet, whose columns are read by :meth:`load`, only those the layout needs)."""

    def __init__(self, shown: str, fmt: str, names: list[str], rows: int, columns: dict[int, Any],
                 parquet: tables.ParquetTable | None = None) -> None:
        self.shown, self.format, self.names, self.rows, self.columns = shown, fmt, names, rows, columns
        self.record: np.ndarray | None = None
        self.skipped, self.body, self.sep, self.parquet = 0, b"", ",", parquet
        self._text: dict[int, Any] = {}

    def load(self, cols: list[int]) -> None:
        """Decode the Parquet columns ``cols`` (bounded: tables.ParquetTable.read); text is all read."""
        if self.parquet is None:
            return
        cap = limits.EMPIRICAL_MAX_VALUES
        if self.rows > cap or self.rows * len(cols) > limits.TRACE_MAX_CELLS:
            raise _error(self.shown, "trace_cells_cap", rows=self.rows, columns=len(cols), cap=cap)
        table = self.parquet.read([self.names[j] for j in cols], max_rows=cap)
        self.columns = {j: table.column(k) for k, j in enumerate(cols)}

    def label(self, j: int) -> str | Phrase:
        return repr(self.names[j]) if self.names[j] else Phrase("unnamed_column", n=j + 1)

    def _strings(self, *cols: int, strip: bool = True) -> pa.ChunkedArray:
        """Columns ``cols`` one after the other as Arrow text ('' for a null), stripped."""
        parts = []
        for j in cols:
            col = self.columns[j]
            if not pa.types.is_large_string(col.type):
                try:
                    col = col.cast(pa.large_string())
                except (pa.ArrowException, ValueError):
                    raise _error(self.shown, "column_type", column=self.label(j), type=str(col.type)) from None
            parts.extend((col.fill_null("") if col.null_count else col).chunks)
        flat = pa.chunked_array(parts, pa.large_string())
        return pc.utf8_trim_whitespace(flat) if strip else flat

    def text(self, j: int) -> Any:
        if j not in self._text:
            self._text[j] = pd.Series(self._strings(j).to_pandas(), dtype=object).reset_index(drop=True)
        return self._text[j]

    def _numeric(self, j: int) -> bool:
        kind = self.columns[j].type
        return any(f(kind) for f in (pa.types.is_integer, pa.types.is_floating, pa.types.is_decimal))

    def numbers(self, j: int) -> np.ndarray:
        if self._numeric(j):
            return np.asarray(self.columns[j].cast(pa.float64()).to_numpy(), dtype=float)  # null: NaN
        return tables.numbers(self._strings(j))

    def cells(self, cols: list[int]) -> tuple[np.ndarray, Any]:
        """``has`` (rows × len(cols): the cell is not empty) and a function giving the values
        (rows × len(cols), NaN where none): text columns in one go (tables.text_cells), numbers cast."""
        text = [k for k, j in enumerate(cols) if not self._numeric(j)]
        has = np.empty((len(cols), self.rows), dtype=bool)
        has[text], parse = tables.text_cells(self._strings(*(cols[k] for k in text), strip=False), self.rows)
        for k in (numeric := sorted(set(range(len(cols))) - set(text))):
            has[k] = self.columns[cols[k]].is_valid().to_numpy()

        def parsed() -> np.ndarray:
            if not numeric:  # (a text file: no copy)
                return parse().T
            values = np.empty((len(cols), self.rows))
            values[text] = parse()
            for k in numeric:
                values[k] = self.numbers(cols[k])
            return values.T
        return has.T, parsed

    def where(self, i: int) -> Phrase:
        if self.record is None:
            return Phrase("at_row", n=i + 1)
        record = int(self.record[i])
        if b'"' not in self.body or record == 0:  # one record per line
            return Phrase("at_line", n=self.skipped + record + 1)
        reader = csv.reader(io.StringIO(self.body.decode("utf-8", errors="replace"), newline=""), delimiter=self.sep)
        try:  # a quoted field may span lines: record r starts after the lines of records 0..r-1
            for k, _ in enumerate(reader, 1):
                if k == record:
                    return Phrase("at_line", n=self.skipped + reader.line_num + 1)
        except csv.Error:
            pass
        return Phrase("at_data_row", n=i + 1)


def _text_table(data: bytes, shown: str, fmt: str | None) -> _Table:
    """CSV or TSV, its columns and lines bounded before pandas parses it."""
    body, skipped, fmt, sep = tables.text_body(data, shown, fmt, parameter="trace")
    cap, fields = limits.EMPIRICAL_MAX_VALUES, tables.csv_fields(body, sep, shown, parameter="trace")
    lines = body.count(b"\n") + body.count(b"\r") - body.count(b"\r\n") + 1  # pandas ends a line at \r too
    if lines > 2 * cap + 2 or lines * fields > limits.TRACE_MAX_CELLS:  # parsing takes ≈ 85 bytes a cell
        raise _error(shown, "trace_lines_cap", lines=lines, columns=fields, cap=cap)
    try:
        cols = tables.read_csv(body, sep, fields)
    except Exception as exc:  # pandas' ParserError, …: one line, with this file's line numbers
        text = (str(exc).strip() or type(exc).__name__).splitlines()[-1]
        text = re.sub(r"line (\d+)", lambda g: f"line {int(g[1]) + skipped}", text)
        raise _error(shown, "cannot_parse", format=fmt.upper(), why=text) from None
    header = len(cols) > 1 or not _NUMBER.fullmatch(cols[0][0].as_py())
    names = [c[0].as_py().strip() for c in cols] if header else [""]
    cols, rows = [c.slice(int(header)) for c in cols], len(cols[0]) - int(header)
    blank = pc.equal(pc.utf8_trim_whitespace(cols[0]), "").to_numpy()  # and every other cell empty:
    if len(cols) > 1:  # (one pass over them all: a wide file may have thousands of columns)
        rest = pa.chunked_array([ch for c in cols[1:] for ch in c.chunks], pa.large_string())
        blank &= pc.equal(rest, "").to_numpy().reshape(len(cols) - 1, rows).all(axis=0)
    keep = pa.array(~blank)
    tab = _Table(shown, fmt, names, int(np.count_nonzero(~blank)),
                 {j: c if not blank.any() else c.filter(keep) for j, c in enumerate(cols)})
    tab.record, tab.skipped, tab.body, tab.sep = np.flatnonzero(~blank) + int(header), skipped, body, sep
    return tab


def _kind(data: bytes, shown: str) -> str | None:
    """The format: by extension, else Parquet by its magic bytes (None: a text file, CSV or TSV)."""
    return _EXTENSIONS.get(os.path.splitext(shown)[1].lower()) or ("parquet" if data.startswith(b"PAR1") else None)


def _table(data: bytes, shown: str) -> _Table:
    """The file as a table: a text file parsed, a Parquet file's footer only (:meth:`_Table.load`)."""
    if (kind := _kind(data, shown)) != "parquet":
        return _text_table(data, shown, kind)
    source = tables.ParquetTable(data, shown, parameter="trace")
    return _Table(shown, "parquet", source.names, source.num_rows, {}, source)


def trace_columns(data: bytes, name: str) -> list[str]:
    """The column names :func:`load_trace` finds in a file (its header only, bounded as it is),
    for choosing a mapping; refused as load_trace refuses the file's first line or footer."""
    if (kind := _kind(data, name)) == "parquet":
        return tables.ParquetTable(data, name, parameter="trace").names
    body, _, fmt, sep = tables.text_body(data, name, kind, parameter="trace")
    tables.csv_fields(body, sep, name, parameter="trace")
    try:
        first = pd.read_csv(io.BytesIO(body), sep=sep, header=None, nrows=1, dtype=str, na_filter=False,
                            encoding="utf-8", encoding_errors="replace", engine="c")
    except Exception as exc:  # pandas' ParserError, …: load_trace words it with its line
        raise _error(name, "cannot_parse", format=fmt.upper(), why=str(exc).strip() or type(exc).__name__) from None
    names = [str(v).strip() for v in first.iloc[0]] if len(first) else []
    return [""] if len(names) == 1 and _NUMBER.fullmatch(names[0]) else names


def _mapping(columns: str | Mapping[str, str] | None, names: list[str], shown: str) -> dict[str, int]:
    """The given mapping role → column index, checked against the file's columns."""
    if columns is None:
        return {}
    if isinstance(columns, str):
        items = [part.partition("=") for part in columns.split(",")]
        bad = [a for a, eq, _ in items if not eq]
        if bad:
            raise _error(shown, "mapping_item", item=bad[0].strip())
        pairs: list[tuple[object, object]] = [(a.strip(), c.strip()) for a, _, c in items]
    elif isinstance(columns, Mapping):
        pairs = list(columns.items())
    else:
        raise _error(shown, "mapping_type", type=type(columns).__name__)
    out: dict[str, int] = {}
    for key, col in pairs:
        if not isinstance(key, str) or key not in ROLES or key in out:
            raise _error(shown, "mapping_key_repeated" if key in out else "mapping_key_unknown", key=key)
        col = col.strip() if isinstance(col, str) else ""
        hits = [j for j, n in enumerate(names) if n == col] or [j for j, n in enumerate(names)
                                                                if n.lower() == col.lower()]
        if not col or len(hits) != 1 or hits[0] in out.values():
            why = (Phrase("no_column_given") if not col else Phrase("column_absent", column=col) if not hits else
                   Phrase("columns_share_name", count=len(hits), column=col) if len(hits) > 1 else
                   Phrase("column_mapped_twice", column=col))
            raise _error(shown, "mapping_column", key=key, column=col, why=why, columns=_listing(names))
        out[key] = hits[0]
    return out


def _layout(names: list[str], given: dict[str, int], shown: str) -> tuple[str, dict[str, int]]:
    """The layout and its columns: worker, step, duration (long), step or none (wide), duration
    (column); the rules are in the module's docstring."""
    def refuse(why: Phrase) -> ParameterError:
        return _error(shown, "layout_unclear", why=why, columns=_listing(names))

    def named(role: str, exclude: Any = ()) -> list[int]:
        return [j for j, n in enumerate(names) if n.lower() in NAMES[role] and j not in exclude]

    if len(names) == 1:
        if set(given) - {"duration"}:
            raise _error(shown, "one_column_mapping")
        return "column", {"duration": 0}
    if "worker" in given or (set(given) != {"step"} and named("worker")):
        roles: dict[str, int] = {}
        for role in ROLES:
            found = [given[role]] if role in given else named(role, [*roles.values(), *given.values()])
            if len(found) != 1:
                named_as = ", ".join(sorted(NAMES[role]))
                raise refuse(Phrase("role_columns", count=len(found), role=Phrase(f"role_{role}"), names=named_as)
                             if found else Phrase("no_role_column", role=Phrase(f"role_{role}"), names=named_as))
            roles[role] = found[0]
        return "long", roles
    if "duration" in given:
        return "column", {"duration": given["duration"]}
    step = [given["step"]] if "step" in given else named("step")
    index = [j for j, n in enumerate(names) if _INDEX.fullmatch(n) and j not in step]
    others = [j for j in range(len(names)) if j not in step and j not in index]
    if len(step) > 1 or not others:
        raise refuse(Phrase("step_columns", count=len(step)) if others else Phrase("no_time_column"))
    if len(others) == 1:
        return "column", {"duration": others[0]}
    if "step" not in given and named("duration"):
        raise refuse(Phrase("duration_no_worker"))
    return "wide", {"step": (step + index)[0]} if step + index else {}


def _valid(values: np.ndarray) -> np.ndarray:
    return (values > TRACE_TIME.low) & (values <= TRACE_TIME.high)


def _check_times(tab: _Table, cols: list[int], values: np.ndarray, bad: np.ndarray, count: int) -> None:
    """Refuse the first bad cell of ``values`` (rows × cols) in file order, and over ``count`` times."""
    if n := int(np.count_nonzero(bad)):
        i, c = divmod(int(np.argmax(bad.ravel())), len(cols))
        text, x = str(tab.text(cols[c]).iloc[i]), float(values.reshape(-1, len(cols))[i, c])
        shown = repr(text if len(text) <= 40 else text[:40] + "…")
        why = Phrase("empty_cell") if not text else Phrase(
            ("cell_nan" if _NUMBER.fullmatch(text) else "cell_not_number") if np.isnan(x) else "cell_infinite"
            if np.isinf(x) else "cell_negative" if x < 0 else "cell_zero" if x == 0 else "cell_too_large", cell=shown)
        raise _error(tab.shown, "bad_time_cell", where=tab.where(i), column=tab.label(cols[c]), why=why,
                     range=TRACE_TIME.phrase(), count=Phrase("bad_cells", n=n) if n > 1 else Phrase("one_bad_cell"))
    _check_count(tab.shown, count)


def _check_count(shown: str, count: int) -> None:
    if count > limits.EMPIRICAL_MAX_VALUES:
        raise _error(shown, "trace_times_cap", count=count, cap=limits.EMPIRICAL_MAX_VALUES)


def _ids(tab: _Table, j: int, what: Phrase) -> np.ndarray:
    """Column j's cells as ids; an empty one is refused with its place."""
    text, empty = tab.text(j), (tab.text(j) == "").to_numpy(dtype=bool)
    if n := int(np.count_nonzero(empty)):
        raise _error(tab.shown, "missing_ids", where=tab.where(int(np.argmax(empty))), column=tab.label(j), what=what,
                     count=Phrase("rows_without", n=n) if n > 1 else Phrase("one_row_without"))
    return np.asarray(text.to_numpy(dtype=object))


def _assemble(meta: dict[str, Any], workers: list[str], w: np.ndarray, step_text: np.ndarray,
              t: np.ndarray) -> Trace:
    """A Trace from one entry per time, in file order: worker index, step label, time."""
    codes, labels = pd.factorize(step_text)
    number = np.asarray(pd.to_numeric(pd.Series(labels, dtype=object), errors="coerce"), dtype=float)
    order = np.argsort(number, kind="stable") if not np.isnan(number).any() else np.arange(len(labels))
    s = np.argsort(order)[codes]  # each entry's rank in step order
    m, n_steps = len(workers), len(labels)
    key = w.astype(np.int64) * n_steps + s
    keep = ~pd.Series(key).duplicated(keep="first").to_numpy(dtype=bool)
    w, s, t = w[keep], s[keep], np.array(t[keep], dtype=float)
    complete = np.bincount(s, minlength=n_steps) == m
    times = np.zeros((m, int(complete.sum())))
    times[w[complete[s]], (np.cumsum(complete) - 1)[s[complete[s]]]] = t[complete[s]]
    per = np.split(t[np.lexsort((s, w))], np.cumsum(np.bincount(w, minlength=m))[:-1])
    steps = [str(labels[k]) for k in order]
    for a in (times, t, *per):
        a.flags.writeable = False
    return Trace(workers=tuple(workers), steps=tuple(steps),
                 complete_steps=tuple(steps[k] for k in np.flatnonzero(complete[order])),
                 times=times, per_worker=tuple(per), pooled=t, duplicates=int(len(key) - len(t)),
                 missing=m * n_steps - len(t), dropped_steps=int(n_steps - complete.sum()), **meta)


def _durations(tab: _Table, j: int) -> np.ndarray:
    t = tab.numbers(j)
    _check_times(tab, [j], t, ~_valid(t), t.size)
    return t


def _long(tab: _Table, roles: dict[str, int], meta: dict[str, Any]) -> Trace:
    ids, labels = _ids(tab, roles["worker"], Phrase("worker_id")), _ids(tab, roles["step"], Phrase("step_label"))
    w, uniq = pd.factorize(ids)
    return _assemble(meta, [str(x) for x in uniq], w, labels, _durations(tab, roles["duration"]))


def _times(names: list[str], step: int | None) -> list[int]:
    """The columns of times of a wide file: all but the step column and unnamed index columns."""
    return [j for j in range(len(names)) if j != step and not _INDEX.fullmatch(names[j])]


def _wide(tab: _Table, roles: dict[str, int], meta: dict[str, Any]) -> Trace:
    step = roles.get("step")
    cols = _times(tab.names, step)
    names = [tab.names[j] for j in cols]
    if twice := sorted(n for n, k in Counter(names).items() if k > 1):
        raise _error(tab.shown, "worker_column_twice", column=twice[0])
    labels = (_ids(tab, step, Phrase("step_label")) if step is not None
              else np.array([str(k + 1) for k in range(tab.rows)], dtype=object))
    has, parse = tab.cells(cols)
    _check_count(tab.shown, int(has.sum()))  # before parsing: at most the cap of cells are numbers
    values = parse()
    _check_times(tab, cols, values, has & ~_valid(values), int(has.sum()))
    row, w = np.divmod(np.flatnonzero(has), len(cols))
    return _assemble(meta, names, w, labels[row], values[has])


def _column(tab: _Table, roles: dict[str, int], meta: dict[str, Any]) -> Trace:
    t = _durations(tab, roles["duration"])
    t.flags.writeable = False
    return Trace(workers=(), steps=(), complete_steps=(), times=np.zeros((0, 0)), per_worker=(), pooled=t,
                 duplicates=0, missing=0, dropped_steps=0, **meta)


def load_trace(source: Source, columns: str | Mapping[str, str] | None = None, *, name: str | None = None) -> Trace:
    """Read a measured step-time trace from a path, raw bytes or a binary file object (one with
    ``getvalue``, as BytesIO and uploads, is read whole whatever its position).  ``columns`` maps
    ``worker``, ``step``, ``duration`` to column names, as a dict or ``"worker=COL,step=COL,
    duration=COL"``; ``name`` replaces the file's name in messages and for telling the format (by
    extension, else Parquet by its magic bytes, TSV by a tab in the header line, else CSV).  Every
    problem, the size caps included, is a :class:`ParameterError` of parameter ``trace``."""
    data, shown = tables.read_source(source, name, parameter="trace", max_bytes=limits.EMPIRICAL_MAX_BYTES)
    tab = _table(data, shown)
    layout, roles = _layout(tab.names, _mapping(columns, tab.names, shown), shown)
    if tab.rows == 0:
        raise _error(shown, "no_data_rows")
    tab.load([*(_times(tab.names, roles.get("step")) if layout == "wide" else []), *roles.values()])
    meta = {"name": shown, "layout": layout, "format": tab.format, "digest": hashlib.sha256(data).hexdigest(),
            "columns": {r: tab.names[j] for r, j in roles.items()}}
    return {"long": _long, "wide": _wide, "column": _column}[layout](tab, roles, meta)


def trace_from_times(times: Any, *, name: str = "<array>") -> Trace:
    """A trace from an m × S array: row i holds worker ``str(i + 1)``'s times at steps
    ``"1"`` … ``str(S)``; a NaN is a missing time, any other value must be a time."""
    try:
        t = np.array(times, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise _error(name, "trace_expected_times", type=type(times).__name__) from None
    if t.ndim != 2 or 0 in t.shape:
        raise _error(name, "trace_expected_matrix", shape=t.shape)
    has = ~np.isnan(t)
    if (bad := np.flatnonzero(has & ~_valid(t))).size:
        i, j = divmod(int(bad[0]), t.shape[1])
        raise _error(name, "trace_bad_array_time", i=i, j=j, value=float(t[i, j]), range=TRACE_TIME.phrase(),
                     count=bad.size)
    _check_count(name, int(has.sum()))
    w, s = np.nonzero(has)
    meta = {"name": name, "layout": "wide", "format": "array", "columns": {},
            "digest": hashlib.sha256(repr(t.shape).encode() + t.tobytes()).hexdigest()}
    return _assemble(meta, [str(i + 1) for i in range(t.shape[0])], w, (s + 1).astype(str).astype(object), t[has])

"""Bounded reading of table files — CSV, TSV and Parquet — for traces and sweep results (issue 22).

The bytes of a file bound nothing its decoder makes of them: 44 KB of Parquet holding 1000 rows
of 1 MiB of one letter decode to 1 GiB, and a 400 KB CSV header of 200 000 columns kept pandas
busy for minutes.  Every reader here therefore checks what a file declares before decoding it,
reads only the columns asked for, and checks what it decoded; a file over a cap of
:mod:`distsgd.limits` is refused with a :class:`~distsgd.params.ParameterError` naming the
file and the cap, having allocated at most about the cap.

**Parquet** (:class:`ParquetTable`): the footer is parsed (at most ``TABLE_MAX_FOOTER_BYTES``,
``TABLE_MAX_COLUMNS`` columns), then, for the columns to read, every page header (at most
``TABLE_MAX_PAGES``): the sizes the decoder will allocate, which the footer's totals need not
match (a rewritten footer is five bytes away).  Fixed-width columns decode to rows × width, known
before decoding.  Text decodes to more than its pages when it is dictionary-encoded (one stored
string repeated per row) or DELTA_BYTE_ARRAY (each value a prefix of the previous one plus a
suffix): the first is read as a dictionary and its decoded size summed from the indices before it
is expanded, the second in batches whose worst case fits ``TABLE_BATCH_BYTES``.  Only flat
columns are read; dictionaries come back expanded.

**CSV/TSV** (:func:`csv_fields`, :func:`read_csv`): the first record is counted before pandas
parses the file (its cost is ≈ 0.3 ms a column); the caller bounds lines and cells.
"""

from __future__ import annotations

import io
import os
import re
import stat
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped]
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from . import limits
from .params import ParameterError
from .reasons import Phrase

__all__ = ["Source", "read_source", "ParquetTable", "text_body", "csv_fields", "read_csv", "numbers", "text_cells"]

#: Parquet page types and the data-page encodings whose text may decode to more than its page
_DATA_PAGE, _DATA_PAGE_V2 = 0, 3
_DICTIONARY_INDICES, _DELTA_BYTE_ARRAY = frozenset({2, 8}), 7
#: a page header is a few dozen Thrift items; more is an attempt to make its parsing slow
_MAX_HEADER_ITEMS, _MAX_DEPTH = 10_000, 16
_ERRORS = (pa.ArrowException, OSError, ValueError)  # what pyarrow raises for a file it cannot read


class _Corrupt(Exception):
    """A page header that cannot be what a Parquet writer wrote: its argument, a Phrase, says what."""


def _refuse(parameter: str, shown: str, reason: str, /, **fields: Any) -> ParameterError:
    return ParameterError(parameter, reason, file=shown, **fields)  # (its template starts with {file})


def _detail(exc: BaseException) -> str:
    """An exception's message as one line (Arrow's may carry more: where in its source it failed)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _mib(n: int) -> Phrase:
    return Phrase("bytes_mib", n=n, mib=n / 2**20)


# -- bytes -----------------------------------------------------------------------------------------

Source = str | os.PathLike[str] | bytes | bytearray | memoryview | IO[bytes]


def _too_big(parameter: str, shown: str, size: int, cap: int) -> ParameterError:
    return _refuse(parameter, shown, "file_too_big", size=size, cap=cap, cap_mib=cap / 2**20)


def _read_path(path: str, shown: str, parameter: str, cap: int) -> bytes:
    """At most cap + 1 bytes of a regular file (devices, FIFOs, directories refused unread)."""
    try:
        st = os.stat(path)
        if stat.S_ISREG(st.st_mode) and st.st_size <= cap:
            with open(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as fh:
                st = os.fstat(fh.fileno())  # again: it may have been replaced
                if stat.S_ISREG(st.st_mode):
                    return fh.read(cap + 1)
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise _refuse(parameter, shown, "file_unreadable", why=str(getattr(exc, "strerror", None) or exc)) from None
    raise (_too_big(parameter, shown, st.st_size, cap) if stat.S_ISREG(st.st_mode)
           else _refuse(parameter, shown, "file_not_regular"))


def read_source(source: Source, name: str | None, *, parameter: str, max_bytes: int) -> tuple[bytes, str]:
    """The bytes of a path, bytes or binary file object (one with ``getvalue``, as BytesIO and
    uploads, read whole whatever its position), refused over ``max_bytes`` (a path or an object
    with a ``size`` before reading it), and the name shown in messages (one line)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        shown, data = name or "<bytes>", bytes(source)
    elif isinstance(source, (str, os.PathLike)):
        path = os.fsdecode(source)
        shown = name or (path if len(path) <= 200 else path[:200] + "…")
        data = _read_path(path, shown, parameter, max_bytes)
    elif callable(getattr(source, "read", None)):
        shown, size = name or str(getattr(source, "name", "") or "<upload>"), getattr(source, "size", None)
        if isinstance(size, int) and size > max_bytes:
            raise _too_big(parameter, shown, size, max_bytes)
        getvalue = getattr(source, "getvalue", None)  # BytesIO, Streamlit's UploadedFile: the whole buffer
        try:
            raw = getvalue() if callable(getvalue) else source.read(max_bytes + 1)
            data = memoryview(raw.encode() if isinstance(raw, str) else raw).tobytes()
        except (OSError, ValueError, TypeError) as exc:
            raise _refuse(parameter, shown, "file_not_bytes", why=str(exc)) from None
    else:
        raise ParameterError(parameter, "expected_source", type=type(source).__name__)
    if len(data) > max_bytes:
        raise _too_big(parameter, shown, len(data), max_bytes)
    return data, re.sub(r"[\x00-\x1f\x7f]", "?", shown)


# -- Thrift compact protocol: just enough to read Parquet's page headers --------------------------

class _Thrift:
    """A cursor over Thrift compact-protocol bytes ``buf[pos:end]``; ``struct`` returns a struct's
    integer and struct fields by id (booleans, doubles, binaries and collections are skipped).
    Each value costs a few Python operations (no call per byte): a page header, ~30 bytes."""

    def __init__(self, buf: memoryview, pos: int, end: int) -> None:
        self.buf, self.pos, self.end, self.items = buf, pos, end, 0

    def byte(self) -> int:
        if self.pos >= self.end:
            raise _Corrupt(Phrase("header_past_chunk"))
        self.pos += 1
        return int(self.buf[self.pos - 1])

    def varint(self) -> int:
        buf, pos, end = self.buf, self.pos, min(self.end, self.pos + 10)
        out = shift = 0
        while pos < end:
            b = buf[pos]
            pos += 1
            out |= (b & 0x7F) << shift
            if b < 0x80:
                self.pos = pos
                return out
            shift += 7
        raise _Corrupt(Phrase("header_bad_integer"))

    def integer(self) -> int:
        v = self.varint()
        return (v >> 1) ^ -(v & 1)  # zigzag

    def skip(self, n: int) -> None:
        if n < 0 or self.pos + n > self.end:
            raise _Corrupt(Phrase("header_past_chunk"))
        self.pos += n

    def value(self, kind: int, depth: int, element: bool = False) -> Any:
        self.items += 1
        if self.items > _MAX_HEADER_ITEMS or depth > _MAX_DEPTH:
            raise _Corrupt(Phrase("header_too_large"))
        if 4 <= kind <= 6:
            v = self.varint()
            return (v >> 1) ^ -(v & 1)
        if kind == 12:
            return self.struct(depth + 1)
        if kind in (1, 2) and not element:  # a boolean field: its value is its type
            return kind == 1
        if kind in (1, 2, 3, 7, 8, 13):  # a boolean in a collection, byte, double, binary, uuid
            return self.skip(self.varint() if kind == 8 else {7: 8, 13: 16}.get(kind, 1))
        if kind in (9, 10):  # list, set
            head = self.byte()
            n = head >> 4 if head >> 4 != 15 else self.varint()
            for _ in range(n):
                self.value(head & 0x0F, depth + 1, True)
            return None
        if kind == 11:  # map
            if n := self.varint():
                types = self.byte()
                for _ in range(n):
                    self.value(types >> 4, depth + 1, True)
                    self.value(types & 0x0F, depth + 1, True)
            return None
        raise _Corrupt(Phrase("header_unknown_type", kind=kind))

    def struct(self, depth: int = 0) -> dict[int, Any]:
        out: dict[int, Any] = {}
        field = 0
        while head := self.byte():
            field = field + (head >> 4) if head >> 4 else self.integer()
            out[field] = self.value(head & 0x0F, depth)
        return out


@dataclass
class _Pages:
    """What the page headers of one column (over every row group) declare."""

    pages: int = 0
    uncompressed: int = 0  # bytes the decoder decompresses, summed over the pages
    largest: int = 0  # the largest page, uncompressed
    indices: bool = False  # data pages of dictionary indices
    delta: bool = False  # DELTA_BYTE_ARRAY data pages


def _walk(buf: memoryview, chunk: Any, pages: _Pages, room: int, limit: int) -> None:
    """Add the pages of one column chunk to ``pages``: the headers the decoder reads, in order,
    until it has the chunk's declared number of values (so no page it decodes goes uncounted);
    stop early past ``room`` pages or ``limit`` bytes (the file is refused then)."""
    start = chunk.data_page_offset
    if chunk.has_dictionary_page and 0 < (chunk.dictionary_page_offset or 0) < start:
        start = chunk.dictionary_page_offset
    end, want, seen = start + chunk.total_compressed_size, chunk.num_values, 0
    if start < 0 or chunk.total_compressed_size < 0 or end > len(buf):
        raise _Corrupt(Phrase("chunk_outside_file", column=chunk.path_in_schema))
    cursor = _Thrift(buf, start, end)
    while seen < want:
        cursor.items = 0  # (a bound on each header)
        header = cursor.struct()
        kind, size, stored = header.get(1), header.get(2), header.get(3)
        if not isinstance(size, int) or not isinstance(stored, int) or size < 0 or stored < 0:
            raise _Corrupt(Phrase("header_no_sizes"))
        cursor.skip(stored)
        pages.pages, pages.uncompressed = pages.pages + 1, pages.uncompressed + size
        pages.largest = max(pages.largest, size)
        if pages.pages > room or pages.uncompressed > limit:
            return
        data = header.get(5) if kind == _DATA_PAGE else header.get(8) if kind == _DATA_PAGE_V2 else None
        if isinstance(data, dict):
            encoding = data.get(2 if kind == _DATA_PAGE else 4)
            pages.indices |= encoding in _DICTIONARY_INDICES
            pages.delta |= encoding == _DELTA_BYTE_ARRAY
            if not isinstance(data.get(1), int) or data[1] < 0:
                raise _Corrupt(Phrase("page_no_count"))
            seen += data[1]


# -- Parquet -------------------------------------------------------------------------------------

def _buffer(source: bytes | bytearray | memoryview | str | os.PathLike[str], shown: str, parameter: str) -> pa.Buffer:
    """The whole file as an Arrow buffer: bytes as they are, a path memory-mapped (not read)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return pa.py_buffer(source)
    try:
        if not stat.S_ISREG(os.stat(source).st_mode):
            raise _refuse(parameter, shown, "file_not_regular")
        return pa.memory_map(os.fspath(source), "r").read_buffer()
    except OSError as exc:
        raise _refuse(parameter, shown, "file_unreadable", why=str(exc.strerror or exc)) from None


def _width(kind: pa.DataType) -> float | None:
    """Bytes a value of a fixed-width type takes once decoded (None: text, or not flat)."""
    kind = kind.storage_type if isinstance(kind, pa.ExtensionType) else kind
    if pa.types.is_dictionary(kind):
        return _width(kind.value_type)
    if pa.types.is_nested(kind) or _text(kind):
        return None
    try:
        return kind.bit_width / 8 + 1 / 8  # + validity
    except ValueError:  # not fixed-width: neither text nor a number
        return None


def _text(kind: pa.DataType) -> bool:
    kind = kind.value_type if pa.types.is_dictionary(kind) else kind
    return any(f(kind) for f in (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary,
                                 pa.types.is_large_binary, pa.types.is_string_view, pa.types.is_binary_view))


def _decoded(column: pa.ChunkedArray) -> int:
    """Bytes ``column`` takes once its dictionaries are expanded (summed from the indices)."""
    if not pa.types.is_dictionary(column.type):
        return int(column.nbytes)
    total = 0
    for chunk in column.chunks:
        if _text(chunk.type):
            lengths = pc.take(pc.binary_length(chunk.dictionary), chunk.indices)
            total += int(pc.sum(lengths).as_py() or 0) + 9 * len(chunk)  # + offsets and validity
        else:  # a dictionary of numbers: each row one value
            total += int(len(chunk) * (_width(chunk.type) or 0))
    return total


class ParquetTable:
    """A Parquet file opened for bounded reading: its footer parsed and checked, nothing decoded.

    ``names`` are its top-level columns, ``schema`` their Arrow schema (with the file's key-value
    metadata), ``num_rows`` the rows it declares; :meth:`read` decodes some columns within caps.
    Every refusal is a ParameterError of ``parameter`` whose message starts with ``shown``.
    """

    def __init__(self, source: bytes | bytearray | memoryview | str | os.PathLike[str], shown: str, *,
                 parameter: str) -> None:
        self.shown, self.parameter = shown, parameter
        self._buf = _buffer(source, shown, parameter)
        size = self._buf.size
        tail = self._buf[max(0, size - 8):].to_pybytes()
        footer = struct.unpack("<I", tail[:4])[0] if size >= 12 and tail[4:] in (b"PAR1", b"PARE") else 0
        if limits.TABLE_MAX_FOOTER_BYTES < footer <= size - 12:  # (else: pyarrow says what is wrong)
            raise self._refuse("parquet_footer_cap", size=_mib(footer), cap=_mib(limits.TABLE_MAX_FOOTER_BYTES))
        try:
            self._file = pq.ParquetFile(pa.BufferReader(self._buf), thrift_container_size_limit=limits.TABLE_MAX_PAGES,
                                        thrift_string_size_limit=limits.TABLE_MAX_FOOTER_BYTES)
            self.metadata = self._file.metadata
            if (columns := self.metadata.num_columns) > limits.TABLE_MAX_COLUMNS:
                raise self._refuse("parquet_columns_cap", columns=columns, cap=limits.TABLE_MAX_COLUMNS)
            self.schema: pa.Schema = self._file.schema_arrow
        except ParameterError:
            raise
        except _ERRORS as exc:
            why = _detail(exc)
            raise self._refuse("not_parquet", why=why) from None
        self.names = [str(n) for n in self.schema.names]
        self.num_rows = int(self.metadata.num_rows)

    def _refuse(self, reason: str, /, **fields: Any) -> ParameterError:
        return _refuse(self.parameter, self.shown, reason, **fields)

    def _leaves(self, names: list[str]) -> list[tuple[int, pa.Field]]:
        """The leaf column and field of each flat top-level column of ``names``, refused if nested
        or repeated."""
        fields: dict[str, list[pa.Field]] = {}
        for f in self.schema:
            fields.setdefault(f.name, []).append(f)
        leaves: dict[str, list[int]] = {}
        for k in range(self.metadata.num_columns):
            leaves.setdefault(self.metadata.schema.column(k).path, []).append(k)
        for name in names:
            if len(got := fields.get(name, [])) != 1:
                raise self._refuse("column_repeated", column=name, count=len(got)) if got else self._refuse(
                    "no_such_column", column=name)
            if len(leaves.get(name, [])) != 1 or (_width(got[0].type) is None and not _text(got[0].type)):
                raise self._refuse("column_not_flat", column=name, type=str(got[0].type))
        return [(leaves[name][0], fields[name][0]) for name in names]

    def read(self, columns: Sequence[str] | None = None, *, max_rows: int,
             max_bytes: int = limits.TABLE_MAX_BYTES) -> pa.Table:
        """The columns ``columns`` (all if None), decoded with their dictionaries expanded: refused
        before decoding when the rows or what the pages declare exceed ``max_rows`` or
        ``max_bytes``, and while decoding as soon as the decoded bytes exceed ``max_bytes``."""
        names = self.names if columns is None else list(columns)
        groups = [self.metadata.row_group(i) for i in range(self.metadata.num_row_groups)]
        rows = sum(g.num_rows for g in groups)
        if rows != self.num_rows or any(g.num_rows < 0 for g in groups):
            raise self._refuse("row_groups_rows", rows=rows, declared=self.num_rows)
        if rows > max_rows:
            raise self._refuse("rows_cap", rows=rows, cap=max_rows)
        leaves = self._leaves(names)
        if len(groups) * len(names) > limits.TABLE_MAX_PAGES:
            raise self._refuse("column_chunks_cap", groups=len(groups), columns=len(names), cap=limits.TABLE_MAX_PAGES)
        pages, declared, room = [], 0, limits.TABLE_MAX_PAGES
        buf = memoryview(self._buf).cast("B")  # (Arrow exports signed bytes)
        for name, (leaf, field) in zip(names, leaves, strict=True):
            p, width = _Pages(), _width(field.type)
            try:
                for g in groups:
                    _walk(buf, g.column(leaf), p, room, max_bytes - declared)
                    if p.pages > room or p.uncompressed > max_bytes - declared:
                        break
            except _Corrupt as exc:
                raise self._refuse("parquet_damaged", why=exc.args[0]) from None
            room -= p.pages
            if room < 0:
                raise self._refuse("pages_cap", cap=limits.TABLE_MAX_PAGES)
            pages.append(p)
            declared += max(p.uncompressed, int(rows * width) if width is not None else 0)
            if declared > max_bytes:
                raise self._refuse("pages_declare", size=_mib(declared), column=name, cap=_mib(max_bytes))
        out, used = [], 0
        for (_, field), p in zip(leaves, pages, strict=True):
            column = self._column(field, p, used, max_bytes)
            used += int(column.nbytes)
            if used > max_bytes:
                raise self._over(used, max_bytes)
            out.append(column)
        fields = [f.with_type(c.type) for (_, f), c in zip(leaves, out, strict=True)]
        return pa.Table.from_arrays(out, schema=pa.schema(fields, metadata=self.schema.metadata))

    def _over(self, used: int, max_bytes: int) -> ParameterError:
        return self._refuse("columns_decode", size=_mib(used), cap=_mib(max_bytes))

    def _column(self, field: pa.Field, pages: _Pages, used: int, cap: int) -> pa.ChunkedArray:
        """One column decoded, refused as soon as ``used`` bytes and its own exceed ``cap``."""
        name = field.name
        try:
            if pages.delta and _text(field.type):
                return self._batches(field, pages, used, cap)
            if pages.indices and _text(field.type):
                file = pq.ParquetFile(pa.BufferReader(self._buf), metadata=self.metadata, read_dictionary=[name])
            else:
                file = self._file
            column = file.read(columns=[name], use_threads=False).column(0)
            if (size := used + _decoded(column)) > cap:
                raise self._over(size, cap)
            if pa.types.is_dictionary(column.type):
                column = pa.chunked_array([c.dictionary_decode() for c in column.chunks], column.type.value_type)
            return column
        except ParameterError:
            raise
        except _ERRORS as exc:
            raise self._refuse("column_unreadable", column=name, why=_detail(exc)) from None

    def _batches(self, field: pa.Field, pages: _Pages, used: int, cap: int) -> pa.ChunkedArray:
        """A DELTA_BYTE_ARRAY text column, in batches of rows that decode to ≤ TABLE_BATCH_BYTES
        each at worst (a value is at most its page, uncompressed)."""
        size = max(1, min(65_536, limits.TABLE_BATCH_BYTES // max(1, pages.largest)))
        chunks = []
        for batch in self._file.iter_batches(batch_size=size, columns=[field.name], use_threads=False):
            column = batch.column(0)
            if pa.types.is_dictionary(column.type):
                column = column.dictionary_decode()
            used += int(column.nbytes)
            if used > cap:
                raise self._over(used, cap)
            chunks.append(column)
        kind = field.type
        return pa.chunked_array(chunks, kind.value_type if pa.types.is_dictionary(kind) else kind)


# -- CSV / TSV -------------------------------------------------------------------------------------

_LEADING = re.compile(rb"(?:[ \t\r\f\v]*(?:#[^\n]*)?(?:\n|\Z))*")  # blank and comment lines


def text_body(data: bytes, shown: str, fmt: str | None, *, parameter: str) -> tuple[bytes, int, str, str]:
    """A text table's body (after a UTF-8 BOM and blank or '#' lines), the lines skipped, its
    format (``fmt``, or TSV when the header line has a tab, else CSV) and separator."""
    data = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    start = _LEADING.match(data).end()  # type: ignore[union-attr]  # (it matches the empty string)
    body, skipped = data[start:], data[:start].count(b"\n")
    if not body.strip():
        raise _refuse(parameter, shown, "file_empty")
    fmt = fmt or ("tsv" if b"\t" in body.split(b"\n", 1)[0] else "csv")
    return body, skipped, fmt, "\t" if fmt == "tsv" else ","


_FIELD: dict[str, re.Pattern[bytes]] = {}


def csv_fields(body: bytes, sep: str, shown: str, *, parameter: str) -> int:
    """The number of fields of the first record of ``body`` (its header, or first row), as pandas
    will count them, refused over ``TABLE_MAX_COLUMNS`` before anything else is parsed: a field is
    a quoted part (a quote at its start, ``""`` inside) then anything up to a separator or a line
    end; one regular-expression match a field, so at most the cap of them."""
    if sep not in _FIELD:
        s = re.escape(sep.encode())
        _FIELD[sep] = re.compile(rb'(?:"[^"]*(?:""[^"]*)*"|(?!"))[^' + s + rb"\r\n]*")
    field, mark, pos, n = _FIELD[sep], sep.encode()[0], 0, 1
    while (m := field.match(body, pos)) and m.end() < len(body) and body[m.end()] == mark:
        n, pos = n + 1, m.end() + 1
        if n > limits.TABLE_MAX_COLUMNS:
            raise _refuse(parameter, shown, "text_columns_cap", cap=limits.TABLE_MAX_COLUMNS)
    return n


def read_csv(body: bytes, sep: str, fields: int) -> list[pa.ChunkedArray]:
    """Every column of ``body`` (no header row: the first record is data; ``fields`` columns, as
    :func:`csv_fields` counted them) as Arrow text, '' for an empty or missing cell.  The caller has
    bounded its columns, lines and cells; pandas' errors (ParserError, …) propagate for it to word.
    With many columns pandas parses in one pass: chunk by chunk, it converts every column of every
    chunk (≈ 0.1 ms each), which made a 5 MB file of 2048 columns take seconds."""
    df = pd.read_csv(io.BytesIO(body), sep=sep, header=None, dtype=str, na_filter=False, skip_blank_lines=False,
                     encoding="utf-8", encoding_errors="replace", engine="c", low_memory=fields < 64)
    out = []
    for name in df.columns:
        column = pa.array(df[name].array, type=pa.large_string(), from_pandas=True)
        column = column if isinstance(column, pa.ChunkedArray) else pa.chunked_array([column])
        out.append(column.fill_null("") if column.null_count else column)
    return out


def numbers(text: pa.ChunkedArray) -> np.ndarray:
    """Stripped text cells as floats, NaN where empty or not a number, as pandas.to_numeric reads
    them: Arrow's parser (the same numbers, ≈ 20 times faster), pandas' when Arrow refuses a cell."""
    try:
        return np.asarray(pc.if_else(pc.equal(text, ""), None, text).cast(pa.float64()).to_numpy(), dtype=float)
    except pa.ArrowInvalid:  # a cell that is not a number (the caller refuses it): pandas' reading
        return np.asarray(pd.to_numeric(pd.Series(text.to_pandas(), dtype=object), errors="coerce"), dtype=float)


def text_cells(flat: pa.ChunkedArray, rows: int) -> tuple[np.ndarray, Callable[[], np.ndarray]]:
    """For text columns of ``rows`` cells one after the other in ``flat``: which cells are not
    empty once stripped (columns × rows), and a function parsing them (columns × rows, NaN where
    empty or not a number).  Stripped a slice at a time and only the non-empty cells parsed, so
    that a wide file of mostly empty cells costs little more than its text."""
    has, step, shape = np.empty(len(flat), dtype=bool), 2**20, (len(flat) // max(rows, 1), rows)
    for i in range(0, len(flat), step):
        has[i:i + step] = pc.not_equal(pc.utf8_trim_whitespace(flat.slice(i, step)), "").to_numpy()

    def parse() -> np.ndarray:
        out = np.full(len(flat), np.nan)
        out[has] = numbers(pc.utf8_trim_whitespace(flat.filter(pa.array(has))))
        return out.reshape(shape)
    return has.reshape(shape), parse

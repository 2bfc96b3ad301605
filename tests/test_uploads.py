"""Uploads that cannot take the host down (issue 22): files whose bytes are small but whose
decoded form is huge — Parquet of 1 MiB of one letter per row (plain, dictionary-encoded,
DELTA_BYTE_ARRAY, with a footer that lies about its sizes, in many row groups), a huge declared
row count, thousands of columns, pathological CSV — are refused with a ParameterError naming the
file and the cap by every entry point, having allocated at most ``BOUND`` bytes.

Memory is measured, not time: in this process as tracemalloc's peak (Python, numpy) plus the
peak of a proxy of Arrow's memory pool set as the default for the call (Arrow allocates outside
tracemalloc's sight); for the CLI as the child's peak RSS (``os.wait4``) over that of a run on a
small trace.  Before the fix these files took 2–3 GB and 10–20 s each.
"""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import tempfile
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from distsgd import limits
from distsgd.params import ParameterError
from distsgd.sweeps import output
from distsgd.tables import ParquetTable
from distsgd.traces import load_trace, trace_columns
from distsgd.ui import cluster, sweep_results
from tests.test_cli import _limit_memory  # the address-space limit of the CLI's other tests

# one worker (make test: --dist loadgroup) builds the bombs once, not each worker its own
pytestmark = pytest.mark.xdist_group("uploads")

ROOT = Path(__file__).resolve().parent.parent
MiB = 2**20
#: extra memory any refusal may cost (the dashboard's target: ≤ 200 MB an upload)
BOUND = 200 * MiB
ROWS = 1000


# -- the bombs ---------------------------------------------------------------------------------

def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def _rewrite_footer(data: bytes, old: int, new: int) -> bytes:
    """The file with every Thrift i64/i32 ``old`` of its footer replaced by ``new`` (zigzag
    varints): what a crafted file declares, the data pages unchanged."""
    size = struct.unpack("<I", data[-8:-4])[0]
    footer = data[-8 - size:-8]
    a, b = _varint(2 * old), _varint(2 * new)
    assert footer.count(a) >= 1, "the value is not in the footer"
    footer = footer.replace(a, b)
    return data[:-8 - size] + footer + struct.pack("<I", len(footer)) + b"PAR1"


def _text_bomb(kind: str, text: str, others: dict[str, pa.DataType], schema: pa.Schema | None = None,
               rows: int = ROWS, group: int = 50) -> bytes:
    """``rows`` rows whose column ``text`` holds 1 MiB of 'a' each, the ``others`` constant:
    ``kind`` plain, delta or dictionary (written ``group`` rows at a time, a row group each: never
    a GiB in this process), or "dictionary array" (one row group written from a dictionary array,
    the file's Arrow schema left out so that the column reads as text)."""
    fields = [pa.field(text, pa.string()), *(pa.field(n, t) for n, t in others.items())]
    schema = schema or pa.schema(fields)

    def part(start: int, n: int, values: pa.Array) -> pa.Table:
        return pa.table({f.name: values if f.name == text
                         else pa.array(np.arange(start, start + n), f.type) if pa.types.is_integer(f.type)
                         else pa.array(np.ones(n), f.type) if pa.types.is_floating(f.type)
                         else pa.nulls(n, f.type) for f in schema}, schema=schema.set(
                             schema.get_field_index(text), schema.field(text).with_type(values.type)))

    buf = io.BytesIO()
    if kind == "dictionary array":
        values = pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, np.int32)), pa.array(["a" * MiB]))
        pq.write_table(part(0, rows, values), buf, compression="zstd", store_schema=False, row_group_size=group)
        return buf.getvalue()
    encoding: dict[str, Any] = ({"column_encoding": {text: "DELTA_BYTE_ARRAY"}} if kind == "delta" else {})
    texts = pa.array(["a" * MiB] * group, pa.string())  # one group's text, written again and again
    with pq.ParquetWriter(buf, schema, compression="zstd", use_dictionary=kind == "dictionary", **encoding) as w:
        for start in range(0, rows, group):
            n = min(group, rows - start)
            w.write_table(part(start, n, texts.slice(0, n)))
    return buf.getvalue()


TRACE = {"step": pa.int64(), "duration": pa.float64()}
RESULT = {"point": pa.int64(), "mc_mean": pa.float64()}


def _lying(text: str, others: dict[str, pa.DataType]) -> bytes:
    """The plain bomb with a footer that declares 1000 bytes for the text column (the pages keep
    their true sizes, which the decoder allocates)."""
    data = _text_bomb("plain", text, others)
    chunk = pq.ParquetFile(io.BytesIO(data)).metadata.row_group(0).column(0)
    return _rewrite_footer(data, chunk.total_uncompressed_size, 1000)


def _rows(name: str) -> bytes:
    """A column of 123457 times that declares 10¹² rows."""
    buf = io.BytesIO()
    pq.write_table(pa.table({name: np.ones(123_457)}), buf, compression="zstd")
    return _rewrite_footer(buf.getvalue(), 123_457, 10**12)


def _wide(columns: int = 3000) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.table({f"w{i}": [1.0] for i in range(columns)}), buf)
    return buf.getvalue()


def _parquet_bombs(column: str, schema: Any) -> dict[str, Callable[[], bytes]]:
    """The Parquet text bombs, with their text in ``column`` of a file of ``schema``."""
    return {
        "plain": lambda: _text_bomb("plain", column, schema),
        "dictionary": lambda: _text_bomb("dictionary array", column, schema, group=ROWS),
        "delta": lambda: _text_bomb("delta", column, schema),
        "lying footer": lambda: _lying(column, schema),
        "many row groups": lambda: _text_bomb("dictionary", column, schema, group=5),
    }


TRACE_BOMBS: dict[str, Callable[[], bytes]] = {
    **_parquet_bombs("worker", TRACE),
    "declared rows": lambda: _rows("duration"),
    "thousands of columns": _wide,
}
CSV_BOMBS: dict[str, bytes] = {
    "csv columns": b"a," * 100_000 + b"a\n1" + b",1" * 100_000 + b"\n",
    "csv quoted columns": b'"a\nb",' + b"x," * 100_000 + b"x\n",
    "csv one cell": b"duration\n" + b"1" * (5 * MiB - 100) + b"\n",
    "csv times": b",".join(b"w%d" % i for i in range(2048)) + b"\n" + (b"1," * 2047 + b"1\n") * 1200,
}
#: what each refusal's message names: the cap
CAPS = {name: str(limits.TABLE_MAX_BYTES) for name in ("plain", "dictionary", "delta", "lying footer",
                                                        "many row groups")}
CAPS |= {"declared rows": str(limits.EMPIRICAL_MAX_VALUES), "csv times": str(limits.EMPIRICAL_MAX_VALUES),
         "csv one cell": "(0, 1e9]"}
CAPS |= {name: str(limits.TABLE_MAX_COLUMNS) for name in ("thousands of columns", "csv columns", "csv quoted columns")}
RESULT_BOMBS = _parquet_bombs("label", RESULT)


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every trace bomb written once, as ``bomb.parquet`` / ``bomb.csv`` files."""
    where = tmp_path_factory.mktemp("bombs")
    out = {name: where / f"{name.replace(' ', '-')}.parquet" for name in TRACE_BOMBS}
    out |= {name: where / f"{name.replace(' ', '-')}.csv" for name in CSV_BOMBS}
    for name, make in TRACE_BOMBS.items():
        out[name].write_bytes(make())
    for name, data in CSV_BOMBS.items():
        out[name].write_bytes(data)
    return out


def test_the_bombs_are_what_they_claim(bombs: dict[str, Path]) -> None:
    """Small files that decode to a GiB: the claim the rest of the file tests rests on."""
    for name in ("plain", "dictionary", "delta", "lying footer", "many row groups"):
        assert bombs[name].stat().st_size < 200_000, name
        assert pq.ParquetFile(bombs[name]).metadata.num_rows == ROWS
    chunk = pq.ParquetFile(bombs["lying footer"]).metadata.row_group(0).column(0)
    assert chunk.total_uncompressed_size == 1000  # what the footer says; the page says 1 GiB
    assert pq.ParquetFile(bombs["declared rows"]).metadata.num_rows == 10**12


# -- measuring --------------------------------------------------------------------------------

def measured(call: Callable[[], Any]) -> tuple[Any, int]:
    """``call``'s result or the ParameterError it raised, and the peak bytes it allocated:
    tracemalloc's peak plus the peak of Arrow's pool (a proxy set as the default for the call)."""
    default = pa.default_memory_pool()
    pool = pa.proxy_memory_pool(default)
    pa.set_memory_pool(pool)
    tracemalloc.start()
    try:
        out = call()
    except ParameterError as exc:
        out = exc
    finally:
        python = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        pa.set_memory_pool(default)
    return out, python + pool.max_memory()


def assert_refused(call: Callable[[], Any], shown: str, cap: object, bound: int = BOUND) -> str:
    """``call`` raises a one-line ParameterError naming ``shown`` and ``cap`` within ``bound``."""
    out, peak = measured(call)
    assert isinstance(out, ParameterError), f"not refused: {out!r}"
    message = str(out)
    assert "\n" not in message and shown in message and str(cap) in message, message
    assert peak <= bound, f"{peak / MiB:.0f} MiB allocated before refusing: {message}"
    return message


# -- load_trace: bytes, a path, a file object --------------------------------------------------

@pytest.mark.parametrize("name", [*TRACE_BOMBS, *CSV_BOMBS])
def test_load_trace_refuses_every_bomb_within_the_bound(bombs: dict[str, Path], name: str) -> None:
    path = bombs[name]
    data = path.read_bytes()
    assert_refused(lambda: load_trace(data, name=path.name), path.name, CAPS[name])
    assert_refused(lambda: load_trace(path), str(path), CAPS[name])
    upload = io.BytesIO(data)
    upload.name = "upload" + path.suffix
    assert_refused(lambda: load_trace(upload), "upload" + path.suffix, CAPS[name])


# -- the cluster page's column listing ------------------------------------------------------------

@pytest.mark.parametrize("name", [*TRACE_BOMBS, *CSV_BOMBS])
def test_the_column_listing_reads_headers_only(bombs: dict[str, Path], name: str) -> None:
    """Column names come from the footer or the first record: a file of too many columns is refused,
    any other lists its names having decoded nothing; the page shows no boxes for a refused one."""
    data = bombs[name].read_bytes()
    out, peak = measured(lambda: trace_columns(data, bombs[name].name))
    assert peak <= BOUND
    if "columns" in name:
        assert isinstance(out, ParameterError) and str(limits.TABLE_MAX_COLUMNS) in str(out), out
        assert cluster._columns(data, bombs[name].name) == []
    else:
        assert isinstance(out, list) and out, out
        assert cluster._columns(data, bombs[name].name) == out


def test_the_column_listing_is_what_load_trace_sees() -> None:
    data = b"\xef\xbb\xbf# measured\n\n Rank , Iteration,\"Seconds\"\n0,1,1.5\n"
    assert trace_columns(data, "t.csv") == ["Rank", "Iteration", "Seconds"]
    assert trace_columns(b"1.5\n2\n", "t.csv") == [""]
    assert load_trace(data, name="t.csv").columns == {"worker": "Rank", "step": "Iteration", "duration": "Seconds"}


# -- sweep results: the page's reader, the library's, and --resume's ------------------------------

@pytest.fixture(scope="module")
def result_bombs() -> dict[str, bytes]:
    return {name: make() for name, make in RESULT_BOMBS.items()}


@pytest.mark.parametrize("name", list(RESULT_BOMBS))
def test_the_sweep_results_readers_refuse_every_bomb(result_bombs: dict[str, bytes], name: str) -> None:
    data = result_bombs[name]
    assert_refused(lambda: output.read_results(data, "r.parquet", max_rows=10**6), "r.parquet", limits.TABLE_MAX_BYTES)
    assert_refused(lambda: sweep_results.read_results(data, "r.parquet"), "r.parquet", limits.TABLE_MAX_BYTES)


def test_the_sweep_results_page_refuses_a_huge_declared_row_count() -> None:
    buf = io.BytesIO()
    pq.write_table(pa.table({"point": np.arange(123_457), "mc_mean": np.ones(123_457)}), buf)
    data = _rewrite_footer(buf.getvalue(), 123_457, 10**12)
    assert_refused(lambda: sweep_results.read_results(data, "r.parquet"), "r.parquet", sweep_results.SWEEP_MAX_ROWS)
    assert_refused(lambda: output.read_results(_wide(), "w.parquet", max_rows=10), "w.parquet",
                   limits.TABLE_MAX_COLUMNS)


@pytest.mark.parametrize("name", ["dictionary", "delta", "lying footer"])
def test_resume_refuses_a_bomb_with_the_right_fingerprint(tmp_path: Path, name: str) -> None:
    """--resume reads its own file under the CLI's larger cap, RESULTS_MAX_BYTES: a file of the
    right grid and schema that decodes to 1 GiB is refused within that cap (and the bound)."""
    schema = output.SCHEMA.with_metadata({output.FINGERPRINT_KEY: f"{output.VERSION}:grid".encode()})
    kind = "plain" if name == "lying footer" else name
    data = _text_bomb(kind, "label", {}, schema=schema)
    if name == "lying footer":
        data = _rewrite_footer(data, pq.ParquetFile(io.BytesIO(data)).metadata.row_group(0).column(
            output.SCHEMA.names.index("label")).total_uncompressed_size, 1000)
    path = tmp_path / "r.parquet"
    path.write_bytes(data)
    assert_refused(lambda: output.read_done(path, "grid"), str(path), limits.RESULTS_MAX_BYTES,
                   bound=limits.RESULTS_MAX_BYTES + BOUND)


# -- the CLI: exit 2, one line naming the file and the cap, no traceback ----------------------------

def _cli(*args: str) -> tuple[int, str, str, int]:
    """``python -m distsgd ARGS`` as tests/test_cli.py runs it (1.5 GiB of address space): exit
    code, stdout, stderr and the child's peak RSS in bytes (its own rusage, by os.wait4)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([sys.executable, "-m", "distsgd", *args], stdin=subprocess.DEVNULL, stdout=out,
                             stderr=err, cwd=ROOT, env=env, preexec_fn=_limit_memory)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return code, out.read().decode(), err.read().decode(), usage.ru_maxrss * 1024


@pytest.fixture(scope="module")
def cli_baseline(tmp_path_factory: pytest.TempPathFactory) -> int:
    """Peak RSS of the CLI refusing a small trace: the interpreter, numpy, pandas, pyarrow."""
    path = tmp_path_factory.mktemp("cli") / "small.csv"
    path.write_text("worker,step,duration\na,1,-1\n")
    code, _, err, rss = _cli("fit", "--trace", str(path))
    assert code == 2, err
    return rss


RUNTIME = ("runtime", "--scheme", "sync", "--iterations", "300", "--seed", "1", "--json")
#: each bomb through one command, not both (a process each, ~3 s): both commands read --trace with
#: load_trace (tested above on every bomb in this process), and each refuses here a file too big
#: when decoded and one of too many columns, Parquet and CSV
CLI_CASES = [("dictionary", RUNTIME), ("delta", ("fit",)), ("lying footer", ("fit",)),
             ("thousands of columns", RUNTIME), ("csv columns", ("fit",))]


@pytest.mark.parametrize("name, command", CLI_CASES, ids=[f"{n}-{c[0]}" for n, c in CLI_CASES])
def test_the_cli_refuses_a_bomb_in_one_line(bombs: dict[str, Path], cli_baseline: int, command: tuple[str, ...],
                                            name: str) -> None:
    path = bombs[name]
    code, out, err, rss = _cli(command[0], "--trace", str(path), *command[1:])
    assert code == 2 and out == "", (code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert str(path) in lines[0] and str(CAPS[name]) in lines[0], lines[0]
    assert rss - cli_baseline <= BOUND, f"{(rss - cli_baseline) / MiB:.0f} MiB over the baseline"


# -- what a legitimate file still gets -------------------------------------------------------------

def test_a_legitimate_parquet_trace_reads_every_encoding() -> None:
    """Dictionary, DELTA_BYTE_ARRAY and plain text, many row groups, numbers: read as before."""
    workers = [f"gpu-{i % 7:02d}" for i in range(7000)]
    steps, times = [i // 7 + 1 for i in range(7000)], [1.0 + (i % 7) / 10 for i in range(7000)]
    table = pa.table({"worker": workers, "step": steps, "duration": times})
    delta = {"use_dictionary": False, "column_encoding": {"worker": "DELTA_BYTE_ARRAY"}}
    pages = {"data_page_size": 1, "write_batch_size": 2}  # a page per two rows: 3500 pages a column chunk
    for kw in ({}, {"use_dictionary": False}, delta, {"row_group_size": 100, "data_page_size": 512}, pages):
        buf = io.BytesIO()
        pq.write_table(table, buf, compression="zstd", **kw)
        t = load_trace(buf.getvalue(), name="t.parquet")
        assert t.workers == tuple(f"gpu-{i:02d}" for i in range(7)) and len(t.complete_steps) == 1000, kw
        np.testing.assert_allclose(t.times[:, 0], [1.0 + i / 10 for i in range(7)])


def test_a_categorical_column_is_read_expanded() -> None:
    table = pa.table({"worker": pa.array(["a", "b"] * 3).dictionary_encode(), "step": [1, 1, 2, 2, 3, 3],
                      "duration": [1.0, 2.0] * 3})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    got = ParquetTable(buf.getvalue(), "c.parquet", parameter="trace").read(max_rows=10)
    assert got.column("worker").type == pa.string() and got.column("worker").to_pylist() == ["a", "b"] * 3
    assert load_trace(buf.getvalue(), name="c.parquet").workers == ("a", "b")


def test_a_wide_parquet_trace_of_numbers() -> None:
    buf = io.BytesIO()
    pq.write_table(pa.table({"step": [1, 2], "a": [1.0, None], "b": [2, 3]}), buf)
    t = load_trace(buf.getvalue(), name="w.parquet")
    assert t.layout == "wide" and t.workers == ("a", "b") and t.missing == 1
    np.testing.assert_array_equal(t.times, [[1.0], [2.0]])


def test_resume_reads_a_file_the_sweep_wrote(tmp_path: Path) -> None:
    rows = output.to_table([{"point": 1, "m": 4, "mc_mean": 2.5, "label": "x"}, {"point": 0, "mc_mean": 1.0}])
    path = tmp_path / "r.parquet"
    output.write(output.combine([rows]), path, "grid")
    done = output.read_done(path, "grid")
    assert done.schema == output.SCHEMA and done.column("point").to_pylist() == [0, 1]
    assert json.loads(json.dumps(done.column("label").to_pylist())) == [None, "x"]

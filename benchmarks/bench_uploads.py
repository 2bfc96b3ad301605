"""Uploads that decode to far more than their bytes (issue 22): refused or read, measured.

    python -m benchmarks.bench_uploads            # writes benchmarks/results/uploads.md
    python -m benchmarks.bench_uploads --quick    # the 44 KB files only: results/uploads-quick.md

Files: the 44 KB Parquet of issue 22 (1000 rows of 1 MiB of 'a' in one string column, zstd,
plain-encoded), the same dictionary-encoded, and a 5 MB one of the same kind (its pages repeated:
≈ 110 000 rows, ≈ 110 GB decoded) — each in a trace's columns and in a sweep's results' columns
(one of them a ``--resume`` file: the sweep's schema and fingerprint) — a 5 MB CSV of 2.6 million
columns and one of 2048 columns holding 2.6 million times; and legitimate files: traces of about
5 MB (long CSV, wide CSV, long Parquet) and a sweep's results of 60 000 points.  Entry points:
``load_trace`` of the bytes (the "Your cluster" page and the sidebar), the page's column listing
(``trace_columns``), the CLI's ``runtime --trace`` and ``fit --trace`` (``distsgd.cli.main``), the
"Sweep results" page's reader and ``--resume``'s.  Each call runs in a fresh ``python`` after its
imports: the time of the call and the increase of the peak RSS (VmHWM, reset through
/proc/self/clear_refs) are reported.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import io
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .bench_clusters import cpu_model, fmt_time, table
from .bench_traces import synthetic

RESULTS = Path(__file__).resolve().parent / "results"
REPO = Path(__file__).resolve().parent.parent
MiB = 2**20

# -- Thrift compact protocol: decode and re-encode a Parquet footer (to repeat pages) ---------------


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        out |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return out, pos


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def _decode(buf: bytes, pos: int, kind: int, element: bool = False) -> tuple[Any, int]:
    """A value of Thrift compact type ``kind``: ints, bytes, ("list", type, items), structs as
    lists of [field id, type, value]."""
    if kind in (1, 2):
        return (buf[pos] == 1, pos + 1) if element else (kind == 1, pos)
    if kind == 3:
        return buf[pos], pos + 1
    if kind in (4, 5, 6):
        v, pos = _varint(buf, pos)
        return (v >> 1) ^ -(v & 1), pos
    if kind == 7:
        return buf[pos:pos + 8], pos + 8
    if kind == 8:
        n, pos = _varint(buf, pos)
        return buf[pos:pos + n], pos + n
    if kind in (9, 10):
        head = buf[pos]
        pos += 1
        n = head >> 4
        if n == 15:
            n, pos = _varint(buf, pos)
        items = []
        for _ in range(n):
            item, pos = _decode(buf, pos, head & 0x0F, True)
            items.append(item)
        return ("list", head & 0x0F, items), pos
    if kind == 12:
        fields, fid = [], 0
        while buf[pos]:
            head = buf[pos]
            pos += 1
            if head >> 4:
                fid += head >> 4
            else:
                v, pos = _varint(buf, pos)
                fid = (v >> 1) ^ -(v & 1)
            value, pos = _decode(buf, pos, head & 0x0F)
            fields.append([fid, head & 0x0F, value])
        return fields, pos + 1
    raise ValueError(f"Thrift type {kind} not handled")


def _encode(value: Any, kind: int, element: bool = False) -> bytes:
    if kind in (1, 2):
        return bytes([1 if value else 2]) if element else b""
    if kind == 3:
        return bytes([value])
    if kind in (4, 5, 6):
        return _uvarint((value << 1) ^ (value >> 63))
    if kind == 7:
        return bytes(value)
    if kind == 8:
        return _uvarint(len(value)) + bytes(value)
    if kind in (9, 10):
        _, inner, items = value
        head = bytes([len(items) << 4 | inner]) if len(items) < 15 else bytes([0xF0 | inner]) + _uvarint(len(items))
        return head + b"".join(_encode(i, inner, True) for i in items)
    if kind == 12:
        out, last = bytearray(), 0
        for fid, t, v in value:
            t = (1 if v else 2) if t in (1, 2) else t
            out += bytes([(fid - last) << 4 | t]) if 0 < fid - last <= 15 else bytes([t]) + _uvarint(fid << 1)
            out += _encode(v, t)
            last = fid
        return bytes(out + b"\x00")
    raise ValueError(f"Thrift type {kind} not handled")


def _field(struct: list, fid: int) -> list | None:
    return next((f for f in struct if f[0] == fid), None)


def repeat_pages(data: bytes, times: int) -> bytes:
    """A one-row-group Parquet file without dictionary pages, every column chunk's pages repeated
    ``times`` times and its footer saying so: ``times`` × the rows, in ≈ ``times`` × the bytes."""
    size = int.from_bytes(data[-8:-4], "little")
    meta, _ = _decode(data, len(data) - 8 - size, 12)
    (group,) = _field(meta, 4)[2][2]
    out = bytearray(b"PAR1")
    for chunk in _field(group, 1)[2][2]:
        col = _field(chunk, 3)[2]
        assert _field(col, 11) is None, "a dictionary page cannot be repeated"
        start, length = _field(col, 9)[2], _field(col, 7)[2]
        _field(col, 9)[2] = _field(chunk, 2)[2] = len(out)
        out += data[start:start + length] * times
        for fid in (5, 6, 7):  # num_values, total_uncompressed_size, total_compressed_size
            _field(col, fid)[2] *= times
        col[:] = [f for f in col if f[0] not in (12, 16)]  # statistics, size statistics
    for fid in (2, 3, 6):  # total_byte_size, num_rows, total_compressed_size
        if (f := _field(group, fid)) is not None:
            f[2] *= times
    _field(meta, 3)[2] *= times
    if (f := _field(group, 5)) is not None:
        f[2] = 4
    footer = _encode(meta, 12)
    return bytes(out + footer + len(footer).to_bytes(4, "little") + b"PAR1")


# -- the files --------------------------------------------------------------------------------


def _bomb(text: str, others: dict[str, pa.DataType], kind: str = "plain", schema: pa.Schema | None = None,
          rows: int = 1000) -> bytes:
    """``rows`` rows whose column ``text`` holds 1 MiB of 'a' each, in one row group: plain (built
    whole: a GiB for a few seconds) or dictionary-encoded (from a dictionary array, the file's
    Arrow schema left out so that the column reads as text)."""
    schema = schema or pa.schema([pa.field(text, pa.string()), *(pa.field(n, t) for n, t in others.items())])
    values = (pa.array(["a" * MiB] * rows) if kind == "plain"
              else pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, np.int32)), pa.array(["a" * MiB])))
    table = pa.table({f.name: values if f.name == text
                      else pa.array(np.arange(rows), f.type) if pa.types.is_integer(f.type)
                      else pa.array(np.ones(rows), f.type) if pa.types.is_floating(f.type)
                      else pa.nulls(rows, f.type) for f in schema},
                     schema=schema.set(schema.get_field_index(text), schema.field(text).with_type(values.type)))
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd", use_dictionary=kind != "plain", store_schema=kind == "plain")
    return buf.getvalue()


TRACE = {"step": pa.int64(), "duration": pa.float64()}
RESULT = {"point": pa.int64(), "mc_mean": pa.float64()}


def _resume_schema() -> pa.Schema:
    from distsgd.sweeps import output  # (the benchmark's own import: the schema a sweep writes)
    return output.SCHEMA.with_metadata({output.FINGERPRINT_KEY: f"{output.VERSION}:grid".encode()})


def legitimate() -> dict[str, tuple[str, bytes]]:
    """Traces of about 5 MB: (file name, bytes)."""
    long = synthetic(1000, 1000)
    frame = pd.DataFrame({"worker": np.repeat([f"w{i}" for i in range(1000)], 1000),
                          "step": np.tile(np.arange(1, 1001), 1000), "duration": long.ravel()})
    csv = frame.iloc[:325_000].to_csv(index=False, float_format="%.4f").encode()
    wide = pd.DataFrame(long[:, :700].T, columns=[f"w{i}" for i in range(1000)]).to_csv(
        index_label="step", float_format="%.4f").encode()
    buf = io.BytesIO()
    frame.iloc[:600_000].to_parquet(buf, index=False, compression="zstd")
    rows = [{"point": i, "scheme": "sync", "m": 4 + i % 997, "label": f"point {i}", "mc_mean": float(v)}
            for i, v in enumerate(np.random.default_rng(2).lognormal(0, 1, 60_000))]
    from distsgd.sweeps import output  # (the benchmark's own import: the file a sweep writes)
    results = io.BytesIO()
    pq.write_table(output.to_table(rows), results, compression="zstd")
    return {"legit long CSV": ("trace.csv", csv), "legit wide CSV": ("wide.csv", wide),
            "legit long Parquet": ("trace.parquet", buf.getvalue()),
            "legit results (60 000 points)": ("results.parquet", results.getvalue())}


def files(quick: bool) -> dict[str, tuple[str, bytes]]:
    """Every file of the benchmark: name → (file name, bytes)."""
    trace, results, resume = _bomb("worker", TRACE), _bomb("label", RESULT), _bomb("label", {}, schema=_resume_schema())
    out = {"44 KB bomb (trace)": ("bomb.parquet", trace),
           "44 KB bomb, dictionary (trace)": ("bomb.parquet", _bomb("worker", TRACE, "dictionary")),
           "44 KB bomb (results)": ("results.parquet", results),
           "44 KB bomb, dictionary (results)": ("results.parquet", _bomb("label", RESULT, "dictionary")),
           "44 KB bomb (--resume file)": ("resume.parquet", resume)}
    if not quick:
        times = 5 * MiB // len(trace)
        out |= {"5 MB bomb (trace)": ("bomb.parquet", repeat_pages(trace, times)),
                "5 MB bomb (results)": ("results.parquet", repeat_pages(results, times)),
                "5 MB bomb (--resume file)": ("resume.parquet", repeat_pages(resume, 5 * MiB // len(resume))),
                "5 MB CSV, 2.6 M columns": ("columns.csv", b"a," * (5 * MiB // 2 - 1) + b"a\n"),
                "5 MB CSV, 2048 columns, 2.6 M times": ("times.csv", b",".join(b"w%d" % i for i in range(2048))
                                                         + b"\n" + (b"1," * 2047 + b"1\n") * 1250)}
        out |= legitimate()
    return out


#: entry point → (files it applies to: "trace", "results" or "resume"; the call, with PATH and NAME)
ENTRY_POINTS = {
    "load_trace (pages)": ("trace", "from distsgd.traces import load_trace\n"
                                    "call = lambda: load_trace(open(PATH, 'rb').read(), name=NAME)"),
    "column listing (cluster page)": ("trace", "from distsgd.traces import trace_columns\n"
                                               "call = lambda: trace_columns(open(PATH, 'rb').read(), NAME)"),
    "CLI runtime --trace": ("trace", "from distsgd.cli import main\n"
                                     "call = lambda: main(['runtime', '--scheme', 'sync', '--trace', PATH, "
                                     "'--iterations', '300', '--seed', '1', '--json'])"),
    "CLI fit --trace": ("trace", "from distsgd.cli import main\ncall = lambda: main(['fit', '--trace', PATH])"),
    "Sweep results page": ("results", "from distsgd.ui.sweep_results import read_results\n"
                                      "call = lambda: read_results(open(PATH, 'rb').read(), NAME)"),
    "--resume (read_done)": ("resume", "from distsgd.sweeps.output import read_done\n"
                                       "call = lambda: read_done(__import__('pathlib').Path(PATH), 'grid')"),
}

_CHILD = """
import contextlib, io, json, sys, time
{imports}
PATH, NAME = sys.argv[1], sys.argv[2]
def status(key):
    return int(open('/proc/self/status').read().split(key + ':')[1].split()[0]) * 1024
open('/proc/self/clear_refs', 'w').write('5')  # the peak RSS from here on
base, err = status('VmRSS'), io.StringIO()
t = time.perf_counter()
with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
    try:
        got = call()
        outcome = ('read' if not isinstance(got, int) else 'exit %d: ' % got + err.getvalue().strip())
    except Exception as exc:
        outcome = 'refused: ' + str(exc)
print(json.dumps({{"seconds": time.perf_counter() - t, "rss": status('VmHWM') - base, "outcome": outcome}}))
"""


def measure(code: str, path: Path, name: str) -> dict[str, Any]:
    """Run one entry point on one file in a fresh interpreter: seconds, RSS increase, outcome."""
    p = subprocess.run([sys.executable, "-c", _CHILD.format(imports=code), str(path), name], cwd=REPO,
                       capture_output=True, text=True, timeout=600)
    if p.returncode:
        return {"seconds": float("nan"), "rss": 0, "outcome": f"CRASHED (exit {p.returncode}): "
                                                              f"{p.stderr.strip().splitlines()[-1:]}"}
    return dict(json.loads(p.stdout.strip().splitlines()[-1]))


def _short(outcome: str) -> str:
    """The outcome in a table cell: its start (what was refused) and its end (the cap)."""
    text = outcome.replace("|", "/").replace("distsgd: error: ", "")
    return text if len(text) <= 160 else text[:70] + " … " + text[-85:]


def run(quick: bool = False, output: Path | None = None) -> str:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, (name, data) in files(quick).items():
            path = Path(tmp) / name
            path.write_bytes(data)
            kind = "resume" if "--resume" in label else "results" if "results" in label else "trace"
            for entry, (applies, code) in ENTRY_POINTS.items():
                if applies != kind:
                    continue
                got = measure(code, path, name)
                outcome = got["outcome"].replace(f"{tmp}/", "")
                rows.append([label, f"{len(data) / 1e3:,.0f} KB", entry, fmt_time(got["seconds"]),
                             f"{got['rss'] / MiB:.0f} MiB", _short(textwrap.shorten(outcome, 400))])
                print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    stamp = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    text = "\n".join([
        f"# Uploads that decode to far more than their bytes ({'quick' if quick else 'full'} run)", "",
        f"{stamp}, {cpu_model()}; `python -m benchmarks.bench_uploads{' --quick' if quick else ''}`.", "",
        "Each row is one call in a fresh interpreter, after its imports: its time and the increase of the "
        "process's peak RSS.  The target (issue 22): every upload refused or read in ≤ 2 s and ≤ 200 MB; "
        "`--resume` reads its own file under limits.RESULTS_MAX_BYTES (512 MiB).  Before the fix, the 44 KB "
        "bomb took 11 s and 2.3 GB on the Sweep results page and 12 s and 3.3 GB as a trace.  The CLI rows "
        "of the legitimate files include the command's own work (300 Monte Carlo iterations; fitting every "
        "family to the pooled times), not only reading.", "",
        table(["file", "size", "entry point", "time", "peak RSS increase", "outcome"], rows), ""])
    out = output or RESULTS / ("uploads-quick.md" if quick else "uploads.md")
    out.write_text(text, encoding="utf-8")
    return text


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="the 44 KB files only")
    p.add_argument("--output", type=Path, default=None)
    args = p.parse_args(argv)
    print(run(args.quick, args.output))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

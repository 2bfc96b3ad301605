"""A sweep's results file: one Parquet row per point, one fixed schema, written atomically.

Every file has the same columns whatever the grid (:data:`SCHEMA`): ``point`` (the index in the
grid), every parameter of :data:`~distsgd.sweeps.grid.PARAMETERS` (null where a point does not
have it), ``cluster`` and ``label``, the runtime and error results, and ``error`` (null, or the
message of what the library refused for that point).  The schema's metadata keeps the grid's
fingerprint, so ``resume`` continues only a file of the same grid.

Writing is a *checkpoint*: the rows finished so far, sorted by point, go to a temporary file
beside the target that then replaces it (``os.replace``, atomic on POSIX), so the file on disk
is at every instant either the previous checkpoint or the new one — never half written, even
under ``kill -9``.  The final file is the last checkpoint, with every point.  The same rows give
the same bytes: serial, on any number of workers, or resumed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from .. import limits
from ..params import ParameterError
from ..tables import ParquetTable
from .grid import PARAMETERS

__all__ = ["SCHEMA", "RESULTS", "to_table", "combine", "write", "read_done", "read_results", "FINGERPRINT_KEY"]

_TYPES = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64()}
#: result columns, in file order
RESULTS: dict[str, str] = {
    "cluster": "string", "label": "string",
    "analytic_value": "float64", "analytic_kind": "string", "analytic_method": "string",
    "mc_mean": "float64", "mc_ci_low": "float64", "mc_ci_high": "float64", "mc_iterations": "int64",
    "mc_note": "string", "mc_note_parts": "string", "staleness_mean": "float64", "fresh_fraction": "float64",
    "time_to_target": "float64", "time_to_target_low": "float64", "time_to_target_high": "float64",
    "bound_time_to_target": "float64", "bound_note": "string", "final_error": "float64",
    "sgd_staleness_mean": "float64", "sgd_fresh_fraction": "float64", "gamma": "float64", "p0": "float64",
    # a logreg problem's (DESIGN §9)
    "linearised_floor": "float64", "final_test_accuracy": "float64", "final_test_loss": "float64",
    "time_to_accuracy": "float64", "time_to_accuracy_low": "float64", "time_to_accuracy_high": "float64",
    # a scheduled run's (DESIGN §13): the mean K or H in force at the horizon
    "final_schedule_value": "float64",
    "error": "string",
}
#: the schema's metadata key holding the grid's fingerprint
FINGERPRINT_KEY = b"distsgd.sweep.grid"
#: the version of this layout (a file of another version is not resumed; 2: the problem columns; 3: topology;
#: 4: schedule)
VERSION = 4
SCHEMA = pa.schema([pa.field("point", pa.int64(), nullable=False)]
                   + [pa.field(k, _TYPES[t]) for k, (_, t) in PARAMETERS.items()]
                   + [pa.field(k, _TYPES[t]) for k, t in RESULTS.items()])


def _schema(fingerprint: str) -> pa.Schema:
    return SCHEMA.with_metadata({FINGERPRINT_KEY: f"{VERSION}:{fingerprint}".encode()})


def to_table(rows: Sequence[dict[str, Any]]) -> pa.Table:
    """Rows (dicts holding some of the columns) as a table of :data:`SCHEMA`."""
    return pa.Table.from_pylist(list(rows), schema=SCHEMA)


def combine(tables: Iterable[pa.Table]) -> pa.Table:
    """One table of :data:`SCHEMA`, sorted by point, from any number of parts."""
    parts = [t.replace_schema_metadata(None) for t in tables]
    if not parts:
        return SCHEMA.empty_table()
    return pa.concat_tables(parts).combine_chunks().sort_by("point")


def write(table: pa.Table, out: Path, fingerprint: str) -> None:
    """Write ``table`` (sorted by point) to ``out`` atomically: a temporary file beside it, then
    ``os.replace``; a leftover temporary file of a killed run is overwritten next time."""
    tmp = out.with_name(f".{out.name}.partial")
    pq.write_table(table.cast(_schema(fingerprint)), tmp, compression="zstd")
    os.replace(tmp, out)


def read_done(out: Path, fingerprint: str) -> pa.Table:
    """The rows already in ``out`` (for ``resume``): a ParameterError naming ``out`` when the
    file cannot be read or decodes to more than a sweep holds (limits.SWEEP_MAX_POINTS rows,
    limits.RESULTS_MAX_BYTES), or ``resume`` when it holds another grid's sweep (told from its
    footer, before anything is decoded)."""
    source = ParquetTable(out, f"{out} (to resume it)", parameter="out")
    meta = (source.schema.metadata or {}).get(FINGERPRINT_KEY, b"").decode(errors="replace")
    if meta != f"{VERSION}:{fingerprint}" or source.schema.remove_metadata() != SCHEMA:
        raise ParameterError("resume", "other_grid", out=str(out))
    table = source.read(max_rows=limits.SWEEP_MAX_POINTS, max_bytes=limits.RESULTS_MAX_BYTES)
    return table.replace_schema_metadata(None)


def read_results(data: bytes, name: str, *, max_rows: int, max_bytes: int = limits.TABLE_MAX_BYTES) -> pa.Table:
    """A results file's columns of :data:`SCHEMA` (others are not read), bounded by
    :class:`~distsgd.tables.ParquetTable`: refused (parameter ``results``) when it is not Parquet,
    has no ``point`` column or no result column, or exceeds ``max_rows`` or ``max_bytes``."""
    source = ParquetTable(data, name, parameter="results")
    columns = [c for c in SCHEMA.names if c in source.names]
    if "point" not in columns or not set(columns) & set(RESULTS):
        raise ParameterError("results", "not_results", file=name)
    return source.read(columns, max_rows=max_rows, max_bytes=max_bytes)

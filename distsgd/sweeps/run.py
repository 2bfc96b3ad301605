"""Running a sweep: points → tasks → serial or Dask → one Parquet file (DESIGN §8).

The process of :func:`sweep` (and of ``python -m distsgd sweep``):

1. **Grid.**  The file is read and checked (:func:`~distsgd.sweeps.grid.load_grid`), the point
   count checked against the caps, the files it names read once, and every point built through
   the library's validation (:func:`~distsgd.sweeps.compute.build`).  A point the library
   refuses becomes a row with its ``error``; a grid none of whose points can be built is refused
   with the first point's message.  All this happens before any file is written or any work
   starts: a bad grid is a :class:`~distsgd.params.ParameterError` naming the key.
2. **Output.**  With ``out``: an existing file is completed with ``resume`` (if it holds this
   grid's sweep: :func:`~distsgd.sweeps.output.read_done`) and refused otherwise; the points
   it holds are not computed again.
3. **Tasks.**  The remaining points are packed, in index order, into tasks of at least
   :data:`TASK_SECONDS_MIN` of predicted work (:func:`~distsgd.sweeps.compute.point_cost`),
   larger when there is much work (about :data:`TASKS_PER_WORKER` tasks per worker, at most
   :data:`TASK_SECONDS_MAX`) or many workers (:func:`task_target`: the scheduler's load), and
   submitted longest first.
4. **Execution.**  ``local_workers=0``: in this process, one task after the other.  Otherwise on
   Dask: ``client`` if given, or a Client of the running ``scheduler`` (``"tcp://host:8786"``,
   connected only now: a bad grid is reported first), else a
   :class:`~distributed.LocalCluster` of ``local_workers`` processes (default: the CPUs this
   process may use), one thread each, BLAS threads 1 (``OMP_NUM_THREADS``,
   ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS`` set before the workers start; glibc's malloc
   trimming left at its default, :data:`WORKER_ENV`), on loopback, closed at the end.  The
   grid's files are scattered once to every worker; tasks are ``client.submit``-ted and their
   rows taken ``as_completed``.
5. **Checkpoints.**  Finished rows are written (:func:`~distsgd.sweeps.output.write`, atomic)
   after a task whenever the time since the last write is at least :data:`CHECKPOINT_RATIO`
   times what that write took (so writing costs at most a few percent), and always at the end or
   when the run stops on an error or an interrupt.  A run killed outright loses the tasks after
   its last checkpoint; ``resume`` computes them.

Point i's numbers depend only on the grid and i (its stream is child i of ``SeedSequence(seed)``),
so serial, any number of workers, any task order and a resume give the same file, to the bit.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd  # type: ignore[import-untyped]
import pyarrow as pa  # type: ignore[import-untyped]
from tqdm import tqdm  # type: ignore[import-untyped]

from ..params import Domain, ParameterError
from .compute import build, compute_point, compute_task, point_cost
from .grid import Context, Grid, load_grid
from .output import combine, read_done, to_table, write

if TYPE_CHECKING:
    from distributed import Client

# Dask (dask, distributed) is imported where a sweep uses it, not with the package: it adds
# ~0.35 s to every ``import distsgd`` (the dashboard's cold start, each CLI call) that never sweeps.

__all__ = ["sweep", "run_sweep", "connect", "Summary", "task_target", "TASK_SECONDS_MIN", "TASK_SECONDS_MAX",
           "TASKS_PER_WORKER", "SCHEDULER_SECONDS_PER_TASK",
           "CHECKPOINT_RATIO", "CONNECT_SECONDS", "LOCAL_WORKERS", "BLAS_ENV", "WORKER_ENV"]

#: a task holds at least this much predicted work (seconds of one core): Dask's cost per task
#: (2.5 ms per no-op task here, 30–70 ms of CPU per real task of 1.4–1.8 s, scheduling, transfer
#: and the worker's own threads: benchmarks/results/sweep.md) stays a few percent of it
TASK_SECONDS_MIN = 0.25
#: ... and at most this much, unless one point alone is more: progress, checkpoints and the
#: balance between workers stay fine-grained
TASK_SECONDS_MAX = 2.0
#: tasks per worker aimed at when there is more work than TASK_SECONDS_MIN per task
TASKS_PER_WORKER = 4
#: scheduler time per task budgeted (seconds): Dask's scheduler spends about 1 ms on each task
#: (2.5 ms per no-op task here, the driver sharing two cores with the workers), so with W workers a task of at least
#: W × this keeps one scheduler at half its capacity or less (2 s at 1 000 workers)
SCHEDULER_SECONDS_PER_TASK = 0.002
#: how long to try reaching a scheduler before giving up (seconds)
CONNECT_SECONDS = 10.0
#: a checkpoint is written when the time since the last one is ≥ this × the last one's duration
CHECKPOINT_RATIO = 20.0
TASK_SECONDS = Domain("task_seconds", 0.0, 3600.0, low_open=True, doc="predicted work per task (seconds)")
LOCAL_WORKERS = Domain("local_workers", 0, 1024, integer=True, doc="local Dask worker processes (0: serial)")
#: the worker processes' environment: one BLAS thread each (a process per core does the rest)
BLAS_ENV = {"OMP_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1, "MKL_NUM_THREADS": 1}
#: ... and glibc's own malloc trimming: Dask sets MALLOC_TRIM_THRESHOLD_=65536 in its workers to
#: return freed memory to the system at once, which cost 12–16 % more CPU on these points (their
#: numpy temporaries are allocated and freed over and over; benchmarks/results/sweep.md); a point's
#: memory is bounded anyway (limits.MEMORY_BYTES), so the local workers keep glibc's default
WORKER_ENV: dict[str, int | None] = {**BLAS_ENV, "MALLOC_TRIM_THRESHOLD_": None}

Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class Summary:
    """What a sweep did: points in the grid, rows now done, computed by this run, rows with an
    ``error``, the file, wall seconds, tasks run and where."""

    points: int
    done: int
    computed: int
    errors: int
    out: str | None
    seconds: float
    tasks: int
    workers: str

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class _Point:
    index: int
    params: dict[str, Any]
    cost: float


def _plan(grid: Grid, ctx: Context) -> tuple[list[_Point], list[tuple[int, dict[str, Any]]]]:
    """The points that can be built (with their predicted cost) and those that cannot."""
    valid: list[_Point] = []
    invalid: list[tuple[int, dict[str, Any]]] = []
    first: ParameterError | None = None
    for i, params in enumerate(grid.points()):
        try:
            scheme, src, _ = build(params, ctx)
        except ParameterError as exc:
            invalid.append((i, params))
            first = first or exc
            continue
        valid.append(_Point(i, params, point_cost(scheme, src, params, grid.runtime, grid.error, ctx)))
    if not valid and first is not None:
        raise first  # nothing in the grid can run: the grid is wrong, say what
    return valid, invalid


def task_target(total_seconds: float, workers: int) -> float:
    """Predicted seconds of work per task: about :data:`TASKS_PER_WORKER` tasks per worker, within
    [max(TASK_SECONDS_MIN, workers × SCHEDULER_SECONDS_PER_TASK), max(TASK_SECONDS_MAX, that)].

    >>> task_target(10.0, 2), task_target(1e4, 2), task_target(1e6, 1000), task_target(1e4, 1000)
    (1.25, 2.0, 2.0, 2.0)
    >>> task_target(1e7, 5000)
    10.0
    """
    low = max(TASK_SECONDS_MIN, workers * SCHEDULER_SECONDS_PER_TASK)
    return min(max(total_seconds / (TASKS_PER_WORKER * max(workers, 1)), low), max(TASK_SECONDS_MAX, low))


def _pack(points: list[_Point], workers: int, task_seconds: float | None) -> list[list[_Point]]:
    """Consecutive points grouped into tasks of about the target work, longest first."""
    total = sum(p.cost for p in points)
    target = 1e9 * (task_seconds if task_seconds is not None else task_target(total / 1e9, workers))
    tasks: list[list[_Point]] = []
    cur: list[_Point] = []
    acc = 0.0
    for p in points:
        cur.append(p)
        acc += p.cost
        if acc >= target:
            tasks.append(cur)
            cur, acc = [], 0.0
    if cur:
        tasks.append(cur)
    return sorted(tasks, key=lambda t: -sum(p.cost for p in t))


class _Results:
    """Finished rows, and the checkpoints of them to ``out`` (none without ``out``)."""

    def __init__(self, out: Path | None, fingerprint: str, done: pa.Table) -> None:
        self.out, self.fingerprint = out, fingerprint
        self.tables = [done]
        self.last_write, self.write_seconds = 0.0, 0.0

    def add(self, rows: Rows) -> None:
        self.tables.append(to_table(rows))
        if self.out is not None and time.monotonic() - self.last_write >= CHECKPOINT_RATIO * self.write_seconds:
            self.checkpoint()

    def table(self) -> pa.Table:
        self.tables = [combine(self.tables)]
        return self.tables[0]

    def checkpoint(self) -> None:
        if self.out is None:
            return
        t0 = time.monotonic()
        write(self.table(), self.out, self.fingerprint)
        self.last_write = time.monotonic()
        self.write_seconds = self.last_write - t0


Task = list[tuple[int, dict[str, Any]]]


def _serial(tasks: list[Task], run: Callable[[Task], Rows]) -> Iterator[Rows]:
    for task in tasks:
        yield run(task)


def _on_dask(client: Client, tasks: list[Task], grid: Grid,
             ctx: Context) -> Iterator[Rows]:
    """Submit every task (the context scattered once to all workers), yield rows as they come."""
    from distributed import as_completed
    # a key of its own (hash=False): a former sweep's context may still be being released
    [shared] = client.scatter([ctx], broadcast=True, hash=False)  # type: ignore[no-untyped-call]
    futures = [client.submit(compute_task, task, grid.seed, shared, grid.runtime, grid.error, pure=False)
               for task in tasks]
    try:
        for fut in as_completed(futures):  # type: ignore[no-untyped-call]
            yield fut.result()
            fut.release()
    finally:
        client.cancel(futures)  # type: ignore[no-untyped-call]


@contextlib.contextmanager
def _local_client(n: int) -> Iterator[Client]:
    """A LocalCluster of n single-threaded worker processes with one BLAS thread each
    (:data:`WORKER_ENV`)."""
    import dask
    from distributed import Client, LocalCluster

    env = {f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in WORKER_ENV.items()}
    with dask.config.set(env), LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
            silence_logs=logging.ERROR) as cluster, Client(cluster) as client:  # type: ignore[no-untyped-call]
        yield client


def _connect(client: Client | None, scheduler: str | None,
             local_workers: int | None) -> contextlib.AbstractContextManager[Client | None]:
    """The client given, or one of the scheduler at ``scheduler``, or a LocalCluster's (both
    closed on exit), or None (serial)."""
    if client is not None:
        return contextlib.nullcontext(client)
    if scheduler is not None:
        return connect(scheduler)
    n = len(os.sched_getaffinity(0)) if local_workers is None else local_workers
    return contextlib.nullcontext(None) if n == 0 else _local_client(n)


def connect(address: str) -> Client:
    """A Client of the scheduler at ``address`` (``tcp://host:8786``); a ParameterError naming
    ``scheduler`` when it cannot be reached."""
    from distributed import Client

    try:
        return Client(address, timeout=CONNECT_SECONDS)  # type: ignore[no-untyped-call]
    except (OSError, ValueError) as exc:
        raise ParameterError("scheduler", "scheduler_unreachable", address=address, why=str(exc)) from None


def _workers(client: Client | None) -> tuple[int, str]:
    if client is None:
        return 1, "serial"
    from distributed import LocalCluster

    n = sum(client.nthreads().values())  # type: ignore[no-untyped-call]
    where = "local" if isinstance(client.cluster, LocalCluster) else str(getattr(client.scheduler, "address", "?"))
    return n, f"{n} threads ({where})"


def run_sweep(grid: Mapping[str, Any] | str | Path, client: Client | None = None, *,
              scheduler: str | None = None, local_workers: int | None = None, out: str | Path | None = None,
              resume: bool = False, yes: bool = False, progress: bool = False, task_seconds: float | None = None
              ) -> tuple[pa.Table, Summary]:
    """:func:`sweep`, returning the Arrow table (sorted by point) and a :class:`Summary`."""
    t0 = time.monotonic()
    given = [name for name, v in (("client", client), ("scheduler", scheduler), ("local_workers", local_workers))
             if v is not None]
    if len(given) > 1:
        raise ParameterError(given[1], "one_runner", given=", ".join(given))
    if local_workers is not None:
        local_workers = int(LOCAL_WORKERS.check(local_workers))
    if task_seconds is not None:
        task_seconds = float(TASK_SECONDS.check(task_seconds))
    g = load_grid(grid)
    n_points = g.check_size(yes)
    ctx = g.context()
    valid, invalid = _plan(g, ctx)
    fingerprint = f"{g.fingerprint}|{ctx.contents}"
    path = None if out is None else Path(out)
    done = to_table([])
    if path is not None:
        if not path.parent.is_dir():
            raise ParameterError("out", "no_directory", path=str(path.parent))
        if path.exists():
            if not resume:
                raise ParameterError("out", "out_exists", path=str(path))
            done = read_done(path, fingerprint)
    have = set(done.column("point").to_pylist())
    results = _Results(path, fingerprint, done)
    new_invalid = [compute_point(i, p, g.seed, ctx, g.runtime, g.error) for i, p in invalid if i not in have]
    todo = [p for p in valid if p.index not in have]
    computed = len(new_invalid)
    # nothing left to compute (a complete file resumed): no cluster is started
    where_to = _connect(client, scheduler, local_workers if todo else 0)
    bar = tqdm(total=n_points, initial=len(have), unit="point", desc="sweep", file=sys.stderr, disable=not progress,
               smoothing=0.2)
    with where_to as c, bar:
        n_workers, where = _workers(c)
        tasks = [[(p.index, p.params) for p in t] for t in _pack(todo, n_workers, task_seconds)]
        try:
            if new_invalid:
                results.add(new_invalid)
                bar.update(len(new_invalid))
            stream = _serial(tasks, lambda t: compute_task(t, g.seed, ctx, g.runtime, g.error)) if c is None \
                else _on_dask(c, tasks, g, ctx)
            for rows in stream:
                results.add(rows)
                computed += len(rows)
                bar.update(len(rows))
        finally:
            results.checkpoint()  # whatever finished is kept, also on an error or Ctrl-C
    table = results.table()
    errors = table.num_rows - table.column("error").null_count
    return table, Summary(n_points, table.num_rows, computed, errors, None if path is None else str(path),
                          round(time.monotonic() - t0, 3), len(tasks), where)


def sweep(grid: Mapping[str, Any] | str | Path, client: Client | None = None, *,
          scheduler: str | None = None, local_workers: int | None = None, out: str | Path | None = None,
          resume: bool = False, yes: bool = False, progress: bool = False,
          task_seconds: float | None = None) -> pd.DataFrame:
    """Run a grid of points (DESIGN §8) and return one row per point, sorted by ``point``.

    ``grid``: the path of a TOML grid file, or its tables as a dict
    (``{"seed": 1, "base": {...}, "grid": {...}, "compute": {...}}``).  Where it runs — one of:
    ``client``, a Dask ``Client`` (an existing cluster); ``scheduler``, the address of a running
    scheduler (``"tcp://host:8786"``, connected once the grid is checked); ``local_workers``, the
    processes of a LocalCluster (default: the CPUs available), or 0 for this process alone.
    ``out``: also write the rows to this Parquet file, checkpointed as they finish; ``resume``
    completes such a file instead of refusing to overwrite it.  ``yes`` allows a grid over
    ``limits.SWEEP_CONFIRM_POINTS``; ``progress`` draws a progress bar on stderr;
    ``task_seconds`` fixes the predicted work per task (default: chosen from the work and the
    workers).  The process is the module's; a bad grid raises ParameterError naming the key
    before any work starts.  A LocalCluster's workers are new processes that import the calling
    script: in a script, call this under ``if __name__ == "__main__":``.

    >>> df = sweep({"seed": 1, "base": {"delay": "exp(rate=1)", "m": 4, "iterations": 2000},
    ...             "grid": {"scheme": ["sync", "k-sync"], "K": [2, 8]}, "compute": {"runtime": True}},
    ...            local_workers=0)
    >>> df[["point", "scheme", "K", "analytic_kind"]].values.tolist()
    [[0, 'sync', nan, 'exact'], [1, 'k-sync', 2.0, 'exact'], [2, 'k-sync', 8.0, nan]]
    >>> row = df.iloc[1]      # E[X_{2:4}] = 1/4 + 1/3 for Exp(1)
    >>> round(float(row.analytic_value), 6), bool(row.mc_ci_low < 0.583333 < row.mc_ci_high)
    (0.583333, True)
    >>> df["error"].iloc[2]
    'K: k-sync needs 1 ≤ K ≤ m = 4 (got 8)'
    """
    table, _ = run_sweep(grid, client, scheduler=scheduler, local_workers=local_workers, out=out, resume=resume,
                         yes=yes, progress=progress, task_seconds=task_seconds)
    return table.to_pandas()

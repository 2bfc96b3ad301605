"""Sweeps past one machine (DESIGN §8): a TOML grid of points, run serially or on Dask, one
Parquet row per point, reproducible to the bit and resumable.

``grid``     the grid file: checks, the point count and caps, the points in order, their seeds
``compute``  one point: its model through the library's validation, its row, its predicted cost
``output``   the results file: one schema, atomic checkpoints, what a resume finds done
``run``      points → tasks → serial or Dask → the file: :func:`sweep`
"""

from .grid import DEFAULT_ITERATIONS, PARAMETERS, Grid, load_grid, point_seed
from .output import RESULTS, SCHEMA
from .run import Summary, connect, run_sweep, sweep

__all__ = ["sweep", "run_sweep", "connect", "Summary", "load_grid", "Grid", "point_seed", "PARAMETERS",
           "DEFAULT_ITERATIONS", "SCHEMA", "RESULTS"]

"""Bundled example traces (DESIGN §7): small synthetic step-time traces the project generates and
ships in ``distsgd/data/traces/``, so the cluster page is useful without an upload and the tests
have data whose truth is known.

The model.  Worker i's time at step j is, in seconds (long layout ``worker,step,duration``,
worker ids ``gpu-01`` …, steps ``0`` … S−1, durations written with 4 decimals: 4–6 significant
digits, every time in [0.1, 100) s)::

    t[i, j] = 0.5 · B_j · M_i · a_i(j) · E_ij

* ``B_j ~ LogNormal(0, 0.06)``: the step's own factor, shared by every worker (its batch, the
  network at that moment); the per-step median divides it out of the slowdown;
* ``M_i ~ LogNormal(0, 0.03)``: no two machines are quite identical;
* ``E_ij ~ LogNormal(0, 0.1)``: the noise of one mini-batch, independent;
* ``a_i(j)``: the planted slowdown of worker i at step j, which is what each example is about.

Each example draws from its own ``numpy.random.default_rng(SeedSequence(seed))`` in a fixed order,
so ``python -m distsgd.examples [DIR]`` rewrites the shipped files byte for byte.

>>> sorted(EXAMPLES)
['emerging-straggler', 'heterogeneous', 'persistent-slow']
>>> EXAMPLES["emerging-straggler"].emerging
{'gpu-04': 500, 'gpu-09': 500}
>>> example_trace("persistent-slow").stragglers()
['gpu-06']
"""

from __future__ import annotations

import functools
import io
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from .params import ParameterError
from .traces import Trace, load_trace

__all__ = ["Example", "EXAMPLES", "example_times", "example_csv", "example_trace", "write_examples", "main",
           "persistent_slow", "emerging_straggler", "heterogeneous", "DIRECTORY", "BASE_TIME"]

#: where the example files live inside the package
DIRECTORY = "data/traces"
#: the typical step time of a worker at full speed, in seconds
BASE_TIME = 0.5
STEP_SIGMA, MACHINE_SIGMA, NOISE_SIGMA = 0.06, 0.03, 0.1


def _ids(m: int) -> list[str]:
    return [f"gpu-{i + 1:02d}" for i in range(m)]


def _cluster(rng: np.random.Generator, factor: np.ndarray) -> np.ndarray:
    """``BASE_TIME · B_j · M_i · factor[i, j] · E_ij`` (m × S), drawn in the order B, M, E."""
    m, steps = factor.shape
    step = rng.lognormal(0.0, STEP_SIGMA, size=(steps,))
    machine = rng.lognormal(0.0, MACHINE_SIGMA, size=(m,))
    noise = rng.lognormal(0.0, NOISE_SIGMA, size=(m, steps))
    return BASE_TIME * step[None, :] * machine[:, None] * factor * noise


def persistent_slow(rng: np.random.Generator) -> np.ndarray:
    """8 workers × 400 steps; gpu-06 (row 5) is 1.8× slower at every step (an old or
    throttled machine), the others run at full speed."""
    factor = np.ones((8, 400))
    factor[5] = 1.8
    return _cluster(rng, factor)


def emerging_straggler(rng: np.random.Generator) -> np.ndarray:
    """10 workers × 600 steps; gpu-04 and gpu-09 (rows 3 and 8) run at full speed until step
    499 and 5× slower from step 500 to the end (the last sixth): a machine that turns slow late
    in a run (a failing disk, a noisy neighbour) and stays slow."""
    factor = np.ones((10, 600))
    factor[[3, 8], 500:] = 5.0
    return _cluster(rng, factor)


#: the older generation's machines in :func:`heterogeneous` (rows 5–9), each its own speed
OLD_GENERATION = (1.45, 1.55, 1.65, 1.8, 1.95)


def heterogeneous(rng: np.random.Generator) -> np.ndarray:
    """10 workers × 500 steps of two hardware generations: gpu-01 … gpu-05 at 0.45 (new), gpu-06
    … gpu-10 at 1.45–1.95 (old, :data:`OLD_GENERATION`), so each step's median falls between the
    two and the workers' slowdowns come out at 0.45–0.5 and 1.5–1.95; on top, 2% of all mini-batches (any
    worker, any step, independently) take 2–4× (uniform) longer: a garbage collection, a
    preempted core.  The spikes are drawn after the model's B, M, E."""
    factor = np.repeat(np.array([0.45] * 5 + list(OLD_GENERATION))[:, None], 500, axis=1)
    times = _cluster(rng, factor)
    spike = rng.random(times.shape) < 0.02
    return np.where(spike, times * rng.uniform(2.0, 4.0, size=times.shape), times)


@dataclass(frozen=True)
class Example:
    """One bundled trace and its truth: ``persistent`` the workers slow over the whole run (a
    slowdown ≥ 1.2, DESIGN §7), ``emerging`` each worker that turns slow mid-run → the first step
    at which it is slow (the step label is ``str(step)``)."""

    name: str
    title: str
    description: str
    seed: int
    workers: int
    steps: int
    generate: Callable[[np.random.Generator], np.ndarray]
    persistent: tuple[str, ...] = ()
    emerging: Mapping[str, int] = field(default_factory=dict)

    @property
    def file(self) -> str:
        """The file's path inside the package."""
        return f"{DIRECTORY}/{self.name}.csv"

    @property
    def stragglers(self) -> list[str]:
        """Every planted straggler, persistent or emerging, in worker order."""
        return [w for w in _ids(self.workers) if w in self.persistent or w in self.emerging]


EXAMPLES: dict[str, Example] = {e.name: e for e in (
    Example("persistent-slow", "One persistent slow machine",
            "Eight workers of which gpu-06 takes about 1.8 times its step's median at every step: the summary "
            "flags it as a persistent straggler, it is the last to finish every step, so sync always waits "
            "for it and K-sync with K = 7 never does.",
            seed=20_240_701, workers=8, steps=400, generate=persistent_slow, persistent=("gpu-06",)),
    Example("emerging-straggler", "A straggler emerges mid-run",
            "Ten workers of which gpu-04 and gpu-09 run normally for five sixths of the run and about five "
            "times slower from step 500: their slowdown over the whole run is about 1, the summary's "
            "windows flag them from about step 470 (a window starts before the change), and a sync "
            "iteration of the last sixth takes more than four times as long as one before it.",
            seed=20_240_702, workers=10, steps=600, generate=emerging_straggler,
            emerging={"gpu-04": 500, "gpu-09": 500}),
    Example("heterogeneous", "A heterogeneous cluster",
            "Ten workers of two hardware generations, five at about 0.45 times the step median and five at "
            "1.5–2 times, with occasional random slow steps: the old generation is flagged as persistent "
            "stragglers, and K-sync with K = 5, which waits for the new generation only, runs about four "
            "times faster than sync.",
            seed=20_240_703, workers=10, steps=500, generate=heterogeneous,
            persistent=("gpu-06", "gpu-07", "gpu-08", "gpu-09", "gpu-10")),
)}


def _example(name: str) -> Example:
    if name not in EXAMPLES:
        raise ParameterError("example", "one_of_bare", choices=", ".join(EXAMPLES), value=name)
    return EXAMPLES[name]


def example_times(name: str) -> np.ndarray:
    """The example's m × S times in seconds as generated (before rounding to the file's digits)."""
    ex = _example(name)
    times = ex.generate(np.random.default_rng(np.random.SeedSequence(ex.seed)))
    if times.shape != (ex.workers, ex.steps) or not ((times >= 0.1) & (times < 100)).all():
        raise AssertionError(f"{name}: the generator broke its contract (shape {times.shape}, "
                             f"times in [{times.min():g}, {times.max():g}])")
    return times


def example_csv(name: str) -> bytes:
    """The example's file: ``worker,step,duration``, one row per (worker, step), by step then
    worker, durations with 4 decimals, ``\\n`` line ends."""
    times, ids = example_times(name), _ids(_example(name).workers)
    out = io.StringIO()
    out.write("worker,step,duration\n")
    for j in range(times.shape[1]):
        for i, w in enumerate(ids):
            out.write(f"{w},{j},{times[i, j]:.4f}\n")
    return out.getvalue().encode("ascii")


@functools.lru_cache(maxsize=16)
def example_trace(name: str) -> Trace:
    """The shipped example file, loaded with :func:`~distsgd.traces.load_trace` (shown as
    ``NAME.csv``); an unknown name is a ParameterError naming ``example``.  Loaded once: a Trace
    is immutable (read-only arrays), and the cluster page shows one at every rerun."""
    ex = _example(name)
    data = resources.files(__package__ or "distsgd").joinpath(ex.file).read_bytes()
    return load_trace(data, name=f"{ex.name}.csv")


def write_examples(directory: str | Path | None = None) -> list[Path]:
    """Write every example's file into ``directory`` (default: the package's own
    ``data/traces``, which must be a real directory: a source tree or an editable install)."""
    target = Path(directory) if directory is not None else Path(__file__).resolve().parent / DIRECTORY
    target.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in EXAMPLES:
        path = target / f"{name}.csv"
        path.write_bytes(example_csv(name))
        paths.append(path)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m distsgd.examples [DIR]``: regenerate the example files (into the package by default)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) > 1 or (args and args[0].startswith("-")):
        print("usage: python -m distsgd.examples [DIR]   (default: the package's data/traces)", file=sys.stderr)
        return 2
    for path in write_examples(args[0] if args else None):
        print(f"{path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

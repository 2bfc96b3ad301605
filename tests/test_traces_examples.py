"""distsgd.examples: the bundled synthetic traces load, have the documented shape, the per-worker
summary finds exactly the stragglers that were planted (DESIGN §7), the one-sentence claims of
each description hold, and the shipped files are what the generator writes, byte for byte."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

from distsgd import make_cluster, make_scheme
from distsgd.examples import EXAMPLES, example_csv, example_times, example_trace, main, write_examples
from distsgd.montecarlo import simulate_timeline
from distsgd.params import ParameterError

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "distsgd" / "data" / "traces"
NAMES = sorted(EXAMPLES)
LINE = re.compile(r"(gpu-\d\d),(0|[1-9]\d*),(\d+\.\d{4})")


@pytest.mark.parametrize("name", NAMES)
def test_the_file_has_the_documented_shape(name):
    ex = EXAMPLES[name]
    path = ROOT / "distsgd" / ex.file
    assert path.parent == SHIPPED and path.name == f"{name}.csv"
    assert 0 < path.stat().st_size < 200_000
    assert ex.workers <= 16 and ex.steps <= 600
    lines = path.read_text(encoding="ascii").split("\n")
    assert lines[0] == "worker,step,duration" and lines[-1] == ""  # one row per (worker, step), "\n" ends
    rows = [LINE.fullmatch(line) for line in lines[1:-1]]
    assert all(rows) and len(rows) == ex.workers * ex.steps
    ids = [f"gpu-{i + 1:02d}" for i in range(ex.workers)]
    for k, row in enumerate(rows):  # by step, then worker
        assert row[1] == ids[k % ex.workers] and int(row[2]) == k // ex.workers
        digits = len(row[3].replace(".", "").lstrip("0"))
        assert 4 <= digits <= 6, row[0]


@pytest.mark.parametrize("name", NAMES)
def test_the_example_loads_with_load_trace(name):
    ex, t = EXAMPLES[name], example_trace(name)
    assert (t.name, t.layout, t.format) == (f"{name}.csv", "long", "csv")
    assert t.workers == tuple(f"gpu-{i + 1:02d}" for i in range(ex.workers))
    assert t.steps == t.complete_steps == tuple(str(j) for j in range(ex.steps))
    assert t.times.shape == (ex.workers, ex.steps)
    assert (t.duplicates, t.missing, t.dropped_steps) == (0, 0, 0)
    # the file is the model's times to 4 decimals
    np.testing.assert_allclose(t.times, example_times(name), rtol=0, atol=5.0001e-5)


@pytest.mark.parametrize("name", NAMES)
def test_the_summary_flags_exactly_the_planted_stragglers(name):
    ex, t = EXAMPLES[name], example_trace(name)
    rows = {r["worker"]: r for r in t.summary()}
    assert t.stragglers() == ex.stragglers and sorted(ex.stragglers) == sorted([*ex.persistent, *ex.emerging])
    for w, row in rows.items():
        if w in ex.persistent:
            assert row["straggler"] and row["from_step"] is None and row["slowdown"] >= 1.2, row
        elif w in ex.emerging:
            assert row["straggler"] and row["slowdown"] < 1.2 and row["from_step"] is not None, row
            assert abs(int(row["from_step"]) - ex.emerging[w]) <= 0.1 * ex.steps, row
        else:
            assert not row["straggler"] and row["slowdown"] < 1.2, row


def test_the_truth_of_each_example():
    """What the docstrings and descriptions say was planted, independently of the summary."""
    assert EXAMPLES["persistent-slow"].persistent == ("gpu-06",) and not EXAMPLES["persistent-slow"].emerging
    assert EXAMPLES["emerging-straggler"].emerging == {"gpu-04": 500, "gpu-09": 500}
    assert EXAMPLES["emerging-straggler"].steps * 5 // 6 == 500  # the last sixth
    assert EXAMPLES["heterogeneous"].persistent == tuple(f"gpu-{i:02d}" for i in range(6, 11))
    for ex in EXAMPLES.values():
        t = example_trace(ex.name)
        ratio = t.times / np.median(t.times, axis=0)
        slow = [i for i, w in enumerate(t.workers) if w in ex.persistent]
        normal = [i for i, w in enumerate(t.workers) if w not in ex.persistent and w not in ex.emerging]
        for w, start in ex.emerging.items():
            i = t.workers.index(w)  # ~1× before the start, ~5× from it
            assert 0.9 < np.median(ratio[i, :start]) < 1.1 and 4.5 < np.median(ratio[i, start:]) < 5.5
            assert np.median(ratio[i, start - 10:start]) < 1.2 <= np.median(ratio[i, start:start + 10])
        if ex.name != "heterogeneous":
            assert np.all(np.abs(np.median(ratio[normal], axis=1) - 1) < 0.1)
            assert np.all(np.abs(np.median(ratio[slow], axis=1) - 1.8) < 0.1)


def test_the_descriptions_claims():
    # persistent-slow: gpu-06 is the last to finish every step; K-sync with K = 7 never waits for it
    t = example_trace("persistent-slow")
    assert (t.times.argmax(axis=0) == t.workers.index("gpu-06")).all()
    tl = simulate_timeline(make_scheme("k-sync", 8, K=7), make_cluster(trace=t), 60, seed=0)
    mine = tl.outcome[tl.worker == 5]
    assert (mine == "cancelled").sum() == 60 and "used" not in mine
    # emerging-straggler: a sync iteration of the last sixth takes more than 4× one before it
    t = example_trace("emerging-straggler")
    longest = t.times.max(axis=0)
    assert longest[500:].mean() > 4 * longest[:500].mean()
    # heterogeneous: ~0.45× and 1.5–2× the step median; K-sync with K = 5 about four times faster than sync
    t = example_trace("heterogeneous")
    slow = [r["slowdown"] for r in t.summary()]
    assert all(0.4 < s < 0.5 for s in slow[:5]) and all(1.4 < s < 2.0 for s in slow[5:])
    ordered = np.sort(t.times, axis=0)
    assert 3.5 < ordered[-1].mean() / ordered[4].mean() < 4.5
    spikes = t.times > 1.5 * np.median(t.times, axis=1, keepdims=True)
    assert 0.01 < spikes[:5].mean() < 0.03  # the occasional random slow steps of the fast generation


def test_regeneration_is_byte_identical(tmp_path, capsys):
    paths = write_examples(tmp_path / "a")
    assert sorted(p.name for p in paths) == [f"{n}.csv" for n in NAMES]
    for p in paths:
        assert p.read_bytes() == (SHIPPED / p.name).read_bytes(), p.name
        assert p.read_bytes() == example_csv(p.stem)
    assert main([str(tmp_path / "b")]) == 0
    assert "persistent-slow.csv" in capsys.readouterr().out
    assert all((tmp_path / "b" / p.name).read_bytes() == p.read_bytes() for p in paths)
    assert sorted(p.name for p in SHIPPED.iterdir()) == [f"{n}.csv" for n in NAMES]  # nothing else shipped


def test_bad_names_and_arguments(capsys):
    with pytest.raises(ParameterError) as info:
        example_trace("nope")
    assert info.value.parameter == "example" and "persistent-slow" in str(info.value)
    assert main(["--help"]) == 2 and "usage" in capsys.readouterr().err
    assert main(["a", "b"]) == 2


def test_the_files_are_package_data():
    """A wheel (``pip install .``) carries the example files: they are declared package data."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = conf["tool"]["setuptools"]["package-data"]["distsgd"]
    assert any(sorted((ROOT / "distsgd").glob(g)) == sorted(SHIPPED.glob("*.csv")) for g in globs)

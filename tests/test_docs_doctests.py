"""The ``>>>`` examples in the docstrings of the ``distsgd`` package run, and say what they show.

One case per module of the package (found with :func:`pkgutil.walk_packages`, so a new module
is picked up without editing this file), plus a floor on the number of examples package-wide,
so that examples are not lost quietly.  The modules under ``distsgd.ui`` are included: they
import streamlit, but importing them needs no running app.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import distsgd

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

#: examples in the package's docstrings, at least (raise it when adding examples)
MIN_EXAMPLES = 31


def module_names() -> list[str]:
    """``distsgd`` and every module below it, except ``__main__`` (importing it runs the CLI)."""
    found = [info.name for info in pkgutil.walk_packages(distsgd.__path__, prefix="distsgd.")]
    return ["distsgd"] + sorted(name for name in found if name.rpartition(".")[2] != "__main__")


def examples(name: str) -> list[doctest.DocTest]:
    """The docstring tests defined in the module (not those of what it imports)."""
    module = importlib.import_module(name)
    return [t for t in doctest.DocTestFinder(exclude_empty=True).find(module) if t.examples]


@pytest.mark.parametrize("name", module_names())
def test_docstring_examples(name: str) -> None:
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    failed = 0
    for test in examples(name):
        failed += runner.run(test, out=report.append).failed
    assert failed == 0, "".join(report)


def test_the_package_keeps_its_examples() -> None:
    count = {name: sum(len(t.examples) for t in examples(name)) for name in module_names()}
    total = sum(count.values())
    shown = ", ".join(f"{name}: {n}" for name, n in count.items() if n)
    assert total >= MIN_EXAMPLES, f"{total} docstring examples, expected at least {MIN_EXAMPLES} ({shown})"

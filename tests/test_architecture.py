"""The layout DESIGN §1 and docs/DESIGN.md promise, checked on the source: no import cycle, no
deferred import hiding one, the library never imports streamlit, one concept per (short) module,
and no ``isinstance`` ladder on scheme classes outside the registry."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "distsgd"
MODULES = sorted(PKG.rglob("*.py"))
#: a module this long is doing more than one thing (DESIGN §1: one concept per module)
MAX_LINES = 500


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported distsgd module, whether the import is inside a function) for every import."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = _name(path)
    package = me if path.name == "__init__.py" else me.rsplit(".", 1)[0]
    out: list[tuple[str, bool]] = []

    def visit(node: ast.AST, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                out.extend((a.name, inner) for a in child.names if a.name.startswith("distsgd"))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.rsplit(".", child.level - 1)[0] if child.level > 1 else package
                    mod = f"{base}.{child.module}" if child.module else base
                else:
                    mod = child.module or ""
                if mod.startswith("distsgd"):
                    known = {_name(p) for p in MODULES}
                    for a in child.names:  # `from . import limits` imports a module
                        sub = f"{mod}.{a.name}"
                        out.append((sub if sub in known else mod, inner))
            visit(child, inner)

    visit(tree, False)
    return out


GRAPH = {_name(p): _imports(p) for p in MODULES}


def test_no_import_cycle_between_modules():
    """A module's imports (and the packages whose __init__ they run) form a DAG."""
    deps = {}
    for mod, imps in GRAPH.items():
        targets = set()
        for target, _ in imps:
            # importing a.b.c runs a/__init__ and a/b/__init__ first
            parts = target.split(".")
            targets.update(".".join(parts[:i]) for i in range(2, len(parts) + 1))
        targets.discard(mod)
        # a package's own __init__ importing its submodules is not a cycle with them
        deps[mod] = {t for t in targets if not t.startswith(mod + ".") and not mod.startswith(t + ".")}
    graphlib.TopologicalSorter(deps).prepare()  # raises CycleError naming the cycle


def test_no_deferred_imports_in_the_library():
    nested = [(m, t) for m, imps in GRAPH.items() for t, inner in imps if inner]
    assert nested == []


def test_the_library_never_imports_streamlit_and_only_ui_draws():
    for path in MODULES:
        text = path.read_text(encoding="utf-8")
        if "distsgd/ui/" in path.as_posix():
            continue
        assert "import streamlit" not in text, path
        if path.name != "plots.py":
            assert "import plotly" not in text and "from plotly" not in text, path


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_modules_are_short(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


def test_no_isinstance_ladders_on_scheme_classes():
    from distsgd.schemes import SCHEMES
    names = {cls.__name__ for cls in SCHEMES.values()} | {"Scheme"}
    hits = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance" and len(node.args) == 2:
                arg = node.args[1]
                used = {e.id for e in (arg.elts if isinstance(arg, ast.Tuple) else [arg]) if isinstance(e, ast.Name)}
                if used & names:
                    hits.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    # the one justified use: check_scheme validates an argument of the public API
    assert hits == ["distsgd/schemes/__init__.py:" + hits[0].rsplit(":", 1)[1]] and len(hits) == 1, hits

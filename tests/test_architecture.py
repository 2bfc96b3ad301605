"""The layout DESIGN §1 and docs/DESIGN.md promise, checked on the source: no import cycle, no
deferred import hiding one, the library never imports streamlit, one concept per (short) module,
and no ``isinstance`` ladder on scheme classes outside the registry."""

from __future__ import annotations

import ast
import functools
import graphlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "distsgd"
#: the modules, and the package's stub (its lazily loaded names are imported there)
MODULES = sorted([*PKG.rglob("*.py"), *PKG.rglob("*.pyi")])
#: a module this long is doing more than one thing (DESIGN §1: one concept per module)
MAX_LINES = 500


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported distsgd module, whether the import is inside a function) for every import."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = _name(path)
    package = me if path.stem == "__init__" else me.rsplit(".", 1)[0]
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
                    known = _known()
                    for a in child.names:  # `from . import limits` imports a module
                        sub = f"{mod}.{a.name}"
                        out.append((sub if sub in known else mod, inner))
            visit(child, inner)

    visit(tree, False)
    return out


@functools.cache
def _known() -> frozenset[str]:
    return frozenset(_name(p) for p in MODULES)


@functools.cache
def graph() -> dict[str, list[tuple[str, bool]]]:
    """Every library module's imports, its stub's included (parsed when a test first asks, not at collection)."""
    out: dict[str, list[tuple[str, bool]]] = {}
    for p in MODULES:
        out.setdefault(_name(p), []).extend(_imports(p))
    return out


def test_no_import_cycle_between_modules():
    """A module's imports (and the packages whose __init__ they run) form a DAG."""
    deps = {}
    for mod, imps in graph().items():
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
    nested = [(m, t) for m, imps in graph().items() for t, inner in imps if inner]
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


# -- the map and the layers of docs/DESIGN.md §1 ---------------------------------------------------

DESIGN = ROOT / "docs" / "DESIGN.md"
#: files outside distsgd/ that the tree of §1.1 must name as well
OTHER_FILES = sorted([ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "benchmarks").glob("*.py"),
                      *(ROOT / "deploy").iterdir()])
_ENTRY = re.compile(r"^[\w.\-/]+$")


def _design_section(number: str) -> str:
    """The text of ``## number. …`` in docs/DESIGN.md, up to the next ``## `` heading."""
    text = DESIGN.read_text(encoding="utf-8")
    m = re.search(rf"^## {re.escape(number)}\. .*?(?=^## |\Z)", text, flags=re.M | re.S)
    assert m, f"docs/DESIGN.md has no section {number}"
    return m.group(0)


def _subsection(section: str, number: str) -> str:
    m = re.search(rf"^### {re.escape(number)} .*?(?=^### |\Z)", section, flags=re.M | re.S)
    assert m, f"docs/DESIGN.md has no subsection {number}"
    return m.group(0)


def tree_paths(text: str) -> set[str]:
    """The paths a tree in fenced code names: one entry per line (a name, then its description),
    nested by two spaces under the directory entries (``name/``) above it; a line indented more
    than two past the last entry continues that entry's description."""
    paths: set[str] = set()
    for block in re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.M | re.S):
        stack: list[tuple[int, str]] = []
        last = -2
        for line in block.splitlines():
            if not line.strip():
                continue
            indent = len(line) - len(line.lstrip(" "))
            name = line.split()[0]
            if indent > last + 2 or not _ENTRY.match(name):
                continue  # a description's continuation
            while stack and stack[-1][0] >= indent:
                stack.pop()
            path = (stack[-1][1] if stack else "") + name
            paths.add(path)
            if name.endswith("/"):
                stack.append((indent, path))
            last = indent
    return paths


def test_tree_paths_reads_nesting_and_skips_descriptions():
    tree = ("```text\napp.py        entry\npkg/          a package\n  a.py        module a, whose\n"
            "                description says b.py/\n  sub/        sub-package\n    c.py      c\n"
            "  d.py        d\ntop.md        e\n```\n")
    assert tree_paths(tree) == {"app.py", "pkg/", "pkg/a.py", "pkg/sub/", "pkg/sub/c.py", "pkg/d.py", "top.md"}


def _map() -> set[str]:
    return tree_paths(_subsection(_design_section("1"), "1.1"))


def _listed(path: Path) -> str:
    """How the tree names a file: a package's ``__init__.py`` by its directory (``delays/``)."""
    rel = path.relative_to(ROOT).as_posix()
    return rel[: -len("__init__.py")] if path.name == "__init__.py" else rel


def test_every_module_is_in_the_layout_map():
    """Every module of distsgd/ and pages/ (and app.py, benchmarks/, deploy/) is in the tree of
    docs/DESIGN.md §1.1, under its own directory."""
    tree = _map()
    missing = [_listed(p) for p in MODULES + OTHER_FILES if _listed(p) not in tree]
    assert missing == [], f"add these to the tree of docs/DESIGN.md §1.1: {missing}"


def test_the_layout_map_names_only_files_that_exist():
    ghosts = sorted(p for p in _map() if p.endswith(".py") and not (ROOT / p).is_file())
    assert ghosts == [], f"the tree of docs/DESIGN.md §1.1 names files that do not exist: {ghosts}"


def test_every_test_file_is_in_the_table_of_test_areas():
    """Every file of tests/ is named (relative to tests/, in backticks) by the table of §1.3."""
    named = set(re.findall(r"`([^`\s]+)`", _subsection(_design_section("1"), "1.3")))
    files = [p.relative_to(ROOT / "tests").as_posix() for p in sorted((ROOT / "tests").rglob("*.py"))
             if p.name != "__init__.py" and "__pycache__" not in p.parts]
    assert [f for f in files if f not in named] == []


def layers() -> list[tuple[str, set[str]]]:
    """The numbered layers of docs/DESIGN.md §1.2, lowest first: (name, the modules named in
    backticks, relative to distsgd; the package's own ``__init__`` as "")."""
    text = _subsection(_design_section("1"), "1.2")
    out = []
    for m in re.finditer(r"^\d+\. \*\*(.+?)\*\*(.*?)(?=^\d+\. |^\S|\Z)", text, flags=re.M | re.S):
        names = {"" if n == "__init__" else n for n in re.findall(r"`([^`]+)`", m.group(2))
                 if "/" not in n and not n.endswith(".py")}
        out.append((m.group(1), names))
    return out


def _layer(module: str, table: list[tuple[str, set[str]]]) -> int | None:
    """The index of the layer whose most specific entry covers ``module`` (distsgd.a.b is covered
    by "a.b" and by "a"); None if no layer names it."""
    rel = module.removeprefix("distsgd").removeprefix(".")
    best: tuple[int, int] | None = None
    for i, (_, names) in enumerate(table):
        for n in names:
            if rel == n or (n and rel.startswith(n + ".")):
                if best is None or len(n) > best[1]:
                    best = (i, len(n))
    return None if best is None else best[0]


def test_every_module_has_a_layer():
    table = layers()
    assert len(table) >= 8, table
    assert [m for m in graph() if _layer(m, table) is None] == []


def test_imports_go_down_the_layers():
    """A module imports from its own layer of docs/DESIGN.md §1.2 or from a lower one."""
    table = layers()
    up = []
    for mod, imps in graph().items():
        me = _layer(mod, table)
        for target, _ in imps:
            there = _layer(target, table)
            if me is not None and there is not None and there > me:
                up.append(f"{mod} ({table[me][0]}) imports {target} ({table[there][0]})")
    assert sorted(set(up)) == []


def test_no_page_relies_on_streamlit_magic():
    """.streamlit/config.toml turns Streamlit's magic off: a bare expression in app.py or a page
    (magic would have drawn it with st.write) would silently vanish.  Docstrings are the only
    bare expressions allowed (magic never drew them)."""
    config = (ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8")
    assert re.search(r"(?m)^magicEnabled\s*=\s*false", config), "runner.magicEnabled is not off"
    found = []
    for path in [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(n.body[0]) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                      and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)
                      and isinstance(n.body[0].value.value, str)}
        found += [f"{path.relative_to(ROOT)}:{n.lineno}" for n in ast.walk(tree)
                  if isinstance(n, ast.Expr) and id(n) not in docstrings
                  and not isinstance(n.value, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom))]
    assert found == [], f"bare expressions (drawn by magic, now not at all): {found}"

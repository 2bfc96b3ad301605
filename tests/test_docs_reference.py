"""Every citation of the design reference resolves (DESIGN §1: the repository explains itself).

Code, tests, the README and the docs cite the design reference as DESIGN followed by the section
sign and a number (a section), a dotted number (a subsection such as 2.3), or a number and a
quoted subsection title.  Each must name a heading of ``docs/*.md``: ``## 7. …`` for a section,
``### 2.3 …`` for a subsection, and for a quoted title a heading of that section (or the
section's own) with exactly that title.  Every section sign in the files scanned is such a
citation, except one that follows a paper's year, as in "Dutta et al., AISTATS 2018" and then
the sign (a section of the paper).  Section numbers are unique across ``docs/``.

Apart from the citation on its first line, this file writes the section sign as ``\\u00a7``,
so that its own text cites nothing else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SIGN = "\u00a7"

#: the files whose citations must resolve (text files only; generated data is not scanned)
PATTERNS = ("distsgd/**/*.py", "tests/**/*.py", "pages/*.py", "app.py", "benchmarks/*.py",
            "benchmarks/results/*.md", "README.md", "docs/**/*.md", "examples/*.toml",
            "requirements*.txt", "Makefile", "pyproject.toml", "deploy/*")

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*$")
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+(.+)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_CITE = re.compile(SIGN + r"\s?(\d+(?:\.\d+)*)?")
#: a paper's own section: the sign right after a year and a comma ("AISTATS 2018, ")
_EXTERNAL = re.compile(r"(?:19|20)\d\d[a-z]?,\s*$")
#: a quoted subsection title right after the number, after a space, a comma, a colon or "("
_TITLE = re.compile(r'\s*[,:]?\s*\(?\s*"([^"]{1,300})"')


@dataclass(frozen=True)
class Heading:
    path: str
    line: int
    number: str | None
    title: str


@dataclass(frozen=True)
class Citation:
    path: str
    line: int
    number: str | None
    title: str | None


def _norm(text: str) -> str:
    """Whitespace collapsed, a comment's ``#`` at a line break dropped, case folded."""
    return " ".join(re.sub(r"\n\s*#+\s*", " ", text).split()).casefold()


def headings(text: str, path: str = "") -> list[Heading]:
    """The Markdown headings of ``text`` outside fenced code, with their section numbers."""
    out: list[Heading] = []
    fenced = False
    for i, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        h = _HEADING.match(line)
        if fenced or not h:
            continue
        n = _NUMBERED.match(h.group(2))
        out.append(Heading(path, i, n.group(1) if n else None, n.group(2) if n else h.group(2)))
    return out


def citations(text: str, path: str = "") -> list[Citation]:
    """Every citation of the design reference in ``text`` (see the module's docstring)."""
    out: list[Citation] = []
    for m in _CITE.finditer(text):
        if _EXTERNAL.search(text[max(0, m.start() - 40):m.start()]):
            continue
        t = _TITLE.match(text, m.end()) if m.group(1) else None
        out.append(Citation(path, text.count("\n", 0, m.start()) + 1, m.group(1), t.group(1) if t else None))
    return out


def resolves(c: Citation, heads: list[Heading]) -> bool:
    """A number names a numbered heading; a title, a heading of that section with that title."""
    if c.number is None:
        return False
    if c.title is None:
        return any(h.number == c.number for h in heads)
    want = _norm(c.title)
    return any(h.number is not None and (h.number == c.number or h.number.startswith(c.number + "."))
               and _norm(h.title) == want for h in heads)


def _doc_headings() -> list[Heading]:
    return [h for p in sorted(DOCS.rglob("*.md"))
            for h in headings(p.read_text(encoding="utf-8"), p.relative_to(ROOT).as_posix())]


def _sources() -> list[Path]:
    files = {p for pattern in PATTERNS for p in ROOT.glob(pattern)
             if p.is_file() and "__pycache__" not in p.parts}
    return sorted(files)


def all_citations() -> list[Citation]:
    return [c for p in _sources()
            for c in citations(p.read_text(encoding="utf-8"), p.relative_to(ROOT).as_posix())]


def _show(c: Citation) -> str:
    cited = SIGN + (c.number or "?") + (f' "{c.title}"' if c.title else "")
    return f"{c.path}:{c.line}: {cited}"


def test_every_citation_resolves_to_a_heading_of_the_docs():
    heads = _doc_headings()
    found = all_citations()
    dangling = [_show(c) for c in found if not resolves(c, heads)]
    head = f"{len(dangling)} of {len(found)} citations name no heading of docs/:\n"
    assert dangling == [], head + "\n".join(dangling)


def test_the_scan_finds_the_citations():
    """The scan is not silently empty: the code cites the reference well over a hundred times,
    in the library, the tests and the README."""
    found = all_citations()
    assert len(found) >= 100
    assert {c.path.split("/")[0] for c in found} >= {"distsgd", "tests", "README.md", "docs"}


def test_section_numbers_are_unique_across_the_docs():
    numbered: dict[str, list[str]] = {}
    for h in _doc_headings():
        if h.number is not None:
            numbered.setdefault(h.number, []).append(f"{h.path}:{h.line}")
    assert {n: where for n, where in numbered.items() if len(where) > 1} == {}
    # the sections the code is organised around (docs/DESIGN.md, first lines)
    assert {str(n) for n in (*range(1, 12), 15)} <= set(numbered)


def test_the_checker_finds_what_dangles():
    """The parser on a made-up reference and made-up citations (no section sign in this file)."""
    doc = ("# Title\n## 2. The model\n### 2.3 Analytic runtime per iteration\n```text\n## 9. not a heading\n"
           "```\n## 7. Clusters: who is slow, and for how long\n")
    heads = headings(doc)
    assert [(h.number, h.title) for h in heads] == [
        (None, "Title"), ("2", "The model"), ("2.3", "Analytic runtime per iteration"),
        ("7", "Clusters: who is slow, and for how long")]
    text = ("DESIGN \u00a72 and \u00a77; DESIGN \u00a72.3; DESIGN \u00a72 \"Analytic runtime per\n"
            "    # iteration\"; (DESIGN \u00a77, \"Clusters: who is slow, and for how long\").\n"
            "DESIGN \u00a799; \u00a72.4; DESIGN \u00a72 (\"No such part\"); \u00a79 \"The model\"; bare \u00a7 sign.\n"
            "Dutta et al., AISTATS 2018, \u00a74 and App. B\n")
    found = citations(text)
    assert [(c.line, c.number, c.title is not None) for c in found] == [
        (1, "2", False), (1, "7", False), (1, "2.3", False), (1, "2", True), (2, "7", True),
        (3, "99", False), (3, "2.4", False), (3, "2", True), (3, "9", True), (3, None, False)]
    assert [resolves(c, heads) for c in found] == [True] * 5 + [False] * 5

"""Every page in Chinese under AppTest (issue 12): no English left in titles, headings, labels,
captions, notices, table headers and cells, buttons or chart texts; the language comes from the URL, stays
across pages and is written back to the URL; English pages have no Chinese.

What may stay in Latin letters is listed in ALLOWED (names of schemes and laws, symbols, units,
file formats) — a word outside it is a message someone forgot to mark.
"""

from __future__ import annotations

import json
import re

import pytest

from apptest_support import navigation_only, open_app
from test_app_pages import assert_clean

PAGES = ["pages/runtime.py", "pages/error.py", "pages/delays.py", "pages/timeline.py", "pages/local_sgd.py",
         "pages/tradeoffs.py", "pages/cluster.py", "pages/sweep.py"]
SETTINGS = {
    "defaults": {},
    "clusters": {"stragglers": "static", "schemes": ["sync", "k-sync", "async", "k-batch-sync", "local-sgd"],
                 "rt_view": "m", "axis": "m"},
    "markov": {"stragglers": "markov", "delay": "pareto", "axis": "H", "p0_mode": "input"},
}
# names the Chinese text keeps (DESIGN §10: the names of schemes and laws stay as they are)
ALLOWED = {
    # schemes and their parts
    "sync", "async", "ksync", "kasync", "batch", "local", "sgd", "k-sync", "k-async", "k-batch-sync",
    "k-batch-async", "local-sgd", "SGD", "d-psgd", "ad-psgd", "psgd",
    # the graphs' spec names (a decentralised scheme's label names its graph)
    "ring", "torus", "hypercube", "complete", "star", "random-regular", "edges",
    # laws and their spec names
    "exp", "exponential", "shifted", "shifted-exp", "pareto", "weibull", "lognormal", "normal", "uniform", "trace",
    "rate", "shift", "scale", "shape", "alpha", "sigma", "mu", "xm", "low", "high", "mean", "std", "loc",
    "Exp", "Pareto", "Weibull", "LogNormal", "Normal", "Uniform", "Empirical",
    # formats, tools, statistics, units, the product
    "CSV", "JSON", "TSV", "Parquet", "Perfetto", "chrome", "tracing", "AIC", "KS", "NLU", "MLE", "scipy",
    "distsgd", "Gbit", "ms", "max", "min", "log", "inf", "nan", "id", "ui", "perfetto", "dev", "GPU", "CPU",
    "gpu", "Dask",
    # authors' names (a citation, Richardson extrapolation); the adaptive schedules' names (DESIGN §13);
    # the design document a method cites (DESIGN §7); the fast Fourier transform
    "Dutta", "Richardson", "AdaSync", "AdaComm", "DESIGN", "FFT",
}
#: table columns whose cells are still the library's English, knowingly (none now)
ENGLISH_COLUMNS: set[str] = set()
WORD = re.compile(r"[A-Za-z](?:[A-Za-z]|-(?=[A-Za-z]))+")  # a word of 2+ Latin letters (inner hyphens)
TAG = re.compile(r"<[^<>]*>|`[^`]*`")  # HTML in chart texts (<sub>, <br>); code (a command, a column name)
BILINGUAL = ("Language · 语言",)  # the language selector's label is in both on purpose
LATEX = re.compile(r"\$[^$]*\$|\\\(.*?\\\)|\\[A-Za-z]+(\{[^}]*\})*")
# file names, addresses, specs like exp(rate=1), and Python names like scipy.optimize
FILE = re.compile(r"\S+\.(csv|tsv|parquet|json|png)\b|https?://\S+|[\w-]+\([^()]*\)|\b[a-z_]+(\.[a-z_]+)+\b")


def _texts(at) -> list[tuple[str, str]]:
    """(where, text) of everything a person reads on the page, sidebar included."""
    out: list[tuple[str, str]] = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning", "error", "success"):
        out += [(kind, e.value) for e in at.get(kind) if isinstance(e.value, str)]
    for kind in ("slider", "select_slider", "selectbox", "radio", "number_input", "multiselect", "checkbox",
                 "button", "text_input", "toggle"):
        out += [(f"{kind} label", e.label) for e in at.get(kind) if getattr(e, "label", None)]
        out += [(f"{kind} help", e.help) for e in at.get(kind) if getattr(e, "help", None)]
    out += [("expander", e.label) for e in at.get("expandable") if getattr(e, "label", None)]
    out += [("metric", e.label) for e in at.get("metric")]
    for df in at.dataframe:
        out += [("table header", str(c)) for c in df.value.columns]
        out += [(f"table cell [{c}]", v) for c in df.value.columns if str(c) not in ENGLISH_COLUMNS
                for v in df.value[c].dropna().unique() if isinstance(v, str)]
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        lay = spec.get("layout", {})
        out += [("chart title", (lay.get("title") or {}).get("text", ""))]
        out += [(f"chart {k}", (v.get("title") or {}).get("text", "")) for k, v in lay.items()
                if re.match(r"[xy]axis\d*$", k) and isinstance(v, dict)]
        out += [("chart legend", t.get("name", "")) for t in spec.get("data", []) if t.get("showlegend", True)]
        out += [(f"chart {k} labels", str(v)) for k, ax in lay.items() if re.match(r"[xy]axis\d*$", k)
                and isinstance(ax, dict) for v in [*(ax.get("categoryarray") or []), *(ax.get("ticktext") or [])]]
    return [(w, t) for w, t in out if t]


def english_left(text: str) -> list[str]:
    if text in BILINGUAL:
        return []
    plain = FILE.sub(" ", LATEX.sub(" ", TAG.sub(" ", text)))
    return [w for w in WORD.findall(plain) if len(w) > 2 and w not in ALLOWED and w.lower() not in ALLOWED
            and not all(p.lower() in ALLOWED for p in w.split("-"))]


@pytest.fixture(autouse=True, scope="module")
def _navigation_only():
    with navigation_only():
        yield


@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize("page", PAGES)
def test_the_chinese_page_has_no_english_left(page: str, setting: str) -> None:
    at = open_app(page, {"lang": "zh", **SETTINGS[setting]})
    assert_clean(at)
    left = {}
    for where, text in _texts(at):
        words = english_left(text)
        if words:
            left[f"{where}: {text[:90]!r}"] = words
    assert not left, "\n".join(f"{k} → {v}" for k, v in list(left.items())[:30])


@pytest.mark.parametrize("page", PAGES)
def test_the_english_page_has_no_chinese(page: str) -> None:
    at = open_app(page, {"lang": "en"})
    assert_clean(at)
    cjk = [(w, t) for w, t in _texts(at) if re.search(r"[\u4e00-\u9fff]", t) and "语言" not in t]
    assert not cjk, cjk[:10]


def test_the_language_comes_from_the_url_stays_across_pages_and_goes_back_into_it() -> None:
    at = open_app("pages/runtime.py", {"lang": "zh"})
    assert at.radio(key="lang").value == "zh"
    at.switch_page("pages/error.py").run()
    assert_clean(at)
    assert at.radio(key="lang").value == "zh" and at.query_params.get("lang") in ("zh", ["zh"])
    at.radio(key="lang").set_value("en").run()
    assert at.query_params.get("lang") in ("en", ["en"])
    assert not re.search(r"[\u4e00-\u9fff]", at.title[0].value)


def test_a_bad_language_in_the_url_is_a_notice_and_english() -> None:
    at = open_app(None, {"lang": "klingon"})  # the notice shows on the first run
    assert_clean(at)
    assert at.radio(key="lang").value == "en"
    assert any("lang" in w.value for w in at.get("warning") + at.get("info") + at.get("toast")), \
        [w.value for w in at.get("warning") + at.get("info")]


#: the words of a formula: the text of each \text{…}
FORMULA_WORDS = re.compile(r"\\text\{((?:[^{}]|\\[{}])*)\}")


def _scheme_part(text: str) -> bool:
    """The rest of a scheme's name in a formula (``K\\text{-sync}``): a name, kept as it is."""
    return text.startswith("-") and not english_left(text)


@pytest.mark.parametrize("page, query", [
    ("pages/error.py", {}),  # fresh: … stale: …
    ("pages/tradeoffs.py", {"axis_scheme": "k-async"}),  # p₀ = the measured fraction of fresh gradients …
    ("pages/tradeoffs.py", {"axis": "H"}),  # local SGD: no bound is drawn …
    ("pages/cluster.py", {}),  # slowdown_i = …, straggler: slowdown_i ≥ θ
    ("pages/local_sgd.py", {}),  # E[T_{per step}]
    ("pages/runtime.py", {"stragglers": "static"}),  # with stragglers: E[T_{K-sync}] = …
])
def test_the_words_inside_formulas_are_chinese(page: str, query: dict[str, str]) -> None:
    """Words in a formula are a message of their own (views.tex_words), never English inside LaTeX;
    a scheme's name (``K\\text{-sync}``) stays as it is."""
    at = open_app(page, {"lang": "zh", **query})
    assert_clean(at)
    words = [t for e in at.latex for t in FORMULA_WORDS.findall(e.value) if t.strip() and not _scheme_part(t)]
    assert words, [e.value for e in at.latex]
    left = {t: english_left(t) for t in words if english_left(t)}
    assert not left, left
    assert all(re.search(r"[\u4e00-\u9fff]", t) for t in words), words

"""Pieces of the dashboard that need no running app: plain-text notices, URL parsing, the
cache keys of delay laws, bounded figures and memos (issue 7)."""


import re

import numpy as np
import pytest

from distsgd import make_cluster, make_scheme, parse_delay
from distsgd.clusters import Stragglers
from distsgd.delays import Delay, Empirical
from distsgd.error.general import RealProblem
from distsgd.montecarlo import simulate_timeline
from distsgd.plots import timeline_figure
from distsgd.timeline_export import TIMELINE_MAX_BARS
from distsgd.topology import Topology
from distsgd.traces import Trace, trace_from_times
from distsgd.ui import cache_calls, controls, plain_text, rerun_caps, views

#: GFM's autolink literals as remark-gfm (Streamlit's Markdown) finds them in the text of a
#: paragraph once backslash escapes are resolved (mdast-util-gfm-autolink-literal), loosened:
#: ``http://``, ``https://`` or ``www.`` (any case) before a domain character, and an e-mail
#: address; without GFM's other conditions (the character before, a valid domain, the trailing
#: punctuation), so this finds every link GFM makes and more.  ``\w`` is ASCII, as in JavaScript.
_GFM_URL = re.compile(r"(?:https?://|www\.)[-.\w]", re.IGNORECASE | re.ASCII)
_GFM_EMAIL = re.compile(r"[-.\w+]+@[-\w]+(?:\.[-\w]+)+", re.ASCII)


def autolinks(text: str) -> list[str]:
    """The places of ``text`` (rendered text: escapes resolved) a GFM renderer would link."""
    return [m.group() for pattern in (_GFM_URL, _GFM_EMAIL) for m in pattern.finditer(text)]


def rendered(markdown: str) -> str:
    """The text of ``markdown`` as CommonMark gives it: a backslash before ASCII punctuation dropped."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


@pytest.mark.parametrize("text", ["[click](https://example.org/x)", "![i](http://host/x.png)",
                                  "<img src=x onerror=alert(1)>", "$\\frac{1}{0}$", "**bold** _it_ `code`"])
def test_plain_escapes_every_markdown_construct(text):
    shown = plain_text.plain(text)
    i, out = 0, []
    while i < len(shown):  # every Markdown/HTML/LaTeX character arrives backslash-escaped
        if shown[i] == "\\":
            out.append(shown[i + 1])
            i += 2
            continue
        assert shown[i] not in "[]()!<>$*_`:/\\", (i, shown)
        out.append(shown[i])
        i += 1
    assert "".join(out).replace(plain_text.JOINER, "") == text  # nothing lost but the escapes (and joiners)


@pytest.mark.parametrize("text", [
    "[click](https://example.org/phish)", "see https://example.org/phish now", "HTTP://EXAMPLE.ORG",
    "write to bob@example.org", "mailto:bob@example.org", "xmpp:bob@example.org/x", "(www.example.org)",
    "WWW.Example.ORG/login", "https://www.example.org", "a@b.c@d.e and www.x.y and http://z.w",
])
def test_plain_leaves_no_url_host_or_email_that_markdown_links(text):
    """A bare URL, a www. host or an e-mail address survives backslash escapes (GFM links the text
    after escapes are resolved): in plain text none of them is linkable, and nothing else changes."""
    assert autolinks(text), "the matcher must see the link in the raw text"
    shown = rendered(plain_text.plain(text))
    assert autolinks(shown) == [], shown
    assert shown.replace(plain_text.JOINER, "") == text


def test_plain_changes_no_text_without_a_link():
    text = "m: must be an integer in [1, 1000] (got 'a/b: c', 'www', '1.5', '.www' and 'http:x')"
    assert rendered(plain_text.plain(text)) == text


def test_plain_truncates():
    assert len(plain_text.plain("x" * 10_000)) == 300  # the ellipsis included


def test_url_parse_dedups_and_names_repeats():
    c = controls.CONTROLS["schemes"]
    v, note = c.parse(["sync", "sync", "async", "bogus"])
    assert v == ["sync", "async"] and "bogus" in note
    m = controls.CONTROLS["m"]
    assert m.parse(["abc", "12"]) == (12, "m was given 2 times; using the last valid value")
    v, note = m.parse("1e9")
    assert v == 1000 and "clamped to 1000" in note
    v, note = controls.CONTROLS["seed"].parse("2147483647")
    assert v == 2**31 - 1 and note is None  # exact, not through a float


def test_every_delay_family_is_hashed_by_its_key_not_its_values():
    families = {cls for cls in cache_calls.HASH if cls not in (Stragglers, Trace, RealProblem, Topology)}
    assert Empirical in families and all(issubclass(c, Delay) for c in families)
    for cls in Delay.__subclasses__():  # the library's (a test's toy family is hashed by its fields)
        assert cls in families or not cls.__module__.startswith("distsgd.")
    a = Empirical.from_values(np.arange(1, 1_000_001, dtype=float))
    b = Empirical.from_values(np.arange(1, 1_000_001, dtype=float))
    c = Empirical.from_values(np.arange(2, 1_000_002, dtype=float))
    key = cache_calls.HASH[Empirical]
    assert key(a) == key(b) != key(c) and len(key(a)) < 200
    assert key(parse_delay("exp(rate=2)")) != key(parse_delay("exp(rate=3)"))


def test_a_real_problem_is_hashed_by_its_data_digest_not_its_arrays() -> None:
    """An uploaded data set rides in a RealProblem (the Error and Trade-offs pages' problem):
    Streamlit would hash a dataclass field by field, its arrays included; the key holds the
    file's digest, and differs with any hyper-parameter."""
    from distsgd.problems.data import DataSet
    rows = "\n".join(f"{i % 5},{(i * 7) % 3},{int(i % 5 > 1)}" for i in range(4000)).encode()
    a, b = DataSet.read(rows, name="a.csv"), DataSet.read(rows, name="b.csv")
    key = cache_calls.HASH[RealProblem]
    pa, pb = RealProblem("a.csv", 0.01, 0.1, 4, data=a), RealProblem("a.csv", 0.01, 0.1, 4, data=b)
    assert key(pa) == key(pb) and len(repr(key(pa))) < 200
    assert key(pa) != key(RealProblem("a.csv", 0.02, 0.1, 4, data=a)) != key(RealProblem("breast_cancer", 0.02, 0.1, 4))


def test_stragglers_are_hashed_by_their_key() -> None:
    """A Stragglers recipe (the sidebar's "who is slow") is hashed by its key: a trace by its
    digest, not its values; every parameter of its kind in it, and nothing of another kind."""
    key, d = cache_calls.HASH[Stragglers], parse_delay("exp(rate=2)")
    t = np.random.default_rng(1).exponential(1.0, (50, 2000))
    a, b = (Stragglers(d, "trace", trace=make_cluster(trace=t.copy()).trace) for _ in range(2))
    assert key(a) == key(b) and len(key(a)) < 200
    assert key(Stragglers(d, "static", slow=1, slowdown=2.0)) != key(Stragglers(d, "static", slow=2, slowdown=2.0))
    assert key(Stragglers(d, "markov", slow_fraction=0.1, persistence=0.5, slowdown=2.0)) != \
        key(Stragglers(d, "markov", slow_fraction=0.1, persistence=0.6, slowdown=2.0))
    assert key(Stragglers(d)) != key(Stragglers(parse_delay("exp(rate=3)")))


@pytest.mark.parametrize("name, kw", [("local-sgd", dict(H=100, comm_delay=0.5)), ("k-batch-async", dict(K=1000)),
                                      ("k-batch-sync", dict(K=1000)), ("k-sync", dict(K=4))])
def test_timeline_figure_is_bounded(name, kw):
    """The timeline page's worst case (m ≥ 40 shown, 30 updates, H = 100 or K = 1000) used to send
    an 8.4 MB figure that froze the browser tab."""
    tl = simulate_timeline(make_scheme(name, 40, **kw), parse_delay("exp(rate=1)"), 30, seed=1)
    fig = timeline_figure(tl)
    assert len(fig.to_json()) <= 1_000_000
    bars = sum(len(t.x) for t in fig.data)
    assert bars <= TIMELINE_MAX_BARS
    # every worker-second of the first shown updates is still drawn (merged, not dropped)
    busy = sum(float(np.sum(t.x)) for t in fig.data)
    assert busy > 0


def test_time_axis_memo_holds_no_delay_objects():
    from distsgd.error import timing
    d = Empirical.from_values(np.linspace(1, 2, 1000))
    timing.runtime_for_time_axis(make_scheme("sync", 4), d, 0)
    for key in list(timing._axis_memo):
        assert not any(isinstance(k, Delay) for k in key)
    assert len(timing._axis_memo) <= timing._AXIS_MEMO


# -- the UI's caps and sizes (distsgd/ui/rerun_caps.py) ------------------------------------------

def test_every_ui_cap_narrows_the_library_value_beside_it():
    from distsgd.ui import rerun_caps
    for name, (ui, lib) in rerun_caps.NARROWS.items():
        assert ui <= lib, f"{name} = {ui} asks for more than the library's {lib}"


def test_every_slider_range_lies_inside_the_library_domain():
    """controls intersects each range with the library's domain: a range that reached outside it
    would be cut silently, and the slider would not be the range rerun_caps.py states."""
    from distsgd.ui import rerun_caps
    for key, (lo, hi) in rerun_caps.RANGES.items():
        d = controls.CONTROLS[key].domain
        assert (d.low, d.high) == (lo, hi), (key, (d.low, d.high), (lo, hi))
    numeric = {k for k, c in controls.CONTROLS.items() if c.domain is not None}
    assert numeric - set(rerun_caps.RANGES) <= {"gamma", "p0"}  # γ, p₀: the library's whole [0, 1]


#: small counts a page may write as they are: indexes, column counts, "both", a percentage
PLAIN_NUMBERS = {0, 1, 2, 3, 4, 100}


def test_pages_use_named_sizes_not_bare_numbers():
    """Grid sizes, points, replicas, samples and caps live in distsgd/ui/rerun_caps.py with their
    reasons (the pages had 101, 81, 40, 30, 20 000 and 1000 written inline)."""
    import ast
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    bare = []
    for f in sorted((root / "pages").glob("*.py")) + [root / "app.py"]:
        for node in ast.walk(ast.parse(f.read_text())):
            if not isinstance(node, ast.Constant) or type(node.value) not in (int, float):
                continue
            if type(node.value) is float or node.value not in PLAIN_NUMBERS:
                bare.append(f"{f.name}:{node.lineno}: {node.value}")
    assert not bare, bare


HOSTILE = "[x](https://e.example/p) www.evil.example bob@evil.example"


def test_a_traces_worker_ids_step_labels_and_name_are_plain_text_in_markdown():
    """Uploaded files name their workers, steps and themselves: none of it may become a link."""
    slow = [{"worker": HOSTILE, "from_step": None, "slowdown": 2.0},
            {"worker": "gpu-3", "from_step": HOSTILE, "slowdown": 1.5}]
    shown = rendered(views.stragglers_sentence(slow, 1.2))
    assert autolinks(shown) == [], shown
    assert "gpu-3" in shown and shown.replace(plain_text.JOINER, "").count(HOSTILE) == 2
    trace = trace_from_times(np.ones((2, 3)), name=HOSTILE)
    label = views.workers_label(Stragglers(parse_delay("exp(rate=1)"), kind="trace", trace=trace))
    assert autolinks(rendered(label)) == [] and HOSTILE in rendered(label).replace(plain_text.JOINER, "")


def test_the_fast_budget_simulates_fewer_sgd_replicas():
    b = rerun_caps.UI_BUDGETS
    assert [rerun_caps.replicas_at(b[k], 30) for k in ("fast", "balanced", "accurate")] == [11, 30, 30]
    assert rerun_caps.replicas_at(b["fast"], 12) == rerun_caps.UI_REPLICAS_MIN  # never fewer than a band needs


@pytest.mark.parametrize("kind", ["cache_data", "cache_resource"])
def test_a_cached_call_never_reads_the_signature_again(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Streamlit's positional path computes the function's signature again for every positional
    argument of every call (≈ 0.5 ms a view): the dashboard's caches are called by keyword —
    the same entry for a positional and a keyword call, the function run once."""
    from streamlit import type_util

    from distsgd.ui import cache_calls

    runs: list[tuple[int, int, int]] = []

    @getattr(cache_calls, kind)(max_entries=4)
    def f(a: int, b: int, c: int = 0) -> int:
        runs.append((a, b, c))
        return a + b + c

    read = []
    signature = type_util.get_func_parameters
    monkeypatch.setattr(type_util, "get_func_parameters", lambda fn: read.append(fn) or signature(fn))
    f.clear()  # type: ignore[attr-defined]
    assert f(1, 2) == f(1, b=2) == f(a=1, b=2) == 3
    assert f(1, 3, 1) == f(1, 3, c=1) == 5
    assert runs == [(1, 2, 0), (1, 3, 1)] and read == []


def test_a_shared_figure_is_translated_once_per_language(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cached view's figure is shared and never changed: the reader's language gets a translated
    copy made once and kept (copying and translating on every rerun cost ≈ 25 ms a chart), the
    English figure itself stays English."""
    from distsgd import plots
    from distsgd.ui import figure_text, i18n

    rows = [{"scheme": s, "time": t, "simulated_mean": 1 / (1 + t), "simulated_low": 0.9 / (1 + t),
             "simulated_high": 1.1 / (1 + t), "bound": 2 / (1 + t)} for s in ("sync", "async") for t in (0.0, 1.0)]
    fig = plots.error_figure(rows, 0.2)
    made: list[object] = []
    translate = i18n.figure
    monkeypatch.setattr(i18n, "figure", lambda f, t=(): made.append(f) or translate(f, t))
    english = [t.name for t in fig.data]
    try:
        i18n.set_language("zh")
        zh = i18n.shown(fig, figure_text.FIGURE_TEXT)
        assert i18n.shown(fig, figure_text.FIGURE_TEXT) is zh and zh is not fig and made == [zh]
        assert [t.name for t in fig.data] == english
        names = [t.name for t in zh.data]
        assert names != english and all(re.search(r"[\u4e00-\u9fff]", n) for n in names if n), names
        assert [t.meta["name"] for t in zh.data if t.name] == [n for n in english if n]
    finally:
        i18n.set_language("en")
    assert i18n.shown(fig, figure_text.FIGURE_TEXT) is fig and made[1:] == [fig]

"""Fuzz the dashboard's URL handling (issue 7): hundreds of hostile query strings through AppTest.

Every case opens the app the way a browser opens a shared link: a fresh session, straight on one
of the six pages, with the query string given, and ONE run.  The cases are a fixed list of
hand-picked hostile URLs followed by cases drawn by hypothesis with a fixed seed
(``derandomize=True``): junk text, huge/tiny/negative numbers, nan, inf, 1e308, -0, 63-bit
integers, repeated keys, Markdown/HTML/LaTeX injection, 10 kB strings, unicode, empty values,
unknown keys, valid values jointly invalid (mu > L, u_low ≥ u_high, K > m, normal mean/std < −30,
η·L large) and valid values at the controls' bounds.

For every run (see :func:`check`):

- no uncaught exception, and no "Something went wrong" (the page guard's message for a bug);
- a URL never blocks the view: no error element at all, and at least one chart;
- every notice (warning/error/info/success/toast) is plain text — after removing backslash
  escapes no ``](``, ``<img``, ``<a `` (nor a ``$…$`` formula), and in its rendered text (escapes
  resolved, which is where remark-gfm looks) no bare URL, www. host or e-mail address that GFM's
  autolink literals would link — and at most ``NOTICE_MAX`` characters long; captions
  and markdown bodies carry no link, image or HTML tag either;
- the page renders within ``SECONDS_MAX`` seconds;
- afterwards the URL holds only known keys, each once (``schemes`` may repeat, but no value
  twice), each value valid for its control (domain or options) and K ≤ m;
- no table shows two identical rows;
- an invalid value of a control that this page draws on every run (the sidebar's, those of the
  chosen delay family, the page's own) is named by a notice on this FIRST run.

Failures are collected rather than raised one by one: the test runs every case, then reduces the
shortest failing URL of each failure class (drops parameters and tries plainer values while the
class persists) and fails with one line per class, so a single run shows every kind of bug at
once.  ``DISTSGD_FUZZ_DUMP=path`` writes every failing run to ``path`` (tab-separated) for triage.

A separate small test checks that a page's own control named in the URL with a junk value gets
its notice on the first run (``/error?eta=junk``), not only after the next rerun.
"""

from __future__ import annotations

import math
import os
import re
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.util import patch_config_options

from apptest_support import APP, navigation_only
from test_ui_units import autolinks, rendered

PAGES = ["runtime", "error", "delays", "timeline", "local_sgd", "tradeoffs", "graph"]
SCHEMES = ["sync", "k-sync", "k-batch-sync", "async", "k-async", "k-batch-async", "local-sgd", "d-psgd", "ad-psgd"]
RUNS_MIN = 230
SECONDS_MAX = 10.0
NOTICE_MAX = 300
APPTEST_TIMEOUT = 120.0
HYPOTHESIS_EXAMPLES = 110
STREAMLIT_KEYS = ("embed", "embed_options")  # Streamlit's own: an app can neither read nor clear them
DUMP = os.environ.get("DISTSGD_FUZZ_DUMP")  # a file to write every failing run to (for triage)

# Which controls a page draws on EVERY run, given the URL's choices (the oracle for first-run
# notices).  Controls drawn only under a condition (C for the adaptive rule, p0 for an entered p0,
# the network model's topology, D where local SGD is swept) are listed with the condition.
SIDEBAR_ALWAYS = ("delay", "m", "K", "H", "graph", "schemes", "seed", "budget")
FAMILY_PARAMS = {
    "exp": ("lam",), "shifted-exp": ("lam", "delta"), "pareto": ("xm", "alpha", "delta"),
    "lognormal": ("ln_mu", "ln_sigma", "delta"), "normal": ("n_mean", "n_std", "delta"),
    "weibull": ("w_shape", "w_scale", "delta"), "uniform": ("u_low", "u_high", "delta"),
    "trace": ("delta",),
}
PAGE_ALWAYS = {
    "runtime": ("rt_view",),
    "error": ("problem", "eta", "b", "lr_rule", "gamma", "p0_mode", "replicas", "horizon", "eps", "schedule"),
    "delays": (),
    "timeline": ("tl_scheme", "tl_iters"),
    "local_sgd": ("comm_source", "params_m", "gbps", "latency_ms", "eta", "L", "mu", "sigma2", "b", "f0", "dim",
                  "horizon"),
    "tradeoffs": ("axis", "axis_scheme", "eps", "horizon", "eta", "L", "mu", "sigma2", "b", "f0", "dim", "gamma",
                  "schedule"),
    "graph": ("eps", "horizon", "eta", "L", "mu", "sigma2", "b", "f0", "dim"),
}
#: an adaptive schedule's controls (issue 25), drawn on the error and trade-offs pages when it is on
SCHEDULE_IF = [("K0", "schedule", "adasync"), ("K0", "schedule", "adasync-k-async"), ("H0", "schedule", "adacomm"),
               *(("period", "schedule", v) for v in ("adasync", "adasync-k-async", "adacomm"))]
PAGE_IF = {  # page: [(key, condition key, condition value)]
    "error": [("C", "lr_rule", "adaptive"), ("p0", "p0_mode", "input"),
              *((k, "problem", "quadratic") for k in ("L", "mu", "sigma2", "f0", "dim")),
              ("l2", "problem", "logreg:breast_cancer"), ("l2", "problem", "logreg:digits"), *SCHEDULE_IF],
    "local_sgd": [("D", "comm_source", "slider"), ("topology", "comm_source", "network model")],
    "tradeoffs": [("D", "axis", "H"), ("D", "axis_scheme", "local-sgd"), ("D", "schedule", "adacomm"), *SCHEDULE_IF],
}


def controls() -> dict[str, Any]:
    from distsgd.ui.controls import CONTROLS
    return CONTROLS


def control_keys() -> list[str]:
    return list(controls())


# --------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    page: str
    pairs: tuple[tuple[str, str], ...]

    def query(self) -> dict[str, str | list[str]]:
        """AppTest's query_params shape: one value a str, a repeated key a list (in order)."""
        q: dict[str, list[str]] = {}
        for k, v in self.pairs:
            q.setdefault(k, []).append(v)
        return {k: v[0] if len(v) == 1 else v for k, v in q.items()}

    def url(self) -> str:
        def show(s: str) -> str:
            if len(s) > 60:
                unit = next((s[:n] for n in range(1, 40) if len(s) % n == 0 and s[:n] * (len(s) // n) == s), None)
                return (f"({urllib.parse.quote(unit, safe='')})×{len(s) // len(unit)}" if unit
                        else urllib.parse.quote(s[:40], safe='') + f"…[{len(s)} chars]")
            return urllib.parse.quote(s, safe="")
        return f"/{self.page}?" + "&".join(f"{show(k)}={show(v)}" for k, v in self.pairs)

    def without(self, i: int) -> Case:
        return Case(self.page, self.pairs[:i] + self.pairs[i + 1:])


def c(page: str, query: str) -> Case:
    """A case from a literal query string (``a=1&b=2``), parsed like a browser's URL."""
    return Case(page, tuple(urllib.parse.parse_qsl(query, keep_blank_values=True)))


LINK = "[click](https://example.org/x)"
IMAGE = "![i](http://host/x.png)"
LATEX = r"$\frac{1}{0}$"
INJECT = [LINK, IMAGE, "<script>alert(1)</script>", "<img src=x onerror=alert(1)>",
          "<a href='https://example.org/x'>x</a>", LATEX, "**bold** _it_", "# heading",
          ":red[x]", "`code`", "https://example.org/x", "[x]: https://example.org/x", "\\", "'", '"',
          "{0}", "%s", "javascript:alert(1)", ":material/warning:", "<b>x</b>", "[a](<javascript:x>)",
          "\\[x\\](y)", "3](https://example.org/x)"]
JUNK = ["abc", "junk", "1e", "--1", "0x10", "1,5", "3.4.5", "∞", "None", "null", "true", "[]", "{}",
        "\x00", "\n", " ", "\t3", "1 2", "½", "٣", "１２", "1_000", "0b1", "e5", ".", "-", "+", "3e", "K", "m"]
NUMBERS = ["0", "-0", "-0.0", "+0", "nan", "NaN", "-nan", "inf", "-inf", "+inf", "Infinity", "1e308", "-1e308",
           "1.7976931348623157e308", "1e309", "1e-308", "5e-324", "1e-400", "9223372036854775807",
           "-9223372036854775808", "9223372036854775808", "18446744073709551616", "-1", "-1e-9", "1e-12",
           "0.5", "2.5", "3", "7.000000000000001", "1000", "1001", "100000000", "2147483647", "2147483648",
           "4096", "4097", "1e5", "100001", "0.0001", "0.00009999", "400", "401", "30", "31", "0.2", "0.19999"]
UNICODE = ["é", "💥", "\u202eevil", "\u200b", "日本語", "Ω", "ｓｙｎｃ", "m\u0301", "𝟙𝟘", "\ufeff1"]
LONG = ["A" * 10240, LINK * 340, "9" * 10000, "1" + "0" * 5000, "0." + "0" * 9000 + "1", "é" * 5000,
        "sync," * 2000, "<img src=x>" * 900]
UNKNOWN = ["foo", "M", "m ", " m", "mm", "schemes[]", "__proto__", "_selection", "_notices", "preset", "trace",
           "page", "embed", "embed_options", "EMBED", "K\u200b", "ｍ", "", "[x](y)", "a" * 300, "delay.family", "Lam",
           "seed;m"]


def _num_text(x: float, integer: bool) -> str:
    if integer and math.isfinite(x) and float(x).is_integer():
        return str(int(x))
    return repr(float(x))


def boundary_values(key: str) -> list[str]:
    """Values of one control at and just past its bounds (valid and invalid)."""
    ctl = controls()[key]
    if ctl.options is not None:
        return list(ctl.options) + [ctl.options[0].upper(), ctl.options[-1] + " ", ""]
    d = ctl.domain
    lo = math.nextafter(d.low, math.inf) if d.low_open else d.low
    hi = math.nextafter(d.high, -math.inf) if d.high_open else d.high
    out = [lo, hi, ctl.default, d.low, d.high, (lo + hi) / 2]
    if d.integer:
        out += [lo - 1, hi + 1, lo + 0.5, hi * 1000]
    else:
        out += [lo - abs(lo) * 1e-9 - 1e-12, hi * (1 + 1e-9) + 1e-12, -hi, hi * 1e6]
    return [_num_text(x, d.integer) for x in out if math.isfinite(x)]


@st.composite
def valid_value(draw: Callable, key: str) -> str:
    ctl = controls()[key]
    if ctl.options is not None:
        return draw(st.sampled_from(list(ctl.options)))
    d = ctl.domain
    lo = math.nextafter(d.low, math.inf) if d.low_open else d.low
    hi = math.nextafter(d.high, -math.inf) if d.high_open else d.high
    if d.integer:
        return str(draw(st.integers(int(math.ceil(lo)), int(math.floor(hi)))))
    return repr(draw(st.floats(lo, hi, allow_nan=False, allow_infinity=False)))


TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=24)


def hostile_value(key: str) -> st.SearchStrategy[str]:
    parts = [st.sampled_from(JUNK), st.sampled_from(NUMBERS), st.sampled_from(INJECT), st.sampled_from(UNICODE),
             st.sampled_from(LONG), st.just(""), TEXT,
             st.floats().map(repr), st.integers(-2**63, 2**63).map(str)]
    if key in controls():
        parts += [valid_value(key), st.sampled_from(boundary_values(key)), valid_value(key)]
    return st.one_of(parts)


def relevant_keys(page: str) -> list[str]:
    keys = list(SIDEBAR_ALWAYS) + [k for ks in FAMILY_PARAMS.values() for k in ks] + list(PAGE_ALWAYS[page])
    keys += [k for k, _, _ in PAGE_IF.get(page, [])]
    return [k for k in dict.fromkeys(keys) if k in controls()]


@st.composite
def joint(draw: Callable) -> list[tuple[str, str]]:
    """Valid values one by one that are jointly invalid, or extreme: the hard cases for a page."""
    f = lambda lo, hi: draw(st.floats(lo, hi, allow_nan=False))  # noqa: E731
    kind = draw(st.sampled_from(["mu>L", "uniform", "K>m", "normal", "etaL", "weibull", "pareto", "lognormal",
                                 "big", "network", "bounds", "p0C"]))
    if kind == "mu>L":
        L = f(0.01, 99.0)
        return [("L", repr(L)), ("mu", repr(f(L * 1.0001, 100.0)))]
    if kind == "uniform":
        lo = f(0.01, 100.0)
        return [("delay", "uniform"), ("u_low", repr(lo)), ("u_high", repr(f(0.01, lo)))]
    if kind == "K>m":
        m = draw(st.integers(1, 999))
        return [("m", str(m)), ("K", str(draw(st.integers(m + 1, 1000))))]
    if kind == "normal":
        s = f(0.01, 0.33)
        return [("delay", "normal"), ("n_std", repr(s)), ("n_mean", repr(f(-10.0, -30 * s)))]
    if kind == "etaL":
        return [("eta", repr(f(0.5, 2.0))), ("L", repr(f(20.0, 100.0))), ("mu", repr(f(0.001, 1.0)))]
    if kind == "weibull":
        return [("delay", "weibull"), ("w_shape", draw(st.sampled_from(["0.2", "0.21", "0.25", "0.3", "20"]))),
                ("w_scale", draw(st.sampled_from(["0.01", "1", "100"])))]
    if kind == "pareto":
        return [("delay", "pareto"), ("alpha", draw(st.sampled_from(["0.3", "0.5", "1", "1.0001", "2", "20"]))),
                ("xm", draw(st.sampled_from(["0.01", "1", "100"])))]
    if kind == "lognormal":
        return [("delay", "lognormal"), ("ln_sigma", draw(st.sampled_from(["0.05", "3"]))),
                ("ln_mu", draw(st.sampled_from(["-10", "0", "10"])))]
    if kind == "big":
        pairs = [("m", "1000")] + [("schemes", s) for s in SCHEMES]
        pairs += draw(st.lists(st.sampled_from([("H", "100"), ("replicas", "400"), ("horizon", "100000"),
                                                ("K", "1000"), ("K", "999"), ("tl_iters", "30"), ("b", "4096"),
                                                ("dim", "50"), ("seed", "2147483647"), ("lam", "100"),
                                                ("budget", "accurate"), ("axis", "m"), ("axis", "H"),
                                                ("rt_view", "m"), ("D", "1000")]), max_size=5, unique=True))
        return pairs
    if kind == "network":
        return [("comm_source", "network model"),
                ("topology", draw(st.sampled_from(["parameter-server", "ring-allreduce"]))),
                ("params_m", draw(st.sampled_from(["0.001", "100000"]))),
                ("gbps", draw(st.sampled_from(["0.01", "10000"]))),
                ("latency_ms", draw(st.sampled_from(["0", "10000"])))]
    if kind == "p0C":
        return [("lr_rule", "adaptive"), ("C", draw(st.sampled_from(boundary_values("C")))),
                ("p0_mode", "input"), ("p0", draw(st.sampled_from(boundary_values("p0"))))]
    keys = draw(st.lists(st.sampled_from([k for k in control_keys() if controls()[k].domain is not None]),
                         min_size=1, max_size=4, unique=True))
    return [(k, draw(st.sampled_from(boundary_values(k)[:2]))) for k in keys]


@st.composite
def cases(draw: Callable) -> Case:
    page = draw(st.sampled_from(PAGES))
    pairs: list[tuple[str, str]] = []
    if draw(st.booleans()):
        pairs += draw(joint())
    for _ in range(draw(st.integers(0 if pairs else 1, 4))):
        key = draw(st.one_of(st.sampled_from(relevant_keys(page)), st.sampled_from(control_keys()),
                             st.sampled_from(UNKNOWN)))
        pairs.append((key, draw(hostile_value(key))))
    if pairs and draw(st.integers(0, 5)) == 0:  # repeat a key: m=3&m=abc, schemes=sync&schemes=sync
        k, v = draw(st.sampled_from(pairs))
        pairs.append((k, draw(st.one_of(st.just(v), hostile_value(k)))))
    if draw(st.integers(0, 2)) == 0:
        pairs.append(("budget", "fast"))
    return Case(page, tuple(pairs))


def explicit_cases() -> list[Case]:
    """The named hostile URLs of issue 7, on every page."""
    every_scheme = "&".join(f"schemes={s}" for s in SCHEMES)
    queries = [
        "delay=weibull&w_shape=0.2", "delay=weibull&w_shape=0.2&w_scale=100", f"m=1000&{every_scheme}",
        f"m=1000&K=1000&H=100&{every_scheme}", "H=100", "replicas=400&horizon=100000", "horizon=100000&eps=0.000001",
        "L=1&mu=5", "delay=uniform&u_low=3&u_high=3", "delay=uniform&u_low=5&u_high=1", "m=2&K=1000",
        "delay=normal&n_mean=-10&n_std=0.01", "schemes=sync&schemes=sync", "m=3&m=abc", "m=abc&m=3",
        f"m={urllib.parse.quote(LINK)}", f"delay={urllib.parse.quote(IMAGE)}",
        f"schemes={urllib.parse.quote(LINK)}", f"eta={urllib.parse.quote(LINK)}",
        "schemes=%3Cscript%3Ealert(1)%3C%2Fscript%3E", "lam=" + urllib.parse.quote(LATEX),
        f"schemes={'x' * 10240}", f"tl_scheme={'[a](https://e.org)' * 560}", "m=&K=&delay=&schemes=",
        "m=nan&lam=inf&alpha=-inf&seed=1e308&K=-0", "seed=9223372036854775807&m=-9223372036854775808",
        "eta=junk&L=junk&tl_iters=junk&sweep=junk&D=junk&rt_view=junk&comm_source=junk",
        "lr_rule=adaptive&C=0&p0_mode=input&p0=2",
        "comm_source=network+model&params_m=100000&gbps=0.01&latency_ms=10000",
        "foo=bar&_notices=x&_selection=y&preset=heavy-tailed+stragglers",
        "schedule=adasync&K0=1000&period=0.5&horizon=100000&m=2", "schedule=adacomm&H0=junk&period=-1&axis=m",
    ]
    return [c(p, q) for q in queries for p in PAGES]


# --------------------------------------------------------------------------- one run and its checks


def first_run(case: Case) -> tuple[AppTest, float]:
    """A fresh session opened on ``case.page`` with ``case``'s query string: one run, timed."""
    at = AppTest.from_file(APP, default_timeout=APPTEST_TIMEOUT)
    at.switch_page(f"pages/{case.page}.py")  # before the first run: the page a link names
    at.query_params.update(case.query())
    t0 = time.perf_counter()
    at.run()
    return at, time.perf_counter() - t0


_ESCAPED = re.compile(r"\\.", re.S)


def unescaped(text: str) -> str:
    """``text`` without its backslash-escaped characters (what Markdown can still interpret)."""
    return _ESCAPED.sub("", text)


def shown(text: str) -> str:
    """``text`` as Markdown displays it: every backslash escape replaced by the character."""
    return re.sub(r"\\(.)", r"\1", text, flags=re.S)


def markdown_problems(text: str, notice: bool) -> list[str]:
    t = unescaped(text)
    low = t.lower()
    out = []
    if "](" in t:
        out.append("Markdown link/image rendered")
    if "<img" in low or "<a " in low:
        out.append("HTML tag in a notice" if notice else "HTML tag in markdown")
    if notice and re.search(r"\$[^$\n]+\$", t):
        out.append("LaTeX $…$ rendered in a notice")
    if notice and autolinks(shown(text)):  # GFM links the text after escapes are resolved
        out.append("bare link in a notice (autolinked)")
    return out


def _url_values(v: Any) -> list[str]:
    return list(v) if isinstance(v, list) else [v]


def _valid(key: str, s: str) -> bool:
    ctl = controls()[key]
    if ctl.options is not None:
        return s in ctl.options
    from distsgd.params import ParameterError
    try:
        ctl.domain.check(s, key)
    except ParameterError:
        return False
    return True


def _single(case: Case, key: str) -> str | None:
    vals = [v for k, v in case.pairs if k == key]
    return vals[0] if len(vals) == 1 else None


def expected_notices(case: Case) -> list[str]:
    """Keys this page draws on every run whose single URL value is invalid: each needs a notice.

    Empty values and repeated keys are left out (an app may treat them as absent or pick one).
    """
    ctls = controls()
    family = _single(case, "delay")
    family = family if family in FAMILY_PARAMS else "shifted-exp"
    drawn = list(SIDEBAR_ALWAYS) + list(FAMILY_PARAMS[family]) + list(PAGE_ALWAYS[case.page])
    for key, cond, want in PAGE_IF.get(case.page, []):
        got = _single(case, cond)
        if (got if got in (ctls[cond].options or ()) else ctls[cond].default) == want:
            drawn.append(key)
    out = []
    for key in (k for k in drawn if k in ctls):
        vals = [v for k, v in case.pairs if k == key]
        if not vals or (len(vals) > 1 and not ctls[key].multi) or any(v == "" for v in vals):
            continue
        if not all(_valid(key, v) for v in vals):
            out.append(key)
    return out


Fails = list[tuple[str, str]]


def check(case: Case) -> tuple[Fails, float]:
    """[(failure class, detail)] for one first run of ``case``, and its seconds."""
    try:
        at, secs = first_run(case)
    except Exception as exc:  # AppTest itself gave up (timeout, …)
        return [(f"AppTest run raised {type(exc).__name__}", str(exc)[:200])], math.inf
    notices = [(kind, el.value) for kind in ("warning", "error", "info", "success", "toast")
               for el in getattr(at, kind)]
    fails = _run_problems(at) + _text_problems(at, notices)
    if secs > SECONDS_MAX:
        fails.append((f"slower than {SECONDS_MAX:g} s", f"{secs:.1f} s"))
    fails += _url_problems(at) + _table_problems(at) + _missing_notices(case, notices)
    return fails, secs


def _run_problems(at: AppTest) -> Fails:
    """Exceptions, error messages, and a page without a chart."""
    fails: Fails = []
    for e in at.exception:
        first = (e.message or "").splitlines()[0][:120] if e.message else ""
        where = next((ln.strip() for ln in reversed(e.stack_trace) if 'File "' in ln), "")
        fails.append((f"uncaught exception {getattr(e.proto, 'type', '') or '?'}", f"{first} at {where[-100:]}"))
    errors = [e.value for e in at.error]
    for msg in errors:
        if "Something went wrong" in msg:
            m = re.search(r"\((\w+)\)", msg)
            fails.append((f"'Something went wrong' ({m.group(1) if m else '?'})", msg[:120]))
        else:
            fails.append(("error shown instead of the view", msg[:160]))
    if not at.exception and not errors and not at.get("plotly_chart"):
        fails.append(("no chart drawn", ""))
    return fails


def _text_problems(at: AppTest, notices: list[tuple[str, str]]) -> Fails:
    """Markdown that is not plain where it must be, and notices that are too long."""
    fails: Fails = []
    for kind, text in notices:
        for p in markdown_problems(text, notice=True):
            fails.append((p, f"{kind}: {text[:160]!r}"))
        # what the reader sees: the Markdown escapes and the invisible word joiners are not drawn
        shown = re.sub(r"\\(.)", r"\1", text).replace("\u2060", "")
        if len(shown) > NOTICE_MAX:
            fails.append((f"notice longer than {NOTICE_MAX} characters", f"{kind}: {len(shown)} chars: {text[:80]!r}…"))
    for kind in ("markdown", "caption", "title", "header", "subheader"):
        for el in getattr(at, kind):
            for p in markdown_problems(el.value, notice=False):
                fails.append((f"{p} ({kind})", repr(el.value[:160])))
    return fails


def _url_problems(at: AppTest) -> Fails:
    """What the URL holds after the run: known keys, once each, valid values, K ≤ m."""
    fails: Fails = []
    ctls = controls()
    qp = at.query_params
    for key, v in qp.items():
        if key.lower() in STREAMLIT_KEYS:
            continue
        if key not in ctls:
            fails.append(("unknown key left in the URL", f"{key!r}"))
            continue
        vals = _url_values(v)
        if len(vals) > 1 and not ctls[key].multi:
            fails.append(("key repeated in the URL", f"{key}={vals[:3]!r}"))
        if ctls[key].multi and len(set(vals)) < len(vals):
            fails.append(("value repeated in the URL", f"{key}={vals[:8]!r}"))
        bad = [x for x in vals if not _valid(key, x)]
        if bad:
            fails.append(("invalid value left in the URL", f"{key}={bad[0][:60]!r}"))
    m_url = _url_values(qp.get("m", str(ctls["m"].default)))[-1]
    K_url = _url_values(qp.get("K", str(ctls["K"].default)))[-1]
    if _valid("m", m_url) and _valid("K", K_url) and float(K_url) > float(m_url):
        fails.append(("K > m left in the URL", f"m={m_url}, K={K_url}"))
    return fails


def _table_problems(at: AppTest) -> Fails:
    fails: Fails = []
    for df in at.dataframe:
        frame = df.value
        if len(frame) and frame.astype(str).duplicated().any():
            dup = frame[frame.astype(str).duplicated(keep=False)].iloc[:, 0].astype(str).tolist()[:4]
            fails.append(("duplicated table rows", repr(dup)))
    return fails


def _missing_notices(case: Case, notices: list[tuple[str, str]]) -> Fails:
    """Every invalid URL value of a control this page draws is named by a notice."""
    fails: Fails = []
    ctls = controls()
    texts = [shown(t) for _, t in notices]
    sidebar_keys = set(SIDEBAR_ALWAYS).union(*FAMILY_PARAMS.values())
    for key in expected_notices(case):
        names = (key, ctls[key].label)
        if not any(n in t for t in texts for n in names):
            group = "sidebar" if key in sidebar_keys else "page"
            fails.append((f"no notice on the first run for an invalid {group} key", key))
    return fails


# --------------------------------------------------------------------------- the fuzz test


@dataclass
class Tally:
    runs: int = 0
    seconds: float = 0.0
    slowest: tuple[float, str] = (0.0, "")
    failures: dict[str, list[tuple[Case, str]]] = field(default_factory=dict)

    def add(self, case: Case) -> None:
        fails, secs = check(case)
        self.runs += 1
        if math.isfinite(secs):
            self.seconds += secs
            self.slowest = max(self.slowest, (secs, case.url()))
        for cls, detail in fails:
            self.failures.setdefault(cls, []).append((case, detail))


def reduce(case: Case, cls: str, budget: list[int]) -> tuple[Case, str]:
    """A smaller URL that still fails with ``cls``: drop parameters one at a time, then try
    plainer values ("x", a 40-character prefix); a few extra runs per class."""
    detail = ""

    def still(smaller: Case) -> bool:
        nonlocal detail
        budget[0] -= 1
        got = [d for k, d in check(smaller)[0] if k == cls]
        if got:
            detail = got[0]
        return bool(got)

    i = 0
    while i < len(case.pairs) and budget[0] > 0:
        if len(case.pairs) > 1 and still(case.without(i)):
            case = case.without(i)
        else:
            i += 1
    for i, (k, v) in enumerate(case.pairs):
        for plainer in ("x", v[:40]):
            if budget[0] <= 0 or len(plainer) >= len(v):
                continue
            smaller = Case(case.page, case.pairs[:i] + ((k, plainer),) + case.pairs[i + 1:])
            if still(smaller):
                case = smaller
                break
    return case, detail


@pytest.fixture(autouse=True, scope="module")
def _navigation_only():
    # the app's config hides error details ("none"): show them here, so a failure names its exception
    with navigation_only(), patch_config_options({"client.showErrorDetails": "full"}):
        yield


@pytest.mark.slow
def test_hostile_urls_on_every_page():
    start = time.perf_counter()
    tally = Tally()
    for case in explicit_cases():
        tally.add(case)

    @settings(derandomize=True, database=None, deadline=None, max_examples=HYPOTHESIS_EXAMPLES,
              phases=[Phase.generate], print_blob=False,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.large_base_example, HealthCheck.filter_too_much])
    @given(cases())
    def fuzz(case: Case) -> None:
        tally.add(case)  # failures are collected, not raised: every class shows up in one run

    fuzz()
    wall = time.perf_counter() - start
    if DUMP:
        with open(DUMP, "w", encoding="utf-8") as out:
            for cls, found in sorted(tally.failures.items()):
                for case, detail in found:
                    print(f"{cls}\t{case.url()}\t{detail[:300]!r}", file=out)
    summary = (f"{tally.runs} AppTest runs in {wall:.0f} s (page runs {tally.seconds:.0f} s; slowest "
               f"{tally.slowest[0]:.1f} s: {tally.slowest[1][:120]})")
    print(summary)
    assert tally.runs >= RUNS_MIN, summary
    if tally.failures:
        budget = [80]  # extra runs to reduce the failing URLs
        lines = []
        for cls, found in sorted(tally.failures.items(), key=lambda kv: -len(kv[1])):
            case, detail = min(found, key=lambda cd: (len(cd[0].url()), len(cd[0].pairs)))
            if not cls.startswith("slower") and budget[0] > 0:
                smaller, why = reduce(case, cls, budget)
                if why:
                    case, detail = smaller, why
            lines.append(f"- {cls} [{len(found)} runs]: {case.url()}  — {detail}")
        pytest.fail(f"{summary}\n{len(tally.failures)} failure classes:\n" + "\n".join(lines), pytrace=False)


# --------------------------------------------------------------------------- notices on the first run


PHISH = {"schemes": "[click](https://example.org/phish)", "m": "bob@example.org", "lam": "WWW.example.org/x"}


def test_a_url_host_or_email_from_the_url_is_quoted_in_a_notice_that_links_nothing():
    """``/?schemes=[click](https://example.org/phish)``: the notice quotes the value, and its
    rendered text (escapes resolved, as remark-gfm sees it) holds no bare URL, www. host or
    e-mail address that GFM's autolink literals would make a link of."""
    at, _ = first_run(c("runtime", urllib.parse.urlencode(PHISH)))
    assert not at.exception, [e.value for e in at.exception]
    bodies = [w.proto.body for w in at.warning]  # the Markdown Streamlit renders
    texts = [rendered(b) for b in bodies]
    for value in PHISH.values():
        assert any(value in t.replace("\u2060", "") for t in texts), (value, texts)  # quoted, nothing lost
    for body, t in zip(bodies, texts, strict=True):
        assert autolinks(t) == [], t
        assert not markdown_problems(body, notice=True), body


@pytest.mark.parametrize("page, query, key", [
    ("error", "eta=junk", "eta"),
    ("timeline", "tl_iters=junk", "tl_iters"),
    ("tradeoffs", "axis=junk", "axis"),
    ("local_sgd", "D=junk", "D"),
    ("runtime", "rt_view=junk", "rt_view"),
])
def test_a_page_key_is_named_by_a_notice_on_the_first_run(page, query, key):
    at, _ = first_run(c(page, query))
    assert not at.exception, [e.value for e in at.exception]
    warnings = [w.value for w in at.warning]
    assert any(key in shown(w) for w in warnings), warnings

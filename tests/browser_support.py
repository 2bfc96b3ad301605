"""Support for tests/test_browser.py: the server, the browser, and reading/moving the sidebar.

The test drives the real app in Debian's headless Chromium.  Everything here works from the
DOM and the URL, the two things a person sees; the only knowledge taken from the code is the
control declarations (key, label, default, options) and the delay families' parameters, read
from the app under test in a subprocess (``introspect``), so the same test can be pointed at
another checkout with ``DISTSGD_APP_DIR`` (e.g. an old commit, to see the test fail there).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

try:
    from playwright.sync_api import Error as PlaywrightError  # its TimeoutError is one too
except ImportError:  # the chromium fixture skips (or fails, on CI) before any of this runs
    class PlaywrightError(Exception):  # type: ignore[no-redef]
        pass

ROOT = Path(__file__).resolve().parent.parent
# the checkout whose app is served (default: this one); its distsgd is the one introspected
APP_DIR = Path(os.environ.get("DISTSGD_APP_DIR") or ROOT).resolve()
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ARTIFACTS = APP_DIR / "test-artifacts" / "screenshots"
DOCS_SHOTS = APP_DIR / "docs" / "screenshots"
VIEWPORT = {"width": 1400, "height": 1000}

SERVER_START_S = 60  # until /_stcore/health answers
RENDER_S = 90        # one rerun: script finished and charts drawn (a bound on a busy machine, not a target)
RERUN_START_S = 10   # an action that must rerun the script has started a run by then
QUIET_MS = 400       # idle this long with no new run = settled

SIDEBAR = '[data-testid="stSidebar"]'
SIDEBAR_CONTENT = '[data-testid="stSidebarUserContent"]'
NAV_LINK = '[data-testid="stSidebarNav"] a'
CHART = '[data-testid="stPlotlyChart"] .js-plotly-plot .main-svg'
EXCEPTION = '[data-testid="stException"]'
ALERT = '[data-testid="stAlert"]'
DOWNLOAD = '[data-testid="stDownloadButton"] button'
GUARD_MESSAGES = ("Something went wrong", "Cannot compute this view")  # page.guard() hides errors in these


def ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def need(what: str) -> None:
    """Skip locally; fail on CI, which must run the browser test."""
    msg = f"browser test needs {what}"
    if ci():
        pytest.fail(f"{msg} (CI is set, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(f"{msg}; install it with `apt-get install chromium` or `make test`")


# ---------------------------------------------------------------------------------------------
# what the app declares (read from the app under test, not imported into the test process)
# ---------------------------------------------------------------------------------------------

_INTROSPECT = r"""
import json
from distsgd.ui import controls, presets
out = {"controls": {}, "family_labels": {}, "family_params": {}, "presets": {}, "option_labels": {}}
for key, c in controls.CONTROLS.items():
    dom = getattr(c, "domain", None)
    out["controls"][key] = {
        "label": c.label,
        "default": list(c.default) if getattr(c, "multi", False) else c.default,
        "options": list(c.options) if getattr(c, "options", None) else None,
        "multi": bool(getattr(c, "multi", False)),
        "numeric": dom is not None,
    }
try:
    from distsgd.ui import sidebar
    out["family_labels"] = {str(k): str(v) for k, v in dict(getattr(sidebar, "FAMILY_LABELS", {})).items()}
    out["family_params"] = {str(k): list(v) for k, v in dict(getattr(sidebar, "FAMILY_PARAMS", {})).items()}
    # every select that shows labels instead of its raw options (older apps: the delay's only)
    labels = dict(getattr(sidebar, "OPTION_LABELS", {"delay": getattr(sidebar, "FAMILY_LABELS", {})}))
    out["option_labels"] = {str(k): {str(a): str(b) for a, b in dict(v).items()} for k, v in labels.items()}
except Exception as exc:  # the sidebar module is being rewritten: the test copes without
    out["sidebar_error"] = repr(exc)
out["presets"] = {n: {k: (list(v) if isinstance(v, (list, tuple)) else v) for k, v in p.items()}
                  for n, p in dict(presets.PRESETS).items()}
print("@@JSON@@" + json.dumps(out, default=str))
"""


@dataclass
class Spec:
    controls: dict[str, dict[str, Any]]
    family_labels: dict[str, str]
    family_params: dict[str, list[str]]
    presets: dict[str, dict[str, Any]]
    option_labels: dict[str, dict[str, str]] = field(default_factory=dict)
    by_label: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        seen: dict[str, list[str]] = {}
        for key, c in self.controls.items():
            seen.setdefault(c["label"], []).append(key)
        self.by_label = {label: keys[0] for label, keys in seen.items() if len(keys) == 1}

    def key(self, label: str) -> str | None:
        return self.by_label.get(label)

    def display(self, key: str, raw: str) -> str:
        """How a select shows a raw option (e.g. the delay selectbox shows the family's label)."""
        return self.option_labels.get(key, {}).get(raw, raw)

    def raw_of_display(self, key: str, shown: str) -> str:
        for raw, lab in self.option_labels.get(key, {}).items():
            if lab == shown:
                return raw
        return shown

    def url_value(self, key: str, query: dict[str, list[str]]) -> Any:
        """The value the URL gives a control: its query value, or the default when absent."""
        c = self.controls[key]
        if c["multi"]:
            return list(query[key]) if key in query else [str(v) for v in c["default"]]
        if key in query:
            return query[key][-1]
        return str(c["default"]) if not c["numeric"] else c["default"]


def introspect() -> Spec:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(APP_DIR), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", _INTROSPECT], cwd=APP_DIR, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    blob = next((ln for ln in proc.stdout.splitlines() if ln.startswith("@@JSON@@")), None)
    if proc.returncode != 0 or blob is None:
        pytest.fail(f"cannot read the control declarations of the app in {APP_DIR} "
                    f"(distsgd.ui.controls.CONTROLS):\n{proc.stderr[-3000:]}", pytrace=False)
    d = json.loads(blob[len("@@JSON@@"):])
    labels = d.get("option_labels") or {"delay": d["family_labels"]}
    return Spec(d["controls"], d["family_labels"], d["family_params"], d["presets"], labels)


# ---------------------------------------------------------------------------------------------
# the server
# ---------------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    """A running ``streamlit run app.py``: its base URL and its log.  ``used`` is set once a
    test has opened a session on it (the deep-link test needs the server's very first one)."""
    url: str
    log: Path
    used: bool = False
    _read: int = 0  # how much of the log ``new_log`` has returned

    def new_log(self) -> str:
        """The server's log written since the previous call (the whole log the first time)."""
        with open(self.log, "rb") as f:
            f.seek(self._read)
            data = f.read()
        self._read += len(data)
        return data.decode(errors="replace")


@contextlib.contextmanager
def first_use(server: Server) -> Iterator[None]:
    """The first test on a server: its first session's first run imports the library and
    compiles on a cold process, which may take longer than RERUN_START_S on a loaded machine, so
    until this test ends a run is awaited for up to RENDER_S (any test may come first: ``-k``)."""
    global RERUN_START_S
    cold, server.used = not server.used, True
    before = RERUN_START_S
    if cold:
        RERUN_START_S = max(RERUN_START_S, RENDER_S)
    try:
        yield
    finally:
        RERUN_START_S = before


@contextlib.contextmanager
def serving(log_path: Path) -> Iterator[Server]:
    """``streamlit run app.py`` from APP_DIR on a free port, in its own process group.

    Gives the running server; afterwards fails if the server logged a traceback since the tests
    last read its log (page.guard() shows a polite message but logs the exception: none may have
    happened; each browser test reads the log when it ends, so it reports its own).
    """
    port = free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1",
           "--browser.gatherUsageStats", "false",
           # others edit the sources while the suite runs: no "File change. Rerun?" prompt
           "--server.fileWatcherType", "none"]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=APP_DIR, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    server = Server(f"http://127.0.0.1:{port}", log_path)
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with {proc.returncode}:\n{log_path.read_text(errors='replace')}")
            try:
                with urllib.request.urlopen(f"{server.url}/_stcore/health", timeout=2) as r:
                    if r.status == 200 and r.read().strip() == b"ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"streamlit did not answer /_stcore/health within {SERVER_START_S} s:\n"
                            f"{log_path.read_text(errors='replace')}")
            time.sleep(0.25)
        yield server
        log_text = server.new_log()  # before shutdown, which may log noise
    finally:
        stop(proc)
    assert "Traceback" not in log_text, f"the server logged a traceback:\n{log_text[-20000:]}"


def stop(proc: subprocess.Popen) -> None:
    """Terminate the whole process group (streamlit and anything it started)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    try:  # children that outlived the leader
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# ---------------------------------------------------------------------------------------------
# waiting: count script runs in the page, wait for one to start, then for quiet
# ---------------------------------------------------------------------------------------------

# Counts every change of stApp's data-test-script-state to a busy state (rerunRequested,
# running, stopRequested), so that "a rerun happened since X" can be told from "not started yet",
# and notes the time of the last change to the sidebar: its widgets are drawn (lazily loaded
# widget code) a few hundred ms after the script has finished.
RUN_COUNTER = """
(() => {
  window.__stBusy = 0; window.__stState = null; window.__stMut = performance.now();
  const see = (s) => {
    if (s !== window.__stState) {
      if (s && s !== 'notRunning' && s !== 'initial') window.__stBusy++;
      window.__stState = s;
    }
  };
  // A fast run can go running → notRunning within one batch of mutation records: replay every
  // state the attribute passed through (each record's old value), then the current one.
  const look = (records) => {
    const passed = records.filter((r) => r.type === 'attributes').map((r) => r.oldValue);
    for (const s of passed.slice(1)) see(s);
    const app = document.querySelector('[data-testid="stApp"]');
    see(app ? app.getAttribute('data-test-script-state') : null);
  };
  new MutationObserver(look).observe(document, {subtree: true, childList: true, attributes: true,
                                               attributeOldValue: true,
                                               attributeFilter: ['data-test-script-state']});
  new MutationObserver((records) => {
    for (const r of records) {
      const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
      if (el && el.closest('[data-testid="stSidebar"]')) { window.__stMut = performance.now(); return; }
    }
  }).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
})();
"""

IDLE_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
    if (document.querySelector('[data-stale="true"]')) return false;
    const w = document.querySelector('[data-testid="stStatusWidget"]');
    return !w || !/running|stop/i.test(w.innerText);
}"""

# the sidebar drawn (its widgets are there, no skeleton in their place: on a first load they
# come seconds after the run, once the browser has loaded and run their code) and unchanged
# for this many ms
QUIET_JS = """ms => (performance.now() - (window.__stMut || 0)) >= ms
    && !!document.querySelector('[data-testid="stSidebarUserContent"] input')
    && !document.querySelector('[data-testid="stSidebar"] [data-testid="stSkeleton"]')"""


class _Runs:
    """Script runs the server has finished for a page (``script_finished`` ForwardMsgs on its
    websocket, full runs and fragment runs alike).  The page's own state attribute is no count:
    a fast run's rerunRequested → running → notRunning can reach the DOM as one React commit."""

    def __init__(self, pg) -> None:
        self.finished = 0
        pg.on("websocket", self._socket)

    def _socket(self, ws) -> None:
        if ws.url.endswith("/_stcore/stream"):
            ws.on("framereceived", self._frame)

    def _frame(self, payload: str | bytes) -> None:
        if isinstance(payload, bytes) and ForwardMsg.FromString(payload).WhichOneof("type") == "script_finished":
            self.finished += 1


_RUNS: dict[int, _Runs] = {}


def runs(pg) -> int:
    """Script runs finished so far (Playwright delivers the frames while the test waits)."""
    return _RUNS[id(pg)].finished


def settle(pg, since: int | None = None, what: str = "", charts: bool = False) -> None:
    """Wait until a run has started after ``since`` (if given), then until the app is idle and
    stays idle, with no new run and no change to the sidebar, for QUIET_MS."""
    if since is not None:
        start = time.monotonic()
        while runs(pg) <= since:
            if time.monotonic() - start > RERUN_START_S:
                raise AssertionError(f"{what}: the app did not rerun within {RERUN_START_S} s")
            pg.wait_for_timeout(50)
    deadline = time.monotonic() + RENDER_S
    while True:
        try:
            pg.wait_for_function(IDLE_JS, polling=100, timeout=max(1.0, deadline - time.monotonic()) * 1000)
        except PlaywrightError:
            raise AssertionError(f"{what}: the app was still busy after {RENDER_S} s") from None
        n = runs(pg)
        try:  # the sidebar stops changing (one that never does is settled at the deadline)
            pg.wait_for_function(QUIET_JS, arg=QUIET_MS, polling=100,
                                 timeout=max(1.0, deadline - time.monotonic()) * 1000)
        except PlaywrightError:
            pass
        fetches = _FETCHES.get(id(pg))
        while fetches is not None and not fetches.quiet(QUIET_MS) and time.monotonic() < deadline:
            pg.wait_for_timeout(100)  # Playwright delivers the request events while it waits
        if runs(pg) == n and pg.evaluate(IDLE_JS) and pg.evaluate(QUIET_JS, QUIET_MS):
            break
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: the app kept rerunning for {RENDER_S} s")
    if charts:
        pg.wait_for_selector(CHART, state="attached")


class _Fetches:
    """HTTP requests of a page still in flight, and when the last one ended: Streamlit loads a
    widget's code the first time one is drawn, after the script run that drew it has ended."""

    def __init__(self, pg) -> None:
        self.open: set[Any] = set()
        self.last = time.monotonic()
        pg.on("request", self._start)
        pg.on("requestfinished", self._end)
        pg.on("requestfailed", self._end)

    def _start(self, req) -> None:
        self.open.add(req)

    def _end(self, req) -> None:
        self.open.discard(req)
        self.last = time.monotonic()

    def quiet(self, ms: float) -> bool:
        return not self.open and (time.monotonic() - self.last) * 1000 >= ms


_FETCHES: dict[int, _Fetches] = {}


def new_page(browser, errors: list[str]):
    pg = browser.new_page()
    pg.add_init_script(RUN_COUNTER)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    _FETCHES[id(pg)] = _Fetches(pg)
    _RUNS[id(pg)] = _Runs(pg)
    return pg


SLOW_NETWORK = {"offline": False, "latency": 150, "downloadThroughput": 1_000_000, "uploadThroughput": 1_000_000}
FAST_NETWORK = {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}


def slow_network(pg):
    """A first visit over a slow link: no HTTP cache, 150 ms latency, 1 MB/s (Chromium's network
    emulation).  The widgets' code then arrives while the first run is going, as it does for a
    person far from the server.  Returns the CDP session, for ``fast_network``."""
    cdp = pg.context.new_cdp_session(pg)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    cdp.send("Network.emulateNetworkConditions", SLOW_NETWORK)
    return cdp


def fast_network(cdp) -> None:
    cdp.send("Network.emulateNetworkConditions", FAST_NETWORK)
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": False})


def open_url(pg, url: str, charts: bool = False) -> None:
    pg.goto(url)
    settle(pg, since=0, what=f"open {url}", charts=charts)


def download_csv(pg) -> str:
    """Click the page's first "Download the data (CSV)" button: the text of the file it gives."""
    with pg.expect_download(timeout=RENDER_S * 1000) as got:
        pg.locator(DOWNLOAD).first.click()
    return Path(got.value.path()).read_text(encoding="utf-8")


def path_of(url: str) -> str:
    return re.sub(r"^https?://[^/]+", "", url).split("?")[0].rstrip("/") or "/"


def query_of(url: str) -> dict[str, list[str]]:
    return urllib.parse.parse_qs(urllib.parse.urlparse(url).query, keep_blank_values=True)


def click_page(pg, path: str) -> None:
    """Click the sidebar link of a page (``/``, ``/error``, ...)."""
    link = pg.locator(f'{NAV_LINK}[href$="{path}"]')
    if path == "/":
        link = pg.locator(NAV_LINK).first
    link.first.click()


# ---------------------------------------------------------------------------------------------
# reading the sidebar
# ---------------------------------------------------------------------------------------------

READ_SIDEBAR = """() => {
  const root = document.querySelector('[data-testid="stSidebar"] [data-testid="stSidebarUserContent"]')
            || document.querySelector('[data-testid="stSidebar"]');
  const widgets = [], texts = [];
  if (!root) return {widgets, texts};
  const kinds = ['stSlider', 'stSelectSlider', 'stNumberInput', 'stSelectbox', 'stMultiSelect', 'stRadio',
                 'stCheckbox', 'stToggle', 'stTextInput', 'stFileUploader'];
  const labelOf = (w) => {
    // textContent, not innerText: a widget in a collapsed expander is not rendered
    const l = w.querySelector('[data-testid="stWidgetLabel"]');
    let t = l ? l.textContent.trim() : '';
    if (!t) { const a = w.querySelector('input[aria-label], [role="slider"][aria-label]');
              t = a ? (a.getAttribute('aria-label') || '').trim() : ''; }
    return t;
  };
  for (const w of root.querySelectorAll(kinds.map(k => `[data-testid="${k}"]`).join(','))) {
    const kind = w.getAttribute('data-testid');
    let value = null;
    if (kind === 'stSlider') {
      // what the thumb shows (aria-valuetext): the range input's own value is snapped to the
      // grid min + k·step, which a default need not lie on (1.5 shows as 1.50, the input says 1.51)
      const shown = (i) => { const t = i.getAttribute('aria-valuetext');
                             return t !== null && t.trim() !== '' && isFinite(Number(t)) ? t.trim() : i.value; };
      const r = [...w.querySelectorAll('input[type="range"]')].map(shown);
      value = r.length ? r.join(',')
            : [...w.querySelectorAll('[role="slider"]')].map(s => s.getAttribute('aria-valuenow')).join(',');
    } else if (kind === 'stSelectSlider') {
      const r = [...w.querySelectorAll('input[type="range"], [role="slider"]')];
      value = r.map(s => s.getAttribute('aria-valuetext') || s.getAttribute('aria-valuenow') || s.value).join(',');
    } else if (kind === 'stNumberInput' || kind === 'stTextInput') {
      const i = w.querySelector('input'); value = i ? i.value : null;
    } else if (kind === 'stSelectbox') {
      const i = w.querySelector('input[role="combobox"], input');
      if (i && i.value) value = i.value;
      else { const l = w.querySelector('[data-testid="stWidgetLabel"]');
             value = w.textContent.replace(l ? l.textContent : '', '').trim(); }
    } else if (kind === 'stMultiSelect') {
      let tags = [...w.querySelectorAll('[data-tag] [title], [data-tag]')];
      tags = tags.filter(t => !t.matches('[data-tag]') || !t.querySelector('[title]'));
      if (!tags.length) tags = [...w.querySelectorAll('[data-baseweb="tag"] span[title], [data-baseweb="tag"]')];
      value = [...new Set(tags.map(t => (t.getAttribute('title') || t.textContent).trim()))];
    } else if (kind === 'stRadio') {
      const c = w.querySelector('input[type="radio"]:checked');
      if (c) { const lab = c.closest('label'); value = lab ? lab.textContent.trim() : c.value; }
      else {
        const r = w.querySelector('[role="radio"][aria-checked="true"]'); value = r ? r.textContent.trim() : null;
      }
    } else if (kind === 'stCheckbox' || kind === 'stToggle') {
      const i = w.querySelector('input'); value = i ? String(i.checked) : null;
    } else if (kind === 'stFileUploader') {
      value = [...w.querySelectorAll('[data-testid="stFileChipName"], [data-testid="stFileUploaderFileName"]')]
              .map(e => e.textContent.trim()).join(',');
    }
    widgets.push({kind, label: labelOf(w), value});
  }
  for (const m of root.querySelectorAll('[data-testid="stMarkdown"], [data-testid="stCaptionContainer"]')) {
    if (m.closest('[data-testid="stWidgetLabel"]')) continue;
    const t = m.textContent.trim(); if (t) texts.push(t);
  }
  return {widgets, texts};
}"""


@dataclass
class Snap:
    """What a person sees of the sidebar and the URL after a rerun."""
    path: str
    url: str
    query: dict[str, list[str]]
    widgets: dict[str, tuple[str, Any]]   # label -> (kind, value as shown)
    texts: list[str]                       # sidebar markdown and captions
    alerts: list[str]                      # notices (st.warning/st.error) on the page

    def caption(self, prefix: str) -> str | None:
        return next((t for t in self.texts if t.startswith(prefix)), None)


def snap(pg, spec: Spec) -> Snap:
    raw = pg.evaluate(READ_SIDEBAR)
    widgets: dict[str, tuple[str, Any]] = {}
    for w in raw["widgets"]:
        widgets.setdefault(w["label"], (w["kind"], w["value"]))
    # a control whose range has collapsed to one value is drawn as "label: **value**"
    for t in raw["texts"]:
        mt = re.match(r"^(.+?):\s*(\S+)$", t)
        if mt and spec.key(mt.group(1)) and mt.group(1) not in widgets:
            widgets[mt.group(1)] = ("markdown", mt.group(2))
    alerts = [a.strip() for a in pg.locator(ALERT).all_inner_texts()]
    return Snap(path_of(pg.url), pg.url, query_of(pg.url), widgets, raw["texts"], alerts)


def _num(v: Any) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _shown_tolerance(v: Any) -> float:
    """Half a unit in the last shown decimal of a number shown as text ("1.50" → 0.005)."""
    if isinstance(v, str) and re.fullmatch(r"\s*-?\d+\.\d+\s*", v):
        return 0.5 * 10.0 ** -len(v.strip().split(".")[1]) + 1e-12
    return 0.0


def same(a: Any, b: Any) -> bool:
    """Equal as shown: numbers numerically (1 == 1.0; "1.50" == 1.5000000001, a slider shows two
    decimals), lists as sets, the rest as text."""
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and sorted(map(str, a)) == sorted(map(str, b))
    x, y = _num(a), _num(b)
    if x is not None and y is not None:
        tol = max(_shown_tolerance(a), _shown_tolerance(b))
        return math.isclose(x, y, rel_tol=1e-9, abs_tol=max(tol, 1e-12))
    return str(a) == str(b)


def url_text(key: str, query: dict[str, list[str]]) -> str:
    if key not in query:
        return f"{key} absent (default)"
    vals = query[key]
    return "&".join(f"{key}={v}" for v in vals)


def mismatch_with_url(spec: Spec, s: Snap) -> list[str]:
    """Controls whose widget and URL disagree (the URL must mirror every sidebar control)."""
    out = []
    for label, (kind, shown) in s.widgets.items():
        key = spec.key(label)
        if key is None or kind == "stFileUploader":
            continue
        want = spec.url_value(key, s.query)
        if spec.controls[key]["options"] and not spec.controls[key]["multi"]:
            want = spec.display(key, str(want))
        if not same(shown, want):
            out.append(f"{key} shows {shown!r} but the URL says {url_text(key, s.query)} (→ {want!r})")
    return out


# ---------------------------------------------------------------------------------------------
# moving the sidebar's widgets
# ---------------------------------------------------------------------------------------------

def widget(pg, kind: str, label: str):
    """The sidebar widget of this kind whose label is ``label``."""
    loc = pg.locator(f'{SIDEBAR} {SIDEBAR_CONTENT} [data-testid="{kind}"]').filter(
        has=pg.locator('[data-testid="stWidgetLabel"]', has_text=label))
    n = loc.count()
    if n > 1:  # has_text matches substrings: keep the exact one
        for i in range(n):
            if (loc.nth(i).locator('[data-testid="stWidgetLabel"]').text_content() or "").strip() == label:
                return loc.nth(i)
    return loc.first


def open_expanders(pg) -> None:
    """Open every collapsed expander in the sidebar (a collapsed one is inert to the keyboard)."""
    for d in pg.locator(f'{SIDEBAR} details:not([open]) > summary').all():
        d.click()
        pg.wait_for_timeout(150)


def slider_step(pg, label: str, direction: int = 0) -> tuple[str, str]:
    """Press ArrowRight (or ArrowLeft at the maximum / when direction < 0) on a slider; returns
    (key pressed, the value the widget shows at once)."""
    w = widget(pg, "stSlider", label)
    thumb = w.locator('input[type="range"]').first
    if thumb.count() == 0:
        thumb = w.locator('[role="slider"]').first
    cur = _num(thumb.get_attribute("value") or thumb.get_attribute("aria-valuenow"))
    hi = _num(thumb.get_attribute("max") or thumb.get_attribute("aria-valuemax"))
    lo = _num(thumb.get_attribute("min") or thumb.get_attribute("aria-valuemin"))
    key = "ArrowRight"
    if direction < 0 or (direction == 0 and cur is not None and hi is not None and cur >= hi):
        key = "ArrowLeft"
    if key == "ArrowLeft" and cur is not None and lo is not None and cur <= lo:
        key = "ArrowRight"
    thumb.focus()
    thumb.press(key)
    return key, _thumb_value(thumb)


def _thumb_value(thumb) -> str:
    """The value a slider's thumb shows (see READ_SIDEBAR)."""
    t = (thumb.get_attribute("aria-valuetext") or "").strip()
    if _num(t) is not None:
        return t
    return thumb.get_attribute("value") or thumb.get_attribute("aria-valuenow") or ""


def slider_key(pg, label: str, key: str) -> str:
    w = widget(pg, "stSlider", label)
    thumb = w.locator('input[type="range"], [role="slider"]').first
    thumb.focus()
    thumb.press(key)
    return _thumb_value(thumb)


def number_set(pg, label: str, value: str) -> None:
    w = widget(pg, "stNumberInput", label)
    box = w.locator("input").first
    box.fill(value)
    box.press("Enter")


def _listbox_options(pg):
    return pg.locator('[role="listbox"] [role="option"]')


def open_list(pg, w) -> None:
    """Open the list of a selectbox or multiselect: click its box; if no list shows, ArrowDown;
    then its Open button."""
    box = w.locator("input").first
    opts = _listbox_options(pg)
    tries = [lambda: box.click(), lambda: (box.focus(), box.press("ArrowDown")),
             lambda: w.locator('button[aria-label="Open"]').first.click(force=True)]
    for i, attempt in enumerate(tries):
        attempt()
        try:
            opts.first.wait_for(timeout=1500 if i < len(tries) - 1 else 10000)
            return
        except PlaywrightError:
            if i == len(tries) - 1:
                raise


def select_options(pg, label: str) -> list[str]:
    """The option texts of a sidebar selectbox (opens and closes its list)."""
    open_list(pg, widget(pg, "stSelectbox", label))
    texts = [t.strip() for t in _listbox_options(pg).all_inner_texts()]
    pg.keyboard.press("Escape")
    pg.wait_for_timeout(100)
    return texts


def select_choose(pg, label: str, option: str) -> None:
    open_list(pg, widget(pg, "stSelectbox", label))
    _exact_option(pg, option).click()


def _exact_option(pg, option: str):
    opts = _listbox_options(pg)
    for i in range(opts.count()):
        if opts.nth(i).inner_text().strip() == option:
            return opts.nth(i)
    raise AssertionError(f"no option {option!r} in {opts.all_inner_texts()}")


def multiselect_remove(pg, label: str, option: str) -> None:
    w = widget(pg, "stMultiSelect", label)
    btn = w.locator(f'button[aria-label="Remove {option}"]')
    if btn.count() == 0:  # older markup: the tag's close icon
        btn = w.locator('[data-baseweb="tag"]', has_text=option).locator('[role="presentation"]')
    btn.first.click()


def multiselect_add(pg, label: str, option: str) -> None:
    open_list(pg, widget(pg, "stMultiSelect", label))
    _exact_option(pg, option).click()
    pg.keyboard.press("Escape")


def radio_choose(pg, label: str, option: str) -> None:
    w = widget(pg, "stRadio", label)
    w.locator("label", has_text=option).first.click()


def main_upload(pg, name: str, data: bytes, mime: str = "text/csv") -> str:
    """Give the page's own file uploader (in the main area) a file, wait for its run and charts;
    the main area's text then."""
    up = pg.locator('[data-testid="stMain"] [data-testid="stFileUploader"] input[type="file"]')
    assert up.count() == 1, f"no file uploader in the main area of {pg.url}"
    before = runs(pg)
    up.first.set_input_files({"name": name, "mimeType": mime, "buffer": data})
    settle(pg, before, f"uploading {name}", charts=True)
    return pg.locator('[data-testid="stMain"]').inner_text()


def upload(pg, files: Any) -> None:
    """Give the sidebar's file uploader a file (a path or a {name, mimeType, buffer} payload)."""
    pg.locator(f'{SIDEBAR} [data-testid="stFileUploader"] input[type="file"]').first.set_input_files(files)


# ---------------------------------------------------------------------------------------------
# page checks and pictures
# ---------------------------------------------------------------------------------------------

def clean_problems(pg, where: str) -> list[str]:
    out = []
    if pg.locator(EXCEPTION).count():
        out.append(f"{where}: st.exception shown:\n{pg.locator(EXCEPTION).first.inner_text()[:1500]}")
    text = pg.locator("body").inner_text()
    if "Traceback" in text:
        out.append(f"{where}: a traceback is shown")
    for msg in GUARD_MESSAGES:
        if msg in text:
            i = text.index(msg)
            out.append(f"{where}: page.guard() caught an error: {text[i:i + 300]!r}")
    return out


def screenshot(pg, name: str, full: bool = True) -> Path:
    """Full page: Streamlit scrolls inside its main section, so grow the viewport to fit it."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    if not full:
        pg.screenshot(path=str(path))
        return path
    height = pg.evaluate(
        """() => Math.max(document.documentElement.scrollHeight,
             ...[...document.querySelectorAll('[data-testid="stMain"], [data-testid="stAppViewContainer"], section')]
               .map(e => e.scrollHeight))""")
    pg.set_viewport_size({"width": VIEWPORT["width"], "height": max(VIEWPORT["height"], min(int(height), 12000))})
    try:
        pg.wait_for_timeout(300)  # plotly relayout after the resize
        pg.screenshot(path=str(path), full_page=True)
    finally:
        pg.set_viewport_size(VIEWPORT)
        pg.wait_for_timeout(300)
    if os.environ.get("DISTSGD_DOCS_SCREENSHOTS"):
        DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
        pg.evaluate("() => document.activeElement && document.activeElement.blur()")
        pg.screenshot(path=str(DOCS_SHOTS / f"{name}.png"))
    return path


class Problems:
    """Every broken promise found, so that one run reports all of them (then the test fails)."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.shots = 0

    def add(self, msg: str, pg=None, shot: str | None = None) -> None:
        if pg is not None and shot and self.shots < 8:
            try:
                p = screenshot(pg, f"fail-{shot}", full=False)
                msg += f"\n    (screenshot: {p})"
                self.shots += 1
            except (PlaywrightError, OSError):
                pass
        self.items.append(msg)

    def part(self, name: str, fn: Callable[[], None]) -> None:
        """Run one part; a failed check or a browser timeout in it is a problem too, and the next
        part still runs (any other exception is a bug of the test: it propagates)."""
        try:
            fn()
        except AssertionError as exc:
            self.add(f"[{name}] stopped: {exc}")
        except PlaywrightError as exc:  # a timeout, mostly
            self.add(f"[{name}] stopped: {type(exc).__name__}: {str(exc)[:1500]}")

    def __bool__(self) -> bool:
        return bool(self.items)

    def report(self) -> str:
        return f"{len(self.items)} problem(s):\n" + "\n".join(f"- {p}" for p in self.items)


def number_step(pg, label: str) -> str:
    """Add one step to a number input (or take one off at its maximum) and press Enter; returns
    the new value as typed."""
    box = widget(pg, "stNumberInput", label).locator("input").first
    cur = _num(box.input_value()) or 0.0
    step = _num(box.get_attribute("step")) or 1.0
    hi = _num(box.get_attribute("max"))
    new = cur - step if hi is not None and cur + step > hi else cur + step
    text = str(int(new)) if float(new).is_integer() and float(step).is_integer() else repr(round(new, 10))
    box.fill(text)
    box.press("Enter")
    return text


# ---------------------------------------------------------------------------------------------
# a frozen tab (issue 22): quick clicks through the navigation
# ---------------------------------------------------------------------------------------------

# what the browser logs when it drops the connection for good: a reference to a cached message
# it no longer has ("Cached ForwardMsg MISS"), and the fatal connection error that follows
FROZEN_CONSOLE = re.compile(r"Cached ForwardMsg MISS|Failed to process a Websocket message"
                            r"|encountered fatal error", re.IGNORECASE)
# the connection error shown to the person: the status in the toolbar ("Error") and the dialog
CONNECTION_STATUS = '[data-testid="stConnectionStatus"]'
DIALOG = '[role="dialog"]'


def console_log(pg) -> list[str]:
    """Every console message of the page from now on, as ``"type: text"`` (a list that grows)."""
    out: list[str] = []
    pg.on("console", lambda m: out.append(f"{m.type}: {m.text}"))
    return out


# Clicks on the sidebar's page links (by URL path), one every ``gap`` ms from the first, by timers
# set all at once in the page: like a person's clicks they keep their pace whatever the page is
# doing, and the ones that came due while the page was busy drawing run back to back once it is
# free, as a person's queued clicks do.  Each goes to the app's own click handler.  (Playwright's
# mouse clicks wait for the page to take each one before the next: on two shared cores eight of
# them spread over 6–12 s, each page drawn in full before the next click, which is not the burst
# a person makes.)
CLICK_BURST_JS = """({sel, paths, gap}) => new Promise((resolve) => {
  const pathOf = (href) => new URL(href, location.href).pathname.replace(/\\/+$/, '') || '/';
  const done = [];
  let missing = null;
  paths.forEach((path, i) => setTimeout(() => {
    if (missing) return;
    const link = [...document.querySelectorAll(sel)].find((a) => pathOf(a.href) === path);
    if (link) { link.click(); done.push(path); } else missing = path;
    if (missing || done.length === paths.length) resolve({done, missing});
  }, i * gap));
})"""


def click_burst(pg, paths: list[str], gap_ms: int) -> float:
    """Click the sidebar link of each page in ``paths`` (``/``, ``/error``, ...), one every
    ``gap_ms`` (see CLICK_BURST_JS); returns the monotonic time when the last click was done."""
    got = pg.evaluate(CLICK_BURST_JS, {"sel": NAV_LINK, "paths": paths, "gap": gap_ms})
    if got["missing"] is not None:
        raise AssertionError(f"no sidebar link to {got['missing']} (clicked {got['done']})")
    return time.monotonic()


def frozen(pg, console: list[str]) -> list[str]:
    """Signs of a tab the connection has given up on: the console's fatal errors, the toolbar's
    connection status saying Error, a "Connection error" dialog."""
    out = [c for c in console if FROZEN_CONSOLE.search(c)][:3]
    status = pg.locator(CONNECTION_STATUS)
    if status.count() and re.search(r"error", status.first.inner_text(), re.IGNORECASE):
        out.append(f"the toolbar's connection status says {status.first.inner_text()!r}")
    for text in pg.locator(DIALOG).all_inner_texts():
        if re.search(r"connection error", text, re.IGNORECASE):
            out.append(f"a dialog says {' '.join(text.split())[:300]!r}")
    return out


def idle_within(pg, seconds: float) -> bool:
    """The app is idle (see IDLE_JS) with its sidebar's widgets drawn within ``seconds``."""
    js = f"() => ({IDLE_JS})() && !!document.querySelector('{SIDEBAR_CONTENT} input')"
    try:
        pg.wait_for_function(js, timeout=max(0.1, seconds) * 1000, polling=100)
        return True
    except PlaywrightError:
        return False

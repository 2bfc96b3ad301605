"""The dashboard in a real browser: headless Chromium (Debian's) driving ``streamlit run app.py``.

    .venv/bin/python -m pytest tests/test_browser.py -q      # or: make test (runs everything)

Starts the app on a free port, opens every page (clicking the sidebar links), waits until the
app is idle and the charts are drawn, checks there is no exception or traceback, saves a
full-page screenshot per page under ``test-artifacts/screenshots/``, moves the ``m`` slider with
the keyboard (the page reruns and the URL follows), opens a hostile URL (junk and
out-of-range values must give notices, never an exception) and a deep link (its values must
come back).  The server log must hold no traceback: page.guard() hides errors from the page
but logs them.  About 30–45 s.

Chromium is ``/usr/bin/chromium`` (``apt-get install chromium``; ``make test`` does it); no
browser is ever downloaded.  Without it the test is skipped — unless ``CI`` is set (to anything
but "", 0, false, no), where it fails, so CI can never skip it silently.

``DISTSGD_DOCS_SCREENSHOTS=1`` also writes 1400×1000 screenshots of every page to
``docs/screenshots/<page>.png`` for the README.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

from distsgd.ui.state import CONTROLS

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ARTIFACTS = ROOT / "test-artifacts" / "screenshots"
DOCS_SHOTS = ROOT / "docs" / "screenshots"
VIEWPORT = {"width": 1400, "height": 1000}

# URL path (as st.navigation derives it from the file name) -> screenshot name, a word of its title
PAGES = {
    "/": ("runtime", "runtime"),
    "/error": ("error", "error"),
    "/delays": ("delays", "delay"),
    "/timeline": ("timeline", "timeline"),
    "/local_sgd": ("local_sgd", "local sgd"),
    "/tradeoffs": ("tradeoffs", "trade-off"),
}
HOSTILE = "/?m=abc&lam=0&delay=nonsense&K=1000"

SERVER_START_S = 60  # until /_stcore/health answers
RENDER_S = 45        # one page: script finished and charts drawn
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
CHART = '[data-testid="stPlotlyChart"] .js-plotly-plot .main-svg'
EXCEPTION = '[data-testid="stException"]'
GUARD_MESSAGES = ("Something went wrong", "Cannot compute this view")  # page.guard() hides errors in these


def _slider(pg, key: str):
    """The range input of a sidebar slider (its aria-label is the control's label)."""
    return pg.locator(f'[data-testid="stSidebar"] [data-testid="stSlider"] '
                      f'input[type="range"][aria-label="{CONTROLS[key].label}"]')


def _need(what: str) -> None:
    """Skip locally; fail on CI, which must run the browser test."""
    msg = f"browser test needs {what}"
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(f"{msg} (CI is set, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(f"{msg}; install it with `apt-get install chromium` or `make test`")


@pytest.fixture(scope="module")
def chromium() -> Path:
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        _need(f"Debian's Chromium at {CHROMIUM}")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _need("the playwright Python package (requirements-dev.txt)")
    return CHROMIUM


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(chromium: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``streamlit run app.py`` on a free port, in its own process group; its base URL."""
    port = _free_port()
    log_path = tmp_path_factory.mktemp("streamlit") / "streamlit.log"
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1",
           "--browser.gatherUsageStats", "false",
           # others edit the sources while the suite runs: no "File change. Rerun?" prompt
           "--server.fileWatcherType", "none"]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with {proc.returncode}:\n{log_path.read_text(errors='replace')}")
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                    if r.status == 200 and r.read().strip() == b"ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"streamlit did not answer /_stcore/health within {SERVER_START_S} s:\n"
                            f"{log_path.read_text(errors='replace')}")
            time.sleep(0.25)
        yield base
        log_text = log_path.read_text(errors="replace")  # before shutdown, which may log noise
    finally:
        _stop(proc)
    # page.guard() shows a polite message but logs the exception: none may have happened
    assert "Traceback" not in log_text, f"the server logged a traceback:\n{log_text}"


def _stop(proc: subprocess.Popen) -> None:
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
    # children that outlived the leader
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


@pytest.fixture(scope="module")
def browser(chromium: Path, tmp_path_factory: pytest.TempPathFactory):
    """A persistent Chromium context with a fresh profile, 1400×1000."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=str(chromium),
            headless=True, args=CHROMIUM_ARGS, viewport=VIEWPORT)
        ctx.set_default_timeout(RENDER_S * 1000)
        try:
            yield ctx
        finally:
            ctx.close()


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

def _wait_idle(pg, charts: bool = True) -> None:
    """Until the script has finished, nothing is stale, no status widget, and charts are drawn."""
    pg.wait_for_selector(IDLE, state="attached")
    pg.wait_for_function(
        """() => {
            const app = document.querySelector('[data-testid="stApp"]');
            if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
            if (document.querySelector('[data-stale="true"]')) return false;
            const w = document.querySelector('[data-testid="stStatusWidget"]');
            return !w || !/running|stop/i.test(w.innerText);
        }""")
    if charts:
        pg.wait_for_selector(CHART, state="attached")


def _path(url: str) -> str:
    return re.sub(r"^https?://[^/]+", "", url).split("?")[0].rstrip("/") or "/"


def _assert_clean(pg, where: str) -> None:
    assert pg.locator(EXCEPTION).count() == 0, f"{where}: st.exception shown:\n{pg.locator(EXCEPTION).first.inner_text()}"
    text = pg.locator("body").inner_text()
    assert "Traceback" not in text, f"{where}: a traceback is shown"
    for msg in GUARD_MESSAGES:
        assert msg not in text, f"{where}: page.guard() caught an error: {msg!r} in\n{text[:2000]}"


def _screenshot(pg, name: str) -> None:
    """Full page: Streamlit scrolls inside its main section, so grow the viewport to fit it."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    height = pg.evaluate(
        """() => Math.max(document.documentElement.scrollHeight,
             ...[...document.querySelectorAll('[data-testid="stMain"], [data-testid="stAppViewContainer"], section')]
               .map(e => e.scrollHeight))""")
    pg.set_viewport_size({"width": VIEWPORT["width"], "height": max(VIEWPORT["height"], min(int(height), 12000))})
    try:
        pg.wait_for_timeout(300)  # plotly relayout after the resize
        pg.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    finally:
        pg.set_viewport_size(VIEWPORT)
        pg.wait_for_timeout(300)
    if os.environ.get("DISTSGD_DOCS_SCREENSHOTS"):
        DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
        pg.evaluate("() => document.activeElement && document.activeElement.blur()")
        pg.screenshot(path=str(DOCS_SHOTS / f"{name}.png"))


# ---------------------------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------------------------

def test_dashboard_in_the_browser(server: str, browser) -> None:
    """One test (so that pytest-xdist never starts a second server and browser), three parts."""
    every_page_renders_and_the_slider_reruns(server, browser)
    hostile_url_gives_notices_not_exceptions(server, browser)
    a_copied_link_reproduces_the_view(server, browser)


def every_page_renders_and_the_slider_reruns(server: str, browser) -> None:
    pg = browser.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(server + "/")
    _wait_idle(pg)

    nav = pg.locator('[data-testid="stSidebarNav"] a')
    hrefs = [_path(nav.nth(i).get_attribute("href") or "") for i in range(nav.count())]
    assert hrefs == list(PAGES), f"sidebar page links {hrefs} are not {list(PAGES)}"

    for path, (name, word) in PAGES.items():
        if path != "/":
            pg.locator(f'[data-testid="stSidebarNav"] a[href$="{path}"]').click()
            pg.wait_for_url(lambda u, p=path: _path(u) == p)
        title = pg.locator("h1").first
        pg.wait_for_function(
            "w => { const h = document.querySelector('h1'); return h && h.innerText.toLowerCase().includes(w); }",
            arg=word)
        _wait_idle(pg)
        assert pg.locator(CHART).count() >= 1, f"{path}: no chart"
        _assert_clean(pg, path)
        _screenshot(pg, name)
        assert title.inner_text().strip(), f"{path}: empty title"

    # back to the runtime page and move m: 16 -> 19 with the keyboard
    pg.locator('[data-testid="stSidebarNav"] a[href$="/"]').first.click()
    pg.wait_for_url(lambda u: _path(u) == "/")
    _wait_idle(pg)
    m = _slider(pg, "m")
    start = int(m.get_attribute("value") or "0")
    m.focus()
    for _ in range(3):
        m.press("ArrowRight")
    want = start + 3
    pg.wait_for_url(re.compile(rf"[?&]m={want}(&|$)"))
    pg.wait_for_function(
        "w => document.body.innerText.includes(w)", arg=f"m = {want}")  # the page reran with the new m
    _wait_idle(pg)
    assert f"m = {want}" in pg.locator('[data-testid="stMain"]').inner_text()
    _assert_clean(pg, f"/ after m -> {want}")
    assert not errors, f"JavaScript errors: {errors}"
    pg.close()


def hostile_url_gives_notices_not_exceptions(server: str, browser) -> None:
    pg = browser.new_page()  # a new page is a new session: the URL is read again
    pg.goto(server + HOSTILE)
    _wait_idle(pg)
    alerts = pg.locator('[data-testid="stAlert"]')
    alerts.first.wait_for()
    text = "\n".join(alerts.all_inner_texts())
    assert "not a number" in text or "clamped" in text, f"no notice about the bad URL values:\n{text}"
    _assert_clean(pg, HOSTILE)
    # the bad values were replaced by the defaults (m) or clamped (K <= m), and written back
    assert _slider(pg, "m").get_attribute("value") == str(CONTROLS["m"].default)
    assert _slider(pg, "K").get_attribute("value") == str(CONTROLS["m"].default)
    query = urllib.parse.parse_qs(urllib.parse.urlparse(pg.url).query)
    assert query.get("m", [""])[0] != "abc" and query.get("delay", [""])[0] != "nonsense", pg.url
    assert query.get("K", [""])[0] != "1000", pg.url
    pg.close()


def a_copied_link_reproduces_the_view(server: str, browser) -> None:
    pg = browser.new_page()
    pg.goto(server + "/timeline?m=20&K=5&delay=exp&lam=2")
    _wait_idle(pg)
    assert "timeline" in pg.locator("h1").first.inner_text().lower()
    values = {key: _slider(pg, key).get_attribute("value") for key in ("m", "K", "lam")}
    assert values == {"m": "20", "K": "5", "lam": "2"}, values
    assert pg.locator('[data-testid="stAlert"]').count() == 0, pg.locator('[data-testid="stAlert"]').all_inner_texts()
    _assert_clean(pg, "/timeline?m=20&K=5&delay=exp&lam=2")
    pg.close()

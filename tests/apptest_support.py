"""AppTest helpers shared by the app tests and the dashboard benchmark.

AppTest resets ``PagesManager.uses_pages_directory`` before every run, and because this app
keeps its pages in a ``pages/`` folder the flag then comes back True, so AppTest's reruns take
Streamlit's legacy multipage path and execute the page file on its own, without ``app.py``
and its sidebar.  The real server keeps the False that ``st.navigation`` sets; here the flag
is pinned to False to match it.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")


@contextlib.contextmanager
def navigation_only() -> Iterator[None]:
    original = PagesManager.__init__

    def init(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    PagesManager.__init__ = init  # type: ignore[method-assign]
    try:
        yield
    finally:
        PagesManager.__init__ = original  # type: ignore[method-assign]


def open_app(page: str | None = None, query: dict | None = None, timeout: float = 120) -> AppTest:
    """A fresh AppTest of app.py, on ``page`` (e.g. "pages/error.py"), after its first run."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    if page:
        at.switch_page(page)
        at.run()
    return at

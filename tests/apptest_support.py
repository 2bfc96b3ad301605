"""AppTest helpers shared by the app tests and the dashboard benchmark.

AppTest resets ``PagesManager.uses_pages_directory`` before every run, and because this app
keeps its pages in a ``pages/`` folder the flag then comes back True, so AppTest's reruns take
Streamlit's legacy multipage path and execute the page file on its own, without ``app.py``
and its sidebar.  The real server keeps the False that ``st.navigation`` sets; here the flag
is pinned to False to match it.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import types
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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


#: the pages' settings boxes (distsgd.ui.sidebar.settings), drawn only while open
SETTINGS_BOXES = ("error", "tradeoffs", "local_sgd", "cluster", "graph")


def open_app(page: str | None = None, query: dict | None = None, timeout: float = 120,
             boxes_open: bool = True) -> AppTest:
    """A fresh AppTest of app.py, on ``page`` (e.g. "pages/error.py"), after its first run; with
    ``boxes_open`` every settings box open, as a reader who opened them (its controls drawn)."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    if boxes_open:
        for box in SETTINGS_BOXES:
            at.session_state[f"settings_{box}"] = True
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    if page:
        at.switch_page(page)
        at.run()
    return at


# -- what a run does: calls into the library's core, controls read and drawn -----------------

#: the library's functions that do real work (simulation, quadrature, sampling, sweeps, CSV):
#: a page reaches them only through a cached call of ``distsgd.ui.cached``
CORE_FUNCTIONS = (
    "simulate_runtime", "simulate_timeline", "simulate_error", "simulate_updates", "sample_order_statistic",
    "expected_runtime", "order_statistic_mean", "order_statistic_cdf", "order_statistic_pdf",
    "exact_error_vs_time", "bound_vs_time", "bound_time_to_target", "simulated_time_to_target",
    "runtime_rows", "runtime_vs_K", "runtime_vs_m", "runtime_vs_H", "error_rows", "target_rows",
    "async_speedup", "to_csv",
)
#: methods that do real work, by class name (a Delay's subclasses included)
CORE_METHODS = {"Delay": ("sample", "cdf", "sf", "pdf", "ppf", "isf"), "Timeline": ("rows",),
                "CommModel": ("time",)}
#: numpy work on samples a page might do itself
NUMPY_FUNCTIONS = ("quantile", "histogram")


def _subclasses(cls: type) -> list[type]:
    return [cls] + [s for c in cls.__subclasses__() for s in _subclasses(c)]


def _counted(calls: Counter, label: str, f: Callable) -> Callable:
    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls[label] += 1
        return f(*args, **kwargs)
    return wrapper


def _core(obj: Any) -> bool:
    """Whether ``obj`` is defined in the library's core (a ``distsgd`` module outside ``distsgd.ui``)."""
    where = getattr(obj, "__module__", None) or ""
    return where.startswith("distsgd") and not where.startswith("distsgd.ui")


def _patches(calls: Counter) -> list[tuple[Any, str, Any]]:
    """(owner, attribute, counting replacement) for every core entry point of CORE_FUNCTIONS,
    wherever a loaded ``distsgd`` module holds it, for CORE_METHODS and NUMPY_FUNCTIONS."""
    import numpy as np

    mods = [m for n, m in list(sys.modules.items())
            if m is not None and (n == "distsgd" or n.startswith("distsgd."))]
    found: dict[int, Callable] = {}
    classes: dict[type, tuple[str, ...]] = {}
    for mod in mods:
        for name, v in list(vars(mod).items()):
            if name in CORE_FUNCTIONS and callable(v) and _core(v) and not mod.__name__.startswith("distsgd.ui"):
                found[id(v)] = _counted(calls, f"{v.__module__}.{name}", v)
            if isinstance(v, type) and v.__name__ in CORE_METHODS and _core(v):
                for c in (_subclasses(v) if v.__name__ == "Delay" else [v]):
                    classes[c] = CORE_METHODS[v.__name__]
    out = [(mod, attr, found[id(v)]) for mod in mods for attr, v in list(vars(mod).items()) if id(v) in found]
    out += [(cls, name, _counted(calls, f"{cls.__name__}.{name}", cls.__dict__[name]))
            for cls, names in classes.items() for name in names
            if isinstance(cls.__dict__.get(name), types.FunctionType)]
    out += [(np, name, _counted(calls, f"numpy.{name}", getattr(np, name))) for name in NUMPY_FUNCTIONS]
    return out


@contextlib.contextmanager
def core_calls() -> Iterator[Counter]:
    """Count the calls into the core's working entry points while the block runs (an AppTest
    run executes in this process, so patched module attributes and methods are what it calls).
    Functions are found by name in every loaded ``distsgd`` module outside ``distsgd.ui`` and
    replaced wherever they were imported (``distsgd.ui.cached`` holds its own references)."""
    calls: Counter = Counter()
    undo: list[tuple[Any, str, Any]] = []
    try:
        for owner, attr, new in _patches(calls):
            undo.append((owner, attr, vars(owner)[attr]))
            setattr(owner, attr, new)
        yield calls
    finally:
        for owner, attr, v in reversed(undo):
            setattr(owner, attr, v)


@contextlib.contextmanager
def control_use() -> Iterator[dict[str, set[str]]]:
    """Record the controls a run reads (``state.value``) and draws (``state.bind``, which every
    widget of ``distsgd.ui.sidebar`` calls): ``{"read": {...}, "drawn": {...}}``; clear both
    between runs."""
    from distsgd.ui import state

    use: dict[str, set[str]] = {"read": set(), "drawn": set()}
    value, bind = state.value, state.bind

    def reading(key: str) -> Any:
        use["read"].add(key)
        return value(key)

    def drawing(key: str, *args: Any, **kwargs: Any) -> Any:
        use["drawn"].add(key)
        return bind(key, *args, **kwargs)

    state.value, state.bind = reading, drawing  # type: ignore[assignment]
    try:
        yield use
    finally:
        state.value, state.bind = value, bind  # type: ignore[assignment]


# -- fragment reruns: what the browser asks for when a control inside an st.fragment moves -----
#
# AppTest (1.67) always reruns the whole script.  A browser that moves a widget drawn inside a
# fragment asks for a rerun of that fragment only (RerunData.fragment_id_queue), and keeps the
# elements outside it.  ``fragment_runs()`` records each run's deltas (which carry the id of the
# fragment that drew them); ``fragment_rerun`` then finds the widget's fragment, and reruns it
# the way the server does, with the previous run's elements kept outside the fragment.

_LAST_DELTAS: dict[int, list[Any]] = {}  # one session's last run's delta messages
_FRAGMENT: dict[str, str | None] = {"id": None}  # the fragment the run in progress runs alone


def _sid(safe_state: Any) -> int:
    """One session's identity: the SessionState that AppTest and each of its runners wrap."""
    return id(object.__getattribute__(safe_state, "_state"))


@contextlib.contextmanager
def fragment_runs() -> Iterator[None]:
    """While active, AppTest runs record their deltas, and :func:`fragment_rerun` works.

    An AppTest run makes a new script runner whose first request is a full rerun, and a
    fragment request coalesces into a pending full one; so while a fragment rerun is in
    progress every rerun request of the runner names the fragment."""
    from streamlit.testing.v1 import local_script_runner as lsr

    original_run, original_rerun_data = lsr.LocalScriptRunner.run, lsr.RerunData

    def rerun_data(*args: Any, **kwargs: Any) -> Any:
        if _FRAGMENT["id"] is not None and not kwargs.get("fragment_id_queue"):
            kwargs["fragment_id_queue"] = [_FRAGMENT["id"]]
        return original_rerun_data(*args, **kwargs)

    def run(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        sid = _sid(self._session_state)
        if _FRAGMENT["id"] is not None:
            for msg in _LAST_DELTAS.get(sid, []):  # the browser keeps what is outside the fragment
                self.forward_msg_queue.enqueue(msg)
        tree = original_run(self, *args, **kwargs)
        _LAST_DELTAS[sid] = [m for m in self.forward_msgs() if m.WhichOneof("type") == "delta"]
        return tree

    lsr.LocalScriptRunner.run, lsr.RerunData = run, rerun_data  # type: ignore[method-assign, misc]
    try:
        yield
    finally:
        lsr.LocalScriptRunner.run, lsr.RerunData = original_run, original_rerun_data  # type: ignore[method-assign, misc]
        _LAST_DELTAS.clear()


def widget_fragment(at: AppTest, key: str) -> str | None:
    """The id of the fragment that drew the widget ``key`` in the last run (None: drawn by the
    script outside every fragment); KeyError if the last run drew no such widget."""
    from streamlit.runtime.state.common import user_key_from_element_id

    for msg in _LAST_DELTAS.get(_sid(at._session_state), []):
        if msg.delta.WhichOneof("type") != "new_element":
            continue
        element = msg.delta.new_element
        kind = element.WhichOneof("type")
        wid = getattr(getattr(element, kind), "id", "") if kind else ""
        if isinstance(wid, str) and wid.startswith("$$ID") and user_key_from_element_id(wid) == key:
            return msg.delta.fragment_id or None
    raise KeyError(f"no widget {key!r} in the last run (inside fragment_runs())")


def fragment_rerun(at: AppTest, kind: str, key: str, value: Any, timeout: float | None = None) -> AppTest:
    """Move the widget ``key`` (``kind``: "slider", "radio", …) to ``value`` and run what a
    browser runs then: the widget's fragment alone, or the whole script if it is in none."""
    fid = widget_fragment(at, key)
    getattr(at, kind)(key=key).set_value(value)
    _FRAGMENT["id"] = fid
    try:
        return at.run(timeout=timeout)
    finally:
        _FRAGMENT["id"] = None


def assert_clean(at: AppTest) -> None:
    """No exception and no error element on the page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]

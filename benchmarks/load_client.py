"""A Streamlit session spoken over its websocket protocol, for the load benchmark.

What a browser tab does, minus the drawing: open ``/_stcore/stream``, send a ``BackMsg`` with
``rerun_script`` (a ``ClientState``: query string, page, widget states, fragment), read the
``ForwardMsg`` stream (``new_session``, ``navigation``, ``delta``, ``page_info_changed``,
``script_finished``…).  A rerun's latency is the time from sending the ``BackMsg`` to the
``script_finished`` that ends it.  Widgets are learned from the deltas of the last run: each
element carries its id (``$$ID-<hash>-<user key>``), bounds and fragment.

Loopback only: :func:`open_session` refuses any host but 127.0.0.1 / localhost / ::1.
"""

from __future__ import annotations

import asyncio
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import ClientConnection, connect

LOOPBACK = ("127.0.0.1", "localhost", "::1")
FINISHED_OK = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
EARLY = ForwardMsg.FINISHED_EARLY_FOR_RERUN
ALERT_ERROR = 1  # streamlit.proto.Alert.Format.ERROR
NUMERIC = ("slider", "number_input")


@dataclass
class Widget:
    """A numeric control as the last run drew it."""

    key: str
    id: str
    kind: str  # "slider" or "number_input"
    integer: bool
    low: float
    high: float
    fragment_id: str = ""


@dataclass
class RunResult:
    """One rerun: latency, how it ended, and what went wrong (exceptions, error alerts)."""

    latency: float
    ok: bool
    errors: list[str] = field(default_factory=list)


def _key_of(widget_id: str) -> str:
    parts = widget_id.split("-", 2)
    return parts[2] if len(parts) == 3 and parts[0] == "$$ID" else ""


def _widget(element: Any, fragment_id: str) -> Widget | None:
    kind = element.WhichOneof("type")
    if kind not in NUMERIC:
        return None
    w = getattr(element, kind)
    key = _key_of(w.id)
    if not key:
        return None
    integer = w.data_type == 0  # INT for both Slider and NumberInput
    if kind == "number_input":
        low = w.min if w.has_min else -1e300
        high = w.max if w.has_max else 1e300
    else:
        low, high = w.min, w.max
    return Widget(key, w.id, kind, integer, float(low), float(high), fragment_id)


def route_cookie(base: str, timeout: float = 10.0) -> tuple[str, str]:
    """GET the app's index page (as a browser does first) and return (Cookie header, backend):
    behind ``deploy/nginx.conf`` the response sets the sticky-route cookie and names the backend."""
    check_loopback(base)
    with urllib.request.urlopen(base.rstrip("/") + "/", timeout=timeout) as resp:  # noqa: S310 - loopback
        cookies = [c.split(";", 1)[0] for c in resp.headers.get_all("Set-Cookie") or []]
        return "; ".join(cookies), resp.headers.get("X-Distsgd-Backend", "")


def check_loopback(url: str) -> None:
    host = urlsplit(url).hostname or ""
    if host not in LOOPBACK:
        raise ValueError(f"loopback only: refusing {url!r}")


class Session:
    """One browser tab's worth of protocol; one rerun in flight at a time."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.pages: dict[str, str] = {}  # page title -> page_script_hash
        self.page_hash = ""
        self.query_string = ""
        self.widgets: dict[str, Widget] = {}
        self._events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.closed = ""  # why the socket closed, once it has
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        """Parse every ForwardMsg; widgets/pages/URL update state, the rest goes to the queue."""
        try:
            async for raw in self.ws:
                msg = ForwardMsg()
                msg.ParseFromString(raw if isinstance(raw, bytes) else raw.encode())
                self._handle(msg)
        except Exception as exc:  # noqa: BLE001 - a closed socket ends the session, reported below
            self.closed = repr(exc)
        else:
            self.closed = "connection closed"
        await self._events.put(("closed", self.closed))

    def _handle(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self.widgets.clear()  # a full run redraws every widget
            self.page_hash = msg.new_session.page_script_hash or self.page_hash
        elif kind == "navigation":
            self.pages = {p.page_name: p.page_script_hash for p in msg.navigation.app_pages}
            self.page_hash = msg.navigation.page_script_hash or self.page_hash
        elif kind == "page_info_changed":
            self.query_string = msg.page_info_changed.query_string
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            et = element.WhichOneof("type")
            if et == "exception":
                exc = element.exception
                self._events.put_nowait(("error", f"exception: {exc.type} {exc.message[:80]}".strip()))
            elif et == "alert" and element.alert.format == ALERT_ERROR:
                self._events.put_nowait(("error", f"st.error: {element.alert.body[:80]}"))
            w = _widget(element, msg.delta.fragment_id)
            if w is not None:
                self.widgets[w.key] = w
        elif kind == "script_finished":
            self._events.put_nowait(("finished", msg.script_finished))

    async def rerun(self, timeout: float, page_hash: str | None = None,
                    widget: Widget | None = None, value: float | None = None,
                    also: Sequence[tuple[Widget, float]] = ()) -> RunResult:
        """Send one ``rerun_script`` (a page switch, or one widget's new value, with ``also`` the
        values of other widgets, as a page sends all it shows) and wait for the
        ``script_finished`` that ends it (runs interrupted by the app's own reruns are skipped)."""
        while not self._events.empty():  # late messages of an earlier run
            self._events.get_nowait()
        if self.closed:
            return RunResult(0.0, False, [f"closed: {self.closed}"])
        back = BackMsg()
        cs = back.rerun_script
        cs.query_string = self.query_string
        cs.page_script_hash = page_hash if page_hash is not None else self.page_hash
        if widget is not None and value is not None:
            for w, v in ((widget, value), *also):
                state = cs.widget_states.widgets.add()
                state.id = w.id
                if w.kind == "slider":
                    state.double_array_value.data.append(float(v))
                elif w.integer:
                    state.int_value = int(v)
                else:
                    state.double_value = float(v)
            if widget.fragment_id:
                cs.fragment_id = widget.fragment_id
        t0 = time.perf_counter()
        await self.ws.send(back.SerializeToString())
        return await self._wait(t0, timeout)

    async def _wait(self, t0: float, timeout: float) -> RunResult:
        errors: list[str] = []
        end = t0 + timeout
        while True:
            left = end - time.perf_counter()
            if left <= 0:
                return RunResult(time.perf_counter() - t0, False, [*errors, "timeout"])
            try:
                kind, payload = await asyncio.wait_for(self._events.get(), left)
            except TimeoutError:
                continue
            if kind == "error":
                errors.append(payload)
            elif kind == "closed":
                return RunResult(time.perf_counter() - t0, False, [*errors, f"closed: {payload}"])
            elif payload in FINISHED_OK:
                return RunResult(time.perf_counter() - t0, not errors, errors)
            elif payload != EARLY:
                return RunResult(time.perf_counter() - t0, False, [*errors, f"script_finished {payload}"])

    async def close(self) -> None:
        self._reader.cancel()
        try:
            await asyncio.wait_for(self.ws.close(), 5)
        except (TimeoutError, OSError):
            pass


async def open_session(base: str, cookie: str = "", timeout: float = 30.0) -> Session:
    """Open the websocket of a new session (``base`` is http://127.0.0.1:PORT)."""
    check_loopback(base)
    url = "ws" + base.rstrip("/")[4:] + "/_stcore/stream"
    headers = {"Cookie": cookie} if cookie else None
    ws = await asyncio.wait_for(
        connect(url, subprotocols=["streamlit"], max_size=None,  # type: ignore[list-item]
                additional_headers=headers, open_timeout=timeout, ping_interval=None),
        timeout)
    return Session(ws)

"""A reviewer's session in Streamlit's own protocol: what a browser tab costs the server,
without the browser.

A tab holds one WebSocket to `/_stcore/stream`. On opening it sends a `rerun_script`
BackMsg (the URL's query string and page); on every widget change, another one with the
widgets' states; the server answers each run with ForwardMsgs (`new_session`, the page's
deltas, `page_info_changed` for the URL it rewrites) up to `script_finished`. A fragment
that runs on a timer (`auto_rerun`) is rerun by the tab, as the browser does. Only the
messages are decoded here: no layout, no drawing, so ten sessions cost the client almost
nothing and the server what ten reviewers' browsers would.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import websockets
from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.WidgetStates_pb2 import WidgetState

FINISHED = ForwardMsg.ScriptFinishedStatus
# A full run's end (not a fragment's, nor one stopped early for the next run).
WHOLE_RUN_ENDS = (FINISHED.FINISHED_SUCCESSFULLY, FINISHED.FINISHED_WITH_COMPILE_ERROR)
ERROR = Alert.Format.ERROR  # st.error
ROWS_CAPTION = re.compile(r"^Rows ([\d,]+)–([\d,]+) of ([\d,]+)")


class ProtocolError(RuntimeError):
    """The server closed, or answered something a browser would show as an error."""


@dataclass
class Drawn:
    """What one full run drew: the elements by delta path, and the URL it wrote."""

    elements: dict[tuple[int, ...], Element] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def widget(self, kind: str, label: re.Pattern[str]) -> Any:
        """The first `kind` widget (number_input, text_input, button...) whose label
        matches, in page order."""
        for path in sorted(self.elements):
            element = self.elements[path]
            if element.WhichOneof("type") == kind:
                proto = getattr(element, kind)
                if label.search(proto.label):
                    return proto
        raise ProtocolError(f"no {kind} labelled /{label.pattern}/ in the page")

    def texts(self) -> list[str]:
        """Markdown, captions and alerts, in page order."""
        found = []
        for _, element in sorted(self.elements.items()):
            kind = element.WhichOneof("type")
            if kind in ("markdown", "alert"):
                found.append(getattr(element, kind).body)
        return found

    def rows_range(self) -> tuple[int, int, int] | None:
        """Browse's "Rows a–b of n" caption, as numbers."""
        for body in self.texts():
            if found := ROWS_CAPTION.match(body):
                first, last, total = (int(g.replace(",", "")) for g in found.groups())
                return first, last, total
        return None

    def tables(self) -> list[pa.Table]:
        """The dataframes drawn (Arrow IPC in each element)."""
        return [
            pa.ipc.open_stream(e.dataframe.arrow_data.data).read_all()
            for _, e in sorted(self.elements.items())
            if e.WhichOneof("type") == "dataframe" and e.dataframe.arrow_data.data
        ]


class StreamSession:
    """One tab's WebSocket on `url` (the app's base URL), open on `page` with `query`."""

    def __init__(self, url: str, page: str, query: str, cookie: str | None = None) -> None:
        self.ws_url = re.sub(r"^http", "ws", url.rstrip("/")) + "/_stcore/stream"
        # What a browser's handshake carries: behind `podium up --app-processes N` the
        # route cookie keeps every WebSocket of one tab on one app process.
        self.cookie = cookie
        self.page = page
        self.query = query  # the URL's query string; the server rewrites it
        self.states: dict[str, WidgetState] = {}  # the widgets this tab has set
        self.drawn = Drawn()
        self._ws: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._finished: asyncio.Queue[int] = asyncio.Queue()
        self._timers: dict[str, asyncio.Task[None]] = {}
        self._run_lock = asyncio.Lock()
        self.closed: str | None = None
        self.page_hash = ""  # the page's script hash, once the server named it

    async def __aenter__(self) -> StreamSession:
        # No Origin header: what a client outside a browser sends (allowed by the server).
        self._ws = await websockets.connect(
            self.ws_url,
            subprotocols=[websockets.Subprotocol("streamlit")],
            max_size=None,
            additional_headers={"Cookie": self.cookie} if self.cookie else None,
        )
        self._reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        for timer in self._timers.values():
            timer.cancel()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        if self._ws is not None:
            await self._ws.close()

    # --- what the tab sends -------------------------------------------------------------
    async def open(self, timeout: float = 120) -> Drawn:
        """The page's first run, as when the tab loads the URL."""
        return await self.rerun(timeout=timeout)

    async def set_number(self, label: re.Pattern[str], value: float, timeout: float = 120) -> Drawn:
        proto = self.drawn.widget("number_input", label)
        state = WidgetState(id=proto.id)
        if proto.data_type == NumberInput.DataType.INT:
            state.int_value = int(value)
        else:
            state.double_value = float(value)
        return await self.rerun(state, timeout=timeout)

    async def set_text(self, label: re.Pattern[str], value: str, timeout: float = 120) -> Drawn:
        proto = self.drawn.widget("text_input", label)
        return await self.rerun(WidgetState(id=proto.id, string_value=value), timeout=timeout)

    async def click(self, label: re.Pattern[str], timeout: float = 120) -> Drawn:
        proto = self.drawn.widget("button", label)
        return await self.rerun(WidgetState(id=proto.id, trigger_value=True), timeout=timeout)

    async def rerun(self, change: WidgetState | None = None, timeout: float = 120) -> Drawn:
        """A full run with `change` applied to the widgets' states; returns once the
        server says it finished (a run stopped early for another is waited past)."""
        async with self._run_lock:
            while not self._finished.empty():  # ends of fragment runs since the last call
                self._finished.get_nowait()
            sent = dict(self.states)
            if change is not None:
                sent[change.id] = change
                if not change.trigger_value:  # a button's click lasts one run
                    self.states[change.id] = change
            self.drawn = Drawn()
            await self._send(sent.values(), fragment_id="")
            async with asyncio.timeout(timeout):
                while True:
                    status = await self._finished.get()
                    if status < 0:
                        raise ProtocolError(self.closed or "connection closed")
                    if status in WHOLE_RUN_ENDS:
                        break
            if self.drawn.errors:
                raise ProtocolError("; ".join(self.drawn.errors))
            return self.drawn

    async def _send(self, states: Any, fragment_id: str, auto: bool = False) -> None:
        msg = BackMsg()
        client = msg.rerun_script
        client.query_string = self.query
        # The first run names the page by its URL path; later ones by the hash the server
        # gave it, as the browser does (a page name on every run reads as a navigation).
        if self.page_hash:
            client.page_script_hash = self.page_hash
        else:
            client.page_name = self.page
        client.widget_states.widgets.extend(states)
        client.fragment_id = fragment_id
        client.is_auto_rerun = auto
        await self._ws.send(msg.SerializeToString())

    # --- what the server sends ----------------------------------------------------------
    async def _read(self) -> None:
        try:
            async for data in self._ws:
                msg = ForwardMsg()
                msg.ParseFromString(data)
                self._handle(msg)
        except websockets.ConnectionClosed as exc:
            self.closed = f"connection closed: {exc}"
        finally:
            self.closed = self.closed or "connection closed"
            self._finished.put_nowait(-1)  # wakes a waiting run, which then fails

    def _handle(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            self.drawn.elements[tuple(msg.metadata.delta_path)] = element
            if element.WhichOneof("type") == "exception":
                self.drawn.errors.append(f"exception: {element.exception.message[:300]}")
            elif (
                element.WhichOneof("type") == "alert" and element.alert.format == Alert.Format.ERROR
            ):
                self.drawn.errors.append(f"error: {element.alert.body[:300]}")
        elif kind == "navigation":  # the page st.navigation ran, by its hash
            self.page_hash = msg.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "auto_rerun":
            fragment = msg.auto_rerun.fragment_id
            if fragment in self._timers:
                self._timers[fragment].cancel()
            self._timers[fragment] = asyncio.create_task(
                self._auto_rerun(fragment, msg.auto_rerun.interval)
            )
        elif kind == "stop_auto_rerun":
            for fragment in msg.stop_auto_rerun.fragment_ids:
                if timer := self._timers.pop(fragment, None):
                    timer.cancel()
        elif kind == "script_finished":
            self._finished.put_nowait(msg.script_finished)
        elif kind == "ref_hash":  # never sent: this client reports no cached messages
            raise ProtocolError("the server sent a cached message's reference")

    async def _auto_rerun(self, fragment: str, interval: float) -> None:
        """A fragment's timer, as the browser keeps it (its own run of that fragment)."""
        while True:
            await asyncio.sleep(interval)
            await self._send(self.states.values(), fragment_id=fragment, auto=True)

"""One URL in front of several app processes, each browser kept on one of them.

    python -m podium.commands.sticky_proxy --listen 127.0.0.1:8501 \
        --backend 127.0.0.1:41001 --backend 127.0.0.1:41002

`podium up --app-processes N` runs this in front of N Streamlit processes. One Python
process runs one script at a time (the interpreter's lock), so ten reviewers on one
process queue behind one another however many cores the machine has (docs/faults.md).

A Streamlit process keeps what a browser's session holds in its own memory: the
WebSocket's session state, the media files a page shows, uploads. So every request of
one browser must reach the same process. The proxy reads the head of a connection's
first request and routes the whole connection by the `podium_route_PORT` cookie; a
request without it (a browser's first) goes to the process with the fewest open
WebSockets (sessions), and its response gets the cookie. Such a request is also sent
with `Connection: close`, so that the browser opens a new connection, routed by the
cookie, for what follows: a kept-alive connection must never carry requests that
belong to two processes. After the first head the proxy copies bytes both ways
without reading them: WebSocket frames, bodies, further requests.

Nothing is parsed beyond the first request head (and the Set-Cookie is inserted into the
first response head): the app processes still check Host and Origin, login and roles
themselves (`podium/app/http_guard.py`), on the headers exactly as the browser sent them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import signal
from dataclasses import dataclass, field
from http.client import HTTPException, parse_headers
from http.cookies import CookieError, SimpleCookie

HEAD_END = b"\r\n\r\n"
MAX_HEAD_BYTES = 64 * 1024
HEAD_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 5.0
CHUNK = 256 * 1024


def route_cookie_name(port: int) -> str:
    """One cookie per listening port: two Podiums on one host (cookies ignore the
    port) do not send each other's browsers to a process index that means nothing."""
    return f"podium_route_{port}"


@dataclass(frozen=True)
class RequestHead:
    """The first request of a connection, as far as routing needs it."""

    raw: bytes
    route: int | None
    websocket: bool


def parse_request_head(raw: bytes, cookie_name: str) -> RequestHead:
    """`raw` ends with the blank line. The route is the cookie's value when it is a
    whole number; anything else (absent, garbage) routes as a browser's first request."""
    _request_line, _, rest = raw.partition(b"\r\n")
    headers = parse_headers(io.BytesIO(rest))
    route: int | None = None
    for value in headers.get_all("Cookie") or ():
        try:
            morsel = SimpleCookie(value).get(cookie_name)
        except CookieError:
            continue
        if morsel is not None and morsel.value.isdigit():
            route = int(morsel.value)
    upgrade = (headers.get("Upgrade") or "").strip().lower()
    return RequestHead(raw, route, upgrade == "websocket")


def with_header(head: bytes, name: str, value: str, *, replace: bool = False) -> bytes:
    """`head` (ending with the blank line) with `name: value` added before the blank
    line; `replace` drops the head's own `name` lines first."""
    lines = head[: -len(HEAD_END)].split(b"\r\n")
    if replace:
        key = name.lower().encode() + b":"
        lines = [lines[0], *(line for line in lines[1:] if not line.lower().startswith(key))]
    return b"\r\n".join([*lines, f"{name}: {value}".encode("latin-1")]) + HEAD_END


async def read_head(reader: asyncio.StreamReader) -> bytes | None:
    """Bytes up to and including the first blank line; None when the peer closed,
    timed out, or sent more than MAX_HEAD_BYTES without one."""
    try:
        return await asyncio.wait_for(reader.readuntil(HEAD_END), HEAD_TIMEOUT_S)
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
        return None


@dataclass
class Backends:
    """The app processes and how many sessions (open WebSockets) each holds now."""

    addresses: list[tuple[str, int]]
    sessions: list[int] = field(default_factory=list)
    _turn: int = 0

    def __post_init__(self) -> None:
        self.sessions = [0] * len(self.addresses)

    def valid(self, route: int | None) -> bool:
        return route is not None and 0 <= route < len(self.addresses)

    def by_load(self) -> list[int]:
        """Every backend, the fewest sessions first; ties taken in turn, so browsers
        that arrive together (none has opened its WebSocket yet) are spread out."""
        count = len(self.addresses)
        start, self._turn = self._turn, (self._turn + 1) % count
        return sorted(range(count), key=lambda i: (self.sessions[i], (i - start) % count))


class StickyProxy:
    def __init__(self, backends: list[tuple[str, int]], port: int) -> None:
        self.backends = Backends(backends)
        self.cookie = route_cookie_name(port)

    async def serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            await self._serve(client_r, client_w)
        except (ConnectionError, OSError):
            pass  # either side went away: nothing to tell anyone
        finally:
            client_w.close()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        raw = await read_head(client_r)
        if raw is None:
            return
        try:
            head = parse_request_head(raw, self.cookie)
        except HTTPException:  # over 100 header lines, or one longer than 64 KiB
            client_w.write(_refused(b"400 Bad Request", b"The request's headers are malformed."))
            await client_w.drain()
            return
        known = self.backends.valid(head.route)
        choices = [head.route] if known and head.route is not None else self.backends.by_load()
        opened = await self._connect(choices)
        if opened is None:
            client_w.write(
                _refused(
                    b"503 Service Unavailable",
                    b"Podium is starting or its app process stopped: try again in a moment.",
                )
            )
            await client_w.drain()
            return
        index, (backend_r, backend_w) = opened
        request = raw
        if not known and not head.websocket:
            # A browser's first request: its connection ends with this answer, and what
            # follows comes back with the cookie on a connection of its own.
            request = with_header(raw, "Connection", "close", replace=True)
        backend_w.write(request)
        if head.websocket:
            self.backends.sessions[index] += 1
        try:
            to_backend = asyncio.ensure_future(_pipe(client_r, backend_w))
            if known:
                to_client = asyncio.ensure_future(_pipe(backend_r, client_w))
            else:
                to_client = asyncio.ensure_future(self._first_answer(index, backend_r, client_w))
            done, _ = await asyncio.wait(
                {to_backend, to_client}, return_when=asyncio.FIRST_COMPLETED
            )
            if to_client not in done and to_backend.exception() is None:
                # The browser has sent all it will (its end half-closed, which the backend
                # was told): its answer may still be on the way.
                await asyncio.wait({to_client})
            for task in (to_backend, to_client):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, ConnectionError, OSError):
                    await task
        finally:
            if head.websocket:
                self.backends.sessions[index] -= 1
            backend_w.close()

    async def _first_answer(
        self, index: int, backend_r: asyncio.StreamReader, client_w: asyncio.StreamWriter
    ) -> None:
        answer = await read_head(backend_r)
        if answer is None:
            return
        cookie = f"{self.cookie}={index}; Path=/; HttpOnly; SameSite=Lax"
        client_w.write(with_header(answer, "Set-Cookie", cookie))
        await _pipe(backend_r, client_w)

    async def _connect(
        self, choices: list[int]
    ) -> tuple[int, tuple[asyncio.StreamReader, asyncio.StreamWriter]] | None:
        """The first of `choices` that accepts a connection (one still starting does not)."""
        for index in choices:
            host, port = self.backends.addresses[index]
            try:
                pair = await asyncio.wait_for(
                    asyncio.open_connection(host, port), CONNECT_TIMEOUT_S
                )
            except (OSError, TimeoutError):
                continue
            return index, pair
        return None


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while chunk := await reader.read(CHUNK):
        writer.write(chunk)
        await writer.drain()
    if writer.can_write_eof():
        writer.write_eof()


def _refused(status: bytes, message: bytes) -> bytes:
    body = message + b"\n"
    return (
        b"HTTP/1.1 " + status + b"\r\nContent-Type: text/plain; charset=utf-8\r\n"
        b"Retry-After: 2\r\nConnection: close\r\nContent-Length: "
        + str(len(body)).encode()
        + HEAD_END
        + body
    )


def address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT")
    return host.strip("[]"), int(port)


async def run(listen: tuple[str, int], backends: list[tuple[str, int]]) -> None:
    proxy = StickyProxy(backends, listen[1])
    server = await asyncio.start_server(proxy.serve, listen[0], listen[1], limit=MAX_HEAD_BYTES)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen", type=address, required=True)
    parser.add_argument("--backend", type=address, action="append", required=True)
    args = parser.parse_args(argv)
    asyncio.run(run(args.listen, args.backend))


if __name__ == "__main__":
    main()

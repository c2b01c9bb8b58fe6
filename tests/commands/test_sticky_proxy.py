"""The sticky proxy of `podium up --app-processes N`, against real sockets: small HTTP
backends that answer with their own number and the head they received, and speak a
WebSocket-like upgrade (101, then echo). tests/load/test_load.py runs it in front of two
real Streamlit processes with browsers and protocol sessions."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from podium.commands.sticky_proxy import (
    HEAD_END,
    StickyProxy,
    parse_request_head,
    route_cookie_name,
    with_header,
)


class Backend:
    """One app process stand-in: answers each request with `backend N` and the head it
    got (keep-alive unless the request said close); an upgrade is answered 101 and
    echoed until the peer closes."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.heads: list[bytes] = []
        self.server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self.server = await asyncio.start_server(self.serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            while True:
                head = await reader.readuntil(HEAD_END)
                self.heads.append(head)
                length = _header(head, b"content-length")
                body = await reader.readexactly(int(length)) if length else b""
                if _header(head, b"upgrade") == b"websocket":
                    writer.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n")
                    while chunk := await reader.read(65536):
                        writer.write(chunk)
                        await writer.drain()
                    break
                answer = b"backend %d %d\n" % (self.number, len(body))
                close = _header(head, b"connection") == b"close"
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n"
                    % (len(answer), b"Connection: close\r\n" if close else b"")
                    + answer
                )
                await writer.drain()
                if close:
                    break
        writer.close()


def _header(head: bytes, name: bytes) -> bytes | None:
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == name:
            return value.strip().lower()
    return None


@contextlib.asynccontextmanager
async def serving(backends: int = 2) -> AsyncIterator[tuple[int, list[Backend], StickyProxy]]:
    apps = [Backend(i) for i in range(backends)]
    for app in apps:
        await app.start()
    proxy = StickyProxy([("127.0.0.1", app.port) for app in apps], 8501)
    server = await asyncio.start_server(proxy.serve, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1], apps, proxy
    finally:
        server.close()
        for app in apps:
            assert app.server is not None
            app.server.close()


async def ask(
    port: int, head: bytes, body: bytes = b""
) -> tuple[bytes, bytes, asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head + body)
    return *(await answer(reader)), reader, writer


async def answer(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    head = await reader.readuntil(HEAD_END)
    length = int(_header(head, b"content-length") or 0)
    return head, await reader.readexactly(length)


def request(cookie: str | None = None, path: str = "/", extra: str = "") -> bytes:
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1:8501", "Connection: keep-alive"]
    if cookie is not None:
        lines.append(f"Cookie: _streamlit_xsrf=abc; {cookie}")
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode()


ROUTE = route_cookie_name(8501)
UPGRADE = "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"


def test_a_first_request_gets_the_cookie_of_the_process_that_answered_it_and_closes() -> None:
    async def scenario() -> None:
        async with serving() as (port, apps, _proxy):
            head, body, reader, writer = await ask(port, request())
            number = int(body.split()[1])
            assert f"Set-Cookie: {ROUTE}={number}; Path=/; HttpOnly".encode() in head
            # The backend was told to close, so nothing else rides this connection.
            assert _header(apps[number].heads[-1], b"connection") == b"close"
            assert await reader.read() == b""
            writer.close()

    asyncio.run(scenario())


def test_a_browser_with_the_cookie_stays_on_its_process_over_a_kept_connection() -> None:
    async def scenario() -> None:
        async with serving() as (port, apps, _proxy):
            for number in (1, 0, 1):
                sent = request(f"{ROUTE}={number}")
                head, body, reader, writer = await ask(port, sent)
                assert body.startswith(b"backend %d" % number)
                assert b"Set-Cookie" not in head
                assert apps[number].heads[-1] == sent  # passed on byte for byte
                writer.write(sent)  # the same connection again
                _head, again = await answer(reader)
                assert again.startswith(b"backend %d" % number)
                writer.close()

    asyncio.run(scenario())


@pytest.mark.parametrize("cookie", [f"{ROUTE}=7", f"{ROUTE}=x", f"{ROUTE}=-1", "other=1"])
def test_a_route_that_names_no_process_is_a_first_request(cookie: str) -> None:
    async def scenario() -> None:
        async with serving() as (port, _apps, _proxy):
            head, body, _reader, writer = await ask(port, request(cookie))
            assert f"Set-Cookie: {ROUTE}={int(body.split()[1])};".encode() in head
            writer.close()

    asyncio.run(scenario())


def test_browsers_that_arrive_together_are_spread_over_the_processes() -> None:
    async def scenario() -> None:
        async with serving(3) as (port, _apps, _proxy):
            answers = await asyncio.gather(*(ask(port, request()) for _ in range(6)))
            numbers = sorted(int(body.split()[1]) for _h, body, _r, _w in answers)
            assert numbers == [0, 0, 1, 1, 2, 2]

    asyncio.run(scenario())


def test_sessions_go_to_the_process_with_the_fewest_open_websockets() -> None:
    async def scenario() -> None:
        async with serving() as (port, apps, proxy):
            # Two sessions held on process 0 by their cookie.
            held = [await _upgrade(port, f"{ROUTE}=0") for _ in range(2)]
            assert proxy.backends.sessions == [2, 0]
            new = [await _upgrade(port, None) for _ in range(2)]
            assert proxy.backends.sessions == [2, 2]
            # Bytes after the handshake are copied both ways, unread.
            reader, writer = new[0]
            writer.write(b"\x81\x05hello" * 1000)
            assert await reader.readexactly(7000) == b"\x81\x05hello" * 1000
            for _r, w in held:
                w.close()
            await _until(lambda: proxy.backends.sessions == [0, 2])
            assert len(apps[1].heads) == 2

    asyncio.run(scenario())


def test_a_large_body_and_a_half_closed_request_still_get_their_answer() -> None:
    async def scenario() -> None:
        async with serving() as (port, _apps, _proxy):
            body = b"x" * 3_000_000
            sent = request(f"{ROUTE}=1", "/upload", f"Content-Length: {len(body)}\r\n")
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(sent.replace(b"GET", b"POST", 1) + body)
            writer.write_eof()  # the client says it has sent everything
            _head, got = await answer(reader)
            assert got == b"backend 1 3000000\n"
            writer.close()

    asyncio.run(scenario())


def test_a_process_not_listening_yet_is_passed_over_and_none_listening_is_503() -> None:
    async def scenario() -> None:
        async with serving() as (port, apps, proxy):
            assert apps[0].server is not None
            apps[0].server.close()
            await apps[0].server.wait_closed()
            for _ in range(3):
                _head, body, _r, w = await ask(port, request())
                assert body.startswith(b"backend 1")
                w.close()
            # A browser held on the stopped process is told so, not moved silently.
            head, body, _r, w = await ask(port, request(f"{ROUTE}=0"))
            assert head.startswith(b"HTTP/1.1 503") and b"try again" in body
            w.close()
            assert apps[1].server is not None
            apps[1].server.close()
            await apps[1].server.wait_closed()
            head, _body, _r, w = await ask(port, request())
            assert head.startswith(b"HTTP/1.1 503")
            w.close()
            assert proxy.backends.sessions == [0, 0]

    asyncio.run(scenario())


def test_a_head_that_never_ends_is_dropped_without_reaching_a_process() -> None:
    async def scenario() -> None:
        async with serving() as (port, apps, _proxy):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET / HTTP/1.1\r\nX: " + b"a" * 200_000)
            assert await reader.read() == b""
            writer.close()
            assert apps[0].heads == [] and apps[1].heads == []

    asyncio.run(scenario())


def test_a_head_of_too_many_header_lines_is_refused_without_reaching_a_process() -> None:
    async def scenario() -> None:
        async with serving() as (port, apps, _proxy):
            head, body, _r, writer = await ask(port, request(extra="X: y\r\n" * 150))
            assert head.startswith(b"HTTP/1.1 400") and b"malformed" in body
            writer.close()
            assert apps[0].heads == [] and apps[1].heads == []

    asyncio.run(scenario())


def test_reading_the_route_and_rewriting_a_head() -> None:
    head = request(f"{ROUTE}=3")
    assert parse_request_head(head, ROUTE).route == 3
    assert parse_request_head(head, "podium_route_9999").route is None
    assert parse_request_head(request(None, extra=UPGRADE), ROUTE).websocket
    closed = with_header(head, "Connection", "close", replace=True)
    assert b"keep-alive" not in closed and closed.endswith(b"Connection: close" + HEAD_END)
    assert closed.split(b"\r\n")[0] == b"GET / HTTP/1.1"


async def _upgrade(
    port: int, cookie: str | None
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request(cookie, "/_stcore/stream", UPGRADE))
    head = await reader.readuntil(HEAD_END)
    assert head.startswith(b"HTTP/1.1 101")
    return reader, writer


async def _until(check: object, tries: int = 200) -> None:
    for _ in range(tries):
        if callable(check) and check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition never held")

"""What the app's web server does before Streamlit sees a request.

- Every HTTP response carries a Content-Security-Policy that lets the page load images
  only from the app itself (and `data:`/`blob:` URLs, which charts draw with): an image
  URL that slipped into Markdown from data is never fetched, so a tracking pixel or an
  answer that smuggles data out in an image URL gets nothing. The same policy's
  `frame-ancestors 'self'` (and `X-Frame-Options: SAMEORIGIN` for older browsers) keeps
  another page, even one on another port of this host, from framing the app and
  luring a click onto its buttons (Grant, Revoke, Cancel).
- In local mode (bound to a loopback address: no login, the OS user with every role)
  a request or WebSocket handshake is refused with 403 unless its `Host` names this
  machine (the bind address, localhost, 127.0.0.1, ::1, or PODIUM_ALLOWED_HOSTS) and
  its `Origin`, when sent, does too, on the same port: a page served by another program
  on this machine is another origin. A web page on another site cannot then drive the
  app through the browser: neither directly (its Origin is foreign) nor by DNS
  rebinding its own name to 127.0.0.1 (its Host is foreign). A shared deployment
  (login) checks only what PODIUM_ALLOWED_HOSTS lists: there a foreign page gets no
  session, because login cookies belong to the app's own name.

`podium/app/server.py` puts this in front of Streamlit; `HttpGuard` is plain ASGI
middleware, tested without a browser.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CONTENT_SECURITY_POLICY = "img-src 'self' data: blob:; object-src 'none'; frame-ancestors 'self'"
SECURITY_HEADERS = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-frame-options", b"SAMEORIGIN"),
)
DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}
LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a hostname may resolve anywhere


def allowed_hosts(bind_address: str, extra: Iterable[str] = ()) -> frozenset[str] | None:
    """The host names requests may carry, or None when no check applies (bound beyond
    loopback and nothing listed: a shared deployment relies on its login)."""
    extra_names = {_normal(name) for name in extra if name.strip()}
    if is_loopback(bind_address or "127.0.0.1"):
        return frozenset({*LOCAL_NAMES, _normal(bind_address), *extra_names} - {""})
    return frozenset(extra_names) or None


def host_name(value: str) -> str:
    """`example.org:8501` -> `example.org`; `[::1]:8501` -> `::1`; lower case."""
    value = value.strip()
    if value.startswith("["):
        return _normal(value[1:].partition("]")[0])
    return _normal(value.rpartition(":")[0] if value.count(":") == 1 else value)


def host_port(value: str, scheme: str) -> int | None:
    """The port a Host header names (the scheme's default when it names none)."""
    value = value.strip()
    tail = value.rpartition("]")[2] if value.startswith("[") else value
    if tail.count(":") == 1:
        digits = tail.rpartition(":")[2]
        return int(digits) if digits.isdigit() else None
    return DEFAULT_PORTS.get(scheme)


def origin_port(origin: str) -> int | None:
    """The port of an Origin header (its scheme's default when it names none)."""
    try:
        parts = urlsplit(origin.strip())
        return parts.port or DEFAULT_PORTS.get(parts.scheme)
    except ValueError:
        return None


def origin_host(origin: str) -> str:
    """The host name of an Origin header (`null` and garbage give '')."""
    try:
        return _normal(urlsplit(origin.strip()).hostname or "")
    except ValueError:
        return ""


def refusal(
    headers: dict[str, str], allowed: frozenset[str] | None, scheme: str = "http"
) -> str | None:
    """Why a request with these (lower-cased) headers is refused, or None to let it in.
    `scheme` is the request's own (http, https, ws, wss): a Host without a port means
    that scheme's default."""
    if allowed is None:
        return None
    host = host_name(headers.get("host", ""))
    if host not in allowed:
        return f"Host {host or '(none)'} is not one this app serves"
    origin = headers.get("origin")
    if origin is None:
        return None
    if origin_host(origin) not in allowed:
        return "requests from another site are refused"
    if origin_port(origin) != host_port(headers.get("host", ""), scheme):
        return "requests from a page on another port are refused"
    return None


def _normal(name: str) -> str:
    return name.strip().strip("[]").rstrip(".").lower()


class HttpGuard:
    """ASGI middleware: the CSP and frame headers on every response, the Host/Origin check on every
    request and WebSocket handshake. `hosts` is called once, at the first request (when
    Streamlit's config, which holds the bind address, is loaded)."""

    def __init__(self, app: ASGIApp, hosts: Callable[[], frozenset[str] | None]) -> None:
        self.app = app
        self._hosts = hosts
        self._allowed: frozenset[str] | None = None
        self._resolved = False

    def allowed(self) -> frozenset[str] | None:
        if not self._resolved:
            self._allowed, self._resolved = self._hosts(), True
        return self._allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        why = refusal(headers, self.allowed(), str(scope.get("scheme", "http")))
        if why is not None:
            await _refuse(scope, receive, send, why)
            return
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return

        async def send_with_policy(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [
                    *message.get("headers", []),
                    *((k, v) for k, v in SECURITY_HEADERS if k not in names),
                ]
            await send(message)

        await self.app(scope, receive, send_with_policy)


async def _refuse(scope: Scope, receive: Receive, send: Send, why: str) -> None:
    body = f"Forbidden: {why}.\n".encode()
    if scope["type"] == "websocket":
        # Closing before accepting makes the server answer the handshake with 403.
        await receive()  # websocket.connect
        await send({"type": "websocket.close", "code": 1008})
        return
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})

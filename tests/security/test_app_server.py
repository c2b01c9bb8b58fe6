"""The app's web server (podium/app/server.py): a local `podium app` refuses requests and
WebSocket handshakes whose Host or Origin is not this machine (DNS rebinding, other
sites), and every response carries a CSP that loads images only from the app."""

from __future__ import annotations

import base64
import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from podium.app.http_guard import (
    CONTENT_SECURITY_POLICY,
    allowed_hosts,
    host_name,
    refusal,
)

START_TIMEOUT_S = 90


def test_host_names_of_local_mode() -> None:
    local = allowed_hosts("127.0.0.1", ["podium.internal"])
    assert local is not None
    for host in ("127.0.0.1:8501", "localhost:8501", "[::1]:8501", "podium.internal:1"):
        assert refusal({"host": host}, local) is None, host
    assert refusal({"host": "attacker.example:8501"}, local)
    assert refusal({"host": "127.0.0.1.attacker.example"}, local)
    assert refusal({"host": ""}, local)
    assert refusal({"host": "127.0.0.1:8501", "origin": "http://attacker.example"}, local)
    assert refusal({"host": "127.0.0.1:8501", "origin": "http://localhost:8501"}, local) is None


def test_a_page_on_another_local_port_is_another_origin() -> None:
    """Issue 44, point 19: the Origin's port was ignored, so a page served on
    127.0.0.1:9999 drove the app on 127.0.0.1:8501."""
    local = allowed_hosts("127.0.0.1")
    assert refusal({"host": "127.0.0.1:8501", "origin": "http://127.0.0.1:9999"}, local)
    assert refusal({"host": "127.0.0.1:8501", "origin": "http://127.0.0.1"}, local)
    assert refusal({"host": "localhost", "origin": "http://localhost:8080"}, local)
    assert refusal({"host": "localhost", "origin": "http://localhost"}, local) is None
    assert refusal({"host": "[::1]:8501", "origin": "http://[::1]:8501"}, local, "ws") is None
    assert refusal({"host": "localhost", "origin": "https://localhost"}, local, "https") is None
    assert host_name("Example.ORG.:80") == "example.org"


def test_shared_deployment_checks_only_listed_hosts() -> None:
    assert allowed_hosts("0.0.0.0") is None  # login protects it; nothing to compare with
    assert allowed_hosts("0.0.0.0", ["podium.example.org"]) == {"podium.example.org"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def local_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """`podium app` on a free loopback port, as a person starts it."""
    home = tmp_path_factory.mktemp("server-home")
    port = _free_port()
    env = dict(os.environ, PODIUM_HOME=str(home), PYTHONUNBUFFERED="1")
    command = [sys.executable, "-m", "podium.cli", "app", "--port", str(port)]
    log = home / "app.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            assert proc.poll() is None, log.read_text()
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}/_stcore/health").status_code == 200:
                    break
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        yield port
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()


def handshake_status(port: int, host: str, origin: str) -> int:
    """The HTTP status a raw WebSocket upgrade to Streamlit's stream gets."""
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        "GET /_stcore/stream HTTP/1.1\r\n"
        f"Host: {host}\r\nOrigin: {origin}\r\n"
        "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        "Sec-WebSocket-Protocol: streamlit\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request.encode())
        status_line = sock.recv(4096).split(b"\r\n", 1)[0].decode()
    return int(status_line.split()[1])


def test_dns_rebinding_handshake_is_refused(local_app: int) -> None:
    port = local_app
    foreign = f"attacker.example:{port}"
    assert handshake_status(port, foreign, f"http://{foreign}") == 403
    own = f"127.0.0.1:{port}"
    assert handshake_status(port, own, "http://attacker.example") == 403
    assert handshake_status(port, own, f"http://{own}") == 101
    assert handshake_status(port, own, f"http://127.0.0.1:{port + 1}") == 403  # another port
    page = httpx.get(f"http://127.0.0.1:{port}/", headers={"Host": foreign})
    assert page.status_code == 403


def test_pages_carry_an_image_policy(local_app: int) -> None:
    page = httpx.get(f"http://127.0.0.1:{local_app}/")
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "img-src 'self'" in CONTENT_SECURITY_POLICY
    # Issue 44, point 19: no page of another origin (another port included) frames the app.
    assert "frame-ancestors 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "SAMEORIGIN"

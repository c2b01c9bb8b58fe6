"""No page of another origin frames the app (issue 44, point 19): a page served on
another port of this machine framed the Users page, Grant and Revoke working inside it.
The app's own pages still load at the top level."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest
from app_driver import free_port, wait_for_app
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser


@pytest.fixture
def framing_page(app_url: str) -> Iterator[str]:
    """A page on another local port whose whole body is an iframe of the Users page."""
    body = f'<html><body><iframe id="app" src="{app_url}/users" width="900" height="700">'
    body += "</iframe></body></html>"

    class Framer(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Framer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def test_another_local_port_cannot_frame_the_users_page(
    app_page: Page, app_url: str, framing_page: str
) -> None:
    app_page.goto(f"{app_url}/users")
    wait_for_app(app_page)
    expect(app_page.get_by_role("button", name="Grant")).to_be_visible()  # the page has them

    # Chromium says on the console that it refused to draw the app in the frame.
    with app_page.expect_console_message(lambda m: "frame" in m.text.lower()) as refused:
        app_page.goto(framing_page)
    said = refused.value.text.lower()
    assert "ancestor" in said or "x-frame-options" in said
    frame = app_page.frame_locator("#app")
    expect(frame.get_by_test_id("stApp")).to_have_count(0)
    expect(frame.get_by_role("button", name="Grant")).to_have_count(0)

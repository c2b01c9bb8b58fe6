"""Vibe check in a real browser: while a submission waits for the model's answer, the
list below counts it as on its way (it said "0 submissions" for the minute a model took
to start and answer), and once stored the list holds it."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from app_driver import (
    REPO,
    free_port,
    running,
    server_command,
    using_home,
    wait_for_app,
    wait_healthy,
)
from playwright.sync_api import Browser, expect

ANSWER_DELAY_S = 6.0  # a model server starting: the answer comes after a while


class SlowChatServer(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that lists one model and answers slowly."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        model = {"id": "m", "object": "model", "created": 0, "owned_by": "test"}
        self._send_json({"object": "list", "data": [model]})

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        time.sleep(ANSWER_DELAY_S)
        for piece in ("Four", "."):
            choice = {"index": 0, "delta": {"content": piece}, "finish_reason": None}
            chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
            chunk["choices"] = [choice]
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")

    def _send_json(self, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def slow_endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowChatServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()
    server.server_close()


def test_the_list_counts_a_submission_while_its_answer_comes(
    browser: Browser, tmp_path: Path, slow_endpoint: str, artifacts_dir: Path
) -> None:
    home = tmp_path / "home"
    with using_home(home):
        from podium.models.registry import add_endpoint

        add_endpoint(slow_endpoint, "ep")
    port = free_port()
    env = dict(os.environ, PODIUM_HOME=str(home), PYTHONUNBUFFERED="1")
    log = artifacts_dir / "vibes-browser-app.log"
    with running(server_command(port), env, REPO, log) as proc:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(proc, f"{url}/_stcore/health", log)
        context = browser.new_context(viewport={"width": 1440, "height": 1000})
        page = context.new_page()
        try:
            page.goto(f"{url}/vibes")
            wait_for_app(page)
            captions = page.get_by_test_id("stCaptionContainer")
            expect(captions.filter(has_text="0 submissions")).to_have_count(1)
            page.get_by_label("Prompt the model gets wrong").fill("What is 2+2?")
            page.get_by_role("button", name="Submit").click()
            # While the model is asked (seconds here, a minute on a cold CPU server).
            waiting = captions.filter(has_text="1 more once ep has answered")
            expect(waiting).to_have_count(1, timeout=ANSWER_DELAY_S * 1000 - 1000)
            expect(captions.filter(has_text="1 submission")).to_have_count(1, timeout=60_000)
            expect(page.get_by_text("Stored submission")).to_be_visible()
            page.screenshot(path=str(artifacts_dir / "vibes-after-submit.png"), full_page=True)
        finally:
            context.close()

"""Retries against a real HTTP server on loopback that answers 429, 5xx, then a completion."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pyarrow as pa
import pytest

from generators.client import ChatRequest, Endpoint, ServerUnavailable, generate_batch
from generators.generate import GenerateConfig, run_generate
from generators.retry import RetryPolicy
from podium.models.registry import add_endpoint
from podium.reporting import Reporter
from podium.store.read.read import read_arrow
from podium.store.read.refs import TableRef
from podium.store.schema import SFT_ARROW_SCHEMA
from podium.store.write.write import write_table

Answer = tuple[int, dict[str, Any], dict[str, str]]


def _completion(text: str) -> Answer:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
    }
    return 200, body, {}


def _error(status: int, headers: dict[str, str] | None = None) -> Answer:
    return status, {"error": {"message": f"scripted {status}", "type": "x"}}, headers or {}


class ScriptedServer:
    """Answers chat completions from a script; the last answer repeats forever."""

    def __init__(self, script: list[Answer]) -> None:
        self.script = script
        self.requests = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                self.rfile.read(int(self.headers.get("content-length", 0)))
                with server._lock:
                    index = min(server.requests, len(server.script) - 1)
                    server.requests += 1
                status, body, headers = server.script[index]
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[ScriptedServer] = []

    def start(*script: Answer) -> ScriptedServer:
        servers.append(ScriptedServer(list(script)))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


class Logged(Reporter):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def log(self, message: str) -> None:
        self.lines.append(message)


def _hi() -> list[ChatRequest]:
    return [ChatRequest(messages=[{"role": "user", "content": "hi"}])]


def test_429_then_500_then_an_answer_succeeds_and_each_retry_is_logged(serve: Any) -> None:
    server = serve(_error(429, {"retry-after": "0"}), _error(500), _completion("hello"))
    reporter = Logged()
    (result,) = generate_batch(Endpoint(server.url, "m"), _hi(), reporter=reporter)
    assert result.error is None and result.completions[0].text == "hello"
    assert server.requests == 3
    assert len(reporter.lines) == 2
    assert "429" in reporter.lines[0] and "retry 1 of 4" in reporter.lines[0]
    assert "500" in reporter.lines[1] and "retry 2 of 4" in reporter.lines[1]


def test_a_server_that_always_fails_gives_up_after_the_attempt_bound(serve: Any) -> None:
    server = serve(_error(503))
    reporter = Logged()
    policy = RetryPolicy(retry_attempts=3, retry_max_wait_s=60)
    with pytest.raises(ServerUnavailable, match=r"did not answer after 3 tries \(503"):
        generate_batch(Endpoint(server.url, "m"), _hi(), reporter=reporter, retry=policy)
    assert server.requests == 3
    assert len(reporter.lines) == 2


def test_retrying_stops_at_the_time_bound(serve: Any) -> None:
    # The server asks for 0.4 s between tries; a 4 s budget allows a few (the first
    # answer may be slow on a busy machine), never 20 (that needs 7.6 s of waits).
    server = serve(_error(429, {"retry-after": "0.4"}))
    policy = RetryPolicy(retry_attempts=20, retry_max_wait_s=4)
    with pytest.raises(ServerUnavailable, match="429"):
        generate_batch(Endpoint(server.url, "m"), _hi(), retry=policy)
    assert 1 < server.requests < 20


def test_a_refused_request_is_not_retried(serve: Any) -> None:
    server = serve(_error(400))
    (result,) = generate_batch(Endpoint(server.url, "m"), _hi())
    assert (
        result.error is not None and result.error.startswith("400") and "scripted" in result.error
    )
    assert server.requests == 1


def test_a_generate_job_rides_out_429_and_500(serve: Any, podium_home: Any) -> None:
    server = serve(_error(429), _error(502), _completion("pear"))
    add_endpoint(server.url, "scripted", remote_model="m")
    rows = [
        {"id": f"p{i}", "messages": [{"role": "user", "content": f"fruit {i}?"}]} for i in range(3)
    ]
    write_table("t.prompts", pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA))
    cfg = GenerateConfig(
        input=TableRef(name="t.prompts"),
        out="t.samples",
        model="scripted",
        concurrency=1,
        max_tokens=4,
    )
    reporter = Logged()
    run_generate(cfg, reporter)
    written = read_arrow("t.samples")[0].to_pylist()
    assert sorted(r["prompt_id"] for r in written) == ["p0", "p1", "p2"]
    assert all(not r["error"] for r in written)
    retries = [line for line in reporter.lines if "retry" in line and server.url in line]
    assert len(retries) == 2 and "429" in retries[0] and "502" in retries[1]
    assert server.requests == 5

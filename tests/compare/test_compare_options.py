"""`podium compare` is generated from the compare job's model: any card setting given with
`--set` (or its own option) reaches the sampling requests sent to the checkpoints.

The two checkpoints are endpoints on a small local server that records every chat
request it is sent, so the test reads what the generation really asked for.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import cli_fork
import pytest
import yaml
from compare_data import write_prompts

from podium.compare.table import PROP_SAMPLING
from podium.models.registry import add_endpoint
from podium.store.catalog.catalog import load_table

PODIUM = [sys.executable, "-m", "podium.cli"]


class RecordingServer:
    """An OpenAI-compatible chat endpoint that answers `{}` and keeps each request body."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        bodies = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                bodies.append(body)
                answer = {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "m"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": "{}"},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
                }
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def recording(podium_home: Any) -> Iterator[RecordingServer]:  # noqa: ARG001 - the home
    server = RecordingServer()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def podium(*args: str) -> subprocess.CompletedProcess[str]:
    proc = cli_fork.run([*PODIUM, *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_set_top_p_and_seed_reach_every_sampling_request(recording: RecordingServer) -> None:
    table = write_prompts()
    for name in ("alpha", "omega"):
        add_endpoint(recording.url, name, remote_model=name)
    podium(
        "compare",
        "--models",
        "alpha,omega",
        "--table",
        table,
        "--out",
        "cmp.sampled",
        "--max-tokens",
        "16",
        "--set",
        "top_p=0.9",
        "--set",
        "seed=3",
        "--stop",
        "END",
    )
    assert {b["model"] for b in recording.bodies} == {"alpha", "omega"}
    assert len(recording.bodies) == 8  # four prompts, two checkpoints, n=1
    for body in recording.bodies:
        assert (body["top_p"], body["seed"], body["max_tokens"]) == (0.9, 3, 16)
        assert body["stop"] == ["END"]
    sampling = json.loads(load_table("cmp.sampled").properties[PROP_SAMPLING])
    assert (sampling["top_p"], sampling["seed"]) == (0.9, 3)


def test_the_card_holds_every_setting_given(compare_config: Any, tmp_path: Any) -> None:
    card = tmp_path / "cmp.md"
    podium(
        "compare",
        "--models",
        "alpha",
        "--models",
        "omega",
        "--table",
        "evals.colours",
        "--out",
        "cmp.c",
        "--concurrency",
        "2",
        "--set",
        "top_p=0.5",
        "--card",
        str(card),
    )
    front = yaml.safe_load(card.read_text().split("---")[1])
    assert front["models"] == ["alpha", "omega"]
    assert (front["top_p"], front["concurrency"]) == (0.5, 2)
    assert front["table"]["name"] == "evals.colours"

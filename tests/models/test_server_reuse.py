"""One vLLM server per model, whoever started it: a live server for the same checkpoint
is reused (a server busy generating answers /health late and must not be replaced by a
second one), a dead or outdated one is replaced."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import insert

from podium.models.registry import register_model
from podium.models.serving import (
    ServerInfo,
    list_servers,
    serve,
    server_choice,
    servers_table,
)
from podium.models.vllm_launch import free_port
from podium.store.state.state import engine


def _server(alive: bool = True, checkpoint: str = "/ckpt") -> ServerInfo:
    return ServerInfo("m", "host", 1, 8000, "http://127.0.0.1:8000/v1", checkpoint, "/log",
                      "t", "t", alive)  # fmt: skip


def test_the_choice_reuses_a_live_server_for_the_same_checkpoint() -> None:
    assert server_choice(None, "/ckpt") == "start"
    assert server_choice(_server(), "/ckpt") == "reuse"
    assert server_choice(_server(alive=False), "/ckpt") == "replace"
    assert server_choice(_server(checkpoint="/old"), "/ckpt") == "replace"


# Stands in for a vLLM server busy with another job's requests: its command line carries
# vLLM's module name, and its first /health answer takes longer than a quick probe waits.
SLOW_SERVER = """
import http.server, sys, time
answered = []
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if not answered:
            time.sleep(7)
        answered.append(1)
        self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def test_a_busy_server_is_reused_not_replaced(
    podium_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Were a second server started, it would fail at once: this Python has no vLLM.
    monkeypatch.setenv("PODIUM_VLLM_PYTHON", sys.executable)
    checkpoint = tmp_path / "ckpt"
    checkpoint.mkdir()
    (checkpoint / "config.json").write_text(json.dumps({"model_type": "llama"}))
    info = register_model("busy", kind="base", path=str(checkpoint))
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_SERVER, str(port), "vllm.entrypoints.openai.api_server"]
    )
    try:
        now = datetime.now(UTC)
        url = f"http://127.0.0.1:{port}/v1"
        with engine().begin() as conn:
            conn.execute(
                insert(servers_table).values(
                    model="busy", host=socket.gethostname(), pid=proc.pid, port=port,
                    url=url, checkpoint=info.path, log_path=str(tmp_path / "log"),
                    started_at=now, last_used=now,
                )
            )  # fmt: skip
        served = serve("busy")
        assert (served.url, served.model, served.started) == (url, "busy", False)
        assert proc.poll() is None  # still running: nobody stopped it
        assert [s.pid for s in list_servers()] == [proc.pid]
    finally:
        proc.kill()
        proc.wait()

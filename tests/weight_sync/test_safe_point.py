"""The swap at a safe point resumes a replica only after a load it can vouch for: a load
that raised, or one whose report shows a problem, leaves the server paused. A small real
HTTP server stands in for vLLM's pause/resume endpoints and records the calls."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from podium import failpoints
from trainers.weight_sync.replica_calls import (
    ReplicaEndpoint,
    ReplicaLoadError,
    load_problem,
    swap_at_safe_point,
    verify,
)


@pytest.fixture
def replica() -> Iterator[tuple[ReplicaEndpoint, list[str]]]:
    calls: list[str] = []

    class Recorder(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            calls.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield ReplicaEndpoint(0, f"http://127.0.0.1:{server.server_port}/v1"), calls
    server.shutdown()
    server.server_close()


GOOD = {"checksum": "abc", "version": 3, "moved": True}


def test_a_verified_load_is_resumed(replica: tuple[ReplicaEndpoint, list[str]]) -> None:
    endpoint, calls = replica
    got = swap_at_safe_point(endpoint, lambda: dict(GOOD), lambda r: load_problem(3, "abc", r))
    assert calls == ["/pause?mode=wait", "/reset_prefix_cache", "/resume"]
    assert got["resumed"] is True and set(got["phases"]) == {
        "pause_s",
        "load_call_s",
        "reset_prefix_cache_s",
        "resume_s",
    }
    assert verify(3, "abc", [(endpoint, got)])[0]["match"]


@pytest.mark.parametrize(
    ("report", "says"),
    [
        ({"checksum": "zzz", "version": 3, "moved": True}, "expected checksum abc at version 3"),
        ({"checksum": "abc", "version": 2, "moved": True}, "got abc at version 2"),
        ({"checksum": "abc", "version": 3, "moved": False}, "parameters did not change"),
    ],
)
def test_a_load_with_a_problem_stays_paused(
    replica: tuple[ReplicaEndpoint, list[str]], report: dict[str, Any], says: str
) -> None:
    endpoint, calls = replica
    got = swap_at_safe_point(endpoint, lambda: dict(report), lambda r: load_problem(3, "abc", r))
    assert calls == ["/pause?mode=wait"] and got["resumed"] is False
    with pytest.raises(ReplicaLoadError, match=says) as caught:
        verify(3, "abc", [(endpoint, got)])
    assert caught.value.failed == [0] and "left paused" in str(caught.value)


def test_a_load_that_raised_stays_paused_and_names_the_error(
    replica: tuple[ReplicaEndpoint, list[str]],
) -> None:
    endpoint, calls = replica

    def load() -> dict[str, Any]:
        raise RuntimeError("engine out of memory")

    got = swap_at_safe_point(endpoint, load, lambda r: load_problem(3, "abc", r))
    assert calls == ["/pause?mode=wait"] and got["resumed"] is False
    with pytest.raises(ReplicaLoadError, match="the load failed: RuntimeError: engine out of"):
        verify(3, "abc", [(endpoint, got)])


def test_the_failpoint_corrupts_only_the_nth_load(monkeypatch: pytest.MonkeyPatch) -> None:
    failpoints.reset()
    monkeypatch.setenv(failpoints.ENV, "weight_sync.corrupt=raise@2")
    assert [failpoints.fires("weight_sync.corrupt") for _ in range(3)] == [False, True, False]
    failpoints.reset()

"""A Ray head answers before its job agent is up: the launcher waits for the agent
instead of failing the job (seen in CI right after `ray start`); any other refusal
fails at once with Ray's reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from podium.jobs.launchers import ray as ray_launcher


class _Head:
    """Ray's JobSubmissionClient as a head whose agent starts after `starting` calls."""

    def __init__(self, starting: int, error: str) -> None:
        self.starting = starting
        self.error = error
        self.calls: list[str] = []

    def submit_job(self, **kwargs: Any) -> str:
        self.calls.append(kwargs["submission_id"])
        if len(self.calls) <= self.starting:
            raise RuntimeError(f"Request failed with status code 500: {self.error}")
        return str(kwargs["submission_id"])


def _launcher(head: _Head) -> ray_launcher.RayLauncher:
    launcher = ray_launcher.RayLauncher.__new__(ray_launcher.RayLauncher)
    launcher.address = "http://127.0.0.1:1"
    launcher.client = head  # type: ignore[assignment]
    return launcher


def _job(tmp_path: Path) -> dict[str, Any]:
    return {"id": "j1", "kind": "export", "attempt": 1, "log_path": str(tmp_path / "log.txt")}


def test_a_head_whose_agent_is_starting_gets_the_job_once_it_is_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ray_launcher.time, "sleep", lambda _s: None)
    head = _Head(2, "No available agent to submit job, please try again later.")
    _launcher(head).launch(_job(tmp_path))
    assert len(head.calls) == 3 and len(set(head.calls)) == 1  # one submission id, retried


def test_any_other_refusal_fails_at_once_with_rays_reason(tmp_path: Path) -> None:
    head = _Head(5, "runtime_env setup failed")
    with pytest.raises(OSError, match="refused job .*runtime_env setup failed"):
        _launcher(head).launch(_job(tmp_path))
    assert len(head.calls) == 1

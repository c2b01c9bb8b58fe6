"""A Ray head started as `.venv/bin/ray start --head` without the venv active: `python`
on its PATH cannot import Podium. Jobs still run (with the worker's interpreter, which
the head's machine shares), and where no Python on a node has Podium the job fails at
once with what to do instead of "No module named 'podium'"."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import cli_fork
import pytest
from conftest import JOBS_TESTS, agent_logs, running_cluster

from podium.config import reset_settings
from podium.jobs.cards import parse_card
from podium.jobs.launch import submit
from podium.jobs.launchers.ray import entrypoint
from podium.jobs.queue import get_job

pytestmark = pytest.mark.ray

VENV_BIN = str(Path(sys.executable).parent)


def _path_without_the_venv() -> str:
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p != VENV_BIN)


def test_a_head_without_podium_on_its_path_runs_the_job(
    podium_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: every job failed with "No module named 'podium'" (the head's `python`)."""
    path = _path_without_the_venv()
    bare = cli_fork.run(
        ["sh", "-c", 'python3 -c "import podium" || python -c "import podium"'],
        env={**os.environ, "PATH": path},
        cwd="/",
        capture_output=True,
    )
    assert bare.returncode != 0  # the head's own Python really lacks Podium
    monkeypatch.setenv("PODIUM_JOB_PLUGINS", "kinds_for_tests")
    monkeypatch.syspath_prepend(str(JOBS_TESTS))
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(JOBS_TESTS), os.environ.get("PYTHONPATH")]))
    )
    monkeypatch.setenv("PODIUM_LAUNCHER", "ray")
    podium_home.mkdir(parents=True, exist_ok=True)
    with running_cluster(path) as cluster:
        monkeypatch.setenv("PODIUM_RAY_ADDRESS", cluster.address)
        reset_settings()
        job_id = submit(parse_card("---\nkind: test-steps\nsteps: 2\n---\n"))
        result = cli_fork.run(
            [sys.executable, "-m", "podium.cli", "worker", "--once", "--poll", "0.2"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        job = get_job(job_id)
        logs = "" if job["status"] == "succeeded" else agent_logs(cluster)
    assert job["status"] == "succeeded", (
        result.stdout + result.stderr + (job["error"] or "") + "\n" + logs
    )
    reset_settings()


def test_no_python_with_podium_on_the_node_fails_naming_the_fix(tmp_path: Path) -> None:
    """The entrypoint itself, as Ray's shell runs it, on a node where nothing has Podium."""
    command = entrypoint("job-1", python=str(tmp_path / "missing" / "python"))
    ran = cli_fork.run(
        ["sh", "-c", command],
        env={"PATH": _path_without_the_venv(), "HOME": str(tmp_path)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 1
    assert "no Python on Ray node" in ran.stderr and "can import podium" in ran.stderr
    assert "source .venv/bin/activate && ray start --head" in ran.stderr
    assert "pip install podium[cluster]" in ran.stderr

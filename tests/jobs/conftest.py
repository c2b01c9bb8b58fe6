"""Job-system fixtures: a fresh home with the test kinds, and real CLI/worker processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from podium.config import reset_settings

HERE = Path(__file__).resolve().parent


@pytest.fixture
def jobs_home(podium_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh home where the test kinds exist, heartbeats are fast and staleness short."""
    monkeypatch.setenv("PODIUM_JOB_PLUGINS", "kinds_for_tests")
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))
    )
    monkeypatch.setenv("PODIUM_HEARTBEAT_SECONDS", "0.5")
    monkeypatch.setenv("PODIUM_STALE_AFTER_SECONDS", "4")
    reset_settings()
    podium_home.mkdir(parents=True, exist_ok=True)
    yield podium_home
    reset_settings()


@pytest.fixture
def start_worker(jobs_home: Path) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start real `podium worker` processes; any still alive are killed at teardown."""
    procs: list[subprocess.Popen[str]] = []

    def start(*args: str) -> subprocess.Popen[str]:
        log = (jobs_home / f"worker-{len(procs)}.log").open("w")
        proc = subprocess.Popen(
            [sys.executable, "-m", "podium.cli", "worker", "--poll", "0.2", *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

"""A real `podium worker` for the async GRPO tests that run a queued job, and the wait
they poll with (no fixed sleeps: the machine may be busy)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from trainers.config import GrpoConfig, RewardSpec


def within(seconds: float, holds: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + seconds
    while not (value := holds()):
        assert time.monotonic() < deadline, f"not within {seconds:.0f} s: {holds}"
        time.sleep(0.5)
    return value


@contextmanager
def running_worker(home: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A worker in its own session, logging to `home/worker.log`; stopped as a person
    stops one (SIGTERM), killed if it does not end."""
    log = (home / "worker.log").open("w")
    worker = subprocess.Popen(
        [sys.executable, "-m", "podium.cli", "worker", "--poll", "0.5"],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        yield worker
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=60)
        except subprocess.TimeoutExpired:
            worker.kill()
        log.close()


def tiny_async_card(model: str, table: str, out: str, **extra: Any) -> GrpoConfig:
    """An async run of the tiny model on one replica, long enough to be stopped while it
    runs (500 steps of one group of 4 short completions)."""
    return GrpoConfig.model_validate(
        {
            "model": model,
            "table": {"name": table},
            "out": out,
            "rollout": "async",
            "replicas": 1,
            "max_steps": 500,
            "batch_size": 4,
            "num_generations": 4,
            "max_completion_length": 8,
            "rewards": [RewardSpec(rule="length:12")],
            **extra,
        }
    )

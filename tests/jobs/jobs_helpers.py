"""Helpers for the job tests: run the real CLI, poll for a condition, probe a process group."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable

from podium.processes import group_alive  # noqa: F401 - used by the job tests


def podium(
    *args: str, check: bool = True, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run the real `podium` CLI in a subprocess."""
    proc = subprocess.run(
        [sys.executable, "-m", "podium.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"podium {' '.join(args)} -> {proc.returncode}\n{proc.stderr}")
    return proc


def wait_for(predicate: Callable[[], object], timeout: float = 60, every: float = 0.2) -> object:
    """Poll until `predicate()` is truthy; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"condition not met within {timeout}s: {predicate}")

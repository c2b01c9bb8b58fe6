"""Helpers for the job tests: run the real CLI, poll for a condition, probe a process group."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import cli_fork

from podium.processes import group_alive  # noqa: F401 - used by the job tests


def podium(
    *args: str, check: bool = True, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run the real `podium` CLI in a subprocess."""
    proc = cli_fork.run(
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


def run_import_job(tmp_path: Path, table: str = "ns.chat") -> str:
    """A succeeded `import` job of four small chats into `table`; returns its id."""
    import json

    from podium.jobs.cards import Card, validate_config
    from podium.jobs.launch import run_in_process

    data = tmp_path / "chat.jsonl"
    rows = [
        {"messages": [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": "a"}]}
        for i in range(4)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    job = run_in_process(
        Card("import", validate_config("import", {"path": str(data), "table": table}))
    )
    assert job["status"] == "succeeded"
    return str(job["id"])

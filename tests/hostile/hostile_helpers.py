"""Helpers for the hostile-input suite: run `podium` as a person does, check refusals."""

from __future__ import annotations

import json
import subprocess
import sys

import cli_fork

PODIUM = [sys.executable, "-m", "podium.cli"]


def podium(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return cli_fork.run([*PODIUM, *args], capture_output=True, text=True, timeout=timeout)


def refused(proc: subprocess.CompletedProcess[str], *phrases: str, code: int = 2) -> str:
    """Assert a clean refusal: exit `code` (2: refused before any job; 1: the job ran
    and failed), no traceback, every phrase in the message."""
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    message = " ".join(proc.stderr.split())  # rich may wrap long lines
    for phrase in phrases:
        assert phrase in message, (phrase, message)
    return message


def tables() -> list[str]:
    proc = podium("tables", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def chat_line(i: int, **extra: object) -> str:
    record = {
        "id": f"r{i}",
        "messages": [
            {"role": "user", "content": f"question {i}"},
            {"role": "assistant", "content": f"answer {i}"},
        ],
        **extra,
    }
    return json.dumps(record) + "\n"

"""Stops a vLLM server Podium started once it has been unused for `server_idle_seconds`.

Started by `podium.models.serving` beside each server, in its own session:
`python -m podium.models.idle_watch MODEL`. "Used" means a client asked for the server
(`server_records.touch`) or vLLM reports running or waiting requests in `/metrics`, so a long
generation job never loses its server mid-run.
"""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime
from typing import Literal

import httpx

from podium import processes
from podium.config import get_settings
from podium.models import server_records as records

Verdict = Literal["gone", "dead", "busy", "idle", "wait"]


def busy(url: str) -> bool:
    """True while vLLM has requests running or queued."""
    try:
        text = httpx.get(url.removesuffix("/v1") + "/metrics", timeout=5.0).text
    except httpx.HTTPError:
        return False
    for line in text.splitlines():
        if line.startswith(("vllm:num_requests_running{", "vllm:num_requests_waiting{")):
            try:
                if float(line.rsplit(" ", 1)[1]) > 0:
                    return True
            except (IndexError, ValueError):
                continue
    return False


def verdict(
    row_exists: bool,
    alive: bool,
    is_busy: bool,
    last_used: datetime,
    idle_s: float,
    now: datetime,
) -> Verdict:
    """What the watcher does next: gone/dead/idle end it, busy postpones, wait waits."""
    if not row_exists:
        return "gone"
    if not alive:
        return "dead"
    if is_busy:
        return "busy"
    last = last_used if last_used.tzinfo else last_used.replace(tzinfo=UTC)
    return "idle" if (now - last).total_seconds() > idle_s else "wait"


def watch(model: str) -> None:
    idle_s = get_settings().server_idle_seconds
    interval = max(1.0, min(30.0, idle_s / 4))
    while True:
        time.sleep(interval)
        row = records._row(model)
        alive = row is not None and records._alive(row)
        action = verdict(
            row is not None,
            alive,
            row is not None and alive and busy(row.url),
            row.last_used if row is not None else datetime.now(UTC),
            idle_s,
            datetime.now(UTC),
        )
        if action == "busy":
            records.touch(model)
        elif action == "dead":
            records._forget(model)
            return
        elif action == "idle" and row is not None:
            processes.reap(row.pid, records.VLLM_MARKER)
            records._forget(model)
            return
        elif action == "gone":
            return


if __name__ == "__main__":
    watch(sys.argv[1])

"""Stops a vLLM server Podium started once it has been unused for `server_idle_seconds`.

Started by `podium.models.serving` beside each server, in its own session:
`python -m podium.models.idle_watch MODEL`. "Used" means a client asked for the server
(`serving.touch`) or vLLM reports running or waiting requests in `/metrics`, so a long
generation job never loses its server mid-run.
"""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime

import httpx
from sqlalchemy import delete

from podium.config import get_settings
from podium.models import serving
from podium.store.state import engine


def busy(url: str) -> bool:
    try:
        text = httpx.get(url.removesuffix("/v1") + "/metrics", timeout=5.0).text
    except httpx.HTTPError:
        return False
    for line in text.splitlines():
        if line.startswith(("vllm:num_requests_running", "vllm:num_requests_waiting{")):
            try:
                if float(line.rsplit(" ", 1)[1]) > 0:
                    return True
            except (IndexError, ValueError):
                continue
    return False


def watch(model: str) -> None:
    idle_s = get_settings().server_idle_seconds
    interval = max(1.0, min(30.0, idle_s / 4))
    while True:
        time.sleep(interval)
        row = serving._row(model)
        if row is None:
            return
        if not serving._pid_is_vllm(row.pid):
            with engine().begin() as conn:
                conn.execute(
                    delete(serving.servers_table).where(serving.servers_table.c.model == model)
                )
            return
        if busy(row.url):
            serving.touch(model)
            continue
        last = row.last_used if row.last_used.tzinfo else row.last_used.replace(tzinfo=UTC)
        if (datetime.now(UTC) - last).total_seconds() > idle_s:
            serving._kill_group(row.pid)
            with engine().begin() as conn:
                conn.execute(
                    delete(serving.servers_table).where(serving.servers_table.c.model == model)
                )
            return


if __name__ == "__main__":
    watch(sys.argv[1])

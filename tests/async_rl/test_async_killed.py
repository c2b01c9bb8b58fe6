"""An async GRPO job SIGKILLed mid-run (the out-of-memory killer), as an operator meets
it: the job ends failed saying how its process died, and nothing it started lives on,
neither its vLLM replica (API server, engine core, worker: ~1.5 GB) nor its private
Ray's agents. Before: the job read "exited with code -9", the engine core and worker
lived on (Ray had killed the actor's children, the API server among them) and so did
Ray's dashboard and runtime-env agents."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest
from job_worker import running_worker, tiny_async_card, within

from podium.jobs.launch import run_or_write_card
from podium.jobs.queue import get_job

pytestmark = [pytest.mark.vllm, pytest.mark.ray, pytest.mark.train]


def started_for(home: Path) -> list[str]:
    """Live vLLM and Ray processes that were started for `home`, by command line."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            env = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        line = cmdline.decode(errors="replace")
        if state != "Z" and f"PODIUM_HOME={home}".encode() in env and "podium" not in line:
            if "vllm" in line.lower() or "ray" in line.lower():
                found.append(f"{entry} {line[:80]}")
    return found


def test_a_sigkilled_async_job_fails_and_leaves_nothing_running(
    tiny_base: str, make_table: Any, memo_pairs: Any, podium_home: Path
) -> None:
    cfg = tiny_async_card(tiny_base, make_table("demo.memo", memo_pairs), "tiny-killed")
    job_id = str(run_or_write_card("grpo", cfg, foreground=False))  # still running when killed
    try:
        with running_worker(podium_home):
            job_log = Path(within(120, lambda: get_job(job_id)["log_path"]))
            within(300, lambda: job_log.is_file() and "replica 0:" in job_log.read_text())
            assert any("vllm" in p.lower() for p in started_for(podium_home))

            os.kill(get_job(job_id)["pgid"], signal.SIGKILL)  # the job's own process, alone

            job = within(60, lambda: (j := get_job(job_id))["status"] != "running" and j)
            assert job["status"] == "failed"
            assert "died without recording an outcome (killed by signal 9" in job["error"]
            # The owner watcher (vLLM) and the worker (Ray's agents) stop the rest in seconds.
            within(60, lambda: not started_for(podium_home))
    finally:
        for line in started_for(podium_home):
            os.kill(int(line.split()[0]), signal.SIGKILL)

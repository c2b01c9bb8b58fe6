"""`podium up`: the app and a worker together, both stopped by one Ctrl-C."""

from __future__ import annotations

import contextlib
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
from jobs_helpers import wait_for

from podium.jobs.cards import parse_card
from podium.jobs.launch import submit
from podium.jobs.queue import get_job
from podium.processes import find


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(url: str) -> bool:
    with contextlib.suppress(httpx.HTTPError):
        return httpx.get(f"{url}/_stcore/health", timeout=2).text.strip() == "ok"
    return False


def _alive(pid: int) -> bool:
    """Running: a zombie (dead, not yet reaped by whoever now parents it) is not."""
    return find(pid) is not None


def _hostile_folder(folder: Path) -> Path:
    """A folder someone starts Podium from (a dataset's): its `podium/` and `.streamlit/`
    must never be read, by the app, the worker or a job."""
    (folder / "podium").mkdir(parents=True)
    (folder / "podium" / "__init__.py").write_text(
        'raise SystemExit("the podium/ of the working folder was imported")\n'
    )
    (folder / ".streamlit").mkdir()
    (folder / ".streamlit" / "config.toml").write_text('[server]\nbaseUrlPath = "elsewhere"\n')
    return folder


def test_up_serves_the_app_runs_jobs_and_stops_both(jobs_home: Path, tmp_path: Path) -> None:
    port = _free_port()
    log = jobs_home / "up.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            # -P: as the `podium` script starts, without its own working folder on sys.path
            [sys.executable, "-P", "-m", "podium.cli", "up", "--host", "127.0.0.1"]
            + ["--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=_hostile_folder(tmp_path / "data"),
        )
    try:
        wait_for(lambda: _healthy(f"http://127.0.0.1:{port}"), timeout=120, every=0.5)
        job_id = submit(parse_card("---\nkind: test-steps\nsteps: 2\n---\n"))
        wait_for(lambda: get_job(job_id)["status"] == "succeeded", timeout=60)
        started = re.findall(r"started (\w+) \(pid (\d+)\)", log.read_text())
        pids = {name: int(pid) for name, pid in started}
        assert set(pids) == {"worker", "app"}

        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
        # A child that `up` stopped may still be in its last moments on a busy machine (CI
        # once saw one a moment after `up` returned); it must be gone within seconds.
        wait_for(lambda: not any(_alive(pid) for pid in pids.values()), timeout=10, every=0.2)
        assert "stopped worker" in log.read_text() and "stopped app" in log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

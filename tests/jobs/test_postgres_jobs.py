"""The job system on a PostgreSQL state database: two real workers share one queue."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from podium.config import reset_settings
from podium.jobs.cards import parse_card
from podium.jobs.launch import submit
from podium.jobs.logbook import events
from podium.jobs.queue import claim_next, get_job, now, set_fields, stale_jobs
from podium.store.state.state import engine

_spec = importlib.util.spec_from_file_location(
    "podium_test_postgres", Path(__file__).resolve().parents[1] / "integration" / "postgres.py"
)
assert _spec and _spec.loader
postgres = importlib.util.module_from_spec(_spec)
# A dataclass in the module looks its module up in sys.modules while it is being made.
sys.modules[_spec.name] = postgres
_spec.loader.exec_module(postgres)


@pytest.fixture
def pg_jobs(jobs_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with postgres.postgres_server() as url:
        monkeypatch.setenv("PODIUM_CATALOG_URI", url)
        reset_settings()
        yield url
        reset_settings()


def test_two_workers_on_postgres_run_each_job_once(pg_jobs: str) -> None:
    assert engine().url.get_backend_name() == "postgresql"
    cards = [f"---\nkind: test-steps\nsteps: 2\nmode: m{i}\n---\n" for i in range(4)]
    ids = [submit(parse_card(card)) for card in cards]
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "podium.cli", "worker", "--once", "--poll", "0.2"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [w.communicate(timeout=180)[0] for w in workers]
    assert all(w.returncode == 0 for w in workers), outputs
    for job_id in ids:
        job = get_job(job_id)
        assert (job["status"], job["attempt"]) == ("succeeded", 1), job["error"]
        assert [e["status"] for e in events(job_id)] == ["queued", "running", "succeeded"]
        assert sum(f"job {job_id}: succeeded" in out for out in outputs) == 1


def test_stale_detection_on_postgres(pg_jobs: str) -> None:
    job_id = submit(parse_card("---\nkind: test-steps\n---\n"))
    claimed = claim_next(1, "local")
    assert claimed is not None and claimed["heartbeat_at"].tzinfo is not None
    assert stale_jobs(stale_after=30) == []
    set_fields(job_id, heartbeat_at=now() - timedelta(seconds=60))
    assert [j["id"] for j in stale_jobs(stale_after=30)] == [job_id]

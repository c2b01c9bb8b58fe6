"""The typed job record (`podium.jobs.record.Job`) is exactly a row of the jobs table."""

from __future__ import annotations

import types
import typing
from datetime import datetime
from pathlib import Path

from podium.jobs.cards import parse_card
from podium.jobs.launch import submit
from podium.jobs.queue import claim_next, get_job
from podium.jobs.record import Job
from podium.jobs.tables import jobs


def test_every_column_is_a_key_of_the_record() -> None:
    # A column added to the table must be typed in the record (and the other way round),
    # or mypy would stop checking the subscripts that read it.
    assert list(Job.__annotations__) == [column.name for column in jobs.columns]
    assert Job.__required_keys__ == frozenset(Job.__annotations__)


def test_a_job_from_the_queue_matches_its_record_type(jobs_home: Path) -> None:
    job_id = submit(parse_card("---\nkind: test-steps\nsteps: 1\n---\n"))
    claimed = claim_next(1, "local")
    assert claimed is not None and claimed["id"] == job_id
    job = get_job(job_id)
    hints = typing.get_type_hints(Job)
    assert list(job) == list(hints)
    assert isinstance(job["created_at"], datetime) and job["created_at"].tzinfo is not None
    assert isinstance(job["started_at"], datetime) and job["started_at"].tzinfo is not None
    assert job["inputs"] == [] and job["outputs"] is None and job["attempt"] == 1
    for key, hint in hints.items():
        allowed = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
        origins = tuple(typing.get_origin(a) or a for a in allowed)
        assert isinstance(job[key], origins), (key, job[key], hint)

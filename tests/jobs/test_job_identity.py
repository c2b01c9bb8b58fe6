"""Every job has a submitter; roles decide who may queue, cancel and run it."""

from __future__ import annotations

import getpass
import sys
from pathlib import Path

import cli_fork
import pytest

from podium.config import reset_settings
from podium.errors import PermissionDenied
from podium.identity import User
from podium.jobs.cards import parse_card
from podium.jobs.launch import submit
from podium.jobs.queue import get_job, list_jobs, request_cancel, submitters
from podium.store.state.users import grant

CARD = "---\nkind: test-steps\nsteps: 1\n---\n"
ADMIN = User(name="boss@example.org", role="admin", source="config")


@pytest.fixture
def shared(jobs_home: Path, monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """A shared deployment: CLI and worker act as PODIUM_USER, roles from the table."""
    monkeypatch.setenv("PODIUM_ADMINS", ADMIN.name)
    monkeypatch.setenv("PODIUM_USER", ADMIN.name)
    reset_settings()
    grant(ADMIN, "op1@example.org", "operator")
    grant(ADMIN, "op2@example.org", "operator")
    grant(ADMIN, "ann@example.org", "reviewer")
    return monkeypatch


def act_as(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv("PODIUM_USER", name)
    reset_settings()


def test_local_mode_records_the_os_user(jobs_home: Path) -> None:
    job_id = submit(parse_card(CARD))
    assert get_job(job_id)["submitted_by"] == getpass.getuser()


def test_a_reviewer_cannot_queue_a_job_and_nothing_is_recorded(
    shared: pytest.MonkeyPatch,
) -> None:
    act_as(shared, "ann@example.org")
    with pytest.raises(PermissionDenied, match="ann@example.org has role 'reviewer'"):
        submit(parse_card(CARD))
    assert list_jobs() == []


def test_operators_cancel_only_their_own_jobs_admins_any(shared: pytest.MonkeyPatch) -> None:
    act_as(shared, "op1@example.org")
    first, second = submit(parse_card(CARD)), submit(parse_card(CARD))
    act_as(shared, "op2@example.org")
    mine = submit(parse_card(CARD))
    with pytest.raises(PermissionDenied, match="submitted by op1@example.org"):
        request_cancel(first)
    assert get_job(first)["status"] == "queued"
    assert request_cancel(mine) == "cancelled"
    act_as(shared, "op1@example.org")
    assert request_cancel(first) == "cancelled"
    act_as(shared, ADMIN.name)
    assert request_cancel(second) == "cancelled"
    # The logbook's filter.
    assert submitters() == ["op1@example.org", "op2@example.org"]
    assert {j["id"] for j in list_jobs(submitted_by="op1@example.org")} == {first, second}


def test_the_worker_refuses_a_job_whose_submitter_lost_the_role(
    shared: pytest.MonkeyPatch,
) -> None:
    act_as(shared, "op1@example.org")
    demoted = submit(parse_card(CARD))
    act_as(shared, "op2@example.org")
    kept = submit(parse_card(CARD))
    grant(ADMIN, "op1@example.org", "reviewer")
    act_as(shared, "worker@example.org")  # the worker's own identity does not matter
    proc = cli_fork.run(
        [sys.executable, "-m", "podium.cli", "worker", "--once", "--poll", "0.2"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    refused = get_job(demoted)
    assert refused["status"] == "failed"
    assert "op1@example.org has role 'reviewer'" in refused["error"]
    assert get_job(kept)["status"] == "succeeded"


def test_a_jobs_snapshots_name_its_submitter_as_author(shared: pytest.MonkeyPatch) -> None:
    from podium.store.catalog.catalog import load_table

    act_as(shared, "op1@example.org")
    job_id = submit(parse_card("---\nkind: test-steps\nsteps: 1\ntable: ns.authored\n---\n"))
    act_as(shared, "worker@example.org")
    proc = cli_fork.run(
        [sys.executable, "-m", "podium.cli", "worker", "--once", "--poll", "0.2"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    assert get_job(job_id)["status"] == "succeeded", get_job(job_id)["error"]
    snapshot = load_table("ns.authored").current_snapshot()
    assert snapshot is not None and snapshot.summary is not None
    assert snapshot.summary["podium.author"] == "op1@example.org"

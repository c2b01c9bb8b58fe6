"""The fault matrix's retry cases (tests/faults/retry_cases.py): no retry, resume or re-run
duplicates a row; a lost answer after the catalog's COMMIT (connections cut on
PostgreSQL) leaves a succeeded job pinned to what it wrote; a full disk is one line."""

from __future__ import annotations

from dataclasses import asdict

import pytest
from fault_matrix import Case, run_matrix
from retry_cases import retry_case_points, run_retry_case_with_job


def _run(store: str, paths: tuple[str, ...]) -> list[tuple[object, dict[str, object]]]:
    cases = [Case(*c) for c in retry_case_points() if c[0] in paths]
    return run_matrix(store, cases, run=run_retry_case_with_job)


def _check(store: str, paths: tuple[str, ...]) -> None:
    for outcome, extra in _run(store, paths):
        o = asdict(outcome)  # type: ignore[call-overload]
        assert o["rows_lost"] == 0 and not o["unreadable"], (o, extra["stderr"])
        assert o["missing_files"] == 0 and o["left_after_maintain"] == 0, o
        if o["path"].endswith("-disk-full"):
            assert o["state"] == "before", o
            assert o["exit_code"] not in (0, 75), o  # not "unreachable, run it again"
            stderr = str(extra["stderr"])
            assert "Traceback" not in stderr and "no space left" in stderr.lower(), stderr
            continue
        # A retry after compaction, or a job whose connection was cut after its commit:
        # every row once, and the command succeeded.
        assert o["state"] == "after" and o["exit_code"] == 0, (o, extra["stderr"])
        job = extra["job"]
        if job is not None:
            assert isinstance(job, dict) and job["status"] == "succeeded", job
            tables = job["outputs"]["tables"]
            assert tables and all(t["snapshot_id"] for t in tables), job  # pinned


@pytest.mark.faults
@pytest.mark.clockless
def test_retries_never_duplicate_a_row_on_the_local_store() -> None:
    _check(
        "sqlite+local",
        ("staged-rerun", "edit-disk-full", "import-disk-full", "import-append-severed"),
    )


@pytest.mark.faults
@pytest.mark.clockless
@pytest.mark.integration
def test_a_connection_cut_after_commit_on_postgres_loses_no_outcome() -> None:
    _check("postgres+s3", ("import-append-severed", "import-create-severed", "staged-rerun"))

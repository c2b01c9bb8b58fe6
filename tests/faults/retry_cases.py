"""The fault matrix's retry cases: no retry, resume or re-run duplicates a row (issue 44).

- `staged-rerun`: a job's staged output is committed with a fault at a commit stage, the
  table is compacted (`podium maintain`: the committed files are rewritten away), and the
  job is run again with more shards staged, as a resumed generation or code-exec build
  does (`tests/faults/staged_job.py`, the same `pending_files`/`commit_staged` they use);
- `import-append-severed`, `import-create-severed`: the catalog commits an import job's
  output, then every connection to PostgreSQL is cut (`pg_terminate_backend`) before the
  job records its outcome; the job must succeed and pin the snapshot it wrote. On SQLite
  there is no connection to cut: the pause alone;
- `edit-disk-full`, `import-disk-full`: the disk fills up (`enospc`) before an edit's
  commit (its metadata file) or between an append's data files: one `error:` line that
  says so, nothing changed, nothing left after maintain.

Each case ends in the same checks as the write paths' (`fault_matrix.Outcome`): the table
reads as before or after (each row once), no file missing, nothing left after maintain.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
STAGED_JOB = HERE / "staged_job.py"

RETRY_PATHS = (
    "staged-rerun",
    "import-append-severed",
    "import-create-severed",
    "edit-disk-full",
    "import-disk-full",
)
SEVER = "sever"  # the action of the severed cases: pause at the point, cut every connection


def retry_case_points() -> list[tuple[str, str, str]]:
    """(path, point, action) of every retry case."""
    staged = [
        ("staged-rerun", point, action)
        for point in ("commit.before", "commit.after")
        for action in ("raise", "kill")
    ]
    severed = [(p, "commit.after", SEVER) for p in RETRY_PATHS if p.endswith("-severed")]
    # An edit writes one file (no second to reach `write.between_files`); an import several.
    full = [
        ("edit-disk-full", "commit.before", "enospc"),
        ("import-disk-full", "write.between_files", "enospc"),
    ]
    return staged + severed + full


def run_retry_case(store: str, env: dict[str, str], case: Any, n: int, work: Path) -> Any:
    """One retry case (a `fault_matrix.Case` whose path is in RETRY_PATHS), checked as the
    write paths are; returns its `fault_matrix.Outcome`."""
    return run_retry_case_with_job(store, env, case, n, work)[0]


def run_retry_case_with_job(
    store: str, env: dict[str, str], case: Any, n: int, work: Path
) -> tuple[Any, dict[str, Any]]:
    """The case's `Outcome`, and what else it saw: the command's stderr and, for the
    import jobs, the job's status and pinned outputs."""
    import fault_matrix as fm

    table = f"fm.r{n}"
    if case.path == "staged-rerun":
        seen = _staged_rerun(env, table, case.point, case.action)
    elif case.path.endswith("-severed"):
        seen = _severed(env, case.path, table, case.point, n, work)
    else:
        fm.make_table(table, fm.ROWS, file_bytes=int(fm.SMALL_FILES))
        before = fm._state(table)
        if case.path == "edit-disk-full":
            args = ["edit", table, fm.row_id(3), "--turn", "1", "--content", "fixed", "-m", "m"]
        else:
            more = fm._jsonl(work / f"more{n}.jsonl", fm.ROWS, 40)
            args = ["import", str(more), "--out", table, "--mode", "append"]
        proc = fm._podium(env, *args, faults=f"{case.point}={case.action}")
        kind = "edit" if case.path == "edit-disk-full" else "import-append"
        seen = _result(table, before, fm._expected_after(kind, before, n), proc)
    watched, now = seen["watched"], seen["now"]
    if seen["unreadable"]:
        state, lost = "mixed", 0
    elif now == seen["before"]:
        state, lost = "before", 0
    elif now == seen["after"]:
        state, lost = "after", 0
    else:
        closer = min(
            (seen["before"] or {}, seen["after"] or {}),
            key=lambda s: len(set(s.items()) ^ set((now or {}).items())),
        )
        state, lost = "mixed", len(set(closer.items()) ^ set((now or {}).items()))
    missing = fm._missing(watched)
    sweep = fm._podium(
        env, "maintain", "--all", "--retention-days", "7", "--grace-hours", "0", "--force"
    )
    fm.reset_settings()
    left = fm._left_over(watched) if sweep.returncode == 0 else max(fm._left_over(watched), 1)
    outcome = fm.Outcome(
        store,
        case.path,
        case.point,
        case.action,
        seen["exit_code"],
        state,
        lost,
        seen["unreadable"],
        missing,
        left,
    )
    return outcome, {"stderr": seen["stderr"], "job": seen.get("job")}


def _result(
    table: str, before: Any, after: Any, proc: Any, unreadable: bool = False
) -> dict[str, Any]:
    import fault_matrix as fm

    fm.reset_settings()
    try:
        now = fm._state(table)
    except Exception:  # noqa: BLE001 - an unreadable head is what the matrix counts
        now, unreadable = None, True
    return {
        "exit_code": proc.returncode,
        "watched": table,
        "before": before,
        "after": after,
        "now": now,
        "unreadable": unreadable,
        "stderr": proc.stderr,
    }


# ---- staged job output, retried after a compaction ----


def _staged(env: dict[str, str], table: str, shards: int, faults: str = "") -> Any:
    import subprocess

    full = {**os.environ, **env, "PODIUM_FAILPOINTS": faults}
    return subprocess.run(
        [sys.executable, str(STAGED_JOB), table, str(shards)],
        capture_output=True,
        text=True,
        timeout=300,
        env=full,
    )


def _ids(table: str) -> dict[str, str] | None:
    """id -> "n" for the staged table; a duplicated id shows as a count above 1."""
    from podium.store.catalog.catalog import load_table, table_exists

    if not table_exists(table):
        return None
    counts: dict[str, int] = {}
    for row_id in load_table(table).scan(selected_fields=("id",)).to_arrow()["id"].to_pylist():
        counts[row_id] = counts.get(row_id, 0) + 1
    return {k: str(v) for k, v in counts.items()}


def _staged_rerun(env: dict[str, str], table: str, point: str, action: str) -> dict[str, Any]:
    """Two shards committed with the fault, compaction, then the job again with three."""
    import fault_matrix as fm

    from podium.store.catalog.catalog import table_exists

    first = _staged(env, table, 2, faults=f"{point}={action}")
    fm.reset_settings()
    if table_exists(table):
        fm._podium(env, "maintain", table, "--no-expire", "--no-remove-orphans")
    again = _staged(env, table, 3)
    fm.reset_settings()
    try:
        now, unreadable = _ids(table), False
    except Exception:  # noqa: BLE001 - an unreadable head is what the matrix counts
        now, unreadable = None, True
    return {
        "exit_code": again.returncode,
        "watched": table,
        "before": None,  # the job's rows never appear twice, so the retry ends "after"
        "after": {f"s{shard}-{i}": "1" for shard in range(3) for i in range(5)},
        "now": now,
        "unreadable": unreadable,
        "stderr": first.stderr + again.stderr,
    }


# ---- the connection cut after the catalog's COMMIT ----


def _cut_connections(url: str) -> int:
    """Terminate every other client connection to the database (as a failover does)."""
    import sqlalchemy as sa

    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    with engine.connect() as con:
        cut = con.execute(
            sa.text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'"
            )
        ).scalar_one()
    engine.dispose()
    return int(cut)


def _severed(
    env: dict[str, str], path: str, table: str, point: str, n: int, work: Path
) -> dict[str, Any]:
    """An import job paused after the catalog's COMMIT; every connection is cut; on."""
    import fault_matrix as fm

    marks = work / f"marks{n}"
    marks.mkdir()
    watched = table if path == "import-append-severed" else f"fm.rnew{n}"
    if path == "import-append-severed":
        fm.make_table(table, fm.ROWS, file_bytes=int(fm.SMALL_FILES))
        more = fm._jsonl(work / f"more{n}.jsonl", fm.ROWS, 40)
        args = ["import", str(more), "--out", table, "--mode", "append"]
    else:
        more = fm._jsonl(work / f"new{n}.jsonl", 0, 40)
        args = ["import", str(more), "--out", watched]
    before = fm._state(watched)
    done: list[Any] = []
    run_env = {**env, "PODIUM_FAILPOINTS_DIR": str(marks)}
    runner = threading.Thread(
        target=lambda: done.append(fm._podium(run_env, *args, faults=f"{point}=pause"))
    )
    runner.start()
    reached = marks / f"{point}.reached"
    deadline = time.monotonic() + 300
    while not reached.exists() and runner.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    url = env.get("PODIUM_CATALOG_URI", "")
    if reached.exists() and url.startswith("postgresql"):
        _cut_connections(url)
    (marks / f"{point}.release").touch()
    runner.join(timeout=300)
    kind = "import-append" if path == "import-append-severed" else "import-create"
    result = _result(watched, before, fm._expected_after(kind, before, n), done[0])
    result["job"] = _last_job()
    return result


def _last_job() -> dict[str, Any] | None:
    """The newest job's status and pinned outputs."""
    from podium.jobs.queue import list_jobs

    jobs = list_jobs(limit=1)
    if not jobs:
        return None
    job = jobs[0]
    return {"status": job["status"], "outputs": json.loads(json.dumps(job["outputs"]))}

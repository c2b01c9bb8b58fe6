"""`podium maintain` keeps every snapshot a job names, its outputs as well as its
pinned inputs: a re-run compares against the snapshot its original wrote."""

from __future__ import annotations

import json
from pathlib import Path

from jobs_helpers import podium, run_import_job

from podium.jobs.maintain import job_snapshots
from podium.store.catalog.catalog import load_table


def _import_job(tmp_path: Path, table: str) -> tuple[str, int]:
    job_id = run_import_job(tmp_path, table)
    return job_id, load_table(table).current_snapshot().snapshot_id  # type: ignore[union-attr]


def test_rerun_compare_works_after_expiring_everything(jobs_home: Path, tmp_path: Path) -> None:
    job_id, imported = _import_job(tmp_path, "ns.chat")
    first_id = load_table("ns.chat").scan(selected_fields=("id",)).to_arrow()["id"][0].as_py()
    podium("delete-rows", "ns.chat", first_id, "-m", "junk")  # the head moves on
    assert load_table("ns.chat").current_snapshot().snapshot_id != imported  # type: ignore[union-attr]
    assert imported in job_snapshots("ns.chat")

    podium("maintain", "ns.chat", "--retention-days", "0", "--grace-hours", "0", "--force")

    assert imported in {s.snapshot_id for s in load_table("ns.chat").snapshots()}
    report = json.loads(podium("jobs", "rerun", job_id, "--compare", "--json", "--quiet").stdout)
    [table] = report["tables"]
    assert table["original_snapshot"] == imported and table["identical"] == 4

"""`podium maintain` keeps every snapshot a job names, its outputs as well as its
pinned inputs: a re-run compares against the snapshot its original wrote."""

from __future__ import annotations

import json
from pathlib import Path

from jobs_helpers import podium, run_import_job

from podium.jobs.pins import job_snapshots
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


def _chats(path: Path, first: int) -> Path:
    rows = [
        {
            "id": f"c{i}",
            "messages": [
                {"role": "user", "content": f"q{i}"},
                {"role": "assistant", "content": "a"},
            ],
        }
        for i in range(first, first + 5)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_maintain_says_what_job_pins_keep_and_a_pin_can_end(
    jobs_home: Path, tmp_path: Path
) -> None:
    for k in range(3):  # an appended-to table: each import job's output is pinned
        mode = "append" if k else "create"
        podium(
            "import",
            str(_chats(tmp_path / f"{k}.jsonl", 5 * k)),
            "--out",
            "ns.grow",
            "--mode",
            mode,
        )
    outputs = [s.snapshot_id for s in load_table("ns.grow").snapshots()]
    sweep = ("--retention-days", "0", "--grace-hours", "0", "--force")

    kept = json.loads(podium("maintain", "ns.grow", *sweep, "--json").stdout)

    # Compaction made one file; the three jobs' outputs stay, with their old files.
    assert kept["compaction"]["files_in"] == 3
    pinned = kept["pinned"]
    assert [p["snapshot_id"] for p in pinned["snapshots"]] == outputs
    assert all("(import, succeeded" in p["kept_by"][0] for p in pinned["snapshots"])
    assert pinned["files"] == 3 and pinned["bytes"] > 0
    shown = podium("maintain", "ns.grow", *sweep).stdout
    assert "kept 3 snapshots past the retention because jobs or lineage name them" in shown
    assert "--job-pin-days" in shown

    freed = json.loads(
        podium("maintain", "ns.grow", *sweep, "--job-pin-days", "0", "--json").stdout
    )

    assert freed["expired_snapshots"] == 3 and freed["pinned"]["snapshots"] == []
    assert freed["orphans_removed"]["files"] >= 3  # the old data files went at last
    assert freed["after"]["bytes_on_disk"] < kept["after"]["bytes_on_disk"]
    assert len(load_table("ns.grow").scan().to_arrow()) == 15

"""The job commands end to end, through the real `podium` CLI and real import/export kinds."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from jobs_helpers import podium

from podium.jobs.queue import get_job, list_jobs
from podium.jobs.reproducibility import record_rerun
from podium.store.catalog.catalog import load_table, table_exists


def _chat_file(path: Path, n: int = 3) -> Path:
    rows = [
        {"messages": [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": "a"}]}
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_import_card_written_then_run_creates_table_with_lineage(
    jobs_home: Path, tmp_path: Path
) -> None:
    data = _chat_file(tmp_path / "chat.jsonl")
    card = tmp_path / "import.md"
    podium("import", str(data), "--table", "ns.chat", "--card", str(card))
    assert card.read_text().startswith("---\nkind: import\n")
    assert not table_exists("ns.chat") and list_jobs() == []  # --card runs nothing

    podium("run", str(card))
    jobs = json.loads(podium("jobs", "--json").stdout)
    assert [(j["kind"], j["status"]) for j in jobs] == [("import", "succeeded")]
    assert jobs[0]["card"] == card.read_text()
    props = load_table("ns.chat").properties
    assert props["podium.lineage.job_id"] == jobs[0]["id"]
    assert props["podium.lineage.card"] == card.read_text()
    assert props["podium.kind"] == "sft"

    # An export card pins the table's snapshot: the job's inputs name it.
    snap = load_table("ns.chat").current_snapshot().snapshot_id
    export_card = tmp_path / "export.md"
    podium(
        "export", "ns.chat", str(jobs_home / "exports" / "out.jsonl"), "--card", str(export_card)
    )
    assert f"snapshot_id: {snap}" in export_card.read_text()
    podium("run", str(export_card))
    shown = json.loads(podium("jobs", "show", jobs[0]["id"][:20], "--json").stdout)
    assert shown["id"] == jobs[0]["id"]
    latest = json.loads(podium("jobs", "--json").stdout)[0]
    assert latest["kind"] == "export" and latest["inputs"] == [f"ns.chat@{snap}"]
    assert (jobs_home / "exports" / "out.jsonl").read_text().count("\n") == 3


def test_submitted_card_is_run_by_the_worker(jobs_home: Path, tmp_path: Path) -> None:
    data = _chat_file(tmp_path / "chat.jsonl", n=2)
    card = tmp_path / "import.md"
    podium("import", str(data), "--table", "ns.queued", "--card", str(card))
    job_id = podium("submit", str(card)).stdout.strip()
    assert get_job(job_id)["status"] == "queued"

    podium("worker", "--once", "--poll", "0.2")
    job = json.loads(podium("jobs", "show", job_id, "--json").stdout)
    assert job["status"] == "succeeded" and job["card"] == card.read_text()
    assert load_table("ns.queued").properties["podium.lineage.job_id"] == job_id
    assert job["outputs"]["summary"] == {"rows": 2}
    # `jobs show` says what the Logbook says about reproducibility, text and --json.
    hint = f"not checked yet: podium jobs rerun {job_id} --compare"
    assert job["reproducibility"] == hint
    assert f"reproducibility {hint}" in podium("jobs", "show", job_id).stdout

    # A re-run writes a new table beside the original, never over it.
    rerun = podium("jobs", "rerun", job_id)
    rerun_id = rerun.stdout.strip()
    assert rerun_id != job_id and "ns.queued -> ns.queued__rerun_1" in rerun.stderr
    podium("worker", "--once", "--poll", "0.2")
    assert get_job(rerun_id)["status"] == "succeeded"
    assert load_table("ns.queued__rerun_1").properties["podium.lineage.job_id"] == rerun_id
    record_rerun(job_id, rerun_id, "identical", [])
    shown = json.loads(podium("jobs", "show", job_id, "--json").stdout)
    assert shown["reproducibility"].startswith("re-ran identical on ")


def test_invalid_card_is_rejected_and_nothing_is_queued(jobs_home: Path, tmp_path: Path) -> None:
    card = tmp_path / "bad.md"
    card.write_text("---\nkind: import\npath: 3\nmode: sideways\nextra: 1\n---\n")
    for command in ("submit", "run"):
        result = podium(command, str(card), check=False)
        assert result.returncode == 2
        assert "Invalid 'import' settings" in result.stderr
        for field in ("out (--out): required, not given", "mode (--mode):", "extra: unknown"):
            assert field in result.stderr
    assert json.loads(podium("jobs", "--json").stdout) == []


def test_logs_follow_prints_until_the_job_ends(
    jobs_home: Path, tmp_path: Path, start_worker: Callable[..., object]
) -> None:
    card = tmp_path / "steps.md"
    card.write_text("---\nkind: test-steps\nsteps: 8\nsleep: 0.2\n---\n")
    job_id = podium("submit", str(card)).stdout.strip()
    start_worker()
    followed = podium("jobs", "logs", job_id, "--follow", timeout=60).stdout
    assert "step 8/8" in followed and f"-- job {job_id} succeeded" in followed
    assert "step 8/8" in podium("jobs", "logs", job_id).stdout
    listing = podium("jobs").stdout
    assert "succeeded" in listing and job_id in listing


def test_failing_foreground_run_exits_nonzero_with_log_path(
    jobs_home: Path, tmp_path: Path
) -> None:
    card = tmp_path / "fail.md"
    card.write_text("---\nkind: test-steps\nfail_at: 1\n---\n")
    result = podium("run", str(card), check=False)
    assert result.returncode == 1
    assert "failed: RuntimeError: planted failure at step 1" in result.stderr
    assert "log.txt" in result.stderr

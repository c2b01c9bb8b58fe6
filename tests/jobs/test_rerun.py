"""`podium jobs rerun ID [--compare]` with real kinds, real tables and the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jobs_helpers import podium, run_import_job

from podium.errors import InvalidInput
from podium.jobs.cards import Card, card_environment, validate_config
from podium.jobs.launch import run_in_process
from podium.jobs.queue import get_job
from podium.jobs.rerun import plan_rerun
from podium.store.catalog.catalog import load_table, table_exists


def _import_job(tmp_path: Path, table: str = "ns.chat") -> str:
    return run_import_job(tmp_path, table)


def test_rerun_compare_reports_identical_rows_as_json(jobs_home: Path, tmp_path: Path) -> None:
    job_id = _import_job(tmp_path)
    original_snapshot = load_table("ns.chat").current_snapshot().snapshot_id
    result = podium("jobs", "rerun", job_id, "--compare", "--json", "--quiet")
    report = json.loads(result.stdout)
    assert report["job_id"] == job_id and report["all_identical"] is True
    [table] = report["tables"]
    assert (table["original"], table["rerun"]) == ("ns.chat", "ns.chat__rerun_1")
    assert table["original_snapshot"] == original_snapshot
    assert (table["identical"], table["differing"], table["key"]) == (4, 0, ["id"])
    again = get_job(report["rerun_job_id"])
    assert again["status"] == "succeeded"
    recorded = card_environment(again["card"])
    assert recorded and recorded["podium_version"] and recorded["lock_digest"]
    # The original is untouched; a second re-run takes the next free name.
    assert load_table("ns.chat").current_snapshot().snapshot_id == original_snapshot
    # a prefix (the re-run may start in the same second: all but the last letter)
    text = podium("jobs", "rerun", job_id[:-1], "--compare", "--quiet").stdout
    assert "ns.chat@" in text and "ns.chat__rerun_2@" in text
    assert "4 identical, 0 differing, 0 only in the original, 0 only in the re-run" in text


def test_rerun_refuses_unfinished_jobs_and_jobs_without_tables(
    jobs_home: Path, tmp_path: Path
) -> None:
    failed = run_in_process(Card("test-steps", validate_config("test-steps", {"fail_at": 0})))
    with pytest.raises(InvalidInput, match="is failed: only a succeeded job"):
        plan_rerun(failed["id"])
    no_table = run_in_process(Card("test-steps", validate_config("test-steps", {"steps": 1})))
    with pytest.raises(InvalidInput, match="wrote no table or checkpoint that its card names"):
        plan_rerun(no_table["id"])
    assert not table_exists("ns.chat__rerun_1")


def test_plan_points_only_output_fields_at_new_tables(jobs_home: Path, tmp_path: Path) -> None:
    import pyarrow as pa

    from podium.store.write.write import write_table

    write_table("ns.src", pa.table({"x": [1]}))
    config = validate_config(
        "test-steps", {"steps": 1, "table": "ns.out", "source": {"name": "ns.src"}}
    )
    job = run_in_process(Card("test-steps", config))
    write_table("ns.out__rerun_1", pa.table({"x": [1]}))  # taken: the next free name is used
    plan = plan_rerun(job["id"])
    assert plan.tables == {"ns.out": "ns.out__rerun_2"}
    assert plan.card.config.table == "ns.out__rerun_2"
    assert plan.card.config.source.name == "ns.src"  # inputs stay pinned as they ran
    assert plan.card.environment == card_environment(get_job(job["id"])["card"])


def test_a_queued_job_is_not_offered_rerun(jobs_home: Path) -> None:
    """Before: the Logbook offered "Re-run" on a job that had not run yet."""
    from podium.jobs import logbook
    from podium.jobs.cards import parse_card
    from podium.jobs.launch import submit

    queued = submit(parse_card("---\nkind: test-steps\nsteps: 2\n---\n"))
    assert not logbook.may_rerun(get_job(queued))
    with pytest.raises(InvalidInput, match="has not finished"):
        logbook.rerun(queued)
    finished = run_in_process(parse_card("---\nkind: test-steps\nsteps: 1\n---\n"))
    assert logbook.may_rerun(finished)
    assert get_job(logbook.rerun(finished["id"]))["status"] == "queued"


def test_logbook_rerun_of_a_succeeded_job_writes_new_outputs(jobs_home: Path) -> None:
    """Before: the Logbook's Re-run queued the card as it was: a training run failed on
    "model ... already registered", a validation overwrote the original report."""
    import pyarrow as pa

    from podium.jobs import logbook
    from podium.jobs.cards import parse_card
    from podium.store.schema import SFT_ARROW_SCHEMA
    from podium.store.write.write import write_table

    steps = run_in_process(Card("test-steps", validate_config("test-steps", {"table": "ns.o"})))
    again = get_job(logbook.rerun(steps["id"]))
    assert again["status"] == "queued"
    assert parse_card(again["card"]).config.table == "ns.o__rerun_1"

    turns = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "{broken"}]
    write_table("ns.v", pa.Table.from_pylist([{"id": "a", "messages": turns}], SFT_ARROW_SCHEMA))
    config = validate_config("validate", {"table": {"name": "ns.v"}, "rules": ["json"]})
    validation = run_in_process(Card("validate", config))
    assert validation["status"] == "succeeded", validation["error"]
    queued = parse_card(get_job(logbook.rerun(validation["id"]))["card"]).config
    assert queued.report == "ns.v__validation__rerun_1"  # the original report is kept
    # A job whose card names no output runs its card again, as before.
    plain = run_in_process(Card("test-steps", validate_config("test-steps", {"steps": 1})))
    assert parse_card(get_job(logbook.rerun(plain["id"]))["card"]).config.table is None


def test_a_logbook_rerun_is_compared_with_its_original_on_both_pages(
    jobs_home: Path, tmp_path: Path
) -> None:
    """Issue 35: the row-by-row comparison of a re-run existed only on the command line
    (`podium jobs rerun --compare`); a re-run queued from the Logbook is now compared once
    it has succeeded, and both jobs' pages say how it compared."""
    from podium.app.views.logbook.model import reproducibility
    from podium.jobs import logbook
    from podium.jobs.execute import execute_job
    from podium.jobs.queue import transition

    original = _import_job(tmp_path)
    rerun_id = logbook.rerun(original)
    assert "compared with it once it has succeeded" in reproducibility(get_job(rerun_id))
    transition(rerun_id, "running")
    assert execute_job(rerun_id)["status"] == "succeeded"

    said = reproducibility(get_job(rerun_id))
    assert said == f"Re-run of {original}: identical", said
    assert reproducibility(get_job(original)).startswith("Reproducibility: re-ran identical on")
    assert table_exists("ns.chat__rerun_1")

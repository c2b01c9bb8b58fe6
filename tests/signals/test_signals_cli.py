"""`podium signals run` and `list` end to end: the real CLI process and the jobs system."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cli_fork
from signal_tables import GSM_PROBLEM, PROSE, write_chat

from podium.jobs.queue import list_jobs
from podium.store.catalog.catalog import load_table, table_exists


def podium(*args: str) -> subprocess.CompletedProcess[str]:
    return cli_fork.run(
        [sys.executable, "-m", "podium.cli", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=300,
    )


def test_run_then_list(podium_home: Path) -> None:
    write_chat("t.chat", [PROSE * 2, PROSE * 2, "Solve: " + GSM_PROBLEM])
    write_chat("t.gsm", [GSM_PROBLEM], prefix="g")
    out = podium(
        "signals",
        "run",
        "t.chat",
        "--signal",
        "exact-dup,contamination",
        "--eval",
        "t.gsm",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    results = {r["signal"]: r for r in json.loads(out.stdout)}
    assert results["exact-dup"]["duplicates"] == 1
    assert results["contamination"]["contaminated_rows"] == 1
    (job,) = [j for j in list_jobs() if j["kind"] == "signals"]
    assert job["status"] == "succeeded"
    assert load_table("t.chat__sig_exact_dup").properties["podium.lineage.job_id"] == job["id"]
    listed = json.loads(podium("signals", "list", "t.chat", "--json").stdout)
    assert {(s["signal"], s["current"]) for s in listed} == {
        ("exact-dup", True),
        ("contamination", True),
    }


def test_remove_previews_then_keeps_one_per_cluster(podium_home: Path) -> None:
    write_chat("t.chat", [PROSE * 2, PROSE * 2, PROSE * 2, "other"])
    assert podium("signals", "run", "t.chat", "--signal", "exact-dup").returncode == 0
    preview = json.loads(
        podium("signals", "remove", "t.chat", "--signal", "exact-dup", "--preview", "--json").stdout
    )
    assert preview["rows"] == 2 and preview["snapshot_id"] is None
    out = podium("signals", "remove", "t.chat", "--signal", "exact-dup")
    assert out.returncode == 0, out.stderr
    assert "removed 2 rows" in out.stdout
    again = podium("signals", "remove", "t.chat", "--signal", "exact-dup")
    assert again.returncode != 0 and "stale" in again.stderr


def test_bad_input_is_one_line_and_writes_nothing(podium_home: Path) -> None:
    write_chat("t.chat", ["hello there"])
    out = podium("signals", "run", "t.chat", "--signal", "contamination", "--eval", "t.missing")
    assert out.returncode != 0
    assert "Eval table 't.missing' does not exist" in out.stderr
    assert not table_exists("t.chat__sig_contamination")


def test_a_run_killed_before_its_commit_leaves_the_old_values(podium_home: Path) -> None:
    from podium.signals.job import SignalsConfig, compute_signals

    write_chat("t.chat", [PROSE, PROSE, "other"])
    compute_signals(
        SignalsConfig.model_validate({"table": {"name": "t.chat"}, "signals": ["length"]})
    )
    before = load_table("t.chat__sig_length").current_snapshot()
    env = {**os.environ, "PODIUM_FAILPOINTS": "commit.before=kill"}
    out = cli_fork.run(
        [
            sys.executable,
            "-m",
            "podium.cli",
            "signals",
            "run",
            "t.chat",
            "--signal",
            "length,exact-dup",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode != 0
    after = load_table("t.chat__sig_length").current_snapshot()
    assert before is not None and after is not None and after.snapshot_id == before.snapshot_id
    assert not table_exists("t.chat__sig_exact_dup")


def test_remove_and_redact_go_to_a_branch_and_refuse_a_row_changed_there(
    podium_home: Path,
) -> None:
    """`--branch` as Browse's "edits go to": the snapshot lands on the branch, main stays
    as it was; a row changed on the branch since the signal's snapshot is refused."""
    from podium.review.changes import Change, commit_change
    from podium.review.refs import create_branch
    from podium.signals.job import SignalsConfig, compute_signals
    from podium.store.read.read import read_small
    from podium.store.state.users import acting_user

    key = "AKIAIOSFODNN7EXAMPLE"
    write_chat("t.br", [PROSE * 2, PROSE * 2, f"use {key} please", "other"])
    compute_signals(
        SignalsConfig.model_validate(
            {"table": {"name": "t.br"}, "signals": ["exact-dup,private-data"]}
        )
    )
    main_before = load_table("t.br").current_snapshot().snapshot_id  # type: ignore[union-attr]
    create_branch("t.br", "review", acting_user())
    edit = Change(updates={"r0001": {"source": "reviewed"}}, message="checked by hand")
    commit_change(load_table("t.br"), edit, acting_user(), branch="review")
    head = load_table("t.br").refs()["review"].snapshot_id

    refused = podium("signals", "remove", "t.br", "--signal", "exact-dup", "--branch", "review")
    assert refused.returncode != 0
    assert "row 'r0001' was changed" in refused.stderr and "Nothing was written" in refused.stderr
    assert load_table("t.br").refs()["review"].snapshot_id == head

    out = podium("signals", "redact", "t.br", "--branch", "review", "--json")
    assert out.returncode == 0, out.stderr
    done = json.loads(out.stdout)
    assert done["branch"] == "review" and done["parent_id"] == head
    on_branch = {r["id"]: r for r in read_small("t.br", "review")[0].to_pylist()}
    assert on_branch["r0002"]["messages"][1]["content"] == "use [SECRET] please"
    assert on_branch["r0001"]["source"] == "reviewed"
    table = load_table("t.br")
    assert table.current_snapshot().snapshot_id == main_before  # type: ignore[union-attr]
    assert key in read_small("t.br")[0].to_pylist()[2]["messages"][1]["content"]

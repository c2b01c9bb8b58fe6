"""The CLI done-when: label 3 rows, edit 1, delete 2 -> one snapshot each; diff lists
exactly those; time travel shows the original rows; the row's history names authors."""

from __future__ import annotations

import getpass
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import cli_fork
from review_data import make_table, row_id

from podium.review.annotations import annotations_table
from podium.store.catalog.catalog import load_table
from podium.store.read.query import page

PODIUM = [sys.executable, "-m", "podium.cli"]


def podium(*args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    proc = cli_fork.run([*PODIUM, *args], capture_output=True, text=True, timeout=300)
    assert (proc.returncode == 0) == ok, proc.stdout + proc.stderr
    return proc


def as_json(*args: str) -> Any:
    return json.loads(podium(*args, "--json").stdout)


def test_label_edit_delete_each_one_snapshot_and_diff_lists_exactly_them(
    podium_home: Path,
) -> None:
    make_table("t.chat", 2000)
    before = load_table("t.chat").current_snapshot().snapshot_id  # type: ignore[union-attr]

    labelled = as_json("label", "t.chat", row_id(1), row_id(2), row_id(3), "--label", "bad")
    assert labelled["rows"] == [row_id(1), row_id(2), row_id(3)]
    notes = load_table(annotations_table("t.chat"))
    assert len(notes.snapshots()) == 1
    assert len(load_table("t.chat").snapshots()) == 1  # labels never touch the data

    edited = as_json(
        "edit", "t.chat", row_id(10), "--turn", "1", "--content", "fixed answer", "-m", "typo"
    )
    assert edited["parent_id"] == before
    removed = as_json("delete-rows", "t.chat", row_id(20), row_id(21), "-m", "junk")
    assert removed["parent_id"] == edited["snapshot_id"]
    assert len(load_table("t.chat").snapshots()) == 3

    diff = as_json("diff", "t.chat", str(before))
    assert diff["added"] == []
    assert diff["removed"] == [row_id(20), row_id(21)]
    assert [c["id"] for c in diff["changed"]] == [row_id(10)]
    text = diff["changed"][0]["messages"][0]["diff"]
    assert "-answer 10" in text and "+fixed answer" in text
    assert [a["action"] for a in diff["authors"]] == ["edit", "delete"]

    old = page("t.chat", ids=[row_id(10), row_id(20)], snapshot_id=before, limit=5)
    assert [r["messages"][1]["content"] for r in old.rows] == [
        "answer 10\nsecond line",
        "answer 20\nsecond line",
    ]
    now = page("t.chat", ids=[row_id(10), row_id(20)], limit=5)
    assert [r["messages"][1]["content"] for r in now.rows] == ["fixed answer"]

    history = as_json("review", "history", "t.chat", row_id(10))
    assert [(e["kind"], e["author"], e["detail"]) for e in history] == [
        ("append", getpass.getuser(), "whole-table write"),
        ("edit", getpass.getuser(), "typo"),
    ]
    history = as_json("review", "history", "t.chat", row_id(2))
    assert [(e["kind"], e["detail"]) for e in history] == [
        ("append", "whole-table write"),
        ("annotation", "label bad"),
    ]


def test_bad_input_is_a_clear_error_and_changes_nothing(podium_home: Path) -> None:
    make_table("t.chat", 50)
    proc = podium("edit", "t.chat", "nope", "--turn", "0", "--content", "x", "-m", "y", ok=False)
    assert "no row with id 'nope'" in proc.stderr + proc.stdout
    proc = podium("edit", "t.chat", row_id(1), "--turn", "9", "--content", "x", "-m", "y", ok=False)
    assert "there is no message 9" in proc.stderr + proc.stdout
    proc = podium("label", "t.chat", row_id(1), "--label", "great", ok=False)
    assert "not in t.chat's label set" in proc.stderr + proc.stdout
    proc = podium("delete-rows", "t.chat", row_id(1), "ghost", "-m", "x", ok=False)
    assert "'ghost'" in proc.stderr + proc.stdout
    assert len(load_table("t.chat").snapshots()) == 1

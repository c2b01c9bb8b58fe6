"""A commit whose answer is lost is checked, never assumed (issue 33).

With `commit.after=raise` the catalog commits and the caller sees an error of unknown
outcome: every write path (edit, delete-rows, label, import --mode append, compaction)
must report success (the answer was lost, the change landed) and keep every file the new
snapshot references. With `commit.before=raise` the commit never lands: the command
names that, the table reads as before, and its files are left for orphan removal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import cli_fork
import pytest
from review_data import make_table, row_id

from podium.config import reset_settings
from podium.review.annotations import annotations_table
from podium.store.catalog.catalog import load_table
from podium.store.maintenance.maintenance import referenced_files, unreferenced_files
from podium.store.read.query import page

PODIUM = [sys.executable, "-m", "podium.cli"]


def podium(*args: str, faults: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PODIUM_FAILPOINTS": faults}
    return cli_fork.run([*PODIUM, *args], capture_output=True, text=True, timeout=300, env=env)


def missing_files(name: str) -> list[str]:
    """Files a live snapshot or kept metadata file of `name` names that are gone."""
    table = load_table(name)
    return [p for p in referenced_files(table) if not os.path.exists(p.removeprefix("file://"))]


def answers(name: str, ids: list[str]) -> dict[str, str]:
    rows = page(name, ids=ids, limit=len(ids) + 1).rows
    return {r["id"]: r["messages"][1]["content"] for r in rows}


def jsonl(path: Path, first: int, n: int) -> Path:
    with path.open("w") as out:
        for i in range(first, first + n):
            row = {
                "id": row_id(i),
                "messages": [
                    {"role": "user", "content": f"question {i}"},
                    {"role": "assistant", "content": f"answer {i}\nsecond line"},
                ],
            }
            out.write(json.dumps(row) + "\n")
    return path


def _edit() -> list[str]:
    return ["edit", "t.chat", row_id(3), "--turn", "1", "--content", "fixed", "-m", "typo"]


def _delete() -> list[str]:
    return ["delete-rows", "t.chat", row_id(4), "-m", "junk"]


def _label() -> list[str]:
    return ["label", "t.chat", row_id(5), "--label", "bad"]


def _edit_landed() -> None:
    assert answers("t.chat", [row_id(3)]) == {row_id(3): "fixed"}


def _delete_landed() -> None:
    assert answers("t.chat", [row_id(4)]) == {}


def _label_landed() -> None:
    notes = load_table(annotations_table("t.chat")).scan().to_arrow().to_pylist()
    assert [(n["row_id"], n["label"]) for n in notes if n["label"] == "bad"] == [(row_id(5), "bad")]


CASES: dict[str, tuple[Callable[[], list[str]], Callable[[], None], str]] = {
    "edit": (_edit, _edit_landed, "t.chat"),
    "delete-rows": (_delete, _delete_landed, "t.chat"),
    "label": (_label, _label_landed, "t.chat__annotations"),
}


@pytest.mark.parametrize("path", sorted(CASES))
def test_a_lost_answer_after_the_commit_is_a_success_and_loses_no_file(
    podium_home: Path, path: str
) -> None:
    make_table("t.chat", 40)
    command, landed, table = CASES[path]
    if path == "label":  # the annotations table exists: the label is an append to it
        assert podium("label", "t.chat", row_id(9), "--label", "good").returncode == 0

    proc = podium(*command(), faults="commit.after=raise")

    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "answer was lost" in proc.stderr and "landed" in proc.stderr
    reset_settings()
    landed()
    assert missing_files(table) == []
    assert missing_files("t.chat") == []


@pytest.mark.parametrize("path", sorted(CASES))
def test_a_commit_that_never_landed_says_so_and_changes_nothing(
    podium_home: Path, path: str
) -> None:
    make_table("t.chat", 40)
    command, _, _ = CASES[path]
    head = load_table("t.chat").current_snapshot()
    before = answers("t.chat", [row_id(i) for i in range(3, 6)])

    proc = podium(*command(), faults="commit.before=raise")

    assert proc.returncode != 0
    assert "did not land" in proc.stderr + proc.stdout
    reset_settings()
    after = load_table("t.chat")
    assert after.current_snapshot() == head
    assert answers("t.chat", [row_id(i) for i in range(3, 6)]) == before
    assert missing_files("t.chat") == []


def test_an_append_import_whose_answer_is_lost_lands_whole(
    podium_home: Path, tmp_path: Path
) -> None:
    make_table("t.chat", 40)
    more = jsonl(tmp_path / "more.jsonl", 40, 25)

    proc = podium(
        "import", str(more), "--out", "t.chat", "--mode", "append", faults="commit.after=raise"
    )

    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "answer was lost" in proc.stderr
    reset_settings()
    assert load_table("t.chat").scan().count() == 65
    assert missing_files("t.chat") == []

    lost = podium(
        "import", str(more), "--out", "t.chat", "--mode", "append", faults="commit.before=raise"
    )
    assert lost.returncode != 0 and "did not land" in lost.stderr + lost.stdout
    reset_settings()
    assert load_table("t.chat").scan().count() == 65
    assert unreferenced_files("t.chat"), "the unlanded import's files wait for orphan removal"


def test_a_compaction_whose_answer_is_lost_keeps_the_head_readable(podium_home: Path) -> None:
    make_table("t.chat", 40)
    assert podium(*_edit()).returncode == 0
    assert podium(*_delete()).returncode == 0

    proc = podium(
        "maintain", "t.chat", "--no-expire", "--no-remove-orphans", faults="commit.after=raise"
    )

    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "answer was lost" in proc.stderr
    reset_settings()
    head = load_table("t.chat").current_snapshot()
    assert head is not None and head.summary is not None
    assert head.summary.additional_properties["podium.action"] == "compact"
    assert missing_files("t.chat") == []
    assert answers("t.chat", [row_id(3), row_id(4), row_id(6)]) == {
        row_id(3): "fixed",
        row_id(6): "answer 6\nsecond line",
    }

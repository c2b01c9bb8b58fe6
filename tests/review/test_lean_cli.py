"""A one-row `podium edit`, `delete-rows` and `label` from a shell import neither
SQLAlchemy nor pandas (about 0.6 s of CPU that a cold command never used), and still
do what they did: one snapshot each, the edit in the row's place, the label recorded
and marked reviewed in a queue. Real subprocesses: the saving is per process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from review_data import ALICE, make_table, row_id

from podium.review import queues
from podium.review.annotations import latest, load_annotations
from podium.store.catalog.catalog import load_table
from podium.store.read.query import page

# `podium ARGS...`, then report which of the skipped libraries the process imported.
RUN = """
import json, sys
from podium.cli import main
sys.argv = ["podium", *sys.argv[1:]]
try:
    main()
finally:
    print(json.dumps({m: m in sys.modules for m in ("sqlalchemy", "pandas")}), file=sys.stderr)
"""


def podium(*args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", RUN, *args], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stderr.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_one_row_changes_skip_sqlalchemy_and_pandas(podium_home: Path) -> None:
    make_table("t.lean", 300)
    queues.create_queue("t.lean", 300, ALICE)  # labelling marks a queued row reviewed
    podium("label", "t.lean", row_id(3), "--label", "bad")  # makes the annotations table
    snapshots = len(load_table("t.lean").snapshots())

    skipped = {"sqlalchemy": False, "pandas": False}
    assert podium("edit", "t.lean", row_id(7), "--turn", "1", "--content", "fixed", "-m", "x") == (
        skipped
    )
    assert podium("delete-rows", "t.lean", row_id(8), "-m", "junk") == skipped
    # A queue names this table, so marking the row reviewed needs the state database.
    assert podium("label", "t.lean", row_id(4), "--label", "good")["pandas"] is False
    queues.get_queue("t.lean")
    assert queues.get_queue("t.lean").progress == "2 of 300 reviewed"

    assert len(load_table("t.lean").snapshots()) == snapshots + 2
    rows = page("t.lean", limit=10).rows
    assert [r["id"] for r in rows][6:9] == [row_id(6), row_id(7), row_id(9)]
    assert rows[7]["messages"][1]["content"] == "fixed"
    assert {a.row_id: a.label for a in latest(load_annotations("t.lean"))} == {
        row_id(3): "bad",
        row_id(4): "good",
    }


def test_a_label_on_a_table_without_queues_skips_sqlalchemy(podium_home: Path) -> None:
    make_table("t.plain", 50)
    podium("label", "t.plain", row_id(1), "--label", "bad")  # creates the annotations table
    assert podium("label", "t.plain", row_id(2), "--label", "good") == {
        "sqlalchemy": False,
        "pandas": False,
    }
    assert {a.row_id for a in latest(load_annotations("t.plain"))} == {row_id(1), row_id(2)}

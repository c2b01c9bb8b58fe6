"""After review edits (merge-on-read: the old row deleted by position, the new one written
to a new file) row counts are the rows the table holds, and "the first N rows" of every
job are the rows Browse and `podium show` list, in that order (issue 35, points 1 and 3)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import cli_fork

PODIUM = [sys.executable, "-m", "podium.cli"]


def podium(*args: str) -> Any:
    proc = cli_fork.run([*PODIUM, *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout) if "--json" in args else proc.stdout


def test_counts_and_first_rows_after_two_edits_and_a_removal(podium_home: Path) -> None:
    """demo.chat (600 rows) after two edits and one removal near its start. One test for
    both checks: the CLI calls that build the table are most of its cost."""
    from generators.prompts import load_prompts
    from podium.app.table_choices import table_choices
    from podium.store.read.refs import TableRef

    edited_demo = "demo.chat"
    podium("demo")
    for row in ("chat-00001", "chat-00003"):
        podium("edit", edited_demo, row, "--turn", "1", "--content", f"fixed {row}", "-m", "fix")
    podium("delete-rows", edited_demo, "chat-00002", "-m", "junk")

    # Before: 600, 601, 602, 602 (the summary's total-records counts the rewritten rows
    # and not the position deletes), while the table held 600, 600, 600, 599.
    snapshots = podium("snapshots", edited_demo, "--json")
    assert [s["total_rows"] for s in snapshots] == [600, 600, 600, 599]
    [counted] = podium("sql", f"SELECT count(*) AS n FROM {edited_demo}", "--json")
    assert counted["n"] == snapshots[-1]["total_rows"] == 599
    [choice] = [c for c in table_choices() if c.name == edited_demo]
    assert choice.rows == 599

    # Before: generate/compare took chat-00000, -04, -05, -06 (a scan meets the edited
    # rows at the end) while `podium show --limit 4` lists chat-00000, -01, -03, -04.
    shown = [r["id"] for r in podium("show", edited_demo, "--limit", "4", "--json")["rows"]]
    assert shown == ["chat-00000", "chat-00001", "chat-00003", "chat-00004"]
    prompts, _, skipped = load_prompts(TableRef(name=edited_demo), None, 4)
    assert [p.prompt_id for p in prompts] == shown and skipped == 0
    edited = next(p for p in prompts if p.prompt_id == "chat-00001")
    assert edited.messages[0]["role"] in ("user", "system")

"""Two processes editing one table at once: different rows both land; the same row
gives one clear conflict and loses nothing."""

from __future__ import annotations

import multiprocessing as mp
import os
from pathlib import Path
from typing import Any

import pytest
from review_data import ALICE, BOB, VIEWER, make_table, row_id

from podium.config import reset_settings
from podium.errors import PermissionDenied
from podium.review.changes import Change, EditConflict, commit_change
from podium.store.catalog.catalog import load_table
from podium.store.read.query import page


def _edit(home: str, who: str, target: str, text: str, base: int, start: Any, out: Any) -> None:
    os.environ["PODIUM_HOME"] = home
    reset_settings()
    user = {"alice": ALICE, "bob": BOB}[who]
    change = Change(
        updates={target: {"messages": [{"role": "user", "content": text}]}}, message=who
    )
    start.wait()
    try:
        result = commit_change(load_table("t.chat"), change, user, base=base)
        out.put((who, "ok", result.attempts))
    except EditConflict as exc:
        out.put((who, "conflict", str(exc)))


def _race(home: Path, edits: list[tuple[str, str, str]]) -> list[tuple[str, str, Any]]:
    base = load_table("t.chat").current_snapshot().snapshot_id  # type: ignore[union-attr]
    ctx = mp.get_context("spawn")
    start, out = ctx.Barrier(len(edits)), ctx.Queue()
    procs = [
        ctx.Process(target=_edit, args=(str(home), who, target, text, base, start, out))
        for who, target, text in edits
    ]
    for p in procs:
        p.start()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    return sorted(results)


def _content(target: str) -> str:
    rows = page("t.chat", ids=[target], limit=1).rows
    return rows[0]["messages"][0]["content"]


def test_two_processes_editing_different_rows_of_one_file_both_land(podium_home: Path) -> None:
    make_table("t.chat", 300)  # one data file: both edits rewrite it, so they collide
    assert len(load_table("t.chat").inspect.files()) == 1
    results = _race(podium_home, [("alice", row_id(5), "by alice"), ("bob", row_id(7), "by bob")])
    assert [r[:2] for r in results] == [("alice", "ok"), ("bob", "ok")]
    assert _content(row_id(5)) == "by alice"
    assert _content(row_id(7)) == "by bob"
    assert page("t.chat", limit=1).total == 300
    assert len(load_table("t.chat").snapshots()) == 3


def test_two_processes_editing_the_same_row_one_conflict_nothing_lost(podium_home: Path) -> None:
    make_table("t.chat", 300)
    results = _race(podium_home, [("alice", row_id(5), "by alice"), ("bob", row_id(5), "by bob")])
    outcomes = sorted(r[1] for r in results)
    assert outcomes == ["conflict", "ok"]
    winner = next(r[0] for r in results if r[1] == "ok")
    message = next(r[2] for r in results if r[1] == "conflict")
    assert f"row {row_id(5)!r} was changed by {winner}" in message
    assert "reload" in message
    assert _content(row_id(5)) == f"by {winner}"
    assert page("t.chat", limit=1).total == 300
    assert len(load_table("t.chat").snapshots()) == 2


def test_a_viewer_cannot_edit(podium_home: Path) -> None:
    make_table("t.chat", 10)
    with pytest.raises(PermissionDenied):
        commit_change(
            load_table("t.chat"), Change(deletes=frozenset({row_id(1)}), message="x"), VIEWER
        )
    assert len(load_table("t.chat").snapshots()) == 1

"""A review branch made before `podium maintain` compacted main still fast-forwards:
compaction changed no row. A main that moved by a real row change still refuses."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "review"))
from review_data import ALICE, make_table, row_id  # noqa: E402

from podium.errors import InvalidInput  # noqa: E402
from podium.jobs.maintain import MaintainConfig, run_maintain  # noqa: E402
from podium.reporting import Reporter  # noqa: E402
from podium.review.changes import Change, commit_change  # noqa: E402
from podium.review.refs import create_branch, fast_forward  # noqa: E402
from podium.store.catalog.catalog import load_table  # noqa: E402
from podium.store.read.read import iter_batches  # noqa: E402

T = "t.branchy"


def rows(snapshot: int | str | None = None) -> list[dict[str, Any]]:
    return [r for b in iter_batches(T, snapshot) for r in b.to_pylist()]


def _branch_with_an_edit() -> None:
    make_table(T, 400, file_bytes=2_000, batch=100)
    create_branch(T, "review", ALICE)
    edit = Change(updates={row_id(7): {"source": "fixed"}}, deletes=frozenset({row_id(9)}))
    commit_change(
        load_table(T), Change(edit.updates, edit.deletes, "on the branch"), ALICE, branch="review"
    )


def _source(found: list[dict[str, Any]], row: str) -> str:
    return next(r["source"] for r in found if r["id"] == row)


@pytest.mark.usefixtures("podium_home")
def test_a_branch_made_before_compaction_fast_forwards() -> None:
    _branch_with_an_edit()
    on_branch = rows("review")
    config = MaintainConfig(table=T, expire=False, remove_orphans=False)
    assert run_maintain(config, Reporter()).summary["compaction"]["files_in"] > 0
    assert rows() != on_branch  # main was compacted, the branch's edit is not on it

    moved = fast_forward(T, "review", ALICE)

    assert moved.snapshot_id == load_table(T).refs()["review"].snapshot_id
    assert load_table(T).current_snapshot().snapshot_id == moved.snapshot_id  # type: ignore[union-attr]
    assert rows() == on_branch
    assert _source(rows(), row_id(7)) == "fixed" and row_id(9) not in {r["id"] for r in rows()}


@pytest.mark.usefixtures("podium_home")
def test_a_main_that_changed_rows_since_the_branch_began_is_refused() -> None:
    _branch_with_an_edit()
    run_maintain(MaintainConfig(table=T, expire=False, remove_orphans=False), Reporter())
    commit_change(load_table(T), Change(deletes=frozenset({row_id(20)}), message="on main"), ALICE)
    head = load_table(T).current_snapshot().snapshot_id  # type: ignore[union-attr]
    with pytest.raises(InvalidInput, match="changed rows since branch 'review' began"):
        fast_forward(T, "review", ALICE)
    assert load_table(T).current_snapshot().snapshot_id == head  # type: ignore[union-attr]

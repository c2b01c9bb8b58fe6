"""A commit on another branch between a write's plan and its commit: the write is retried
on the table as it is now and lands, once (issue 44, point 7: it failed with pyiceberg's
raw `ValueError ... sequence number`, reported as "did not land, run it again")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "review"))
from review_data import ALICE, make_table, row_id, sft_batches  # noqa: E402

from podium.review.changes import Change, commit_change  # noqa: E402
from podium.review.refs import create_branch  # noqa: E402
from podium.store.catalog import catalog as catalog_module  # noqa: E402
from podium.store.catalog.catalog import load_table  # noqa: E402
from podium.store.read.read import iter_batches  # noqa: E402
from podium.store.write.write import write_into  # noqa: E402

T = "t.forked"


def _ids(snapshot: int | str | None = None) -> list[str]:
    return [r["id"] for b in iter_batches(T, snapshot) for r in b.to_pylist()]


def _edit_on_branch() -> None:
    """Another writer's change on branch `review`: it raises the table's sequence number
    while main's head stays where a stale plan saw it."""
    change = Change(updates={row_id(1): {"source": "on the branch"}}, message="branch edit")
    commit_change(load_table(T), change, ALICE, branch="review")


@pytest.fixture
def forked(podium_home: Path) -> None:
    make_table(T, 20)
    create_branch(T, "review", ALICE)


@pytest.mark.usefixtures("forked")
def test_an_append_planned_before_a_branch_commit_lands_once() -> None:
    stale = load_table(T)
    _edit_on_branch()
    more = list(sft_batches(25, batch=20))[1]  # rows 20..24

    write_into(stale, [more])

    ids = _ids()
    assert sorted(ids) == sorted(row_id(i) for i in range(25))  # each row once
    assert len(_ids("review")) == 20  # the branch keeps its own line


@pytest.mark.usefixtures("forked")
@pytest.mark.parametrize("lean", [False, True], ids=["sqlcatalog", "lean-cli-catalog"])
def test_an_edit_planned_before_a_branch_commit_lands(
    lean: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `podium edit` opens an SQLite catalog without SQLAlchemy: the same refusal there
    monkeypatch.setattr(catalog_module, "_lean", lean)
    stale = load_table(T)
    assert type(stale.catalog).__name__ == ("LeanSqliteCatalog" if lean else "PodiumSqlCatalog")
    _edit_on_branch()

    done = commit_change(stale, Change(deletes=frozenset({row_id(2)}), message="junk"), ALICE)

    assert done.snapshot_id == load_table(T).current_snapshot().snapshot_id  # type: ignore[union-attr]
    assert sorted(_ids()) == sorted(row_id(i) for i in range(20) if i != 2)

"""Review queues over a table that changes under them: a queue is made on one snapshot,
but it shows each row as it is now (an edit shows at once) and drops removed rows, and a
removed row cannot be labelled."""

from __future__ import annotations

from pathlib import Path

import pytest
from review_data import ALICE, make_table, row_id

from podium.errors import NotFound
from podium.identity import User
from podium.review import annotations as ann
from podium.review import queues
from podium.review.changes import Change, commit_change
from podium.store.catalog.catalog import load_table

T = "rv.queue"
EDITOR = User(name="ed", role="admin", source="config")


def _texts(rows: list[dict]) -> list[str]:  # type: ignore[type-arg]
    return [r["messages"][0]["content"] for r in rows]


def test_queue_shows_edits_at_once_and_drops_removed_rows(podium_home: Path) -> None:
    make_table(T, 4)
    queues.create_queue(T, 3, ALICE)
    assert _texts(queues.claim_next(T, ALICE, 3)) == ["question 0", "question 1", "question 2"]

    edited = [
        {"role": "user", "content": "question 1, asked more clearly"},
        {"role": "assistant", "content": "answer 1"},
    ]
    commit_change(
        load_table(T), Change(updates={row_id(1): {"messages": edited}}, message="clearer"), EDITOR
    )
    commit_change(
        load_table(T), Change(deletes=frozenset({row_id(2)}), message="duplicate"), EDITOR
    )

    rows = queues.claim_next(T, ALICE, 3)
    assert [r["id"] for r in rows] == [row_id(0), row_id(1)]
    assert _texts(rows) == ["question 0", "question 1, asked more clearly"]
    # The queue's size counts only rows still in the table.
    assert queues.get_queue(T).size == 2


def test_a_removed_row_cannot_be_labelled_even_on_the_snapshot_it_was_read_at(
    podium_home: Path,
) -> None:
    make_table(T, 3)
    queues.create_queue(T, 3, ALICE)
    before = queues.get_queue(T).snapshot_id
    commit_change(
        load_table(T), Change(deletes=frozenset({row_id(2)}), message="duplicate"), EDITOR
    )
    with pytest.raises(NotFound, match=rf"{row_id(2)}.*removed|no row.*{row_id(2)}"):
        ann.annotate(load_table(T), [row_id(2)], ALICE, label="bad", snapshot=before)
    assert ann.latest(ann.load_annotations(T), ids=[row_id(2)]) == []
    # A row that is still there is labelled as before.
    ann.annotate(load_table(T), [row_id(1)], ALICE, label="bad", snapshot=before)
    assert [a.label for a in ann.latest(ann.load_annotations(T), ids=[row_id(1)])] == ["bad"]

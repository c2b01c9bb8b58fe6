"""The row panel's turn and row forms with AppTest: each button asks first (an edit with a
preview of the change), then saves its own change."""

from __future__ import annotations

import sys
from pathlib import Path

from app_pages import open_page, shown
from streamlit.testing.v1 import AppTest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "review"))
from review_data import make_table, row_id  # noqa: E402

from podium.store.catalog.catalog import load_table  # noqa: E402
from podium.store.read.query import page  # noqa: E402

T = "rv.rowforms"


def head() -> int:
    return load_table(T).current_snapshot().snapshot_id


def row_messages(i: int) -> list[tuple[str, str]]:
    rows = page(T, ids=[row_id(i)]).rows
    return [(m["role"], m["content"]) for m in rows[0]["messages"]] if rows else []


def submit(at: AppTest, form: str, label: str) -> None:
    at.button(key=f"FormSubmitter:{form}-{label}").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]


def click(at: AppTest, key: str, *, errors_ok: bool = False) -> None:
    at.button(key=key).click().run()
    assert not at.exception, at.exception
    if not errors_ok:
        assert not at.error, [e.value for e in at.error]


def test_add_turn_remove_turn_and_delete_row(podium_home: Path) -> None:
    make_table(T, 4)
    at = open_page("browse", table=T, sample=row_id(2))
    key = f"browse.row.{row_id(2)}.{head()}"
    at.text_area(key=f"{key}.turn.content").set_value("one more question")
    at.text_input(key=f"{key}.turn.why").set_value("follow-up")
    submit(at, f"{key}.turn", "Add turn at the end")
    # One click only asks, with a preview of the new turn: nothing is written yet.
    assert shown(at.warning[0].value).startswith(
        f"Add a assistant turn at the end of row {row_id(2)}"
    )
    assert "+one more question" in at.code[-1].value
    assert len(row_messages(2)) == 2
    click(at, f"{key}.edit.ask.yes")
    assert row_messages(2)[-1] == ("assistant", "one more question")
    assert shown(at.success[0].value).startswith(f"Added a turn to {row_id(2)}: snapshot {head()}")

    key = f"browse.row.{row_id(2)}.{head()}"
    at.selectbox(key=f"{key}.remove.index").set_value(0)
    at.text_input(key=f"{key}.remove.why").set_value("no greeting")
    click(at, f"{key}.remove.turn")
    # One click only asks, naming the turn: the row keeps it until the answer.
    assert shown(at.warning[0].value).startswith(f"Remove turn 0 (user) of row {row_id(2)}?")
    assert len(row_messages(2)) == 3
    click(at, f"{key}.remove.ask.yes")
    assert row_messages(2) == [
        ("assistant", "answer 2\nsecond line"),
        ("assistant", "one more question"),
    ]
    assert shown(at.success[0].value).startswith(f"Removed turn 0 of {row_id(2)}")

    key = f"browse.row.{row_id(2)}.{head()}"
    click(at, f"{key}.remove.row", errors_ok=True)  # no reason: said before anything is asked
    assert shown(at.error[0].value).startswith("Say why before removing the row")
    assert not at.warning
    at.text_input(key=f"{key}.remove.why").set_value("junk")
    click(at, f"{key}.remove.row")
    assert shown(at.warning[0].value).startswith(f"Delete row {row_id(2)}?")
    assert len(row_messages(2)) == 2
    click(at, f"{key}.remove.ask.yes")
    assert row_messages(2) == []
    assert shown(at.success[0].value).startswith("Removed 1 row")
    assert len(page(T).rows) == 3


def test_save_edit_asks_first_with_a_preview_of_the_change(podium_home: Path) -> None:
    make_table(T, 3)
    at = open_page("browse", table=T, sample=row_id(1))
    key = f"browse.row.{row_id(1)}.{head()}"
    at.text_area(key=f"{key}.edit.content.0").set_value("question 1, asked\nmore clearly")
    at.text_input(key=f"{key}.edit.why").set_value("typo")
    submit(at, f"{key}.edit", "Save edit")
    assert shown(at.warning[0].value).startswith(
        f"Save this edit of message 0 (user) of row {row_id(1)}?"
    )
    preview = at.code[-1].value
    assert "-question 1\n+question 1, asked\n+more clearly" in preview, preview
    assert row_messages(1)[0] == ("user", "question 1")  # nothing written yet
    click(at, f"{key}.edit.ask.no")  # "Keep it" writes nothing
    assert not at.warning and row_messages(1)[0] == ("user", "question 1")
    submit(at, f"{key}.edit", "Save edit")
    click(at, f"{key}.edit.ask.yes")
    assert row_messages(1)[0] == ("user", "question 1, asked\nmore clearly")
    assert shown(at.success[0].value).startswith(f"Edited {row_id(1)}: snapshot {head()}")
    # An edit that changes nothing is said at once; nothing is asked.
    key = f"browse.row.{row_id(1)}.{head()}"
    at.button(key=f"FormSubmitter:{key}.edit-Save edit").click().run()
    assert shown(at.error[0].value).startswith("Nothing changed in this message") and not at.warning

"""What the destructive buttons ask and where a validation error is, without Streamlit:
"Remove turn" / "Delete row" name what goes and want a reason before they ask;
a failure inside a fenced block is placed in the whole message, as Validate shows it."""

from __future__ import annotations

import pytest

from podium.app.rows.history import removal
from podium.errors import InvalidInput
from podium.validate.failure_text import (
    error_marks,
    failure_lines,
    marked_failure,
    message_position,
)

ROW = {
    "id": "row-7",
    "messages": [
        {"role": "user", "content": "Give me JSON"},
        {"role": "assistant", "content": 'Sure.\n\n```json\n{"a": 1,\n "b": }\n```'},
    ],
}


def test_remove_turn_names_the_turn_its_role_and_row() -> None:
    asked = removal(ROW, 1, "  broken answer ")
    assert asked.question.startswith("Remove turn 1 (assistant) of row row-7?")
    assert "Sure." in asked.question
    assert (asked.row_id, asked.turn, asked.why, asked.yes) == (
        "row-7", 1, "broken answer", "Yes, remove turn 1",
    )  # fmt: skip


def test_delete_row_asks_about_the_row() -> None:
    asked = removal(ROW, None, "duplicate")
    assert asked.question.startswith("Delete row row-7?")
    assert (asked.turn, asked.yes) == (None, "Yes, delete row-7")


@pytest.mark.parametrize("turn", [0, None])
def test_a_removal_without_a_reason_is_refused_before_it_is_asked(turn: int | None) -> None:
    with pytest.raises(InvalidInput, match="Say why"):
        removal(ROW, turn, "   ")


def test_a_turn_the_row_does_not_have_is_refused() -> None:
    with pytest.raises(InvalidInput, match="no turn 5"):
        removal(ROW, 5, "why")


def test_a_failure_in_a_fenced_block_is_placed_in_the_whole_message() -> None:
    content = ROW["messages"][1]["content"]
    at = content.index("}\n```")  # where the JSON parser gave up: block line 2, column 7
    failure = {
        "turn": 1, "role": "assistant", "rule": "json", "kind": "syntax",
        "message": "Expecting value", "line": 2, "column": 7,
        "message_offset": at, "offset": at - content.index("{"),
    }  # fmt: skip
    messages = ROW["messages"]
    assert message_position(failure, messages) == (5, 7)  # where the mark goes
    # Validate and Browse name the line the parser's message and Browse's numbered block
    # show (the block's line 2), then the message's (before: "line 5" beside a gutter's 2).
    where, _ = marked_failure(failure, messages)  # what Validate shows
    assert where == "line 2, column 7 of the code block (line 5 of the message)"
    assert failure_lines([failure], messages) == [
        f"- turn 1 (assistant) · `json` · syntax: Expecting value ({where})"
    ]
    assert error_marks([failure], messages) == {1: [(5, 7)]}


def test_a_failure_without_a_position_marks_nothing() -> None:
    failure = {"turn": 0, "role": "user", "rule": "json", "kind": "not-json", "message": "m",
               "line": None, "column": None, "message_offset": None}  # fmt: skip
    assert message_position(failure, ROW["messages"]) is None
    assert failure_lines([failure], ROW["messages"])[0].endswith("not-json: m")
    assert error_marks([failure], ROW["messages"]) == {}

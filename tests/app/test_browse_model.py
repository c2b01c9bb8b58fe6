"""The Browse page's logic without Streamlit: URL <-> view, paging, row summaries,
sample keys, conversation turns, chart data."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlparse

import pytest

from podium.app.rows import turns as row_turns
from podium.app.rows import view_state as vs
from podium.app.views.browse import model as bm
from podium.review.refs import Ref
from podium.store.read.snapshots import SnapshotInfo


def test_full_view_round_trips_through_the_query_string() -> None:
    view = vs.ViewState(
        table="demo.chat",
        snapshot=812345678901234567,
        page=4,
        page_size=50,
        search="capital of",
        where="len(messages) > 2",
        filters={"split": ("train",), "tags": ("json", "code")},
        sample="abc-1",
        malformed_only=True,
    )
    parsed, problems = vs.parse_query(vs.to_query(view))
    assert problems == []
    assert parsed == view


def test_defaults_are_left_out_of_the_url() -> None:
    assert vs.to_query(vs.ViewState(table="demo.chat")) == {"table": ["demo.chat"]}
    assert vs.to_query(vs.ViewState()) == {}


def test_single_strings_as_streamlit_gives_them_are_accepted() -> None:
    view, problems = vs.parse_query({"table": "a.b", "page": "2", "tags": "x"})
    assert (view.table, view.page, view.filters) == ("a.b", 2, {"tags": ("x",)})
    assert problems == []


@pytest.mark.parametrize(
    ("params", "field", "expected", "complaint"),
    [
        ({"page": ["two"]}, "page", 1, "page='two'"),
        ({"page": ["0"]}, "page", 1, "page='0'"),
        ({"size": ["7"]}, "page_size", vs.DEFAULT_PAGE_SIZE, "Page size 7"),
        ({"snapshot": ["latest"]}, "snapshot", None, "snapshot='latest'"),
    ],
)
def test_bad_link_parts_fall_back_and_are_reported(
    params: dict[str, list[str]], field: str, expected: object, complaint: str
) -> None:
    view, problems = vs.parse_query(params)
    assert getattr(view, field) == expected
    assert len(problems) == 1 and complaint in problems[0]


def test_browse_url_is_a_parseable_link() -> None:
    url = vs.browse_url("demo.chat", snapshot=5, sample="id with space&more")
    parts = urlparse(url)
    assert parts.path == "/browse"  # Browse's own URL path (Home is the default page)
    assert parse_qs(parts.query) == {
        "table": ["demo.chat"],
        "snapshot": ["5"],
        "sample": ["id with space&more"],
    }


def test_switching_table_keeps_search_and_page_size_only() -> None:
    view = vs.ViewState(
        table="a.b",
        snapshot=3,
        page=5,
        page_size=10,
        search="x",
        sample="s",
        filters={"split": ("test",)},
        where="true",
        malformed_only=True,
    )
    assert view.for_table("c.d") == vs.ViewState(table="c.d", page_size=10, search="x")


@pytest.mark.parametrize(
    ("total", "size", "pages"), [(0, 25, 1), (1, 25, 1), (25, 25, 1), (26, 25, 2), (1000, 10, 100)]
)
def test_page_count(total: int, size: int, pages: int) -> None:
    assert bm.page_count(total, size) == pages


def test_page_is_kept_in_range_when_results_shrink() -> None:
    view = vs.ViewState(table="a.b", page=9, page_size=25)
    assert bm.with_page_in_range(view, 60).page == 3
    assert bm.with_page_in_range(view, 0).page == 1
    assert bm.with_page_in_range(view, 10_000) is view
    assert vs.ViewState(page=3, page_size=25).offset == 50


def test_row_range_caption() -> None:
    assert bm.row_range(25, 25, 1234) == "Rows 26–50 of 1,234"
    assert bm.row_range(0, 0, 0) == "No rows of 0"


def test_sample_keys_use_ids_or_positions() -> None:
    assert bm.sample_key({"id": "c7"}, 12) == "c7"
    assert bm.sample_key({"name": "x"}, 12) == "row-12"
    assert bm.row_position("row-12", has_ids=False) == 12
    assert bm.row_position("row-12", has_ids=True) is None  # an id that looks like a key
    assert bm.row_position("row-x", has_ids=False) is None


CHAT_COLUMNS = ["id", "messages", "system", "source", "split", "tags", "metadata"]


def chat_row(**overrides: object) -> dict[str, object]:
    row: dict[str, object] = {
        "id": "r1",
        "messages": [
            {"role": "user", "content": "first   question\nwith newline"},
            {"role": "assistant", "content": "draft"},
            {"role": "user", "content": "again"},
            {"role": "assistant", "content": "final answer"},
        ],
        "system": "Be brief.",
        "source": "synthetic",
        "split": "train",
        "tags": ["a", "b"],
        "metadata": json.dumps({"k": 1}),
    }
    row.update(overrides)
    return row


def test_chat_rows_summarize_to_prompt_and_answer() -> None:
    [line] = bm.summarize_rows([chat_row()], CHAT_COLUMNS)
    assert line == {
        "id": "r1",
        "turns": 4,
        "prompt": "first question with newline",
        "answer": "final answer",
        "source": "synthetic",
        "split": "train",
        "tags": "a, b",
    }


def test_long_previews_are_cut() -> None:
    long = "word " * 100
    [line] = bm.summarize_rows(
        [chat_row(messages=[{"role": "user", "content": long}])], CHAT_COLUMNS
    )
    assert len(line["prompt"]) == bm.PREVIEW_CHARS and line["prompt"].endswith("…")
    assert line["answer"] == ""


def test_other_rows_keep_their_columns_with_nested_values_as_json() -> None:
    rows = [{"name": "m", "score": 0.5, "extra": {"a": [1, 2]}}]
    assert bm.summarize_rows(rows, ["name", "score", "extra"]) == [
        {"name": "m", "score": 0.5, "extra": '{"a": [1, 2]}'}
    ]


def test_conversation_puts_the_system_column_first_once() -> None:
    turns = row_turns.conversation(chat_row())
    assert [t.role for t in turns] == ["system", "user", "assistant", "user", "assistant"]
    assert turns[0].content == "Be brief."
    with_system_turn = chat_row(
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "q"}]
    )
    assert [t.role for t in row_turns.conversation(with_system_turn)] == ["system", "user"]
    assert row_turns.conversation({"messages": None}) == []


def test_detail_fields_parse_metadata_and_skip_the_conversation() -> None:
    fields = dict(bm.detail_fields(chat_row(), CHAT_COLUMNS))
    assert fields == {
        "source": "synthetic",
        "split": "train",
        "tags": ["a", "b"],
        "metadata": {"k": 1},
    }
    broken = dict(bm.detail_fields(chat_row(metadata="{oops"), CHAT_COLUMNS))
    assert broken["metadata"] == "{oops"
    assert bm.detail_fields({"name": "m"}, ["name"]) == [("name", "m")]


def test_sample_choice_label() -> None:
    assert bm.sample_choice_label(chat_row(), "r1", CHAT_COLUMNS).startswith("r1 — first question")
    assert bm.sample_choice_label({"name": "m"}, "row-0", ["name"]) == "row-0 — m"


def test_snapshot_label() -> None:
    info = SnapshotInfo(7, None, "2026-11-22T03:10:05.123+00:00", "append", 200, 1200, True)
    assert vs.snapshot_label(info) == "2026-11-22 03:10:05 · 1,200 rows (current)"
    refs = [Ref("main", "branch", 7), Ref("cleaned", "tag", 7), Ref("old", "tag", 3)]
    names = vs.ref_names(refs)
    assert names == {7: ["cleaned (tag)"], 3: ["old (tag)"]}  # main is "current"
    assert vs.snapshot_label(info, names[7]) == (
        "cleaned (tag) · 2026-11-22 03:10:05 · 1,200 rows (current)"
    )


def test_length_histogram_counts_every_sample_in_whole_number_bins() -> None:
    values = [0, 1, 2, 9, 10, 10, 99]
    bins = bm.length_histogram(values, bins=10)
    assert sum(b["samples"] for b in bins) == len(values)
    assert bins[0] == {"from": 0, "to": 9, "label": "0–9", "samples": 4}
    assert bins[1]["samples"] == 2 and bins[-1] == {
        "from": 90,
        "to": 99,
        "label": "90–99",
        "samples": 1,
    }
    assert all(b["to"] + 1 == n["from"] for b, n in zip(bins, bins[1:], strict=False))


def test_length_histogram_edge_cases() -> None:
    assert bm.length_histogram([]) == []
    assert bm.length_histogram([5, 5]) == [{"from": 5, "to": 5, "label": "5", "samples": 2}]
    many = bm.length_histogram(list(range(1_000_000)), bins=30)
    assert len(many) <= 30 and sum(b["samples"] for b in many) == 1_000_000


def test_filter_options_drop_nulls() -> None:
    assert bm.filter_options([("train", 5), (None, 2), ("test", 1)]) == {"train": 5, "test": 1}

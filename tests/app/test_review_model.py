"""The review model on real Iceberg tables: filters by annotation, saves as snapshots
with conflicts, bulk ids, queue cursor, refs in pickers and cards, history, and the
reviewer's rendering of a turn (escaped, highlighted, numbered, folded)."""

from __future__ import annotations

import getpass
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "review"))
from review_data import ALICE, BOB, make_table, row_id  # noqa: E402

from podium.app.chat_markdown import error_span, fold, marked_html, review_turn  # noqa: E402
from podium.app.page_tables import PageTables  # noqa: E402
from podium.app.rows import filters as row_filters  # noqa: E402
from podium.app.rows import history as row_history  # noqa: E402
from podium.app.rows import saves as rs  # noqa: E402
from podium.app.rows import snapshots as row_snapshots  # noqa: E402
from podium.app.views.review import queue as review_queue  # noqa: E402
from podium.app.views.review import snapshots as review_snapshots  # noqa: E402
from podium.errors import InvalidInput, NotFound  # noqa: E402
from podium.jobs.cards import pin_inputs  # noqa: E402
from podium.jobs.logbook import table_links  # noqa: E402
from podium.review.annotations import load_annotations  # noqa: E402
from podium.review.changes import EditConflict  # noqa: E402
from podium.store.catalog.catalog import load_table  # noqa: E402
from podium.store.read.query import page  # noqa: E402
from podium.store.read.refs import TableRef, parse_ref_text  # noqa: E402
from trainers.config import SftConfig  # noqa: E402

T = "rv.chat"


@pytest.fixture
def table(podium_home: Path) -> str:
    make_table(T, 12)
    return T


def _ids(p) -> list[str]:  # type: ignore[no-untyped-def]
    return [r["id"] for r in p.rows]


def test_review_filters_unlabelled_bad_and_by_me(table: str) -> None:
    rs.label_rows(table, [row_id(1), row_id(2)], ALICE, "bad")
    rs.label_rows(table, [row_id(3)], BOB, "good")
    assert _ids(row_filters.review_page(PageTables(table), "bad", ALICE)) == [row_id(1), row_id(2)]
    assert _ids(row_filters.review_page(PageTables(table), row_filters.BY_ME, BOB)) == [row_id(3)]
    unl = row_filters.review_page(PageTables(table), row_filters.UNLABELLED, ALICE, limit=3)
    assert unl.total == 9 and _ids(unl) == [row_id(0), row_id(4), row_id(5)]
    # with a search: only unlabelled rows among the hits
    hits = row_filters.review_page(
        PageTables(table), row_filters.UNLABELLED, ALICE, search="question 1"
    )
    assert _ids(hits) == [row_id(10), row_id(11)]  # row 1 is labelled
    shown = row_filters.annotations_by_row(
        load_annotations(table), [row_id(1), row_id(3), row_id(4)]
    )
    assert row_filters.annotation_text(shown[row_id(1)]) == "bad (alice)"
    assert row_id(4) not in shown


def test_rating_and_note_keep_the_label(table: str) -> None:
    rs.label_rows(table, [row_id(1)], ALICE, "needs-fix")
    rs.rate_row(table, row_id(1), ALICE, 2)
    rs.note_row(table, row_id(1), ALICE, "typo in <b>step</b> 3")
    (a,) = row_filters.annotations_by_row(load_annotations(table), [row_id(1)])[row_id(1)]
    assert (a.label, a.rating, a.note) == ("needs-fix", 2, "typo in <b>step</b> 3")
    with pytest.raises(InvalidInput, match="empty note"):
        rs.note_row(table, row_id(1), ALICE, "  ")


def test_rows_on_screen_share_one_annotations_read_per_snapshot(table: str) -> None:
    """Sessions share one read of the rows' annotations per snapshot of the annotations
    table (issue 48: it was a DuckDB read per session per rerun), and a label, a new
    snapshot, shows at once: nothing is served across snapshots."""
    rs.label_rows(table, [row_id(1)], ALICE, "bad")
    shown = [row_id(1), row_id(2)]
    # Two sessions, each with its own load of the same snapshot, share the one read.
    assert row_filters.latest_of(load_annotations(table)) is row_filters.latest_of(
        load_annotations(table)
    )
    first = row_filters.annotations_by_row(load_annotations(table), shown)
    assert row_filters.annotation_text(first[row_id(1)]) == "bad (alice)"
    assert row_id(2) not in first
    rs.label_rows(table, [row_id(1)], ALICE, "good")
    rs.label_rows(table, [row_id(2)], BOB, "bad")
    after = row_filters.annotations_by_row(load_annotations(table), shown)
    assert row_filters.annotation_text(after[row_id(1)]) == "good (alice)"
    assert row_filters.annotation_text(after[row_id(2)]) == "bad (bob)"


def test_edits_are_snapshots_and_a_stale_edit_conflicts(table: str) -> None:
    before = load_table(table).current_snapshot().snapshot_id
    row = page(table, ids=[row_id(2)]).rows[0]
    saved = rs.edit_message(
        table, row, 1, ALICE, content="fixed answer", role=None, why="fix", base=before
    )
    assert saved.snapshot_id != before
    assert page(table, ids=[row_id(2)]).rows[0]["messages"][1]["content"] == "fixed answer"
    # Bob still looks at the old snapshot: his edit of the same row is refused, not lost.
    with pytest.raises(EditConflict, match="changed by alice"):
        rs.edit_message(table, row, 0, BOB, content="other", role=None, why="x", base=before)
    assert page(table, ids=[row_id(2)]).rows[0]["messages"][0]["content"] == "question 2"
    # An edit of a different row from the same old snapshot lands.
    other = page(table, ids=[row_id(5)], snapshot_id=before).rows[0]
    rs.insert_turn(
        table, other, BOB, role="user", content="thanks", at=None, why="more", base=before
    )
    rs.drop_turn(table, page(table, ids=[row_id(5)]).rows[0], 0, BOB, why="less", base=None)
    assert [m["content"] for m in page(table, ids=[row_id(5)]).rows[0]["messages"]] == [
        "answer 5\nsecond line",
        "thanks",
    ]
    with pytest.raises(InvalidInput, match="Nothing changed"):
        rs.edit_message(table, row, 0, ALICE, content="question 2", role=None, why="x", base=None)
    rs.delete_rows(table, [row_id(7), row_id(8)], ALICE, why="junk", base=None)
    assert page(table, limit=0).total == 10
    history = row_history.history_rows(PageTables(table), row_id(2))
    assert [(h["what"], h["author"], h["detail"]) for h in history] == [
        ("append", getpass.getuser(), "whole-table write"),  # the table's creation
        ("edit", "alice", "fix"),
    ]
    # Kept per metadata file of the table and of its annotations (every session with the
    # row open shares it): a label commits a new one, so the next read shows it at once.
    rs.label_rows(table, [row_id(2)], BOB, "good")
    history = row_history.history_rows(PageTables(table), row_id(2))
    assert [(h["what"], h["author"], h["detail"]) for h in history][-1] == (
        "annotation",
        "bob",
        "label good",
    )


def test_bulk_ids_follow_the_filter_and_confirm_the_count(table: str) -> None:
    rs.label_rows(table, [row_id(1), row_id(10)], ALICE, "bad")
    ids = row_filters.filter_ids(PageTables(table), "bad", ALICE, search="question 1")
    assert ids == [row_id(1), row_id(10)]
    assert row_filters.confirm_text("Remove", len(ids)) == "Remove 2 rows?"
    unl = row_filters.filter_ids(
        PageTables(table), row_filters.UNLABELLED, ALICE, search="question 1"
    )
    assert unl == [row_id(11)]


def test_queue_cursor_hands_out_distinct_rows(table: str) -> None:
    q = review_queue.start_queue(table, 4, ALICE, sampled=False)
    assert q.progress == "0 of 4 reviewed"
    a0 = review_queue.queue_row(table, ALICE, 0)
    a1 = review_queue.queue_row(table, ALICE, 1)
    b0 = review_queue.queue_row(table, BOB, 0)
    assert a0 and a1 and b0
    assert len({a0["id"], a1["id"], b0["id"]}) == 3
    rs.label_rows(table, [a0["id"]], ALICE, review_queue.label_keys(load_table(table))["1"])
    # The labelled row stays on Alice's way (Previous goes back to it); a reload resumes
    # at her first row not yet reviewed.
    assert review_queue.queue_row(table, ALICE, 0)["id"] == a0["id"]  # type: ignore[index]
    assert review_queue.queue_row(table, ALICE, None)["id"] == a1["id"]  # type: ignore[index]
    assert review_queue.start_queue.__name__ and review_queue.label_keys(load_table(table)) == {
        "1": "good",
        "2": "bad",
        "3": "needs-fix",
    }


def test_refs_in_pickers_diffs_and_cards(table: str) -> None:
    first = load_table(table).current_snapshot().snapshot_id
    review_snapshots.tag(table, "raw", ALICE)
    rs.delete_rows(table, [row_id(0)], ALICE, why="bad row", base=None)
    assert review_snapshots.snapshot_choices(table)[:2] == ["main", "raw"]
    assert row_snapshots.resolve(table, "raw") == first
    d = review_snapshots.diff(table, "raw", None)
    assert d.removed == [row_id(0)] and not d.added and not d.changed
    assert review_snapshots.diff_summary(d).startswith("0 added, 1 removed, 0 changed")
    with pytest.raises(NotFound, match="no snapshot, tag or branch 'nope'"):
        row_snapshots.resolve(table, "nope")
    # A card may name the tag: pinned to its snapshot, the name kept for lineage.
    cfg = SftConfig(model="m", out="o", table={"name": table, "snapshot_id": "raw"})
    assert cfg.table.ref == "raw" and cfg.table.snapshot_id is None
    pinned = pin_inputs(cfg)
    assert pinned.table.snapshot_id == first and pinned.table.ref == "raw"  # type: ignore[attr-defined]
    assert str(pinned.table) == f"{table}@{first}#raw"  # type: ignore[attr-defined]
    assert parse_ref_text(str(pinned.table)) == (table, first, "raw")  # type: ignore[attr-defined]
    assert table_links({"inputs": [str(pinned.table)], "outputs": None}) == {  # type: ignore[attr-defined,typeddict-item]
        "inputs": [(table, first)],
        "outputs": [],
    }
    assert TableRef(name=table, snapshot_id=5).ref is None
    assert row_snapshots.train_params(table, "raw") == {
        "table": table,
        "kind": "sft",
        "snapshot": "raw",
    }


def test_branch_edits_leave_main_until_fast_forward(table: str) -> None:
    main = load_table(table).current_snapshot().snapshot_id
    review_snapshots.branch(table, "review", ALICE)
    assert row_snapshots.branches(load_table(table)) == ["main", "review"]
    rs.delete_rows(table, [row_id(3)], ALICE, why="on branch", base="review", branch="review")
    assert load_table(table).current_snapshot().snapshot_id == main
    assert page(table, limit=0, snapshot_id="review").total == 11
    review_snapshots.merge(table, "review", ALICE)
    assert page(table, limit=0).total == 11


def test_labelled_snapshot_keeps_only_that_label(table: str) -> None:
    rs.label_rows(table, [row_id(4), row_id(6)], ALICE, "good")
    ref = row_snapshots.labelled_snapshot(table, "good", ALICE)
    assert ref.kind == "branch" and ref.name.startswith("good-only-")
    assert sorted(_ids(page(table, snapshot_id=ref.name))) == [row_id(4), row_id(6)]
    assert page(table, limit=0).total == 12  # main untouched


def test_marked_html_escapes_data_before_marking() -> None:
    text = 'say <script>alert("x")</script> & <b>hi</b>'
    out = marked_html(text, [(4, 12, "hit")])
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert out.count("<mark") == 1 and "&lt;script&gt;</mark>" in out


def test_review_turn_highlights_numbers_code_and_folds() -> None:
    content = "Run this:\n```python\nprint('needle')\nx = 1\n```\nThe NEEDLE is <here>."
    turn = review_turn(content, search=["needle"])
    kinds = [s.kind for s in turn.segments]
    assert kinds == ["markdown", "html", "html"] and turn.hits == 2
    code = turn.segments[1].text
    assert ">1</span>print(&#x27;<mark" in code and ">2</span>x = 1" in code
    assert "<mark" in turn.segments[2].text and "&lt;here&gt;" in turn.segments[2].text
    plain = review_turn(content)
    assert [s.kind for s in plain.segments] == ["markdown", "code", "markdown"]
    assert plain.segments[1].language == "python"
    broken = '{"a": 1,\n "b": }'
    span = error_span(broken, 2, 7)
    assert span is not None and broken[span[0] : span[1]] == "}"
    marked = review_turn(broken, errors=[(2, 7)])
    assert marked.note and '<mark style="background:#ffb3b3' in marked.segments[0].text
    long = "\n".join(f"line {i}" for i in range(1000))
    folded = review_turn(long, show_all=False, limit=100)
    assert folded.folded and "line 999" not in folded.segments[0].text
    assert not review_turn(long).folded
    text, cut = fold("```\n" + "x\n" * 200 + "```", 50)
    assert cut and text.endswith("\n```")


def test_the_queue_shows_the_system_prompt_browse_shows() -> None:
    from podium.app.rows.turns import Turn, system_turn

    row = {"system": "Answer in JSON.", "messages": [{"role": "user", "content": "hi"}]}
    assert system_turn(row) == Turn("system", "Answer in JSON.")
    with_turn = {**row, "messages": [{"role": "system", "content": "x"}, *row["messages"]]}
    assert system_turn(with_turn) is None
    assert system_turn({"system": None, "messages": []}) is None

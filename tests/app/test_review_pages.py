"""Browse's review tools and the Review page with AppTest, on real Iceberg tables."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from app_pages import open_page as _open
from app_pages import shown
from streamlit.testing.v1 import AppTest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "review"))
from review_data import BOB, make_table, row_id  # noqa: E402

from podium.app.rows import filters as row_filters  # noqa: E402
from podium.app.rows import saves as rs  # noqa: E402
from podium.app.rows import snapshots as row_snapshots  # noqa: E402
from podium.app.views.review import snapshots as review_snapshots  # noqa: E402
from podium.review.annotations import latest, load_annotations  # noqa: E402
from podium.review.queues import get_queue  # noqa: E402
from podium.store.catalog.catalog import load_table  # noqa: E402
from podium.store.read.query import page  # noqa: E402

T = "rv.pages"


def _button(at: AppTest, label: str):  # type: ignore[no-untyped-def]
    return next(b for b in at.button if shown(b.label) == label)


def test_browse_labels_edits_conflicts_and_filters(podium_home: Path) -> None:
    make_table(T, 6)
    at = _open("browse", table=T, sample=row_id(1))
    _button(at, "2 bad").click().run()
    assert not at.exception, at.exception
    assert [shown(s.value) for s in at.success] == ["Labelled 1 row bad."]
    assert [(a.row_id, a.label) for a in latest(load_annotations(T))] == [(row_id(1), "bad")]
    # The grid shows the annotation; the review filter keeps only that row.
    assert "bad (" in at.dataframe[0].value.set_index("id").loc[row_id(1), "review"]
    at.selectbox(key="browse.review").set_value("bad").run()
    assert list(at.dataframe[0].value["id"]) == [row_id(1)]
    at.selectbox(key="browse.review").set_value(row_filters.UNLABELLED).run()
    assert row_id(1) not in list(at.dataframe[0].value["id"])
    at.selectbox(key="browse.review").set_value(row_filters.ALL).run()

    # Someone else edits the row after this page read it: the save is refused, explained,
    # and a reload moves the page to the newest snapshot.
    before = load_table(T).current_snapshot().snapshot_id
    row = page(T, ids=[row_id(1)]).rows[0]
    rs.edit_message(T, row, 1, BOB, content="bob's fix", role=None, why="bob", base=before)
    key = f"browse.row.{row_id(1)}.{before}"
    at.text_area(key=f"{key}.edit.content.0").set_value("my edit")
    at.text_input(key=f"{key}.edit.why").set_value("typo")
    at.button(key=f"FormSubmitter:{key}.edit-Save edit").click().run()
    at.button(key=f"{key}.edit.ask.yes").click().run()
    assert any("changed by bob" in shown(e.value) for e in at.error), [e.value for e in at.error]
    assert page(T, ids=[row_id(1)]).rows[0]["messages"][0]["content"] == "question 1"
    at.button(key="review.reload").click().run()
    head = load_table(T).current_snapshot().snapshot_id
    assert at.selectbox(key="browse.snapshot").value == head
    key = f"browse.row.{row_id(1)}.{head}"
    at.text_area(key=f"{key}.edit.content.0").set_value("my edit")
    at.text_input(key=f"{key}.edit.why").set_value("typo")
    at.button(key=f"FormSubmitter:{key}.edit-Save edit").click().run()
    at.button(key=f"{key}.edit.ask.yes").click().run()
    assert not at.error, [e.value for e in at.error]
    assert page(T, ids=[row_id(1)]).rows[0]["messages"][0]["content"] == "my edit"
    history = "\n".join(shown(m.value) for m in at.markdown)
    assert "**edit** by `bob`" in history and "**annotation** by" in history


def test_bulk_remove_needs_the_confirmation_with_the_count(podium_home: Path) -> None:
    make_table(T, 30)
    at = _open("browse", table=T, search="question 2")
    sure = at.checkbox(key="browse.bulk.sure")
    assert shown(sure.label) == "Yes, act on 11 rows?"  # question 2, 20-29
    assert at.button(key="browse.bulk.do_remove").disabled
    sure.check().run()
    at.text_input(key="browse.bulk.why").set_value("off topic").run()
    at.button(key="browse.bulk.do_remove").click().run()
    assert not at.exception, at.exception
    assert page(T, limit=0).total == 19
    snap = load_table(T).current_snapshot()
    assert snap.summary.additional_properties["podium.message"] == "off topic"


def test_browse_reads_the_bulk_actions_ids_only_when_one_is_pressed(
    podium_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bulk-actions panel (collapsed) runs on every run of Browse. Before: each run
    read, listed and sorted the id of every row the filter keeps, to show a count: at 10M
    rows seconds of every page change and first paint (the scale benchmark's profile)."""
    make_table(T, 30)
    read: list[int] = []
    real = row_filters.filter_ids

    def counted(*args: Any, **kwargs: Any) -> list[str]:
        ids = real(*args, **kwargs)
        read.append(len(ids))
        return ids

    monkeypatch.setattr(row_filters, "filter_ids", counted)
    at = _open("browse", table=T)
    assert shown(at.checkbox(key="browse.bulk.sure").label) == "Yes, act on 30 rows?"
    at.text_input(key="browse.search").input("question 2").run()
    assert shown(at.checkbox(key="browse.bulk.sure").label) == "Yes, act on 11 rows?"
    at.number_input(key="browse.page").set_value(1).run()
    assert read == []
    at.checkbox(key="browse.bulk.sure").check().run()
    at.button(key="browse.bulk.do_label").click().run()
    assert not at.exception, at.exception
    assert read == [11]
    assert len(latest(load_annotations(T))) == 11


def test_review_queue_progress_keys_and_reload(podium_home: Path) -> None:
    make_table(T, 8)
    at = _open("review", table=T)
    at.number_input(key="review.new.size").set_value(3)
    at.button(key="FormSubmitter:review.new-Start queue").click().run()
    assert not at.exception, at.exception
    assert "0 of 3 reviewed" in at.get("progress")[0].proto.text
    first = at.session_state["review.cursor"]
    assert first == 0
    heading = next(shown(h.value) for h in at.subheader if h.value.startswith("Row "))
    assert row_id(0) in heading
    _button(at, "1 good").click().run()
    assert "1 of 3 reviewed" in at.get("progress")[0].proto.text
    assert row_id(1) in next(shown(h.value) for h in at.subheader if h.value.startswith("Row "))
    _button(at, "Next").click().run()
    assert row_id(2) in next(shown(h.value) for h in at.subheader if h.value.startswith("Row "))
    # A reload (a fresh session) continues the same queue with the rows still held.
    again = _open("review", table=T)
    assert "1 of 3 reviewed" in again.get("progress")[0].proto.text
    assert row_id(1) in next(shown(h.value) for h in again.subheader if h.value.startswith("Row "))
    assert get_queue(T).done == 1


def test_snapshots_tab_diffs_tags_and_trains_on_the_tag(podium_home: Path, tmp_path: Path) -> None:
    from podium.models.registry import register_model

    stub = tmp_path / "stub"  # the form lists registered checkpoints; nothing runs here
    stub.mkdir()
    (stub / "config.json").write_text("{}")
    (stub / "model.safetensors").write_bytes(b"")
    register_model("stub-base", kind="base", path=str(stub))
    make_table(T, 5)
    first = load_table(T).current_snapshot().snapshot_id
    rs.delete_rows(T, [row_id(4)], BOB, why="junk", base=None)
    at = _open("review", table=T)
    at.segmented_control(key="review.mode").set_value("Snapshots").run()
    at.selectbox(key="review.diff.a").set_value(str(first)).run()
    text = "\n".join(shown(m.value) for m in at.markdown)
    assert "0 added, 1 removed, 0 changed" in text and f"`{row_id(4)}`" in text
    at.text_input(key="review.tag.name").set_value("cleaned")
    at.button(key="FormSubmitter:review.tag-Create tag").click().run()
    assert any("Tagged: cleaned" in shown(s.value) for s in at.success)
    assert "cleaned" in review_snapshots.snapshot_choices(T)
    # The pickers above the form list the new tag at once, in the one snapshot format
    # Browse's picker uses too (which shows no raw snapshot id).
    tagged = [o for o in at.selectbox(key="review.diff.b").options if "cleaned" in o]
    assert tagged and re.fullmatch(
        r"cleaned \(tag\) · [\d-]+ [\d:]+ · 4 rows \(current\)", tagged[0]
    )
    browse = _open("browse", table=T)
    assert tagged[0] in browse.selectbox(key="browse.snapshot").options
    assert not any("Snapshot id" in shown(c.value) for c in browse.caption)
    at.selectbox(key="review.diff.b").set_value("cleaned").run()
    at.button(key="review.train").click().run()
    assert not at.exception, at.exception
    # The Train page opened on this table with the tag chosen: the card will keep the
    # name and pin the tag's snapshot.
    assert at.query_params["snapshot"] in ("cleaned", ["cleaned"])
    assert at.selectbox(key="train.table").value == T
    chosen = at.selectbox(key=f"train.snapshot.{T}")
    assert chosen.value == "cleaned"
    assert chosen.format_func(chosen.value) == tagged[0]  # the label every picker gives it


def test_maintenance_shows_the_tables_health_and_queues_a_maintain_job(podium_home: Path) -> None:
    from queue_runner import run_queued

    make_table(T, 40)
    rs.delete_rows(T, [row_id(3)], BOB, why="junk", base=None)
    at = _open("review", table=T)
    at.segmented_control(key="review.mode").set_value("Snapshots").run()
    assert not at.exception, at.exception
    assert any("1 delete files (edits not compacted yet)" in c.value for c in at.caption), [
        c.value for c in at.caption
    ]
    at.button(key="FormSubmitter:review.maintain-Queue job").click().run()
    assert not at.exception, at.exception
    run_queued()
    at.run()
    assert any("0 delete files" in c.value for c in at.caption), [c.value for c in at.caption]
    assert [r["id"] for r in page(T, limit=4).rows] == [row_id(i) for i in (0, 1, 2, 4)]


def _heading(at: AppTest) -> str:
    return next(shown(h.value) for h in at.subheader if h.value.startswith("Row "))


def test_review_page_opens_on_its_controls_not_a_schema_dump(podium_home: Path) -> None:
    make_table(T, 3)
    at = _open("review", table=T)
    text = "\n".join(shown(m.value) for m in at.markdown)
    assert "optional string" not in text and "snapshot_id" not in text, text[:300]


def test_review_queue_counts_among_the_rows_left_after_a_removal(podium_home: Path) -> None:
    make_table(T, 10)
    at = _open("review", table=T)
    at.number_input(key="review.new.size").set_value(8)
    at.button(key="FormSubmitter:review.new-Start queue").click().run()
    for _ in range(3):  # a label moves on to the next row
        _button(at, "1 good").click().run()
    assert "queue position 4 of 8" in _heading(at)
    _button(at, "Next").click().run()
    assert row_id(4) in _heading(at) and "queue position 5 of 8" in _heading(at)
    _button(at, "Edit").click().run()
    key = f"review.row.{row_id(4)}"
    at.text_input(key=f"{key}.remove.why").set_value("duplicate").run()
    at.button(key=f"{key}.remove.row").click().run()
    at.button(key=f"{key}.remove.ask.yes").click().run()
    assert not at.exception, at.exception
    assert row_id(5) in _heading(at) and "queue position 5 of 7" in _heading(at)
    _button(at, "Next").click().run()
    _button(at, "Next").click().run()
    assert row_id(7) in _heading(at) and "queue position 7 of 7" in _heading(at)
    assert _button(at, "Next").disabled  # nothing past the end
    for _ in range(6):  # back to the rows labelled first
        _button(at, "Previous").click().run()
    assert row_id(0) in _heading(at) and "queue position 1 of 7" in _heading(at)
    assert "good (" in "\n".join(shown(c.value) for c in at.caption)
    assert _button(at, "Previous").disabled


def test_fast_forward_main_asks_first_naming_what_main_gains(podium_home: Path) -> None:
    make_table(T, 4)
    review_snapshots.branch(T, "fixes", BOB)
    rs.delete_rows(T, [row_id(3)], BOB, why="junk", base="fixes", branch="fixes")
    main_before = row_snapshots.resolve(T, "main")
    at = _open("review", table=T)
    at.segmented_control(key="review.mode").set_value("Snapshots").run()
    at.selectbox(key="review.ff.branch").set_value("fixes")
    at.button(key="FormSubmitter:review.ff-Fast-forward main").click().run()
    question = shown(at.warning[0].value)
    assert question.startswith(
        f"Fast-forward main of {T} to branch fixes? Main then holds 0 rows added, 1 removed"
    )
    assert row_snapshots.resolve(T, "main") == main_before  # nothing moved yet
    at.button(key="review.ff.ask.yes").click().run()
    assert row_snapshots.resolve(T, "main") == row_snapshots.resolve(T, "fixes") != main_before
    assert any("Fast-forwarded: main" in shown(s.value) for s in at.success)

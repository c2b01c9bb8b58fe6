"""An open row's history in Browse: one read of the annotations per snapshot of the
annotations table, shared by every session, on a real Iceberg catalog. With ten sessions
the per-row DuckDB scan of the annotations was the app's largest cost (docs/faults.md,
run D: 21.6% of its samples)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "review"))
from review_data import ALICE, BOB, make_table, row_id  # noqa: E402

from podium.app.page_tables import PageTables  # noqa: E402
from podium.app.rows import filters as row_filters  # noqa: E402
from podium.app.rows import history as row_history  # noqa: E402
from podium.app.rows import saves as rs  # noqa: E402
from podium.review import annotations as ann  # noqa: E402
from podium.review.annotations import load_annotations  # noqa: E402
from podium.review.history import row_history as one_row_history  # noqa: E402
from podium.store.catalog.catalog import load_table  # noqa: E402

T = "rv.hist"
ROWS = 12


@pytest.fixture
def scans(podium_home: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A labelled table; the list grows by one per connection opened on the annotations."""
    make_table(T, ROWS)
    rs.label_rows(T, [row_id(1), row_id(2)], ALICE, "bad")
    rs.label_rows(T, [row_id(2), row_id(3)], BOB, "good")
    rs.rate_row(T, row_id(2), ALICE, 4)
    opened: list[str] = []
    real = ann._connection

    def counted(notes: Any) -> Any:
        opened.append(notes.metadata_location if notes is not None else "none")
        return real(notes)

    monkeypatch.setattr(ann, "_connection", counted)
    return opened


def _sessions_open(rows: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Each row opened at once by its own session (thread, own PageTables), as Browse's
    script threads do; every row's history rows."""
    shown: dict[str, list[dict[str, Any]]] = {}

    def session(rid: str) -> None:
        shown[rid] = row_history.history_rows(PageTables(T), rid)

    threads = [threading.Thread(target=session, args=(r,)) for r in rows]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return shown


def test_sessions_opening_rows_of_one_snapshot_read_the_annotations_once(
    scans: list[str],
) -> None:
    rows = [row_id(i) for i in range(ROWS)]
    shown = _sessions_open(rows)
    assert len(shown) == ROWS
    assert len(scans) == 1  # before: one scan per row opened (12)
    # the same history as the one-row read (the CLI's), annotations included
    for rid in rows:
        expected = one_row_history(load_table(T), load_annotations(T), rid)
        assert [(h["what"], h["author"], h["detail"]) for h in shown[rid]] == [
            (e["kind"], e["author"], e["detail"]) for e in expected
        ]
    assert [(h["what"], h["author"], h["detail"]) for h in shown[row_id(2)]][1:] == [
        ("annotation", "alice", "label bad"),
        ("annotation", "bob", "label good"),
        ("annotation", "alice", "label bad; rating 4"),
    ]
    assert [h["what"] for h in shown[row_id(5)]] == ["append"]  # never annotated

    # a label commits a new annotations snapshot: read once more, and shown at once
    rs.label_rows(T, [row_id(5)], BOB, "needs-fix")
    scans.clear()
    again = _sessions_open([row_id(5), row_id(6), row_id(2)])
    assert len(scans) == 1
    assert again[row_id(5)][-1]["detail"] == "label needs-fix"
    assert again[row_id(2)] == shown[row_id(2)]


def test_a_page_and_an_open_row_share_the_snapshot_s_one_read(scans: list[str]) -> None:
    """After a label every session shows the new snapshot's labels on its page and the
    open row's history: one read of the annotations answers both (before: two)."""
    rs.label_rows(T, [row_id(2), row_id(4)], ALICE, "good")  # alice's newer label
    notes = load_annotations(T)
    scans.clear()
    shown = row_filters.annotations_by_row(notes, [row_id(i) for i in range(ROWS)])
    history = row_history.history_rows(PageTables(T), row_id(2))
    assert len(scans) == 1
    assert [(a.author, a.label, a.rating) for a in shown[row_id(2)]] == [
        ("bob", "good", None),
        ("alice", "good", 4),
    ]
    assert history[-1]["detail"] == "label good; rating 4"
    # the latest per row and author as DuckDB's window over the files gives them
    expected = ann.latest_table(notes).to_pylist()
    assert row_filters.latest_of(notes).to_pylist() == expected
    assert len(expected) == 5  # rows 1, 2 and 4 by alice; 2 and 3 by bob


def test_a_table_without_annotations_has_only_its_changes(podium_home: Path) -> None:
    make_table(T, 3)
    history = row_history.history_rows(PageTables(T), row_id(1))
    assert [h["what"] for h in history] == ["append"]
    assert ann.histories(None).of(row_id(1)) == []


def test_a_label_after_a_page_reads_no_annotations_again(scans: list[str]) -> None:
    """A label carries the author's other fields over from their previous annotation:
    found in the snapshot's one read the page already made, not a DuckDB read of the
    annotations per label (the labels' writes were 11.3% of the app's samples with ten
    sessions, docs/faults.md)."""
    row_filters.annotations_by_row(load_annotations(T), [row_id(2)])  # the page's read
    scans.clear()
    rs.label_rows(T, [row_id(2), row_id(7)], ALICE, "good")
    assert scans == []  # before: one read for alice's previous annotations
    latest = ann.latest(load_annotations(T), ids=[row_id(2), row_id(7)], author="alice")
    # alice's rating 4 on row 2 is carried over; row 7 had nothing to carry
    assert [(a.row_id, a.label, a.rating) for a in latest] == [
        (row_id(2), "good", 4),
        (row_id(7), "good", None),
    ]

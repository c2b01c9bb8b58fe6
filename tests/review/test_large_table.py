"""A 200k-row table in many data files: queues, labels and edits open only what they
need (counted data-file opens), never the whole table."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyiceberg.io.pyarrow import PyArrowFileIO
from review_data import ALICE, BOB, make_table, row_id

from podium.review.annotations import annotate
from podium.review.changes import Change, commit_change
from podium.review.queues import claim_next, create_queue, get_queue
from podium.store.catalog.catalog import load_table

ROWS = 200_000


@pytest.fixture(scope="module")
def big_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("big")
    mp = pytest.MonkeyPatch()
    mp.setenv("PODIUM_HOME", str(home))
    from podium.config import reset_settings

    reset_settings()
    make_table("t.big", ROWS, file_bytes=12_000, batch=2000)
    yield home
    mp.undo()
    reset_settings()


@pytest.fixture
def opened(big_home: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every Parquet data file opened through the table's FileIO, by any reader."""
    seen: list[str] = []
    real = PyArrowFileIO.new_input

    def counting(self: PyArrowFileIO, location: str):  # type: ignore[no-untyped-def]
        if location.endswith(".parquet"):
            seen.append(location)
        return real(self, location)

    monkeypatch.setattr(PyArrowFileIO, "new_input", counting)
    return seen


def _files() -> int:
    return len(load_table("t.big").inspect.files())


def test_queue_hands_out_rows_without_reading_the_table(opened: list[str]) -> None:
    files = _files()
    assert files >= 20
    create_queue("t.big", 50, ALICE, name="sampled", seed=7)
    assert len(set(opened)) < files  # 50 sampled rows: their row groups' files at most
    opened.clear()
    mine = claim_next("t.big", ALICE, 5, name="sampled")
    theirs = claim_next("t.big", BOB, 5, name="sampled")
    assert len(set(opened)) <= 10
    assert not {r["id"] for r in mine} & {r["id"] for r in theirs}
    assert claim_next("t.big", ALICE, 5, name="sampled") == mine  # survives a reload
    annotate(load_table("t.big"), [r["id"] for r in mine[:3]], ALICE, label="good")
    assert get_queue("t.big", "sampled").progress == "3 of 50 reviewed"


def test_label_and_edit_open_only_the_files_holding_the_rows(opened: list[str]) -> None:
    files = _files()
    annotate(load_table("t.big"), [row_id(5), row_id(150_000)], ALICE, label="bad")
    assert len(set(opened)) <= 2
    opened.clear()
    result = commit_change(
        load_table("t.big"),
        Change(updates={row_id(123_456): {"source": "edited"}}, message="fix"),
        ALICE,
    )
    # Merge-on-read: one small data file with the edited row and one position-delete
    # file; the ~20 kB data file that held the row is neither rewritten nor read whole.
    assert result.files_written == 2
    assert result.bytes_written < 20_000
    assert len(set(opened)) <= 1
    assert _files() == files + 2
    [row] = [
        r
        for r in load_table("t.big")
        .scan(row_filter=f"id = '{row_id(123_456)}'")
        .to_arrow()
        .to_pylist()
    ]
    assert row["source"] == "edited"

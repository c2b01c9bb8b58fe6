"""An edit whose branch moved while it committed: landed on the new head as it is when the
snapshots in between touched other rows and removed no file; re-planned when compaction
removed the files its deletes point at (else the edit would be lost); refused when
another edit touched the same row."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "review"))
from review_data import ALICE, BOB, make_table, row_id  # noqa: E402

from podium import failpoints  # noqa: E402
from podium.jobs.maintain import MaintainConfig, run_maintain  # noqa: E402
from podium.reporting import Reporter  # noqa: E402
from podium.review.changes import Change, Committed, EditConflict, commit_change  # noqa: E402
from podium.store.catalog.catalog import load_table  # noqa: E402
from podium.store.read.read import iter_batches  # noqa: E402

T = "t.race"


def _source(row: str) -> str:
    return next(r["source"] for b in iter_batches(T) for r in b.to_pylist() if r["id"] == row)


def _edit_while(
    monkeypatch: pytest.MonkeyPatch, meanwhile: Callable[[], Any]
) -> Committed | BaseException:
    """Alice edits row 5; her commit pauses at the catalog until `meanwhile` has landed."""
    make_table(T, 300, file_bytes=4_000, batch=100)
    earlier = Change(updates={row_id(100): {"source": "earlier"}}, message="e")
    commit_change(load_table(T), earlier, ALICE)  # files for compaction to rewrite
    failpoints.reset()
    monkeypatch.setenv("PODIUM_FAILPOINTS", "commit.before=sleep(3)@1")
    outcome: list[Committed | BaseException] = []

    def edit() -> None:
        try:
            change = Change(updates={row_id(5): {"source": "alice"}}, message="alice")
            outcome.append(commit_change(load_table(T), change, ALICE))
        except BaseException as exc:  # handed to the test
            outcome.append(exc)

    worker = threading.Thread(target=edit)
    worker.start()
    while failpoints._hits["commit.before"] < 1 and worker.is_alive():
        threading.Event().wait(0.05)
    meanwhile()  # its commit is the point's second hit: no pause
    worker.join(timeout=120)
    return outcome[0]


@pytest.mark.usefixtures("podium_home")
def test_an_edit_of_other_rows_in_between_is_rebased_onto(monkeypatch: pytest.MonkeyPatch) -> None:
    result = _edit_while(
        monkeypatch,
        lambda: commit_change(
            load_table(T), Change(updates={row_id(6): {"source": "bob"}}, message="b"), BOB
        ),
    )
    assert isinstance(result, Committed) and result.attempts == 1  # no re-plan
    assert (_source(row_id(5)), _source(row_id(6))) == ("alice", "bob")


@pytest.mark.usefixtures("podium_home")
def test_a_compaction_in_between_makes_the_edit_re_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    config = MaintainConfig(table=T, expire=False, remove_orphans=False)
    result = _edit_while(monkeypatch, lambda: run_maintain(config, Reporter()))
    assert isinstance(result, Committed) and result.attempts == 2
    assert (load_table(T).snapshots()[-2].summary or {}).get("podium.action") == "compact"
    assert _source(row_id(5)) == "alice"
    assert sum(1 for b in iter_batches(T) for _ in b.to_pylist()) == 300


@pytest.mark.usefixtures("podium_home")
def test_an_edit_of_the_same_row_in_between_is_a_conflict(monkeypatch: pytest.MonkeyPatch) -> None:
    result = _edit_while(
        monkeypatch,
        lambda: commit_change(
            load_table(T), Change(updates={row_id(5): {"source": "bob"}}, message="b"), BOB
        ),
    )
    assert isinstance(result, EditConflict), result
    assert _source(row_id(5)) == "bob"

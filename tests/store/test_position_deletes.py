"""Merge-on-read edits: a change writes a small data file and a position-delete file,
every reader (Podium's pages, searches and streams, pyiceberg, DuckDB's own Iceberg
reader) sees the same rows, and Podium keeps an edited row in its old place."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "review"))
from review_data import ALICE, make_table, row_id  # noqa: E402

from podium.review.changes import Change, commit_change  # noqa: E402
from podium.review.diff import diff_snapshots  # noqa: E402
from podium.store.catalog.catalog import load_table  # noqa: E402
from podium.store.read.plan import clear_plans, plan_snapshot  # noqa: E402
from podium.store.read.query import page  # noqa: E402
from podium.store.read.read import iter_batches  # noqa: E402
from podium.store.read.segments import segments  # noqa: E402
from podium.store.write.position_deletes import Replacement  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DUCKDB_PYTHON = REPO / ".venv-duckdb-iceberg" / "bin" / "python"


def test_runs_cut_around_deletes_and_splice_replacements_in_place() -> None:
    files = [("a", 5), ("b", 3), ("patch1", 1), ("patch2", 1)]
    deleted = {"a": [1, 3], "b": [0], "patch1": [0]}
    replacements = [
        Replacement("a", 1, "patch1", 0),  # a:1 edited, then edited again (patch1:0 -> patch2:0)
        Replacement("patch1", 0, "patch2", 0),
    ]
    assert segments(files, deleted, replacements) == [
        ("a", 0, 1),
        ("patch2", 0, 1),  # the latest version, where a:1 was
        ("a", 2, 1),  # a:3 deleted outright
        ("a", 4, 1),
        ("b", 1, 2),  # b:0 deleted outright
    ]


def test_replacements_of_files_no_longer_live_are_ignored() -> None:
    # The edited row's old file was compacted away: the new row stands in its own file.
    assert segments([("c", 2), ("patch", 1)], {}, [Replacement("gone", 0, "patch", 0)]) == [
        ("c", 0, 2),
        ("patch", 0, 1),
    ]


def test_consecutive_replacements_merge_into_one_run() -> None:
    deleted = {"a": [2, 3, 4]}
    repl = [Replacement("a", 2 + k, "p", k) for k in range(3)]
    assert segments([("a", 6), ("p", 3)], deleted, repl) == [
        ("a", 0, 2),
        ("p", 0, 3),
        ("a", 5, 1),
    ]


def _ids_sources(rows: list[dict]) -> list[tuple[str, str]]:
    return [(r["id"], r["source"]) for r in rows]


@pytest.mark.usefixtures("podium_home")
def test_edit_and_delete_write_o_row_and_all_readers_agree(podium_home: Path) -> None:
    make_table("t.mor", 3000, file_bytes=4_000, batch=250)
    table = load_table("t.mor")
    before = table.current_snapshot().snapshot_id  # type: ignore[union-attr]
    files_before = len(plan_snapshot(table, before).files)
    assert files_before >= 3
    warehouse = podium_home / "warehouse"
    size_before = sum(p.stat().st_size for p in warehouse.rglob("*.parquet"))

    first = commit_change(
        load_table("t.mor"), Change(updates={row_id(5): {"source": "edited"}}, message="fix"), ALICE
    )
    commit_change(
        load_table("t.mor"), Change(deletes=frozenset({row_id(7)}), message="junk"), ALICE
    )
    again = commit_change(
        load_table("t.mor"),
        Change(
            updates={row_id(5): {"source": "edited twice"}, row_id(2999): {"split": "x"}},
            message="more",
        ),
        ALICE,
    )
    assert first.files_written == 2 and again.files_written == 2
    grown = sum(p.stat().st_size for p in warehouse.rglob("*.parquet")) - size_before
    assert grown < 30_000  # three small commits, not three rewritten data files

    # Podium: the edited row in its old place, the removed one gone, totals right.
    top = page("t.mor", limit=8)
    assert top.total == 2999
    assert [r["id"] for r in top.rows] == [row_id(i) for i in (0, 1, 2, 3, 4, 5, 6, 8)]
    assert top.rows[5]["source"] == "edited twice"
    assert page("t.mor", offset=2998, limit=5).rows[0]["split"] == "x"
    hits = page("t.mor", search="answer 5\n")
    assert [r["id"] for r in hits.rows] == [row_id(5)] and hits.total == 1
    assert page("t.mor", where="source = 'edited twice'").total == 1
    assert page("t.mor", search="answer 7\n").total == 0
    streamed = [r for b in iter_batches("t.mor") for r in b.to_pylist()]
    assert [r["id"] for r in streamed] == [r["id"] for r in page("t.mor", limit=3000).rows]

    # The same from a cold process's plan (the on-disk cache) as from a fresh plan.
    clear_plans()
    assert _ids_sources(page("t.mor", limit=3000).rows) == _ids_sources(streamed)

    # pyiceberg applies the position deletes itself and reads the same rows.
    mine = sorted(_ids_sources(streamed))
    theirs = load_table("t.mor").scan().to_arrow().select(["id", "source"]).to_pylist()
    assert sorted(_ids_sources(theirs)) == mine

    # Time travel: the snapshot before the edits still reads as it was.
    old = page("t.mor", limit=8, snapshot_id=before)
    assert [r["id"] for r in old.rows][5:8] == [row_id(5), row_id(6), row_id(7)]
    assert old.rows[5]["source"] == "test"

    # The diff lists exactly what changed, reading only the changed rows.
    diff = diff_snapshots("t.mor", before)
    assert diff.removed == [row_id(7)] and diff.added == []
    assert sorted(c.id for c in diff.changed) == [row_id(5), row_id(2999)]


@pytest.mark.usefixtures("podium_home")
def test_duckdb_iceberg_reader_reads_edits_as_podium_does() -> None:
    if not DUCKDB_PYTHON.exists():
        pytest.fail("run `make duckdb-iceberg` (part of `make test`) to install DuckDB's reader")
    make_table("t.other", 1200, file_bytes=4_000, batch=250)
    commit_change(
        load_table("t.other"), Change(updates={row_id(3): {"source": "new"}}, message="m"), ALICE
    )
    commit_change(
        load_table("t.other"),
        Change(deletes=frozenset({row_id(4), row_id(900)}), message="m"),
        ALICE,
    )
    out = subprocess.run(
        [
            str(DUCKDB_PYTHON),
            str(Path(__file__).with_name("iceberg_reader.py")),
            load_table("t.other").metadata_location,
            "id, source",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    duck = json.loads(out.stdout)
    ours = sorted(_ids_sources(page("t.other", limit=2000).rows))
    assert len(duck) == 1198
    assert _ids_sources(duck) == ours

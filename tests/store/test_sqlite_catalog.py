"""`LeanSqliteCatalog` against pyiceberg's `SqlCatalog` on the same SQLite file: the same
table loaded, commits each one sees, a writer that lands first refused the same way,
views and unknown names not tables, a new catalog file made by `SqlCatalog`."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest
from pyiceberg.exceptions import CommitFailedException, NoSuchTableError
from pyiceberg.table.update import AssertRefSnapshotId, SetPropertiesUpdate
from store_helpers import sft_rows

from podium.store.catalog import catalog
from podium.store.catalog.sqlite_catalog import LeanSqliteCatalog
from podium.store.catalog.sqlite_uri import plain_sqlite_file
from podium.store.schema import SFT_SCHEMA
from podium.store.write.write import write_batches

T = "lean.chat"


@pytest.fixture
def lean(podium_home: Path, monkeypatch: pytest.MonkeyPatch) -> LeanSqliteCatalog:
    """The lean catalog of this home (the process-wide switch, undone after the test)."""
    monkeypatch.setattr(catalog, "_lean", True)
    opened = catalog.open_catalog()
    assert isinstance(opened, LeanSqliteCatalog)
    return opened


def _full() -> catalog.Catalog:
    return catalog._catalog_for(*_args())


def _args() -> tuple[str, str, str, tuple[tuple[str, str], ...]]:
    settings = catalog.get_settings()
    extra = tuple(sorted(settings.catalog_properties.items()))
    return settings.catalog_name, settings.catalog_uri, settings.warehouse, extra


def test_loads_the_table_sqlcatalog_loads_and_commits_it_sees(lean: LeanSqliteCatalog) -> None:
    write_batches(T, sft_rows(5).to_batches(), mode="create", schema=SFT_SCHEMA)
    mine, theirs = lean.load_table(T), _full().load_table(T)
    assert mine.metadata_location == theirs.metadata_location
    assert mine.metadata == theirs.metadata
    assert mine.catalog is lean and mine.io.properties == theirs.io.properties

    mine.append(sft_rows(3, start=5))  # committed by the lean catalog
    assert mine.catalog is lean
    reloaded = _full().load_table(T)
    assert reloaded.metadata_location == mine.metadata_location
    assert reloaded.scan().to_arrow().num_rows == 8
    with contextlib.closing(sqlite3.connect(plain_sqlite_file(_args()[1]))) as conn:
        previous = conn.execute(
            "SELECT previous_metadata_location FROM iceberg_tables WHERE table_name = 'chat'"
        ).fetchone()[0]
    assert previous == theirs.metadata_location


def test_a_commit_that_another_writer_beat_is_refused(
    lean: LeanSqliteCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_batches(T, sft_rows(5).to_batches(), mode="create", schema=SFT_SCHEMA)
    stale = lean.load_table(T)
    head = stale.metadata.current_snapshot_id
    _full().load_table(T).append(sft_rows(1, start=5))  # lands first
    tag = (SetPropertiesUpdate(updates={"x": "1"}),)
    with pytest.raises(CommitFailedException):  # its requirement (the old head) fails
        lean.commit_table(stale, (AssertRefSnapshotId(ref="main", snapshot_id=head),), tag)

    # The compare-and-swap itself: a writer that lands while this commit writes its
    # metadata file (after the requirements were checked) wins; this one changes nothing.
    table = lean.load_table(T)
    write_metadata = LeanSqliteCatalog.write_metadata_file

    def racing(self: LeanSqliteCatalog, *args: object, **kwargs: object) -> None:
        write_metadata(self, *args, **kwargs)  # type: ignore[arg-type]
        _full().load_table(T).append(sft_rows(1, start=7))

    monkeypatch.setattr(LeanSqliteCatalog, "write_metadata_file", racing)
    with pytest.raises(CommitFailedException, match="updated by another process"):
        lean.commit_table(table, (), tag)
    after = _full().load_table(T)
    assert "x" not in after.properties
    ids = after.scan().to_arrow().column("id").to_pylist()
    assert sorted(ids) == [f"r{i:04d}" for i in (0, 1, 2, 3, 4, 5, 7)]


def test_views_and_unknown_names_are_no_tables(lean: LeanSqliteCatalog) -> None:
    write_batches(T, sft_rows(2).to_batches(), mode="create", schema=SFT_SCHEMA)
    location = lean.load_table(T).metadata_location
    with contextlib.closing(sqlite3.connect(plain_sqlite_file(_args()[1]))) as conn:
        conn.execute(
            "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
            "metadata_location, iceberg_type) VALUES (?, 'lean', 'a_view', ?, 'VIEW')",
            (_args()[0], location),
        )
        conn.commit()
    for name in ("lean.a_view", "lean.nothing"):
        with pytest.raises(NoSuchTableError):
            lean.load_table(name)
        with pytest.raises(NoSuchTableError):
            _full().load_table(name)
        assert not lean.table_exists(name)
    assert lean.table_exists(T)


def test_a_new_home_is_made_by_sqlcatalog(lean: LeanSqliteCatalog) -> None:
    assert not lean.table_exists(T)  # no catalog tables yet: SqlCatalog made them
    write_batches(T, sft_rows(2).to_batches(), mode="create", schema=SFT_SCHEMA)
    assert lean.load_table(T).scan().to_arrow().num_rows == 2
    assert catalog.list_tables(lean) == [T]

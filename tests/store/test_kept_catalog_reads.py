"""What the app asks an SQLite catalog on every rerun, answered without reopening it:
`metadata_location` on one kept connection (a connection per call, twice a page, was
4.7% of the app's samples with ten sessions), and a table's metadata file parsed once
per location (pyiceberg's `load_table` over SQLAlchemy per rerun, 5.3%; docs/faults.md).
Each test counts the work, and checks that a commit is still seen at the next ask."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.serializers import FromInputFile

from podium.errors import NotFound
from podium.store.catalog.catalog import load_or_none, load_table
from podium.store.catalog.names import metadata_location, table_names
from podium.store.write.write import write_table

T = "kc.rows"


@pytest.fixture
def catalog_connections(podium_home: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A table of two rows; the list grows by one per sqlite3 connection opened on the
    catalog file from then on."""
    write_table(T, pa.table({"x": [1, 2]}), mode="create")
    opened: list[str] = []
    real = sqlite3.connect

    def counted(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        if "catalog.db" in str(database):
            opened.append(str(database))
        return real(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", counted)
    return opened


def test_metadata_location_keeps_one_connection(catalog_connections: list[str]) -> None:
    first = metadata_location("kc", "rows")
    assert first is not None and first.endswith(".metadata.json")
    assert all(metadata_location("kc", "rows") == first for _ in range(9))
    assert len(catalog_connections) <= 1  # before: 10, one per call
    write_table(T, pa.table({"x": [3]}), mode="append")
    moved = metadata_location("kc", "rows")
    assert moved is not None and moved != first  # the commit is seen on the kept one
    assert metadata_location("kc", "nothing") is None
    for _ in range(5):  # Browse lists the names for every open sample
        assert table_names() == [T]
    assert len(catalog_connections) <= 1  # before: one more per listing


def test_loads_parse_each_metadata_file_once(
    catalog_connections: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[str] = []
    real_parse = FromInputFile.table_metadata

    def counted_parse(input_file: Any, *args: Any, **kwargs: Any) -> Any:
        parsed.append(input_file.location)
        return real_parse(input_file, *args, **kwargs)

    sqlalchemy_loads: list[object] = []
    real_load = SqlCatalog.load_table

    def counted_load(self: SqlCatalog, identifier: Any) -> Any:
        sqlalchemy_loads.append(identifier)
        return real_load(self, identifier)

    monkeypatch.setattr(FromInputFile, "table_metadata", staticmethod(counted_parse))
    monkeypatch.setattr(SqlCatalog, "load_table", counted_load)
    tables = [load_table(T) for _ in range(5)]
    assert {t.metadata_location for t in tables} == {metadata_location("kc", "rows")}
    assert len(parsed) == 1  # before: 5, one per load
    assert sqlalchemy_loads == []  # before: 5
    assert tables[0].scan().to_arrow().num_rows == 2
    write_table(T, pa.table({"x": [3]}), mode="append")
    parsed.clear()  # the write's own reads
    after = load_table(T)
    assert after.scan().to_arrow().num_rows == 3  # the commit is seen at the next load
    assert load_table(T).metadata_location == after.metadata_location
    assert len(parsed) <= 1  # the new file once (the write may have parsed it already)
    assert after.name() == ("kc", "rows")
    tables[0].refresh()  # a kept load is a real table: its catalog refreshes it
    assert tables[0].metadata_location == after.metadata_location
    sqlalchemy_loads.clear()  # the commit's and the refresh's own, pyiceberg's
    # a table that is not there (Browse asks for the page's validation report)
    assert load_or_none("kc.nothing") is None
    with pytest.raises(NotFound, match="No table named kc.nothing"):
        load_table("kc.nothing")
    assert sqlalchemy_loads == []  # before: 2
    assert len(catalog_connections) <= 1

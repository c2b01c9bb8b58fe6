"""Reads of one snapshot share a DuckDB database kept for its files (opening one is most
of a small read's cost in the app), and a connection to it is as closed as one of its
own: it reads those files and no other, cannot change the locked settings, and the
views one read makes are not another's."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from store_helpers import write_in_files

from podium.store.read import connections
from podium.store.read.kept import forget_all
from podium.store.read.query import open_view

TABLE = "shared.sft"


def test_reads_of_one_snapshot_share_a_database_and_nothing_else(
    podium_home: Path, tmp_path: Path
) -> None:
    write_in_files(TABLE, 30, 0, "create", rows_per_group=10)
    forget_all()
    view = open_view(TABLE)
    one, two = view.connection(), view.connection()
    assert len(connections._databases._values) == 1  # one database, two connections
    assert one.sql("SELECT count(*) FROM t").fetchall() == [(30,)]
    assert two.sql("SELECT count(*) FROM t").fetchall() == [(30,)]
    one.execute("CREATE TEMP VIEW mine AS SELECT 1 AS x")
    with pytest.raises(duckdb.CatalogException):
        two.sql("SELECT * FROM mine").fetchall()
    outside = tmp_path / "other.csv"
    outside.write_text("secret\n1\n")
    for con in (one, two):
        with pytest.raises(duckdb.PermissionException):
            con.sql("SELECT * FROM read_csv($p)", params={"p": str(outside)}).fetchall()
        with pytest.raises(duckdb.InvalidInputException):
            con.execute("SET enable_external_access = true")
    one.close()  # a read's end leaves the others' connections open
    assert two.sql("SELECT count(*) FROM t WHERE split = 'test'").fetchall() == [(6,)]

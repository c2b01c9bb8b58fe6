"""Two processes opening one new home at once: pyiceberg checks for its catalog tables,
then creates them, so the second CREATE can meet tables the other process made in
between (CI: one of two concurrent report writers failed with "table iceberg_tables
already exists"). The race is made certain here: the other process's CREATE runs, on a
connection of its own, just before this one's."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine

from podium.config import get_settings
from podium.store.catalog.catalog import open_catalog


@pytest.fixture
def another_process_creates_the_tables_first(podium_home: Path) -> Iterator[None]:
    database = get_settings().catalog_uri.removeprefix("sqlite:///")

    def before(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.strip().startswith("CREATE TABLE iceberg_tables"):
            with sqlite3.connect(database) as other:
                other.execute(statement)

    event.listen(Engine, "before_cursor_execute", before)
    try:
        yield
    finally:
        event.remove(Engine, "before_cursor_execute", before)


def test_a_home_whose_catalog_tables_appear_while_it_opens_still_opens(
    another_process_creates_the_tables_first: None,
) -> None:
    catalog = open_catalog()
    catalog.create_namespace("demo")
    assert ("demo",) in catalog.list_namespaces()

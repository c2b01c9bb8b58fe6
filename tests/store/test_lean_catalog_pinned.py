"""The lean SQLite catalog runs pyiceberg's own SQL: the statements `SqlCatalog` executes
to load and commit a table (caught as SQLAlchemy hands them to SQLite) match what
`LeanSqliteCatalog` executes, text and parameters, so a pyiceberg release that changes
them fails here. And two processes, one committing through each, land all their edits."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from store_helpers import sft_rows

from podium.store.catalog import catalog
from podium.store.catalog.sqlite_catalog import (
    COMMIT_SQL,
    LOAD_SQL,
    TABLE_TYPE_FILTER_SQL,
    LeanSqliteCatalog,
)
from podium.store.schema import SFT_SCHEMA
from podium.store.write.write import write_batches

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "review"))
from review_data import make_table, row_id  # noqa: E402

T = "lean.chat"
Statement = tuple[str, tuple[Any, ...]]


def normal(sql: str) -> str:
    """SQL text compared without table qualifiers, case, spacing, or a SELECT's columns
    (SqlCatalog reads the whole row, the lean path only `metadata_location`)."""
    sql = re.sub(r"\s+", " ", sql.replace("iceberg_tables.", "")).strip().lower()
    sql = re.sub(r"\s*([=(),])\s*", r"\1", sql)
    return re.sub(r"^select .*? from ", "select * from ", sql)


def selected(sql: str) -> set[str]:
    found = re.match(r"\s*select\s(.*?)\sfrom\s", sql.replace("iceberg_tables.", ""), re.I | re.S)
    return {c.strip() for c in found[1].split(",")} if found else set()


def masked(statements: list[Statement]) -> list[Statement]:
    """Normalised statements, metadata file paths replaced by their order of appearance
    (each run writes its own)."""
    names: dict[str, str] = {}

    def mask(value: Any) -> Any:
        if isinstance(value, str) and value.endswith(".metadata.json"):
            return names.setdefault(value, f"<metadata {len(names)}>")
        return value

    return [(normal(sql), tuple(mask(v) for v in params)) for sql, params in statements]


@pytest.fixture
def full_statements(podium_home: Path) -> Iterator[list[Statement]]:
    """Statements pyiceberg's SqlCatalog of this home executes, as executed."""
    seen: list[Statement] = []
    catalog.open_catalog()  # makes the home
    full = catalog._catalog_for(*_args())

    def record(conn: Any, cursor: Any, sql: str, params: Any, context: Any, many: bool) -> None:
        seen.append((sql, tuple(params)))

    event.listen(full.engine, "before_cursor_execute", record)  # type: ignore[attr-defined]
    yield seen
    event.remove(full.engine, "before_cursor_execute", record)  # type: ignore[attr-defined]


def _args() -> tuple[str, str, str, tuple[tuple[str, str], ...]]:
    settings = catalog.get_settings()
    extra = tuple(sorted(settings.catalog_properties.items()))
    return settings.catalog_name, settings.catalog_uri, settings.warehouse, extra


class _Recording(sqlite3.Connection):
    statements: list[Statement] = []

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        if not sql.lstrip().upper().startswith("PRAGMA"):
            self.statements.append((sql, tuple(parameters)))
        return super().execute(sql, parameters)


@pytest.fixture
def lean_statements(monkeypatch: pytest.MonkeyPatch) -> list[Statement]:
    """Statements the lean catalog executes (its catalog-schema probe left out)."""
    seen: list[Statement] = []
    monkeypatch.setattr(_Recording, "statements", seen)
    connect: Callable[[LeanSqliteCatalog], sqlite3.Connection] = lambda self: sqlite3.connect(  # noqa: E731
        self._database, timeout=5.0, factory=_Recording
    )
    monkeypatch.setattr(LeanSqliteCatalog, "_connect", connect)
    return seen


def _load_and_commit(open_catalog: Callable[[], Any], seen: list[Statement]) -> tuple[Any, Any]:
    table = open_catalog().load_table(T)
    loaded = list(seen)
    seen.clear()
    table.transaction().set_properties(pinned="yes").commit_transaction()
    return loaded, list(seen)


def test_the_lean_path_runs_sqlcatalogs_own_statements(
    full_statements: list[Statement],
    lean_statements: list[Statement],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_batches(T, sft_rows(3).to_batches(), mode="create", schema=SFT_SCHEMA)
    full_statements.clear()
    theirs = _load_and_commit(lambda: catalog._catalog_for(*_args()), full_statements)
    monkeypatch.setattr(catalog, "_lean", True)
    assert isinstance(catalog.open_catalog(), LeanSqliteCatalog)
    mine = _load_and_commit(catalog.open_catalog, lean_statements)

    for their_part, my_part in zip(theirs, mine, strict=True):
        assert masked(my_part) == masked(their_part)
    (their_load, _), (my_load, _) = theirs[0][0], mine[0][0]
    assert selected(my_load) <= selected(their_load)  # the lean path reads a column of it
    # The constants are what the lean path runs: one place to change.
    assert my_load == LOAD_SQL + TABLE_TYPE_FILTER_SQL and mine[1][-1][0] == COMMIT_SQL


_EDITS = """
import sys
from podium.identity import User
from podium.review.changes import Change, commit_change
from podium.store.catalog import catalog

who, first = sys.argv[1], int(sys.argv[2])
if who == "lean":
    catalog.prefer_lean_catalog()  # as `podium edit` does
opened = type(catalog.open_catalog()).__name__
assert (opened == "LeanSqliteCatalog") == (who == "lean"), opened
user = User(who, "reviewer", "config")
for i in range(first, first + 20):
    row = f"row-{i:07d}"
    change = Change(updates={row: {"source": who}}, message=f"{who} {i}")
    commit_change(catalog.load_table("t.both"), change, user)
"""


@pytest.mark.usefixtures("podium_home")
def test_lean_and_sqlcatalog_processes_land_all_forty_edits() -> None:
    make_table("t.both", 200)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _EDITS, who, str(first)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for who, first in (("lean", 0), ("full", 100))
    ]
    for proc in procs:
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0, out

    table = catalog.load_table("t.both")
    edits = [
        s.summary.get("podium.message", "")
        for s in table.snapshots()
        if s.summary is not None and s.summary.get("podium.action") == "edit"
    ]
    assert sorted(edits) == sorted(
        [f"lean {i}" for i in range(20)] + [f"full {i}" for i in range(100, 120)]
    )
    sources = {
        r["id"]: r["source"]
        for b in table.scan(selected_fields=("id", "source")).to_arrow().to_batches()
        for r in b.to_pylist()
    }
    assert [sources[row_id(i)] for i in range(20)] == ["lean"] * 20
    assert [sources[row_id(i)] for i in range(100, 120)] == ["full"] * 20
    assert sum(1 for s in sources.values() if s == "test") == 160

"""Which errors the CLI and jobs report as a service going away (`errors.outage_message`):
real SQLite and SQLAlchemy errors, raised by real databases."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlalchemy

from podium.errors import outage_message


def _raised(run: object) -> BaseException:
    with pytest.raises(Exception) as caught:
        run()  # type: ignore[operator]
    return caught.value


def test_a_locked_sqlite_database_is_an_outage(tmp_path: Path) -> None:
    db = tmp_path / "catalog.db"
    holder = sqlite3.connect(db)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    other = sqlite3.connect(db, timeout=0)
    exc = _raised(lambda: other.execute("SELECT * FROM t"))
    message = outage_message(exc)
    assert message is not None and "database is locked" in message
    holder.rollback()


def test_a_missing_sqlite_file_is_an_outage(tmp_path: Path) -> None:
    engine = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'gone' / 'catalog.db'}")
    exc = _raised(lambda: engine.connect())
    message = outage_message(exc)
    assert message is not None and "unable to open database" in message


@pytest.mark.parametrize("statement", ["SELECT * FROM no_such_table", "SELEKT 1"])
def test_a_bad_statement_on_sqlite_is_not_an_outage(tmp_path: Path, statement: str) -> None:
    """The same OperationalError class, but the database is there: a bug to show as one,
    not advice to wait for the database to come back."""
    direct = _raised(lambda: sqlite3.connect(tmp_path / "a.db").execute(statement))
    assert outage_message(direct) is None
    engine = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'b.db'}")
    with engine.connect() as connection:
        wrapped = _raised(lambda: connection.execute(sqlalchemy.text(statement)))
    assert isinstance(wrapped, sqlalchemy.exc.OperationalError)
    assert outage_message(wrapped) is None


def test_a_refused_postgresql_connection_is_an_outage() -> None:
    pytest.importorskip("psycopg2")
    engine = sqlalchemy.create_engine("postgresql+psycopg2://u:p@127.0.0.1:9/podium")
    message = outage_message(_raised(lambda: engine.connect()))
    assert message is not None and message.startswith("the catalog and state database")

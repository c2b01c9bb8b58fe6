"""The file behind an SQLite database URI, for the readers that skip SQLAlchemy."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

_SQLITE_PREFIXES = ("sqlite:///", "sqlite+pysqlite:///")


def sqlite_file(uri: str) -> Path | None:
    """The file of an SQLite URI (`sqlite:///PATH`), or None (another database, memory)."""
    for prefix in _SQLITE_PREFIXES:
        if uri.startswith(prefix):
            database = unquote(uri.removeprefix(prefix).split("?", 1)[0])
            return Path(database) if database and database != ":memory:" else None
    return None

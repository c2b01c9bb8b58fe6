"""The file behind an SQLite database URI, for the readers that skip SQLAlchemy (kept in
`podium.config`, below `podium.paths`, which keeps writes off the catalog file)."""

from __future__ import annotations

from pathlib import Path

from podium.config import sqlite_file

__all__ = ["plain_sqlite_file", "sqlite_file"]


def plain_sqlite_file(uri: str) -> Path | None:
    """The file of a plain `sqlite:///PATH` URI, None when it carries driver options
    (`?...`: only SQLAlchemy's own connection honours them) or is not SQLite."""
    return None if "?" in uri else sqlite_file(uri)

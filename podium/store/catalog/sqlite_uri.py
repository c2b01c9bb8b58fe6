"""The file behind an SQLite database URI, for the readers that skip SQLAlchemy (kept in
`podium.config`, below `podium.paths`, which keeps writes off the catalog file)."""

from __future__ import annotations

from podium.config import sqlite_file

__all__ = ["sqlite_file"]

"""Scratch directories only the current user can read, under Podium's home.

DuckDB spills query state to disk when a query outgrows its memory cap; for an
in-memory database its default spill directory is `.tmp` in the current directory,
created with the umask (world-readable), so another user on the machine could read the
rows of a SQL console query or an import. Podium's spills go to `$PODIUM_HOME/tmp/...`
with mode 0700 instead.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from podium.config import get_settings


def private_dir(name: str) -> Path:
    """`$PODIUM_HOME/tmp/<name>`, created if needed, mode 0700 (its parent too)."""
    root = get_settings().ensure_home() / "tmp"
    path = root / name
    for directory in (root, path):
        directory.mkdir(mode=0o700, exist_ok=True)
        os.chmod(directory, 0o700)  # an existing one, or one made under a lax umask
    return path


def private_scratch(name: str) -> tempfile.TemporaryDirectory[str]:
    """A fresh 0700 directory inside `private_dir(name)`, removed when closed."""
    return tempfile.TemporaryDirectory(dir=private_dir(name))

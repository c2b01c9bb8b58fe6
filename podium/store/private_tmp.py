"""Scratch directories and files only the current user can read, under Podium's home.

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


def write_private_file(path: Path, text: str) -> None:
    """`text` into `path` (replaced whole, never half-written), readable by its owner
    only, whatever the umask and whatever mode a file there had before: `touch(mode=...)`
    sets the mode of a new file only, so an old 0644 `secrets.toml` stayed 0644."""
    part = path.with_name(path.name + ".part")
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.chmod(part, 0o600)  # an older .part file kept its mode
    os.replace(part, path)

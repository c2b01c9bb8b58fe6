"""Content digests of checkpoint directories: what a run card pins a model by.

A registry name can be re-pointed and a directory rewritten in place; the digest says
whether the weights a card ran with are still the ones there. It is a sha256 over every
file under the directory (relative name, size, then contents, in name order), so a
renamed, added, removed or edited file changes it and nothing else does.

Hashing half a gigabyte takes seconds, so each result is kept in the state database
keyed by the directory and a fingerprint of its files' names, sizes and mtimes: a
directory is hashed once, and again only after something in it changed.
"""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Column, DateTime, String, Table, Text, delete, insert, select
from sqlalchemy.exc import IntegrityError

from podium.errors import NotFound
from podium.store.state.state import METADATA, engine

_CHUNK = 1 << 20

digests_table = Table(
    "podium_checkpoint_digests",
    METADATA,
    Column("path", Text, primary_key=True),
    Column("fingerprint", String(64), nullable=False),
    Column("digest", String(80), nullable=False),
    Column("computed_at", DateTime(timezone=True), nullable=False),
)


def _files(root: Path) -> list[tuple[str, Path]]:
    """(relative posix name, path) of every regular file under `root`, sorted by name."""
    found = []
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            if path.is_file():  # follows links to files, as HF hub snapshot folders use
                found.append((path.relative_to(root).as_posix(), path))
    return sorted(found)


def fingerprint(root: Path, files: list[tuple[str, Path]]) -> str:
    """A cheap stand-in for the contents: names, sizes and modification times."""
    h = hashlib.sha256(str(root).encode())
    for rel, path in files:
        stat = path.stat()
        h.update(f"\0{rel}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    return h.hexdigest()


def hash_files(files: list[tuple[str, Path]]) -> str:
    h = hashlib.sha256()
    for rel, path in files:
        # Name and size before the bytes, so no two different trees hash the same stream.
        h.update(f"{rel}\0{path.stat().st_size}\0".encode())
        with path.open("rb") as fh:
            while chunk := fh.read(_CHUNK):
                h.update(chunk)
    return "sha256:" + h.hexdigest()


def checkpoint_digest(path: str | Path) -> str:
    """The content digest of a checkpoint directory (cached until its files change)."""
    root = Path(path).expanduser().resolve()
    if not root.is_dir():
        raise NotFound(f"Checkpoint directory {root} does not exist; its digest cannot be taken.")
    files = _files(root)
    key = fingerprint(root, files)
    with engine().connect() as conn:
        row = conn.execute(select(digests_table).where(digests_table.c.path == str(root))).first()
    if row is not None and row.fingerprint == key:
        return str(row.digest)
    digest = hash_files(files)
    try:
        with engine().begin() as conn:
            conn.execute(delete(digests_table).where(digests_table.c.path == str(root)))
            conn.execute(
                insert(digests_table).values(
                    path=str(root), fingerprint=key, digest=digest, computed_at=datetime.now(UTC)
                )
            )
    except IntegrityError:
        pass  # another process stored the same directory's digest at the same moment
    return digest

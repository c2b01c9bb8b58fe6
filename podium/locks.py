"""The one cross-process file lock: one model conversion, one server start per model, one
migration of a SQLite catalog at a time."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive `flock` on `path` (created if missing); released on exit or crash."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:  # "a": never truncates what another holder wrote
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)

"""A snapshot's file plan: its data files cut into runs of rows, in reading order.

The plan's types live here, apart from the planning (`store.read.plan`) and the on-disk
cache (`store.read.plan_cache`), which both use them.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlparse

import pyarrow as pa

from podium.store.read.object_store import is_s3


@dataclass(frozen=True)
class PlannedFile:
    """A run of rows of one data file: `records` rows from physical row `first`, shown
    from position `start` of the snapshot. Without deletes a run is a whole file; with
    position deletes a file is cut into runs around its deleted rows, and an edited row
    read from a newer file is a run of its own in the old row's place."""

    path: str  # as the manifest names it (file://, s3://, or a bare path)
    records: int
    start: int  # position of the run's first row in the snapshot
    first: int = 0  # physical row of the data file where the run begins
    file_rows: int | None = None  # rows in the data file (None: `records`, a whole file)

    @property
    def whole(self) -> bool:
        """The run is its data file, every row of it."""
        return self.first == 0 and (self.file_rows is None or self.file_rows == self.records)

    @property
    def local_path(self) -> str | None:
        """A path on this machine's file system, or None for object stores."""
        return local_path(self.path)


def local_path(path: str) -> str | None:
    """`path` (file://, s3://, or bare) on this machine's file system, or None."""
    parsed = urlparse(path)
    if parsed.scheme == "file":  # not decoded: pyiceberg wrote the file at this very path
        return parsed.path
    if parsed.scheme == "" and path.startswith("/"):
        return path
    return None


@dataclass(frozen=True)
class FilePlan:
    table: str
    snapshot_id: int | None
    files: tuple[PlannedFile, ...]
    schema: pa.Schema  # the snapshot's columns as Arrow (no field-id metadata needed)
    # Rows can be read straight from the Parquet files by position: Parquet data files,
    # deletes only by position (applied as runs), and stored column names equal to the
    # snapshot's (a rename would read as NULLs).
    simple: bool

    @property
    def direct(self) -> bool:
        """DuckDB can read the files itself: simple, and on this machine's disk."""
        return self.simple and all(f.local_path is not None for f in self.files)

    @property
    def self_contained(self) -> bool:
        """Readable without pyiceberg: simple, every file on this machine's disk or on S3
        (read with pyarrow's S3 filesystem, `podium.store.read.object_store`)."""
        return self.simple and all(f.local_path is not None or is_s3(f.path) for f in self.files)

    @property
    def total(self) -> int:
        last = self.files[-1] if self.files else None
        return last.start + last.records if last else 0

    @property
    def column_names(self) -> list[str]:
        return list(self.schema.names)

    @property
    def whole_files(self) -> bool:
        """Every run is a whole data file, once (no deletes apply)."""
        paths = [f.path for f in self.files]
        return all(f.whole for f in self.files) and len(set(paths)) == len(paths)

    def locate(self, offset: int, limit: int) -> Iterator[tuple[int, int, int]]:
        """(file index, first row in file, rows) for the rows [offset, offset + limit)."""
        end = min(offset + limit, self.total)
        starts = [f.start for f in self.files]
        i = max(0, bisect.bisect_right(starts, offset) - 1)
        while offset < end and i < len(self.files):
            f = self.files[i]
            first = offset - f.start
            take = min(f.records - first, end - offset)
            if take > 0:
                yield i, first, take
                offset += take
            i += 1


def runs_not_in(plan: FilePlan, other: FilePlan) -> FilePlan:
    """`plan` cut down to the rows `other` does not have: the same physical rows of the
    same data files are the same rows, so two snapshots differ only where their runs
    differ (an edit's new row, the rows it deleted) and only those rows need reading."""
    theirs: dict[str, list[tuple[int, int]]] = {}
    for f in other.files:
        theirs.setdefault(f.path, []).append((f.first, f.first + f.records))
    for spans in theirs.values():
        spans.sort()
    out: list[PlannedFile] = []
    start = 0
    for f in plan.files:
        pieces = [(f.first, f.first + f.records)]
        for lo, hi in theirs.get(f.path, ()):
            pieces = [
                piece
                for a, b in pieces
                for piece in ((a, min(b, lo)), (max(a, hi), b))
                if piece[0] < piece[1]
            ]
        for a, b in pieces:
            out.append(PlannedFile(f.path, b - a, start, a, f.file_rows or f.records))
            start += b - a
    return FilePlan(plan.table, plan.snapshot_id, tuple(out), plan.schema, plan.simple)

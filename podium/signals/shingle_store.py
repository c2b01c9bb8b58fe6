"""The shingle sets of near-duplicate candidates, computed once and read back by row.

Verifying candidate pairs and splitting clusters needs each candidate row's set (~4 KB
for ~1 KiB of text) in groups of rows at a time. Re-reading the snapshot for each group
cost a whole scan of its text per group (~10 scans at 10M rows: 3,848 s). Reading only
the row groups a group needs does not help: candidates are spread over the whole table
(~14% of rows at 10M: ~250 in each row group of ~1,800), so every group still touches
nearly every row group. So the sets are made in one scan and, when there are more than
one group's worth, written to an unnamed scratch file (gone with its process, even a
killed one) and read back by row: the page cache holds them, not this process.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from podium.store.private_tmp import private_dir

Sets = dict[int, npt.NDArray[np.uint32]]
_ITEM = np.dtype(np.uint32).itemsize


class ShingleStore:
    """The sets of the rows `rows` (sorted, unique), added in that order; in memory when
    `spill` is False, else in a private scratch file."""

    def __init__(self, rows: npt.NDArray[np.int64], spill: bool) -> None:
        self.rows = rows
        self.ends = np.zeros(len(rows), np.int64)  # each row's end, in uint32 items
        self.added = 0
        self._held: Sets | None = None if spill else {}
        self._file = tempfile.TemporaryFile(dir=private_dir("near-dup")) if spill else None

    def add(self, rows: Iterable[int], sets: Iterable[npt.NDArray[np.uint32]]) -> None:
        """The next rows' sets, in the order of `self.rows`."""
        at = int(self.ends[self.added - 1]) if self.added else 0
        for row, found in zip(rows, sets, strict=True):
            if self.added >= len(self.rows) or row != self.rows[self.added]:
                raise RuntimeError(f"near-dup: row {row} came out of order for its sets")
            if self._held is not None:
                self._held[row] = found
            else:
                assert self._file is not None
                self._file.write(np.ascontiguousarray(found, np.uint32).tobytes())
            at += len(found)
            self.ends[self.added] = at
            self.added += 1

    def sets(self, wanted: npt.NDArray[np.int64]) -> Sets:
        """The sets of the rows `wanted` (each one added before)."""
        if self.added < len(self.rows):
            raise RuntimeError(f"near-dup: {len(self.rows) - self.added} rows' sets never came")
        where = np.searchsorted(self.rows, wanted)
        known = where < len(self.rows)
        known[known] = self.rows[where[known]] == wanted[known]
        if not known.all():
            raise KeyError(f"near-dup holds no shingle set of row {int(wanted[~known][0])}")
        if self._held is not None:
            return {int(r): self._held[int(r)] for r in wanted}
        assert self._file is not None
        self._file.flush()
        fd = self._file.fileno()
        starts = np.concatenate(([0], self.ends[:-1]))
        found: Sets = {}
        for row, i in zip(wanted.tolist(), where.tolist(), strict=True):
            start, end = int(starts[i]), int(self.ends[i])
            data = os.pread(fd, (end - start) * _ITEM, start * _ITEM)
            found[row] = np.frombuffer(data, np.uint32)
        return found

    def close(self) -> None:
        self._held = None
        if self._file is not None:
            self._file.close()

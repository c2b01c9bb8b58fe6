"""What a query over a snapshot keeps in memory, and the exact keys it keeps it under.

Pages read, as Arrow: a snapshot never changes, so every app session on the same page
(and every rerun of one) shares one read; a commit is a new snapshot id, so an edit is
seen at once. 64 pages of 100 rows of ~7 KiB is ~45 MB at most.

Matching positions (int64, a few bytes a hit) of a search or filter, within a byte budget:
paging through results does not search again.

A key holds the conditions themselves, an id set as a digest of its sorted ids: the
hash of a frozenset can be equal for two different sets, and a page kept under one
would then be served for the other. The digest is Arrow's sort, not Python's: at 141k
ids (a near-duplicate filter at 1M rows) that is ~0.15 s against ~0.3 s.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from podium.store.read.kept import Kept

PAGES_KEPT = 64
POSITIONS_BYTES = 64 * 2**20

Key = tuple[Any, ...]

pages: Kept[Key, tuple[pa.Table, int | None]] = Kept(PAGES_KEPT)


def ids_digest(ids: Collection[str]) -> str:
    """One digest per set of ids, whatever their order or repeats: the sorted unique ids'
    lengths and bytes, so no two sets give the same input."""
    unique = pc.unique(pa.array(ids if isinstance(ids, list) else list(ids), pa.string()))
    ordered = unique.take(pc.array_sort_indices(unique))
    ends = np.frombuffer(ordered.buffers()[1], np.int32)[: len(ordered) + 1]
    digest = hashlib.blake2b(digest_size=32)
    digest.update(np.diff(ends).astype("<i8").tobytes())
    data = ordered.buffers()[2]
    if data is not None:
        digest.update(memoryview(data)[ends[0] : ends[-1]])
    return digest.hexdigest()


def conditions_key(
    search: str | None,
    where: str | None,
    filters: Mapping[str, Any] | None,
    ids: Collection[str] | None,
) -> Key:
    """The part of a key that names a query's conditions, exactly."""
    return (
        search,
        where,
        json.dumps(filters, sort_keys=True, default=list),
        None if ids is None else ids_digest(ids),
    )


class Positions:
    """Matching positions by key, the least recently used dropped past `budget` bytes."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._values: OrderedDict[Key, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Key) -> np.ndarray | None:
        with self._lock:
            found = self._values.get(key)
            if found is not None:
                self._values.move_to_end(key)
            return found

    def keep(self, key: Key, found: np.ndarray) -> None:
        with self._lock:
            self._values[key] = found
            while sum(v.nbytes for v in self._values.values()) > self.budget:
                self._values.popitem(last=False)


positions = Positions(POSITIONS_BYTES)

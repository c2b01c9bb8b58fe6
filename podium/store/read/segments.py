"""A snapshot's rows in order, as runs of rows of its data files.

Without deletes a snapshot's rows are its data files one after the other. With position
deletes some rows are gone, and an edited row lives in a small newer file while its old
version is deleted; Podium shows the new version in the old one's place
(`store.write.position_deletes.Replacement`), so a reviewer's page does not reshuffle after an
edit and compaction can write rows back in the same order.

`segments` turns the data files (in write order), their deleted positions and the
replacements into runs `(path, first, count)`: `count` rows of `path` from physical row
`first`, in the order a reader shows them. Pure: no I/O, so it is tested on its own.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from podium.store.write.position_deletes import Replacement

Run = tuple[str, int, int]  # (path, first physical row, rows)


def segments(
    files: Sequence[tuple[str, int]],
    deleted: Mapping[str, Sequence[int]],
    replacements: Sequence[Replacement] = (),
) -> list[Run]:
    """Runs of rows in reading order. `files`: (path, record count) in write order;
    `deleted`: path -> deleted physical positions; `replacements`: rows that take a
    deleted row's place (ignored unless both files are live and the old row deleted)."""
    records = dict(files)
    gone = {path: set(rows) for path, rows in deleted.items() if path in records}
    takes_place: dict[tuple[str, int], tuple[str, int]] = {}
    for r in replacements:
        if (
            r.new_path in records
            and 0 <= r.new_row < records[r.new_path]
            and r.old_pos in gone.get(r.old_path, ())
        ):
            takes_place[(r.old_path, r.old_pos)] = (r.new_path, r.new_row)
    placed: dict[str, set[int]] = defaultdict(set)
    for path, row in takes_place.values():
        placed[path].add(row)

    runs: list[Run] = []
    shown: set[tuple[str, int]] = set()

    def emit(path: str, first: int, count: int) -> None:
        if runs:
            last_path, last_first, last_count = runs[-1]
            if last_path == path and last_first + last_count == first:
                runs[-1] = (path, last_first, last_count + count)
                return
        runs.append((path, first, count))

    def final(row: tuple[str, int]) -> tuple[str, int] | None:
        """The row that now stands for `row`: itself, or what replaced it, in turn."""
        for _ in range(len(takes_place) + 1):
            if row[1] not in gone.get(row[0], ()):
                return row
            nxt = takes_place.get(row)
            if nxt is None:
                return None  # deleted outright
            row = nxt
        return None  # a cycle cannot come from real commits; show nothing rather than loop

    for path, count in files:
        skip = gone.get(path, set()) | placed.get(path, set())
        cursor = 0
        for pos in sorted(p for p in skip if 0 <= p < count):
            if pos > cursor:
                emit(path, cursor, pos - cursor)
            cursor = pos + 1
            if pos in placed.get(path, ()):
                continue  # shown where the row it replaced was
            successor = takes_place.get((path, pos))
            if successor is not None:
                now = final(successor)
                if now is not None and now not in shown:
                    shown.add(now)
                    emit(now[0], now[1], 1)
        if cursor < count:
            emit(path, cursor, count - cursor)
    return runs

"""Ids for imported rows that come without one: a content hash, made unique, in bounded
memory however long the import.

A row without an id gets the first 16 hex digits of the SHA-256 of its messages, stable
across re-imports of the same data; the k-th row of an import with the same messages
gets `HASH-k`. Making that unique needs every id of that shape seen so far, explicit ones
included. A Python set of them grew by about 100 bytes a row (a GB for ten million rows
without ids), so they live in an indexed SQLite file in a private scratch directory,
and each batch reads back only the families (ids sharing a hash) that it touches.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Iterable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from podium.store.private_tmp import private_scratch
from podium.store.write.chat_rows import canonical_json

GENERATED_ID = re.compile(r"[0-9a-f]{16}(-[0-9]+)?")
_FAMILY = 16  # hex digits of the hash: the family an id belongs to
_PER_QUERY = 500  # families per SELECT, under SQLite's bound-parameter limit


def content_id(messages: Any) -> str:
    return hashlib.sha256(canonical_json(messages).encode()).hexdigest()[:_FAMILY]


class GeneratedIds:
    """`fill` each batch in order; `close` removes the scratch file."""

    def __init__(self) -> None:
        self._scratch = private_scratch("import-ids")
        self._db = sqlite3.connect(f"{self._scratch.name}/generated.sqlite")
        # A scratch file dropped at exit: nothing to recover after a crash.
        self._db.execute("PRAGMA journal_mode = OFF")
        self._db.execute("PRAGMA synchronous = OFF")
        # One b-tree keyed by (family, id): a family's ids are one range, and no second index
        # to keep up on every insert.
        self._db.execute(
            "CREATE TABLE ids (family TEXT, id TEXT, PRIMARY KEY (family, id)) WITHOUT ROWID"
        )

    def fill(self, rows: list[dict[str, Any]]) -> None:
        """Give each row without an id (in order) its generated one, and remember every
        generated-shaped id, so that no later row gets one already taken."""
        bases = [content_id(row["messages"]) if row["id"] is None else None for row in rows]
        families = {base for base in bases if base is not None}
        families |= {row["id"][:_FAMILY] for row in rows if _generated_shape(row["id"])}
        seen = self._known(families)
        new: list[str] = []
        for row, base in zip(rows, bases, strict=True):
            if base is None:
                if _generated_shape(row["id"]) and row["id"] not in seen:
                    seen.add(row["id"])
                    new.append(row["id"])
                continue
            candidate, n = base, 1
            while candidate in seen:
                n += 1
                candidate = f"{base}-{n}"
            seen.add(candidate)
            new.append(candidate)
            row["id"] = candidate
        # In key order: half the time of hash order (each b-tree page is touched once).
        self._db.executemany(
            "INSERT OR IGNORE INTO ids VALUES (?, ?)", sorted((i[:_FAMILY], i) for i in new)
        )

    def fill_column(self, ids: pa.Array, messages: pa.Array) -> pa.Array:
        """`fill` for a column of ids (null: to generate) and the rows' messages; a column
        with every id given and none of the generated shape (the usual import) costs
        two vector operations, not a Python object a row."""
        shaped = pc.match_substring_regex(ids, f"^{GENERATED_ID.pattern}$")
        if not ids.null_count and not pc.any(shaped).as_py():
            return ids
        missing = pc.is_null(ids)
        chats = iter(messages.filter(missing).to_pylist())
        rows = [
            {"id": i, "messages": None if i is not None else next(chats)} for i in ids.to_pylist()
        ]
        self.fill(rows)
        return pa.array([row["id"] for row in rows], ids.type)

    def _known(self, families: Iterable[str]) -> set[str]:
        wanted = sorted(families)
        seen: set[str] = set()
        for start in range(0, len(wanted), _PER_QUERY):
            chunk = wanted[start : start + _PER_QUERY]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT id FROM ids WHERE family IN ({marks})"  # only '?' marks go in
            seen.update(i for (i,) in self._db.execute(query, chunk))
        return seen

    def close(self) -> None:
        self._db.close()
        self._scratch.cleanup()


def _generated_shape(row_id: str | None) -> bool:
    return row_id is not None and GENERATED_ID.fullmatch(row_id) is not None

"""Finding duplicate row ids in an import of any size, in bounded memory.

Each batch's ids (with where each came from) are appended to a DuckDB database file in
a private scratch directory, gathered into inserts of about `FLUSH_ROWS` rows (an INSERT
a parsed batch, each committed and synced, cost 2.3 CPU-s of the parsing thread at 1M
rows, against 1.0 CPU-s gathered); when the input is read, one GROUP BY finds the ids
seen more than once. DuckDB runs that aggregate under a memory cap and spills to disk
past it, so a 10 GB file with tens of millions of ids costs a few hundred MB of RAM at
most, never a Python set of every id. The check runs after the last row is parsed and
before the import's commit: refusing then deletes the data files written so far, and
the table is left as it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType

import numpy as np
import pyarrow as pa

from podium.store.private_tmp import private_scratch

MEMORY_LIMIT = "256MB"
# Ids held before one INSERT: a few MB of them at most.
FLUSH_ROWS = 2**18
FLUSH_BYTES = 32 * 2**20


@dataclass(frozen=True)
class Duplicate:
    id: str
    count: int
    first: str  # where it first appears, e.g. "data.jsonl line 3"
    again: str  # where it appears a second time


@dataclass(frozen=True)
class Lines:
    """Where a run of rows came from: line `numbers` of a file, `prefix` naming it
    ("data.jsonl line ")."""

    prefix: str
    numbers: pa.Array


class IdLedger:
    """Ids seen so far, on disk. Use as a context manager (the scratch files go at exit)."""

    def __init__(self, flush_rows: int = FLUSH_ROWS) -> None:
        import duckdb

        self._scratch = private_scratch("import-ids")
        self._con = duckdb.connect(f"{self._scratch.name}/ids.duckdb")
        self._con.execute("SET memory_limit = $1", [MEMORY_LIMIT])
        self._con.execute("SET temp_directory = $1", [f"{self._scratch.name}/spill"])
        self._con.execute("SET preserve_insertion_order = false")
        # `loc` says where a row came from; rows typed a block at a time give their line
        # number instead (`Lines`), and the text is made for the few ids reported.
        self._con.execute("CREATE TABLE ids (id VARCHAR, ord BIGINT, loc VARCHAR, line BIGINT)")
        self._rows = 0
        self._prefix = ""
        self._flush_rows = flush_rows
        self._pending: list[pa.Table] = []
        self._pending_rows = self._pending_bytes = 0

    def add(self, ids: list[str] | pa.Array, locations: list[str] | Lines) -> None:
        n = len(ids)
        if isinstance(locations, Lines):
            self._prefix = locations.prefix
            loc, line = pa.nulls(n, pa.string()), locations.numbers
        else:
            loc, line = pa.array(locations, pa.string()), pa.nulls(n, pa.int64())
        batch = pa.table(
            {
                "id": pa.array(ids, pa.string())
                if isinstance(ids, list)
                else ids.cast(pa.string()),
                "ord": pa.array(np.arange(self._rows, self._rows + n, dtype=np.int64)),
                "loc": loc,
                "line": line.cast(pa.int64()),
            }
        )
        self._rows += n
        self._pending.append(batch)
        self._pending_rows += n
        self._pending_bytes += batch.nbytes
        if self._pending_rows >= self._flush_rows or self._pending_bytes >= FLUSH_BYTES:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        batch = pa.concat_tables(self._pending)
        self._pending, self._pending_rows, self._pending_bytes = [], 0, 0
        self._con.register("batch", batch)
        self._con.execute("INSERT INTO ids SELECT * FROM batch")
        self._con.unregister("batch")

    def duplicates(self, show: int = 3) -> tuple[int, list[Duplicate]]:
        """(rows whose id was seen before, the first `show` duplicated ids in file order)."""
        self._flush()
        # One aggregate over every id; what follows reads only the repeated ones.
        self._con.execute(
            "CREATE TEMP TABLE repeated AS SELECT id, count(*) AS n, min(ord) AS first "
            "FROM ids GROUP BY id HAVING count(*) > 1"
        )
        extra = self._con.execute("SELECT coalesce(sum(n - 1), 0) FROM repeated").fetchone()
        top = self._con.execute(
            "SELECT id, n FROM repeated ORDER BY first LIMIT $n", {"n": show}
        ).fetchall()
        self._con.execute("DROP TABLE repeated")
        places: dict[str, list[str]] = {}
        for dup_id, loc in self._con.execute(
            "SELECT id, coalesce(loc, $prefix || line) FROM ids "
            "WHERE list_contains($ids, id) ORDER BY ord",
            {"ids": [dup_id for dup_id, _ in top], "prefix": self._prefix},
        ).fetchall():
            places.setdefault(dup_id, []).append(loc)
        found = [Duplicate(i, n, places[i][0], places[i][1]) for i, n in top]
        return int(extra[0]) if extra else 0, found

    def close(self) -> None:
        self._con.close()
        self._scratch.cleanup()

    def __enter__(self) -> IdLedger:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

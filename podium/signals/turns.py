"""From batches of stored rows to the turns a signal reads.

Flattening `messages` and choosing roles is Arrow compute, so Python only touches the
text of the turns a signal reads (the same shape validation uses: a mapped table's
columns are found through `podium.validate.turns.Columns`).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.table import Table

from podium.errors import InvalidInput
from podium.store.schema import PROP_MAPPING
from podium.validate.turns import Columns


def columns_of(table: Table) -> Columns:
    """The stored names of a table's id and messages columns (its podium.mapping)."""
    raw = table.properties.get(PROP_MAPPING)
    return Columns.from_mapping(json.loads(raw)) if raw else Columns()


@dataclass(frozen=True)
class Turns:
    """The chosen turns of one batch of rows: `ids[row_of[i]]` holds turn `turn_of[i]`
    (its index in the row's messages), whose text is `texts[i]` ("" when empty)."""

    ids: list[str]
    row_of: npt.NDArray[np.int64]
    turn_of: npt.NDArray[np.int64]
    roles: list[str | None]
    texts: list[str]

    @property
    def rows(self) -> int:
        return len(self.ids)

    def row_texts(self, separator: str = "\n") -> list[str]:
        """One text per row: its chosen turns joined (a row without any: "")."""
        parts: list[list[str]] = [[] for _ in self.ids]
        for row, text in zip(self.row_of.tolist(), self.texts, strict=True):
            parts[row].append(text)
        return [separator.join(p) for p in parts]


def _field(values: pa.Array, name: str) -> pa.Array:
    if name in [f.name for f in values.type]:
        return pc.struct_field(values, name)
    return pa.nulls(len(values), pa.string())


def turns_of(
    batch: pa.RecordBatch, columns: Columns, roles: Collection[str] | None = None
) -> Turns:
    messages = batch.column(columns.messages)
    lengths = pc.fill_null(pc.list_value_length(messages), 0).to_numpy(zero_copy_only=False)
    flat = messages.flatten()
    row_of = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    turn_of = np.arange(len(flat), dtype=np.int64) - np.repeat(
        np.cumsum(lengths) - lengths, lengths
    )
    role = _field(flat, columns.role)
    content = pc.fill_null(_field(flat, columns.content).cast(pa.string()), "")
    if roles:
        keep = pc.fill_null(pc.is_in(role, value_set=pa.array(list(roles), pa.string())), False)
        where = np.flatnonzero(keep.to_numpy(zero_copy_only=False))
        role, content = role.take(where), content.take(where)
        row_of, turn_of = row_of[where], turn_of[where]
    id_column = batch.column(columns.id)
    if id_column.null_count:
        raise InvalidInput(
            f"{id_column.null_count} row(s) of this table have no {columns.id!r}; signals "
            "are stored by row id, so every row needs one (re-import the table, which "
            "gives each row an id)."
        )
    ids = id_column.cast(pa.string()).to_pylist()
    return Turns(
        ids=[str(i) for i in ids],
        row_of=row_of,
        turn_of=turn_of,
        roles=role.to_pylist(),
        texts=content.to_pylist(),
    )

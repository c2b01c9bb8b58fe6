"""The one resume reader: what an output table already holds, so a re-run skips it.

A job that writes its output in batches can be run again after a crash and carry on. It
skips the keys already written, but only into a table that this same job wrote: its
properties (kind, input snapshot, model) must be the ones it would write, otherwise the
table belongs to other work and is refused rather than appended to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow.compute as pc

from podium.errors import InvalidInput
from podium.store.catalog.catalog import load_table, table_exists
from podium.store.read.read import iter_table_batches
from podium.store.read.snapshots import resolve_snapshot


def done_values(out: str, column: str, written_by: Mapping[str, str], job: str) -> set[Any]:
    """The values of `column` already in `out` (none if it does not exist); refuses a
    table whose properties differ from `written_by`, naming `job` as the writer."""
    if not table_exists(out):
        return set()
    table = load_table(out)
    if any(table.properties.get(key) != value for key, value in written_by.items()):
        raise InvalidInput(
            f"Table {out} already exists and was not written by this {job}; "
            "choose another output table name."
        )
    done: set[Any] = set()
    for batch in iter_table_batches(table, resolve_snapshot(table, None), columns=[column]):
        done.update(pc.unique(batch.column(column)).to_pylist())
    return done

"""One Iceberg commit that adds data files and position-delete files and removes files.

Iceberg's "row delta" (Java's `RowDelta`, Spark's merge-on-read `UPDATE`/`DELETE`):
pyiceberg 0.12 has no writer for it, so Podium has the smallest producer that makes one
(`iceberg_internals.RowDeltaProducer`, on pyiceberg's private snapshot producer: manifest
lists, summaries, the catalog commit and its requirements), and this module commits with
it. It writes:

- one data manifest with the added data files, one delete manifest with the added
  position-delete files (content `deletes`, as the spec asks);
- the parent's manifests as they were, except those holding a removed file, which are
  rewritten with that file's entry marked DELETED (compaction removes data and delete
  files alike; pyiceberg's own overwrite only looks at data manifests).

Conflicts are Podium's to judge (`review.changes.check_unchanged` reads the snapshots in
between). When the branch moved since the change was planned, pyiceberg's commit retry
rebases it only if every snapshot in between touched other rows (summary `podium.rows`)
and removed no file; otherwise the commit fails with `ValidationException` instead of
pyiceberg's silent rebase, and the caller re-plans.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from pyiceberg.manifest import DataFile
from pyiceberg.table.refs import MAIN_BRANCH
from pyiceberg.table.snapshots import (
    DELETED_DATA_FILES,
    REMOVED_DELETE_FILES,
    Operation,
    Snapshot,
)

from podium.errors import InvalidInput
from podium.store.catalog.iceberg_internals import RowDeltaProducer
from podium.store.read.plan import manifest_entries

if TYPE_CHECKING:
    from pyiceberg.table import Table
    from pyiceberg.table.metadata import TableMetadata
    from pyiceberg.table.update.snapshot import CommitWindow


ROWS_PROPERTY = "podium.rows"  # a snapshot summary's JSON list of the row ids it touched
_REMOVALS = (DELETED_DATA_FILES, REMOVED_DELETE_FILES)


def may_rebase(
    properties: Mapping[str, str], window: CommitWindow, metadata: TableMetadata
) -> bool:
    """Whether a change that only adds files, with summary `properties`, may land on the
    branch's new head as it is: it names the rows it touches, and every snapshot since it
    was planned removed no file (its position deletes still point at live rows) and
    touched none of those rows. Two writers editing different rows then both land at the
    catalog's pace, instead of one re-planning (reading and writing again) each time the
    other lands. `metadata` is the table as the retry refreshed it."""
    raw = properties.get(ROWS_PROPERTY)
    if raw is None or window.head is None:
        return False
    mine = set(json.loads(raw))
    base = window.base.snapshot_id if window.base is not None else None
    snap: Snapshot | None = window.head
    while snap is not None and snap.snapshot_id != base:
        props = dict(snap.summary.additional_properties) if snap.summary else {}
        if any(int(props.get(key, "0")) for key in _REMOVALS):
            return False
        theirs = props.get(ROWS_PROPERTY)
        if theirs is None:
            if snap.summary is None or snap.summary.operation != Operation.APPEND:
                return False  # another engine's change: which rows it touched is unknown
        elif mine & set(json.loads(theirs)):
            return False
        parent = snap.parent_snapshot_id
        snap = metadata.snapshot_by_id(parent) if parent is not None else None
    return base is None or snap is not None


def check_row_changes_supported(table: Table) -> None:
    """Refuse, before anything is written, a table whose rows a row delta cannot change:
    a v1 table (no delete files) or a partitioned one (its delete files and new rows
    would need a partition each; this writer makes unpartitioned files only)."""
    name = ".".join(table.name())
    if table.metadata.format_version < 2:
        raise InvalidInput(
            f"{name} is an Iceberg v1 table, which has no delete files, so its rows cannot "
            "be edited or removed; upgrade it to format version 2 first. Nothing was written."
        )
    partitioned = [spec for spec in table.metadata.partition_specs if spec.fields]
    if partitioned:
        by = ", ".join(f.name for spec in partitioned for f in spec.fields)
        raise InvalidInput(
            f"{name} is partitioned (by {by}); Podium edits and removes rows only in "
            "unpartitioned tables. Nothing was written. Change it with an engine that "
            "writes partitioned deletes (Spark's UPDATE/DELETE), or export it and import "
            "the file as a new table (`podium export`, then `podium import`) to review it here."
        )


def commit_row_delta(
    table: Table,
    *,
    add: Iterable[DataFile] = (),
    remove: Iterable[DataFile] = (),
    properties: Mapping[str, str],
    branch: str = MAIN_BRANCH,
    operation: Operation = Operation.OVERWRITE,
) -> None:
    """Commit `add` (data and position-delete files) and `remove` (files of the branch
    head) as one snapshot on `branch` with summary `properties`. Raises
    `CommitFailedException`/`ValidationException` when the branch moved meanwhile."""
    if table.metadata.format_version < 2:
        raise ValueError(
            f"{'.'.join(table.name())} is an Iceberg v1 table, which has no delete files; "
            "upgrade it to format version 2 first."
        )
    txn = table.transaction()
    rebase = functools.partial(may_rebase, properties)
    producer = RowDeltaProducer(operation, txn, branch, properties, rebase, manifest_entries)
    for data_file in add:
        producer.append_data_file(data_file)
    for data_file in remove:
        producer.delete_data_file(data_file)
    producer.commit()
    txn.commit_transaction()


def live_files(table: Table, snapshot_id: int | None) -> list[tuple[DataFile, int]]:
    """Every live data and delete file of a snapshot, with its data sequence number."""
    snap = table.snapshot_by_id(snapshot_id) if snapshot_id is not None else None
    if snap is None:
        return []
    out: list[tuple[DataFile, int]] = []
    for manifest in snap.manifests(table.io):
        for entry in manifest_entries(table.io, manifest):
            out.append((entry.data_file, entry.sequence_number or 0))
    return out

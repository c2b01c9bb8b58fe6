"""One Iceberg commit that adds data files and position-delete files and removes files.

Iceberg's "row delta" (Java's `RowDelta`, Spark's merge-on-read `UPDATE`/`DELETE`):
pyiceberg 0.12 has no writer for it, so this module is the smallest producer that makes
one. It builds on pyiceberg's `_SnapshotProducer` (manifest lists, summaries, the
catalog commit and its requirements) and writes:

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

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from pyiceberg.exceptions import ValidationException
from pyiceberg.manifest import (
    DataFile,
    DataFileContent,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    ManifestWriterV2,
)
from pyiceberg.table.refs import MAIN_BRANCH
from pyiceberg.table.snapshots import (
    DELETED_DATA_FILES,
    REMOVED_DELETE_FILES,
    Operation,
    Snapshot,
    Summary,
)
from pyiceberg.table.update.snapshot import CommitWindow, _SnapshotProducer
from pyiceberg.typedef import EMPTY_DICT

from podium.errors import InvalidInput
from podium.store.plan import manifest_entries

if TYPE_CHECKING:
    from pyiceberg.table import Table, Transaction


ROWS_PROPERTY = "podium.rows"  # a snapshot summary's JSON list of the row ids it touched
_REMOVALS = (DELETED_DATA_FILES, REMOVED_DELETE_FILES)


class _DeleteManifestWriter(ManifestWriterV2):
    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


class _RowDelta(_SnapshotProducer["_RowDelta"]):
    def __init__(
        self,
        operation: Operation,
        transaction: Transaction,
        branch: str,
        snapshot_properties: Mapping[str, str],
    ) -> None:
        # pyiceberg 0.12 computes a summary's totals only for append, overwrite and
        # delete; a replace (compaction) totals like an overwrite, then is named as such.
        self._named_operation = operation
        super().__init__(
            Operation.OVERWRITE if operation == Operation.REPLACE else operation,
            transaction,
            transaction._table.io,
            snapshot_properties=dict(snapshot_properties),
            branch=branch,
        )

    def _summary(self, snapshot_properties: dict[str, str] = EMPTY_DICT) -> Summary:
        summary = super()._summary(snapshot_properties)
        if summary.operation == self._named_operation:
            return summary
        return Summary(self._named_operation, **summary.additional_properties)

    def _validate_concurrency(self) -> None:
        window = self._commit_window
        if window is not None and not window.is_empty() and not self._may_rebase(window):
            raise ValidationException(
                "the branch moved while this change was being written; re-plan on its new head"
            )

    def _may_rebase(self, window: CommitWindow) -> bool:
        """Whether this change may land on the branch's new head as it is: it only adds
        files, names the rows it touches, and every snapshot since it was planned removed
        no file (its position deletes still point at live rows) and touched none of those
        rows. Two writers editing different rows then both land at the catalog's pace,
        instead of one re-planning (reading and writing again) each time the other lands."""
        raw = self.snapshot_properties.get(ROWS_PROPERTY)
        if self._deleted_data_files or raw is None or window.head is None:
            return False
        mine = set(json.loads(raw))
        metadata = self._transaction._table.metadata
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

    def _deleted_entries(self) -> list[ManifestEntry]:
        return []  # `_manifests` below writes removals into the rewritten manifests

    def _existing_manifests(self) -> list[ManifestFile]:
        return []

    def _writer(self, content: ManifestContent, spec_id: int) -> ManifestWriterV2:
        cls = _DeleteManifestWriter if content == ManifestContent.DELETES else ManifestWriterV2
        return cls(
            self.spec(spec_id),
            self.schema(),
            self.new_manifest_output(),
            self._snapshot_id,
            self._compression,
        )

    def _manifests(self) -> list[ManifestFile]:
        spec_id = self._transaction.table_metadata.default_spec_id
        out: list[ManifestFile] = []
        for content, kinds in (
            (ManifestContent.DATA, {DataFileContent.DATA}),
            (
                ManifestContent.DELETES,
                {DataFileContent.POSITION_DELETES, DataFileContent.EQUALITY_DELETES},
            ),
        ):
            added = [f for f in self._added_data_files if f.content in kinds]
            if added:
                with self._writer(content, spec_id) as writer:
                    for data_file in added:
                        writer.add(
                            ManifestEntry.from_args(
                                status=ManifestEntryStatus.ADDED,
                                snapshot_id=self._snapshot_id,
                                sequence_number=None,
                                file_sequence_number=None,
                                data_file=data_file,
                            )
                        )
                out.append(writer.to_manifest_file())
        removed = {f.file_path for f in self._deleted_data_files}
        parent = (
            self._transaction.table_metadata.snapshot_by_id(self._parent_snapshot_id)
            if self._parent_snapshot_id is not None
            else None
        )
        found: set[str] = set()
        for manifest in parent.manifests(self._io) if parent else []:
            if not (manifest.has_added_files() or manifest.has_existing_files()):
                continue  # only DELETED entries: nothing live to carry on
            if not removed:
                out.append(manifest)
                continue
            entries = manifest_entries(self._io, manifest)
            hits = [e for e in entries if e.data_file.file_path in removed]
            if not hits:
                out.append(manifest)
                continue
            kept = [e for e in entries if e.data_file.file_path not in removed]
            with self._writer(manifest.content, manifest.partition_spec_id) as writer:
                for entry in hits:
                    found.add(entry.data_file.file_path)
                    writer.delete(entry)
                for entry in kept:
                    writer.existing(entry)
            out.append(writer.to_manifest_file())
        if removed - found:
            raise ValidationException(
                f"{len(removed - found)} file(s) to remove are no longer in the table "
                "(another writer removed them); re-plan on the new head"
            )
        return out


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
    producer = _RowDelta(operation, txn, branch, properties)
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

"""Every use of pyiceberg's private API in Podium, behind Podium's own names.

pyiceberg 0.12 has no public way to do a few things Podium needs: write Parquet data
files for a transaction with the table's own writer settings and schema projection, commit
a row delta (data and position-delete files added, files removed, in one snapshot), and
load and commit a table through a catalog that is not one of its own. Those reach into
names that start with `_`, which a pyiceberg release may rename or reshape without notice.
They all live here, and `tests/store/test_iceberg_internals.py` checks each against the
installed pyiceberg (so an upgrade that changes one fails there, by name) and scans the
product's source so no other module reads a private pyiceberg name.

What is private, and what it is used for:

- `Transaction._table` (the table a transaction was opened on): its `FileIO`, and in the
  row delta its metadata as last loaded (a retry refreshes it).
- `pyiceberg.io.pyarrow._get_parquet_writer_kwargs`, `_check_pyarrow_schema_compatible`,
  `_to_requested_schema`: the Parquet writer options of a table, the check that a batch
  fits its schema, and a batch projected to the file schema with field ids
  (`file_writer.FileWriter`).
- `MetastoreCatalog._load_file_io`, `_update_and_stage_table`, `_write_metadata`: the
  steps of `SqlCatalog.commit_table` (`sqlite_catalog.LeanSqliteCatalog`); the first
  also for a table built around kept metadata (`kept_load`).
- `_SnapshotProducer` and its state (`_added_data_files`, `_deleted_data_files`,
  `_snapshot_id`, `_parent_snapshot_id`, `_compression`, `_io`, `_transaction`,
  `_commit_window`) and hooks (`_summary`, `_validate_concurrency`, `_manifests`,
  `_deleted_entries`, `_existing_manifests`), and `ManifestWriter._meta`: the row-delta
  producer (`row_delta.commit_row_delta`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pyiceberg.catalog import Catalog, MetastoreCatalog
from pyiceberg.exceptions import ValidationException
from pyiceberg.manifest import (
    DataFileContent,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    ManifestWriterV2,
)
from pyiceberg.table.snapshots import Operation, Summary
from pyiceberg.table.update.snapshot import CommitWindow, _SnapshotProducer
from pyiceberg.typedef import EMPTY_DICT

# pyiceberg's pyarrow IO (pyarrow.dataset) is imported in the functions that use it: the
# lean SQLite catalog subclasses `StagingCatalog` and must not load it for a one-row
# command (podium/store/catalog/lean_imports.py). This module imports nothing of Podium's.

if TYPE_CHECKING:
    import pyarrow as pa
    from pyiceberg.io import FileIO
    from pyiceberg.schema import Schema
    from pyiceberg.table import StagedTable, Table, Transaction
    from pyiceberg.table.metadata import TableMetadata
    from pyiceberg.table.update import TableRequirement, TableUpdate
    from pyiceberg.typedef import Identifier, Properties, TableVersion


# --- transactions -------------------------------------------------------------------


def transaction_io(txn: Transaction) -> FileIO:
    """The `FileIO` of the table `txn` was opened on (pyiceberg keeps it private)."""
    return txn._table.io


# --- Parquet data files ---------------------------------------------------------------


def catalog_file_io(catalog: Catalog, properties: Properties, location: str) -> FileIO:
    """The `FileIO` `catalog`'s own `load_table` gives a table with these properties at
    metadata `location`."""
    return catalog._load_file_io(properties, location)


def parquet_writer_kwargs(properties: Properties) -> dict[str, Any]:
    """`pq.ParquetWriter` options from a table's `write.parquet.*` properties, as
    pyiceberg's own writer uses them."""
    from pyiceberg.io.pyarrow import _get_parquet_writer_kwargs

    return _get_parquet_writer_kwargs(properties)


def check_arrow_schema_compatible(
    requested: Schema, provided: pa.Schema, *, format_version: TableVersion
) -> None:
    """Raise `ValueError` naming the columns when Arrow `provided` does not fit the
    table schema `requested` (pyiceberg's own append check)."""
    from pyiceberg.io.pyarrow import _check_pyarrow_schema_compatible

    _check_pyarrow_schema_compatible(requested, provided, format_version=format_version)


def to_file_schema(
    batch: pa.RecordBatch, *, table_schema: Schema, batch_schema: Schema
) -> pa.RecordBatch:
    """`batch` (whose Iceberg schema is `batch_schema`) projected to `table_schema`,
    with Parquet field ids, as pyiceberg's writer projects it."""
    from pyiceberg.io.pyarrow import ParquetFormatModel, _to_requested_schema

    return _to_requested_schema(
        requested_schema=table_schema,
        file_schema=batch_schema,
        batch=batch,
        include_field_ids=True,
        format_model=ParquetFormatModel(),
    )


# --- catalogs -----------------------------------------------------------------------


class StagingCatalog(MetastoreCatalog):
    """A `MetastoreCatalog` whose commit steps (`SqlCatalog.commit_table`'s) are public:
    a catalog that stores the metadata pointer its own way subclasses this."""

    def file_io_for(self, properties: Properties, location: str | None) -> FileIO:
        """The `FileIO` a table with these properties at `location` reads through."""
        return self._load_file_io(properties, location)

    def stage_update(
        self,
        current: Table | None,
        identifier: Identifier,
        requirements: tuple[TableRequirement, ...],
        updates: tuple[TableUpdate, ...],
    ) -> StagedTable:
        """Check `requirements` against `current`, apply `updates`: the new metadata and
        the location of its file (not written yet)."""
        return self._update_and_stage_table(current, identifier, requirements, updates)

    def write_metadata_file(self, metadata: TableMetadata, io: FileIO, metadata_path: str) -> None:
        """Write `metadata` as the table metadata file at `metadata_path`."""
        self._write_metadata(metadata=metadata, io=io, metadata_path=metadata_path)


# --- the row delta --------------------------------------------------------------------

# Whether a row delta that adds files only may land on the branch's new head as it is:
# (the commit window of a retry, the table metadata it was refreshed to) -> yes or no.
RebasePolicy = Callable[[CommitWindow, "TableMetadata"], bool]
# The live entries of a committed manifest (Podium's planner caches them).
ManifestReader = Callable[["FileIO", ManifestFile], list[ManifestEntry]]


class _DeleteManifestWriter(ManifestWriterV2):
    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


class RowDeltaProducer(_SnapshotProducer["RowDeltaProducer"]):
    """One snapshot that adds data and position-delete files and removes files.

    Writes one data manifest with the added data files, one delete manifest with the
    added delete files (content `deletes`, as the spec asks), and the parent's manifests
    as they were, except those holding a removed file, rewritten with that file's entry
    marked DELETED. On pyiceberg's commit retry (the branch moved), a change that removes
    files never rebases; one that only adds rebases when `may_rebase` says so, else the
    commit fails with `ValidationException`."""

    def __init__(
        self,
        operation: Operation,
        transaction: Transaction,
        branch: str,
        snapshot_properties: Mapping[str, str],
        may_rebase: RebasePolicy,
        read_entries: ManifestReader,
    ) -> None:
        # pyiceberg 0.12 computes a summary's totals only for append, overwrite and
        # delete; a replace (compaction) totals like an overwrite, then is named as such.
        self._named_operation = operation
        self._may_rebase = may_rebase
        self._read_entries = read_entries
        super().__init__(
            Operation.OVERWRITE if operation == Operation.REPLACE else operation,
            transaction,
            transaction_io(transaction),
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
        if window is None or window.is_empty():
            return
        if self._deleted_data_files or not self._may_rebase(
            window, self._transaction._table.metadata
        ):
            raise ValidationException(
                "the branch moved while this change was being written; re-plan on its new head"
            )

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
            entries = self._read_entries(self._io, manifest)
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

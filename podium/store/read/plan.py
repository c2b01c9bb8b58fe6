"""File plans: which data files make up a snapshot, in write order, and where each row is.

A plan is the small map every read starts from. It lists the snapshot's data files
oldest commit first (pyiceberg plans the newest manifest first, but a person paging a
table expects appended rows after the rows they were appended to), each with its record
count and the position of its first row in the snapshot. A page at offset N is then
found from the counts and the file's Parquet row-group sizes, and only those row groups
are read. Plans are cached: a snapshot never changes, and a plan is a few bytes a file.
Direct plans are also kept on disk (`podium.store.read.plan_cache`), so a later process can
read a known snapshot without importing pyiceberg; that is why pyiceberg is imported
only inside the functions that plan.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from podium.config import get_settings
from podium.store.read import footer_cache, plan_cache, s3_get
from podium.store.read.file_plan import FilePlan, PlannedFile, local_path
from podium.store.read.kept import Kept, forget_all
from podium.store.read.object_store import is_s3, s3_filesystem, s3_key

if TYPE_CHECKING:
    from pyiceberg.io import FileIO
    from pyiceberg.manifest import ManifestEntry, ManifestFile
    from pyiceberg.table import Table

_PLANS_KEPT = 64
_FOOTERS_KEPT = 512
_MANIFESTS_KEPT = 4096


def open_parquet(table: Table | None, path: str, *, few_groups: bool = False) -> pq.ParquetFile:
    """One data file, opened straight from disk when it is local, on S3 without pyiceberg
    (`_open_s3`), else through the table's FileIO. On S3 the column chunks a read needs
    are pre-buffered (pyarrow's default, stated): requested together, ranges closer than
    pyarrow's hole limit (8 KiB) merged into one GET. A few columns of a whole file (a
    filter's) are read by `store.read.s3_columns` instead, which merges across larger
    holes. `few_groups`: the caller reads one row group or a few (a page)."""
    local = local_path(path)
    if local is not None:
        return pq.ParquetFile(local)
    if is_s3(path):
        return _open_s3(path, few_groups)
    if table is None:
        raise ValueError(f"{path} is not on this machine: reading it needs the table's FileIO.")
    return pq.ParquetFile(table.io.new_input(path).open())


def _open_s3(path: str, few_groups: bool) -> pq.ParquetFile:
    """An S3 data file. With its footer kept (`footer_cache`) and a plain endpoint, a page
    reads each row group in one signed ranged GET on this thread (`s3_get`: no AWS SDK
    start, no HEAD, no footer GETs). Anything else goes through pyarrow's filesystem,
    whose GETs of a scan run side by side, given the kept footer when there is one; a
    footer read from the file is kept for the next process."""
    footer = footer_cache.load(path)
    end = s3_get.endpoint(get_settings().catalog_properties) if footer and few_groups else None
    if footer is not None and end is not None:
        spans = row_group_spans(footer.metadata)
        source = pa.PythonFile(s3_get.RangedObject(end, path, footer.size, spans), mode="r")
        return pq.ParquetFile(source, metadata=footer.metadata, pre_buffer=False)
    opened = s3_filesystem().open_input_file(s3_key(path))  # a HEAD: the file's size
    if footer is not None and footer.size == opened.size():
        return pq.ParquetFile(opened, metadata=footer.metadata, pre_buffer=True)
    parquet = pq.ParquetFile(opened, pre_buffer=True)
    footer_cache.keep(path, opened.size(), parquet.metadata)
    return parquet


_log = logging.getLogger(__name__)

# Keyed by metadata location too: a hit then means the on-disk cache already has this
# plan under that metadata file, so later processes find it there as well.
_plans: Kept[tuple[str, str, int | None, str], FilePlan] = Kept(_PLANS_KEPT)
_footers: Kept[str, tuple[int, ...]] = Kept(_FOOTERS_KEPT)
_manifests: Kept[str, list[ManifestEntry]] = Kept(_MANIFESTS_KEPT)


def manifest_entries(io: FileIO, manifest: ManifestFile) -> list[ManifestEntry]:
    """The live entries of a committed manifest (cached: a manifest file never changes,
    and a write reads its parent's manifests, plans the new snapshot, and finds rows,
    which would read each of them three times)."""
    return _manifests.get(
        manifest.manifest_path, lambda: manifest.fetch_manifest_entry(io, discard_deleted=True)
    )


def plan_snapshot(table: Table, snapshot_id: int | None) -> FilePlan:
    """The (cached) plan of `table` at `snapshot_id`; None means a table with no rows."""
    name = ".".join(table.name())
    key = (get_settings().catalog_uri, name, snapshot_id, table.metadata_location)

    def make() -> FilePlan:
        plan = _make_plan(table, name, snapshot_id)
        _remember_on_disk(table, plan)
        return plan

    return _plans.get(key, make)


def warm_after_commit(table: Table) -> Table:
    """Plan `table`'s new current snapshot now, so the first read after a write (a
    `podium show` in a new process, the app's next page) finds its plan on disk instead
    of importing pyiceberg and reading manifests. The writer has the table loaded and
    its manifests were just written, so this costs it little. Best effort: the commit
    has happened, and a plan that cannot be made here is made by the first read."""
    current = table.current_snapshot()
    try:
        plan_snapshot(table, current.snapshot_id if current else None)
    except Exception:  # noqa: BLE001 - never fail a write that has committed
        _log.debug("could not plan %s after its commit", table.name(), exc_info=True)
    return table


def _remember_on_disk(table: Table, plan: FilePlan) -> None:
    """Keep the plan for later processes, under the metadata file it was made from."""
    from podium.store.schema import PROP_MAPPING

    current = table.current_snapshot()
    head = plan_cache.TableHead(
        table=plan.table,
        metadata_location=table.metadata_location,
        current_snapshot_id=current.snapshot_id if current else None,
        snapshot_ids=frozenset(s.snapshot_id for s in table.snapshots()),
        mapping=table.properties.get(PROP_MAPPING),
    )
    plan_cache.remember(head, plan)


def _snapshot_schema(table: Table, snapshot_id: int | None) -> pa.Schema:
    from pyiceberg.io.pyarrow import schema_to_pyarrow

    snapshot = table.snapshot_by_id(snapshot_id) if snapshot_id is not None else None
    schemas = table.schemas()
    schema = table.schema()
    if snapshot is not None and snapshot.schema_id is not None and snapshot.schema_id in schemas:
        schema = schemas[snapshot.schema_id]
    return schema_to_pyarrow(schema, include_field_ids=False)


def _names_stable(table: Table) -> bool:
    """No field was ever renamed: every schema calls each field id by one name."""
    from pyiceberg.schema import index_name_by_id

    names: dict[int, str] = {}
    for schema in table.schemas().values():
        for field_id, path in index_name_by_id(schema).items():
            if names.setdefault(field_id, path) != path:
                return False
    return True


def _make_plan(table: Table, name: str, snapshot_id: int | None) -> FilePlan:
    from pyiceberg.manifest import DataFileContent, FileFormat, ManifestContent

    from podium.store.read.segments import segments
    from podium.store.write.position_deletes import read_delete_file

    schema = _snapshot_schema(table, snapshot_id)
    snapshot = table.snapshot_by_id(snapshot_id) if snapshot_id is not None else None
    if snapshot is None:
        return FilePlan(name, snapshot_id, (), schema, simple=True)
    io = table.io
    manifests = sorted(
        enumerate(snapshot.manifests(io)), key=lambda it: (it[1].sequence_number or 0, -it[0])
    )
    found: list[tuple[int, int, int, str, int]] = []
    delete_files: list[tuple[int, str]] = []
    simple = _names_stable(table)
    for order, (_, manifest) in enumerate(manifests):
        for pos, entry in enumerate(manifest_entries(io, manifest)):
            data_file = entry.data_file
            if manifest.content == ManifestContent.DELETES or (
                data_file.content != DataFileContent.DATA
            ):
                if (
                    data_file.content == DataFileContent.POSITION_DELETES
                    and data_file.file_format == FileFormat.PARQUET
                ):
                    delete_files.append((entry.sequence_number or 0, data_file.file_path))
                else:
                    simple = False  # equality deletes or deletion vectors: pyiceberg applies them
                continue
            if data_file.file_format != FileFormat.PARQUET:
                simple = False
            found.append(
                (
                    entry.sequence_number or 0,
                    order,
                    pos,
                    data_file.file_path,
                    data_file.record_count,
                )
            )
    ordered = sorted(found)
    deleted: dict[str, list[int]] = {}
    replacements = []
    if delete_files:
        # A delete applies to data files written at its sequence number or before (spec).
        sequence = {path: seq for seq, *_, path, _ in ordered}
        for seq, path in delete_files:
            content = read_delete_file(open_parquet(table, path))
            for data_path, rows in content.positions.items():
                if data_path in sequence and sequence[data_path] <= seq:
                    deleted.setdefault(data_path, []).extend(rows)
            replacements.extend(content.replacements)
    counts = {path: records for *_, path, records in ordered}
    runs = segments(list(counts.items()), deleted, replacements)
    files: list[PlannedFile] = []
    start = 0
    for path, first, records in runs:
        files.append(PlannedFile(path, records, start, first, counts[path]))
        start += records
    return FilePlan(name, snapshot_id, tuple(files), schema, simple)


def row_group_sizes(
    table: Table | None, path: str, opened: pq.ParquetFile | None = None
) -> tuple[int, ...]:
    """Rows per Parquet row group of one data file, from its footer (cached); `opened`
    spares a second read of the footer when the caller has the file open already."""

    def make() -> tuple[int, ...]:
        meta = (opened or open_parquet(table, path)).metadata
        return tuple(meta.row_group(i).num_rows for i in range(meta.num_row_groups))

    return _footers.get(path, make)


def row_group_spans(meta: pq.FileMetaData) -> list[tuple[int, int]]:
    """The bytes [start, stop) each row group's column chunks take in its file: a read
    of one group's columns is one ranged GET of its span (`s3_get.RangedObject`)."""
    spans = []
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        chunks = [group.column(c) for c in range(group.num_columns)]
        starts = [
            c.dictionary_page_offset if c.has_dictionary_page else c.data_page_offset
            for c in chunks
        ]
        stops = [start + c.total_compressed_size for start, c in zip(starts, chunks, strict=True)]
        if starts:
            spans.append((min(starts), max(stops)))
    return spans


def clear_plans() -> None:
    """Forget what this process keeps in memory: plans, footers, manifests, and pages and
    annotations read with them (benchmarks use this to measure cold)."""
    forget_all()

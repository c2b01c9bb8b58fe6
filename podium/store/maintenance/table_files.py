"""The files of a table: what lies under its location, and what its metadata names.

Orphan removal (`store.maintenance.orphans`), the warehouse sweep and the footprint a
maintenance run reports all list files with `walk_files` and compare them, by
`normal_path`, with `referenced_files`: every file a live snapshot, a kept metadata
file or a statistics entry (table or partition statistics) of the metadata names.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from podium.store.read.plan import manifest_entries

if TYPE_CHECKING:
    from pyarrow.fs import FileSystem
    from pyiceberg.table import Table

STAGED_DIR = "staged-"  # store.write.staged: shards a resumable job has not committed yet
# JSON list of files kept beside a table that its metadata does not name (a signal's
# vector index): referenced like its data files, so no sweep deletes them.
PROP_SIDE_FILES = "podium.side_files"


def walk_files(table: Table) -> Iterator[tuple[str, int, float]]:
    """(path as the table names it, size, modified time) of every file under its location."""
    from pyarrow.fs import FileSelector, FileType

    fs, root, prefix = _filesystem(table)
    try:
        infos = fs.get_file_info(FileSelector(root, recursive=True))
    except FileNotFoundError:
        return
    for info in infos:
        if info.type == FileType.File:
            mtime = info.mtime.timestamp() if info.mtime is not None else 0.0
            yield prefix + info.path, int(info.size or 0), mtime


def _filesystem(table: Table) -> tuple[FileSystem, str, str]:
    """The table's file system (its FileIO's, credentials included), the location as that
    file system names it, and the prefix that turns such a name back into a table path."""
    return location_filesystem(table.metadata.location, table.io)


def location_filesystem(location: str, io: Any) -> tuple[FileSystem, str, str]:
    """`_filesystem` for any location (a table's, the warehouse's) and FileIO."""
    location = location.rstrip("/")
    parsed = urlparse(location)
    if hasattr(io, "fs_by_scheme"):
        fs = io.fs_by_scheme(parsed.scheme or "file", parsed.netloc)
    else:  # another FileIO: pyarrow's own resolution (no credentials beyond the environment)
        from pyarrow.fs import FileSystem

        fs, _ = FileSystem.from_uri(location)
    if parsed.scheme in ("", "file"):
        return fs, parsed.path, ("file://" if parsed.scheme == "file" else "")
    return fs, f"{parsed.netloc}{parsed.path}", f"{parsed.scheme}://"


def referenced_files(table: Table) -> set[str]:
    """Every file a live snapshot, a kept metadata file or a statistics entry needs."""
    io = table.io
    out = {table.metadata_location}
    out.update(entry.metadata_file for entry in table.metadata.metadata_log)
    out.update(s.statistics_path for s in table.metadata.statistics)
    out.update(s.statistics_path for s in table.metadata.partition_statistics)
    out.update(json.loads(table.properties.get(PROP_SIDE_FILES) or "[]"))
    for snapshot in table.snapshots():
        out.add(snapshot.manifest_list)
        for manifest in snapshot.manifests(io):
            out.add(manifest.manifest_path)
            # A file a live snapshot marks DELETED (compaction's inputs) is needed by none.
            for entry in manifest_entries(io, manifest):
                out.add(entry.data_file.file_path)
    return out


def normal_path(path: str) -> str:
    """A path compared without its scheme: the catalog may name a local file either way."""
    parsed = urlparse(path)
    return parsed.path if parsed.scheme in ("", "file") else f"{parsed.netloc}{parsed.path}"

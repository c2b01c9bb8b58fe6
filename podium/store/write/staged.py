"""Data files written by many workers, committed to a table once by the driver.

    staging = stage("gen.out", SAMPLES_SCHEMA, key="3f2a...")   # driver: where and how
    path = write_staged(staging, "shard-00007", rows)          # any worker, any node
    done = staged_files(staging)                                # driver: what survived
    commit_staged(staging, list(done.values()), properties=...) # one snapshot

A worker writes each of its results as one Parquet file with the table's field ids,
directly into the table's data directory, under a folder named by `key` (a digest of
what the job computes), and nothing else; readers never see these files until the
driver commits them, in one Iceberg snapshot (creating the table in that same commit
if it is new). A file is written whole to a temporary name and then renamed (or, on
an object store, PUT in one request), so a listed file is complete: a job that dies
keeps its finished files, and the next attempt with the same key writes only the rest.

Ray Data's `write_iceberg` was weighed and not used: it needs the table to exist
before the write (a separate, visible commit of an empty table), discards every file
of a failed write (no resume per shard), and cannot set the lineage properties in the
data's own commit.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.io import FileIO, load_file_io
from pyiceberg.io.pyarrow import parquet_file_to_data_file, schema_to_pyarrow
from pyiceberg.table import Table

from podium.config import get_settings
from podium.errors import InvalidInput
from podium.store.catalog.catalog import (
    check_unique_name,
    ensure_namespace,
    load_or_none,
    open_catalog,
    parse_name,
)
from podium.store.catalog.commit_outcome import TOKEN, commit_checked, new_token
from podium.store.catalog.iceberg_internals import transaction_io
from podium.store.read.plan import warm_after_commit

SUFFIX = ".parquet"
STAGED = "podium.staged"  # snapshot summary: the staging folder a commit took files from
STAGED_FILES = "podium.staged-files"  # ... and the names of those files (JSON list)


@dataclass(frozen=True)
class Staging:
    """Where workers put files for one table and how to write them (picklable)."""

    table: str
    directory: str  # URL or path inside the table's location
    arrow_schema: pa.Schema  # the table's columns, with Iceberg field ids
    properties: dict[str, str]  # FileIO properties (object store endpoint, keys)


def staging_key(*parts: Any) -> str:
    """The staging folder's key for one computation (output, input snapshot, settings):
    the same parts, the same folder, so a job run again finds what its last try staged."""
    what = json.dumps(list(parts), sort_keys=True, default=str)
    return hashlib.sha256(what.encode()).hexdigest()[:16]


def stage(name: str, schema: pa.Schema, key: str) -> Staging:
    """The staging folder of `key` for table `name` (created at commit if it is new)."""
    catalog = open_catalog()
    ident = parse_name(name)
    if catalog.table_exists(ident):
        meta = catalog.load_table(ident).metadata
    else:  # only staged, never committed: it shows the new table's location and field ids
        check_unique_name(ident, catalog)  # demo.Chat beside demo.chat
        ensure_namespace(ident[0], catalog)
        meta = catalog.create_table_transaction(ident, schema=schema).table_metadata
    return Staging(
        table=".".join(ident),
        directory=f"{meta.location.rstrip('/')}/data/staged-{key}",
        arrow_schema=schema_to_pyarrow(meta.schema(), include_field_ids=True),
        properties=dict(get_settings().catalog_properties),
    )


def _io(staging: Staging) -> FileIO:
    return load_file_io(staging.properties, staging.directory)


def _local(url: str) -> str | None:
    parsed = urlparse(url)
    return parsed.path if parsed.scheme in ("", "file") else None


def write_staged(staging: Staging, name: str, data: pa.Table) -> str:
    """Write `data` as the staged file `name`; returns its location."""
    try:
        data = data.select(staging.arrow_schema.names).cast(staging.arrow_schema)
    except (KeyError, pa.ArrowInvalid, ValueError) as exc:
        raise InvalidInput(f"Rows do not fit table {staging.table}: {exc}") from None
    path = f"{staging.directory}/{name}{SUFFIX}"
    sink = pa.BufferOutputStream()
    pq.write_table(data, sink)
    local = _local(path)
    if local is None:  # an object store PUT is atomic
        with _io(staging).new_output(path).create(overwrite=True) as out:
            out.write(sink.getvalue().to_pybytes())
        return path
    os.makedirs(os.path.dirname(local), exist_ok=True)
    tmp = f"{local}.{uuid.uuid4().hex}.tmp"
    with open(tmp, "wb") as out:
        out.write(sink.getvalue().to_pybytes())
    os.replace(tmp, local)  # readers of the folder never see half a file
    return path


def staged_files(staging: Staging) -> dict[str, str]:
    """Finished staged files by name (without suffix) -> location."""
    local = _local(staging.directory)
    if local is not None:
        if not os.path.isdir(local):
            return {}
        names = [n for n in os.listdir(local) if n.endswith(SUFFIX)]
        return {n.removesuffix(SUFFIX): f"{staging.directory}/{n}" for n in sorted(names)}
    import pyarrow.fs as pafs
    from pyiceberg.io.pyarrow import PyArrowFileIO

    # The catalog's FileIO properties name the object store (endpoint, keys): a bare
    # `FileSystem.from_uri` asked AWS itself about a MinIO or moto bucket.
    scheme, netloc, root = PyArrowFileIO.parse_location(staging.directory)
    fs = PyArrowFileIO(staging.properties).fs_by_scheme(scheme, netloc)
    infos = fs.get_file_info(pafs.FileSelector(root, allow_not_found=True))
    prefix = staging.directory.split("://", 1)[0] + "://"
    return {
        os.path.basename(i.path).removesuffix(SUFFIX): prefix + i.path
        for i in sorted(infos, key=lambda i: i.path)
        if i.path.endswith(SUFFIX)
    }


def pending_files(staging: Staging) -> dict[str, str]:
    """Staged files not yet committed to the table (a re-run after a commit must not add
    them twice). Decided from the table's snapshot history (each staged commit names its
    folder and files in its summary), not from its current files: compaction rewrites
    committed files away, and they must still count as committed."""
    files = staged_files(staging)
    if not files:
        return files
    table = load_or_none(staging.table)
    if table is None:
        return files
    committed = committed_names(table, staging)
    # Before staged commits named their files, only the current files tell.
    current = set(table.inspect.files()["file_path"].to_pylist())
    return {
        name: path for name, path in files.items() if name not in committed and path not in current
    }


def committed_names(table: Table, staging: Staging) -> set[str]:
    """Names of `staging`'s files that any snapshot of `table` committed."""
    folder = _folder(staging)
    names: set[str] = set()
    for snapshot in table.snapshots():
        summary = snapshot.summary
        props = summary.additional_properties if summary is not None else {}
        if props.get(STAGED) == folder:
            names.update(json.loads(props.get(STAGED_FILES, "[]")))
    return names


def _folder(staging: Staging) -> str:
    return staging.directory.rstrip("/").rsplit("/", 1)[-1]


def _name(staging: Staging, path: str) -> str:
    prefix = f"{staging.directory.rstrip('/')}/"
    if not path.startswith(prefix) or not path.endswith(SUFFIX):
        raise InvalidInput(f"{path} is not a staged file of {staging.table}.")
    return path.removeprefix(prefix).removesuffix(SUFFIX)


def commit_staged(
    staging: Staging, paths: list[str], *, properties: dict[str, str] | None = None
) -> Table:
    """Add `paths` to the table in ONE snapshot (creating the table in it if new). A file
    some snapshot already committed is not added again (a retry after a lost answer)."""
    if not paths:
        raise InvalidInput(f"Nothing to commit to {staging.table}: no staged files.")
    catalog = open_catalog()
    ident = parse_name(staging.table)
    props = {k: str(v) for k, v in (properties or {}).items()}
    if catalog.table_exists(ident):
        table = catalog.load_table(ident)
        done = committed_names(table, staging)
        paths = [p for p in paths if _name(staging, p) not in done]
        if not paths:
            return table
        txn = table.transaction()
        if props:
            txn.set_properties(props)
    else:
        txn = catalog.create_table_transaction(ident, schema=staging.arrow_schema, properties=props)
    io = transaction_io(txn)
    token = new_token()
    summary = {
        TOKEN: token,
        # The idempotency marker: which staged files this snapshot committed.
        STAGED: _folder(staging),
        STAGED_FILES: json.dumps(sorted(_name(staging, p) for p in paths)),
    }
    with txn.update_snapshot(snapshot_properties=summary).fast_append() as append:
        for path in paths:
            append.append_data_file(parquet_file_to_data_file(io, txn.table_metadata, path))
    # The staged files are the job's to resume with: kept whatever the outcome.
    commit_checked(
        txn.commit_transaction,
        token=token,
        reload=lambda: catalog.load_table(ident),
        discard=lambda: None,
        what=f"committing the staged files of {staging.table}",
    )
    return warm_after_commit(catalog.load_table(ident))


def discard_staged(staging: Staging) -> None:
    """Delete a staging folder's files (after a run that will not be resumed)."""
    io = _io(staging)
    for path in staged_files(staging).values():
        io.delete(path)

"""File plans kept on disk, so a cold read of a known snapshot needs no pyiceberg.

Importing pyiceberg and loading a table costs a cold `podium show` about a second, more
than reading the page. But an Iceberg metadata file never changes once written (a
commit writes a new one and points the catalog at it), so what a read learns from it —
the current snapshot, the snapshot ids, the table's column mapping, each snapshot's
data files — can be kept under its location for good: nothing is ever invalidated.

A cold read looks the table's current metadata location up in the catalog database
(one SQL query: `podium.store.catalog.names`), finds that metadata's entry here, and reads the
Parquet files directly. A miss (a new commit, a snapshot not planned yet, a damaged
entry) loads the table with pyiceberg, plans, and writes the entry for the next process.
Only self-contained plans are kept: Parquet files on local disk or S3 (read with
pyarrow's S3 filesystem built from the catalog's properties, `store.read.object_store`),
read as they are (position deletes included: the plan's runs already leave deleted rows
out). Other object stores, equality deletes and renamed columns go through pyiceberg.

One JSON file per (catalog, table, metadata location) under `$PODIUM_HOME/.cache/plans`,
written atomically; a file of another version or that does not parse is ignored and
rewritten.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from podium.config import get_settings
from podium.errors import InvalidInput
from podium.store.catalog.names import metadata_location
from podium.store.catalog.table_name import split_table_name
from podium.store.read.file_plan import FilePlan, PlannedFile

CACHE_VERSION = 3  # 3: runs (a file cut around deleted rows): first row, file rows
ENTRIES_KEPT = 512  # one per commit read; the oldest go first


@dataclass(frozen=True)
class TableHead:
    """What one metadata file says that a read needs."""

    table: str  # NAMESPACE.TABLE
    metadata_location: str
    current_snapshot_id: int | None
    snapshot_ids: frozenset[int]
    mapping: str | None  # the `podium.mapping` property, as stored


@dataclass(frozen=True)
class CachedSnapshot:
    plan: FilePlan
    mapping: str | None


def cache_dir() -> Path:
    return get_settings().home / ".cache" / "plans"


def _identity(table: str, metadata_location: str) -> dict[str, Any]:
    settings = get_settings()
    return {
        "version": CACHE_VERSION,
        "catalog_uri": settings.catalog_uri,
        "catalog_name": settings.catalog_name,
        "table": table,
        "metadata_location": metadata_location,
    }


def _entry_path(identity: dict[str, Any]) -> Path:
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
    return cache_dir() / f"{digest[:32]}.json"


def _snapshot_key(snapshot_id: int | None) -> str:
    return "none" if snapshot_id is None else str(snapshot_id)


def _read_entry(identity: dict[str, Any]) -> dict[str, Any] | None:
    """The entry for `identity`, or None when absent, damaged or of another version."""
    try:
        entry = json.loads(_entry_path(identity).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or any(entry.get(k) != v for k, v in identity.items()):
        return None
    return entry


def snapshot_number(snapshot_id: int | str | None) -> int | None | bool:
    """`snapshot_id` as the cache keys it (None: the current snapshot), or False for
    what only pyiceberg resolves (a ref's name)."""
    if snapshot_id is None or snapshot_id == "":
        return None
    try:
        return int(snapshot_id)
    except (TypeError, ValueError):
        return False


def table_parts(name: str) -> tuple[str, str] | None:
    """(namespace, table) of `name`, or None: opening the table then explains the name."""
    try:
        return split_table_name(name, get_settings().default_namespace)
    except InvalidInput:
        return None


def cached_snapshot(
    name: str, snapshot_id: int | str | None, location: str | None = None
) -> CachedSnapshot | None:
    """The plan of table `name` at `snapshot_id` (None or "": current) from the cache,
    found without pyiceberg, or None: then open the table and plan it (which fills the
    cache). Only snapshot ids are looked up here; refs and anything else miss.
    `location`: the table's current metadata location, when the caller just read it."""
    sid = snapshot_number(snapshot_id)
    parts = table_parts(name)
    if sid is False or parts is None:
        return None
    location = location or metadata_location(*parts)
    if location is None:
        return None
    table = ".".join(parts)
    if last_seen(table) != location:
        _note_seen(table, location)
    return lookup(table, location, sid)


def _seen_path(table: str) -> Path:
    identity = {**_identity(table, ""), "metadata_location": None}
    return _entry_path(identity).with_suffix(".seen")


def last_seen(table: str) -> str | None:
    """The metadata location this home last found current for `table`: a guess to start
    reading from while the catalog is asked (`store.read.guessed_view.guess_view`),
    never an answer by itself."""
    try:
        return _seen_path(table).read_text(encoding="utf-8") or None
    except OSError:
        return None


def _note_seen(table: str, location: str) -> None:
    with contextlib.suppress(OSError):
        write_atomically(_seen_path(table), location)


def lookup(table: str, metadata_location: str, snapshot_id: int | None) -> CachedSnapshot | None:
    """The cached plan of `table` at `snapshot_id` (None: the current snapshot) as the
    metadata at `metadata_location` describes it; None on any miss. A snapshot id the
    metadata does not list is a miss too, so the caller's error names it."""
    entry = _read_entry(_identity(table, metadata_location))
    if entry is None:
        return None
    try:
        if snapshot_id is None:
            snapshot_id = entry["current_snapshot_id"]
        elif snapshot_id not in entry["snapshot_ids"]:
            return None
        raw = entry["plans"].get(_snapshot_key(snapshot_id))
        if raw is None:
            return None
        return CachedSnapshot(_plan_from_json(table, snapshot_id, raw), entry["mapping"])
    except (KeyError, TypeError, ValueError, AttributeError, pa.ArrowInvalid):
        return None  # a damaged entry: the caller plans afresh and rewrites it


def remember(head: TableHead, plan: FilePlan) -> None:
    """Keep `plan` under `head`'s metadata location, if a later process may read it
    without pyiceberg (local or S3 files, position deletes at most, no renames). Best
    effort: a cache that cannot be written only costs the next process the slow path."""
    if not plan.self_contained:
        return
    identity = _identity(head.table, head.metadata_location)
    entry = _read_entry(identity) or {
        **identity,
        "current_snapshot_id": head.current_snapshot_id,
        "snapshot_ids": sorted(head.snapshot_ids),
        "mapping": head.mapping,
        "plans": {},
    }
    plans = entry.get("plans")
    if not isinstance(plans, dict):
        return
    plans[_snapshot_key(plan.snapshot_id)] = _plan_to_json(plan)
    with contextlib.suppress(OSError):
        write_atomically(_entry_path(identity), json.dumps(entry))
        _note_seen(head.table, head.metadata_location)
        _prune()


def _plan_to_json(plan: FilePlan) -> dict[str, Any]:
    schema = base64.b64encode(plan.schema.serialize().to_pybytes()).decode("ascii")
    files = [[f.path, f.records, f.start, f.first, f.file_rows] for f in plan.files]
    return {"files": files, "schema": schema}


def _plan_from_json(table: str, snapshot_id: int | None, raw: dict[str, Any]) -> FilePlan:
    schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(raw["schema"])))
    files = tuple(
        PlannedFile(str(p), int(n), int(s), int(f), None if r is None else int(r))
        for p, n, s, f, r in raw["files"]
    )
    plan = FilePlan(table, snapshot_id, files, schema, simple=True)
    if not plan.self_contained:
        raise ValueError("a cached plan must name local or S3 files")
    return plan


def write_atomically(path: Path, data: str | bytes) -> None:
    """Write `path` whole or not at all (readers in other processes never see half)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _prune() -> None:
    entries = sorted(cache_dir().glob("*.json"), key=lambda p: p.stat().st_mtime)
    for old in entries[:-ENTRIES_KEPT]:
        with contextlib.suppress(OSError):
            old.unlink()

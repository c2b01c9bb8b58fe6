"""Exporting a table snapshot to JSONL or Parquet.

Exports never write where a table keeps its files: inside the local warehouse, a
table's folder or its metadata folder (`podium export T2 <a data file of T>` replaced
T's rows without a commit; onto a metadata file it destroyed T). Only commits change a
table.

Exports round-trip: importing the file into a new table gives identical rows (ids,
messages, timestamps, metadata). JSONL writes `metadata` as a JSON object and
`created_at` as ISO 8601; Parquet keeps the Arrow types as they are. Both stream the
snapshot's data files in write order, a batch at a time, with progress.
"""

from __future__ import annotations

import glob
import json
import os
import re
import socket
import tempfile
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson
import pyarrow.parquet as pq
from pydantic import AliasChoices, BaseModel, Field

from podium.config import get_settings
from podium.errors import InvalidInput
from podium.paths import exports_root, resolve_under_roots
from podium.reporting import JobOutputs, Reporter
from podium.store.read.file_plan import local_path
from podium.store.read.prefetch import prefetched
from podium.store.read.read import iter_table_batches, open_snapshot
from podium.store.read.refs import TableRef

if TYPE_CHECKING:
    from pyiceberg.table import Table

ExportFormat = Literal["jsonl", "parquet"]

# Rows per batch read from the snapshot: JSONL turns each batch into Python objects.
JSONL_BATCH = 1024
PARQUET_BATCH = 8192


class ExportConfig(BaseModel):
    """Export a table snapshot to a file (kind: export)."""

    table: TableRef = Field(
        validation_alias=AliasChoices("table", "input"),
        description="Table (and snapshot) to export.",
    )
    path: str = Field(description="Output file: .jsonl or .parquet.")
    format: ExportFormat | None = Field(
        None, description="File format; from the suffix if omitted."
    )


def preflight(cfg: ExportConfig) -> ExportConfig:
    """Refuse a path outside the roots before the job exists; the card names the real path."""
    path = resolve_under_roots(cfg.path, "export")
    _format_of(path, cfg.format)
    refuse_table_files(path)
    return cfg.model_copy(update={"path": str(path)})


def refuse_table_files(path: Path) -> None:
    """InvalidInput when `path` (a real path) lies where a table keeps files: the local
    warehouse, or the folder or metadata folder of any table of the catalog (one may live
    outside the warehouse, in a nested namespace, under any name). A table whose metadata
    cannot be read still has a folder: the one above the metadata file the catalog names.
    Writing there would change or destroy a table without a commit."""
    from podium.store.catalog.every_table import every_table

    warehouse = local_path(get_settings().warehouse)
    places: list[tuple[str, str]] = [(warehouse, "the warehouse")] if warehouse else []
    if not _inside(path, places):
        for entry in every_table():
            for where in _table_folders(entry.table, entry.metadata_location):
                folder = local_path(where)
                if folder:
                    places.append((folder, f"table {entry.name}'s folder"))
    found = _inside(path, places)
    if found:
        raise InvalidInput(
            f"Export path {path} is inside {found}, where tables keep their data and "
            "metadata; writing there would change a table without a commit. Export to "
            f"a file elsewhere, e.g. under {exports_root()}."
        )


def _table_folders(table: Table | None, metadata_location: str | None) -> list[str]:
    if table is not None:
        return [table.location(), os.path.dirname(table.metadata_location)]
    if metadata_location is None:
        return []
    metadata_folder = os.path.dirname(metadata_location)
    return [os.path.dirname(metadata_folder), metadata_folder]


def _inside(path: Path, places: list[tuple[str, str]]) -> str | None:
    for folder, what in places:
        real = Path(os.path.realpath(folder))
        if path == real or path.is_relative_to(real):
            return what
    return None


def _json_value(key: str, value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if key == "metadata" and isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _format_of(path: Path, fmt: ExportFormat | None) -> ExportFormat:
    if fmt:
        return fmt
    if path.suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    if path.suffix == ".parquet":
        return "parquet"
    raise InvalidInput(
        f"{path}: cannot tell the format from {path.suffix!r}; use .jsonl or .parquet."
    )


def _jsonl_line(row: dict[str, Any]) -> bytes:
    obj = {k: _json_value(k, v) for k, v in row.items()}
    try:
        return orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:  # what orjson refuses (ints past 64 bits) json writes
        return (json.dumps(obj, ensure_ascii=False) + "\n").encode()


def run_export(cfg: ExportConfig, reporter: Reporter) -> JobOutputs:
    """Stream the snapshot into the file batch by batch; memory does not grow with it."""
    path = resolve_under_roots(cfg.path, "export")  # again here: a card may be hand-written
    fmt = _format_of(path, cfg.format)
    refuse_table_files(path)
    table, plan = open_snapshot(cfg.table.name, cfg.table.snapshot_id)
    total = plan.total
    batch_rows = PARQUET_BATCH if fmt == "parquet" else JSONL_BATCH
    if path.is_dir():
        raise InvalidInput(f"{path} is a directory; name the file to write, e.g. {path}/out.jsonl.")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write beside the target and rename, so a failed export never leaves half a file.
        _remove_dead_temps(path)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=_temp_prefix(path), suffix=".tmp")
    except OSError as exc:
        raise InvalidInput(f"Cannot write in {path.parent}: {exc.strerror}.") from None
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; an export is an ordinary file
    done = 0
    try:
        # Read (decode) in a thread while this one encodes: both mostly outside the GIL.
        batches = prefetched(iter_table_batches(table, plan.snapshot_id, batch_size=batch_rows))
        if fmt == "parquet":
            with pq.ParquetWriter(tmp, plan.schema) as writer:
                for batch in batches:
                    writer.write_batch(batch)
                    done = _progress(reporter, done + batch.num_rows, total, plan.table)
        else:
            with open(tmp, "wb") as fh:
                for batch in batches:
                    fh.writelines(_jsonl_line(row) for row in batch.to_pylist())
                    done = _progress(reporter, done + batch.num_rows, total, plan.table)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    reporter.progress(done, done, f"wrote {done:,} rows to {path}")
    return JobOutputs(summary={"rows": done, "path": str(path), "snapshot_id": plan.snapshot_id})


def _temp_prefix(path: Path, pid: int | None = None) -> str:
    """`.NAME.PID@HOST-`: whose temp file it is, so a later export can tell a dead one."""
    return f".{path.name}.{pid or os.getpid()}@{socket.gethostname()}-"


def _remove_dead_temps(path: Path) -> None:
    """Delete temp files that exports to `path` on this host left when they were killed
    (SIGKILL skips the clean-up below; the kill harness found them, tests/faults)."""
    own = re.compile(rf"\.{re.escape(path.name)}\.(\d+)@{re.escape(socket.gethostname())}-")
    for leftover in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        found = own.match(leftover.name)
        if found and not _alive(int(found.group(1))):
            leftover.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def _umask() -> int:
    mask = os.umask(0o022)  # the only way to read it is to set it, then put it back
    os.umask(mask)
    return mask


def _progress(reporter: Reporter, done: int, total: int, name: str) -> int:
    reporter.progress(done, total, f"exporting {name}")
    reporter.check_cancelled()
    return done


def export_table(
    name: str, path: str | Path, *, snapshot_id: int | None = None, reporter: Reporter | None = None
) -> JobOutputs:
    cfg = ExportConfig(table=TableRef(name=name, snapshot_id=snapshot_id), path=str(path))
    return run_export(cfg, reporter or Reporter())

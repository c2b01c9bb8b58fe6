"""Parquet footers of S3 data files kept on disk, so a cold page read is one ranged GET.

Opening a Parquet file on S3 costs a HEAD (its size) and one or two GETs of its tail
(pyarrow reads the last 64 KiB, then the rest of a larger footer: a 1 KiB-a-row file of
100 row groups has a ~230 KiB footer) before the row group a page needs. On moto's server
each request reads the whole object, so at 1M rows those requests were most of a cold
page's extra time over a local one. An Iceberg data file is never rewritten in place (a
commit writes new files under new names), so its footer can be kept for good, under its
path and the endpoint it is read from; the file's size is kept with it, and every ranged
GET checks it against the size the server reports (`store.read.s3_get`).

The writer keeps the footer of each file it writes (`store.write.file_writer`), so the
first read after an import finds it; a reader keeps the footer of a file it had to open
the slow way. One file per data file under `$PODIUM_HOME/.cache/footers`, written
atomically; one that does not parse is ignored and rewritten.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from podium.config import get_settings
from podium.store.read.object_store import is_s3
from podium.store.read.plan_cache import write_atomically

if TYPE_CHECKING:
    import pyarrow.parquet as pq

VERSION = 1
ENTRIES_KEPT = 2048  # data files; ~230 KiB each at 1 KiB rows
_MAGIC = b"PODF"
_HEADER = struct.Struct("<4sQ")  # magic, the data file's size in bytes


@dataclass(frozen=True)
class Footer:
    size: int  # bytes of the data file
    metadata: pq.FileMetaData


def cache_dir() -> Path:
    return get_settings().home / ".cache" / "footers"


def _entry_path(path: str) -> Path:
    endpoint = get_settings().catalog_properties.get("s3.endpoint", "")
    identity = json.dumps([VERSION, endpoint, path])
    return cache_dir() / f"{hashlib.sha256(identity.encode()).hexdigest()[:32]}.footer"


def load(path: str) -> Footer | None:
    """The kept footer of S3 data file `path`, or None (not kept, or damaged)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        raw = _entry_path(path).read_bytes()
        magic, size = _HEADER.unpack_from(raw)
        if magic != _MAGIC:
            return None
        metadata = pq.read_metadata(pa.BufferReader(raw[_HEADER.size :]))
    except (OSError, struct.error, pa.ArrowException):
        return None
    return Footer(size, metadata)


def keep(path: str, size: int, metadata: pq.FileMetaData) -> None:
    """Keep the footer of S3 data file `path` (`size` bytes). Best effort: a footer that
    cannot be written only costs the next read the requests it saves."""
    import pyarrow as pa

    if not is_s3(path):
        return  # a local file's footer is read from disk as cheaply as from here
    sink = pa.BufferOutputStream()
    metadata.write_metadata_file(sink)
    data = _HEADER.pack(_MAGIC, size) + sink.getvalue().to_pybytes()
    with contextlib.suppress(OSError):
        write_atomically(_entry_path(path), data)
        _prune()


def forget(path: str) -> None:
    """Drop the kept footer of `path` (its object is not the size it was kept with)."""
    with contextlib.suppress(OSError):
        _entry_path(path).unlink()


def _prune() -> None:
    entries = sorted(cache_dir().glob("*.footer"), key=lambda p: p.stat().st_mtime)
    for old in entries[:-ENTRIES_KEPT]:
        with contextlib.suppress(OSError):
            old.unlink()

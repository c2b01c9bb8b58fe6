"""A few columns of a data file on S3, read in a few large GETs instead of one per row group.

A filter reads one or two small columns (`split`, `id`); in a file they lie between the
row groups' conversations, so pyarrow's default pre-buffering (ranges merged across holes
of at most 8 KiB) fetches each small column chunk in a GET of its own: 16 GETs for a
32 MB file, one GET's latency each. Reading the hole instead costs its bytes at the link's
bandwidth, which is cheaper than a GET's first byte while the hole is under
`time to first byte x bandwidth` (pyarrow's `CacheOptions.from_network_metrics`): with
~30 ms and ~90 MiB/s a connection, holes up to ~2.7 MiB are read through and merged
ranges go up to ~24 MiB. The row groups are read a window of at most that many bytes at a
time, each window's ranges requested together, so memory stays at one window.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from podium.store.read.object_store import s3_filesystem, s3_key

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

# Assumed figures for one S3 connection; where the first byte comes later than this, merging
# pays more than it is set to.
TIME_TO_FIRST_BYTE_MS = 30
BANDWIDTH_MIB_S = 90


def column_batches(
    path: str, parquet: pq.ParquetFile, columns: Sequence[str], batch_size: int
) -> Iterator[pa.RecordBatch]:
    """Every row of S3 file `path` (opened as `parquet`), only `columns`, in file order."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    options = pa.CacheOptions.from_network_metrics(TIME_TO_FIRST_BYTE_MS, BANDWIDTH_MIB_S)
    scan = ds.ParquetFragmentScanOptions(pre_buffer=True, cache_options=options)
    fragment = ds.ParquetFileFormat(default_fragment_scan_options=scan).make_fragment(
        s3_key(path), filesystem=s3_filesystem()
    )
    for window in windows(parquet.metadata, options.range_size_limit):
        part = fragment.subset(row_group_ids=window)
        yield from part.to_batches(columns=list(columns), batch_size=batch_size, use_threads=False)


def windows(metadata: pq.FileMetaData, limit: int) -> list[list[int]]:
    """The file's row groups in order, cut into runs of at most `limit` stored bytes
    (a row group larger than that is a run of its own)."""
    out: list[list[int]] = []
    size = 0
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        stored = sum(group.column(c).total_compressed_size for c in range(group.num_columns))
        if out and size + stored <= limit:
            out[-1].append(g)
            size += stored
        else:
            out.append([g])
            size = stored
    return out

"""A resumable job's staged output, as generation over replicas and code-exec on Ray
write it: `python staged_job.py TABLE SHARDS`.

Like them it skips the rows already in the table (`done_values`), stages each missing
shard as one file (`write_staged`), and commits what `pending_files` says is not yet
committed plus what it staged now, in one snapshot (`commit_staged`). Run it again with
more shards and it must add only the new rows, whatever happened to the table between
(a compaction rewrote the committed files away) or to the first run's commit.
"""

from __future__ import annotations

import sys

import pyarrow as pa

from generators.resume import done_values
from podium.store.write.staged import (
    commit_staged,
    pending_files,
    stage,
    staging_key,
    write_staged,
)

SCHEMA = pa.schema([pa.field("id", pa.string()), pa.field("n", pa.int64())])
ROWS_PER_SHARD = 5
KIND = {"podium.kind": "faults-staged"}


def main(table: str, shards: int) -> None:
    done = done_values(table, "id", KIND, "staged job")
    staging = stage(table, SCHEMA, staging_key(table, "faults-staged"))
    finished = pending_files(staging)
    paths = list(finished.values())
    for shard in range(shards):
        name = f"shard-{shard:06d}"
        ids = [f"s{shard}-{i}" for i in range(ROWS_PER_SHARD)]
        if name in finished or all(i in done for i in ids):
            continue
        rows = pa.table({"id": ids, "n": list(range(ROWS_PER_SHARD))}, schema=SCHEMA)
        paths.append(write_staged(staging, name, rows))
    if paths:
        commit_staged(staging, paths, properties=KIND)
    print(f"committed {len(paths)} staged files to {table}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))

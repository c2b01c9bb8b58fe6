"""Browse speed on a 1,000,000-row SFT table: Podium vs plain DuckDB in the same run.

    python benchmarks/browse.py [--rows 1000000] [--repeat 20]

Builds a synthetic table in a temporary Podium home, then times (warm) a 50-row page at
offsets 0, n/2 and n-1 and a full-table message search through `podium.store.query`,
each beside a baseline: DuckDB reading the table's own Parquet data files directly
(`read_parquet` over the snapshot's files) with the equivalent hand-written SQL.
Targets (issue 2): page p95 <= 150 ms warm, search <= 1.5 s on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable

import duckdb
import pyarrow as pa


def synthetic(n: int, seed: int = 0) -> pa.Table:
    from podium.store.schema import SFT_ARROW_SCHEMA

    rng = random.Random(seed)
    words = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega".split()
    users, answers = [], []
    for i in range(n):
        users.append(" ".join(rng.choices(words, k=12)) + f" #{i}")
        answers.append(("needle " if i % 1000 == 0 else "") + " ".join(rng.choices(words, k=30)))
    role = pa.array(["user", "assistant"] * n)
    content = pa.array([x for pair in zip(users, answers, strict=True) for x in pair])
    messages = pa.LargeListArray.from_arrays(
        pa.array(range(0, 2 * n + 1, 2), pa.int64()),
        pa.StructArray.from_arrays(
            [role.cast(pa.large_string()), content.cast(pa.large_string())],
            names=["role", "content"],
        ),
    )
    cols = {
        "id": pa.array([f"r{i:07d}" for i in range(n)], pa.large_string()),
        "messages": messages,
        "system": pa.nulls(n, pa.large_string()),
        "source": pa.array([f"src{i % 5}" for i in range(n)], pa.large_string()),
        "split": pa.array(["train"] * n, pa.large_string()),
        "tags": pa.nulls(n, pa.large_list(pa.large_string())),
        "metadata": pa.nulls(n, pa.large_string()),
        "created_at": pa.nulls(n, pa.timestamp("us", tz="UTC")),
    }
    return pa.table(cols).cast(SFT_ARROW_SCHEMA)


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    fn()  # warm
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    samples.sort()
    p95 = samples[min(len(samples) - 1, int(round(0.95 * (len(samples) - 1))))]
    return statistics.median(samples), p95


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    os.environ["PODIUM_HOME"] = tempfile.mkdtemp(prefix="podium-bench-")

    from podium.store.catalog import load_table
    from podium.store.query import _positions, page
    from podium.store.schema import SFT_SCHEMA
    from podium.store.write import write_table

    n = args.rows
    t0 = time.perf_counter()
    write_table("bench.sft", synthetic(n), schema=SFT_SCHEMA)
    print(f"built {n:,} rows in {time.perf_counter() - t0:.1f}s")
    files = [
        t.file.file_path.removeprefix("file://")
        for t in load_table("bench.sft").scan().plan_files()
    ]
    base = duckdb.connect()
    base.execute(f"CREATE VIEW t AS SELECT * FROM read_parquet({files!r})")

    t0 = time.perf_counter()
    page("bench.sft", limit=1)  # first read fills the snapshot cache
    print(f"first read (scan to Arrow) {time.perf_counter() - t0:.1f}s")

    print(
        f"\n{'operation':<26}{'podium p50':>11}{'p95':>9}"
        f"{'baseline p50':>14}{'p95':>9}{'ratio p50':>11}"
    )
    for offset in (0, n // 2, n - 1):
        ours = timed(lambda o=offset: page("bench.sft", offset=o, limit=50), args.repeat)
        theirs = timed(
            lambda o=offset: base.execute("SELECT * FROM t LIMIT 50 OFFSET ?", [o]).fetchall(),
            args.repeat,
        )
        report(f"page @ {offset:,}", ours, theirs)
    search_repeat = max(3, args.repeat // 4)

    def cold_search() -> object:
        # Each search scans the whole snapshot: drop the cached matches (not the data).
        _positions.clear()
        return page("bench.sft", search="needle", limit=50)

    ours = timed(cold_search, search_repeat)
    # The same work in plain DuckDB: count every match, return the first page.
    cond = "list_bool_or(list_transform(messages, lambda m: m.content ILIKE '%needle%'))"
    theirs = timed(
        lambda: (
            base.execute(f"SELECT count(*) FROM t WHERE {cond}").fetchall(),
            base.execute(f"SELECT * FROM t WHERE {cond} LIMIT 50").fetchall(),
        ),
        search_repeat,
    )
    report("search (full table)", ours, theirs)
    ours = timed(lambda: page("bench.sft", search="needle", offset=500, limit=50), args.repeat)
    report("next page of a search", ours, theirs)
    print(
        "\nratio = podium / baseline (lower is better). Baseline: plain DuckDB over the "
        "snapshot's Parquet files doing the same SQL work, without the catalog or Python rows."
    )


def report(name: str, ours: tuple[float, float], theirs: tuple[float, float]) -> None:
    print(
        f"{name:<26}{ours[0]:>9.1f}ms{ours[1]:>7.1f}ms{theirs[0]:>12.1f}ms{theirs[1]:>7.1f}ms"
        f"{ours[0] / theirs[0]:>10.2f}x"
    )


if __name__ == "__main__":
    main()

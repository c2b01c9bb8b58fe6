"""Real-size tables: cold `podium` commands beside DuckDB on the same snapshot's files.

    python benchmarks/real_size.py --rows 200000            # 7 KiB rows: ~1.5 GB JSONL
    python benchmarks/real_size.py --rows 200000 --mean-kib 1 --out scale.json
    make bench-scale ROWS=10000000                          # the scale run (issue 37)
    python benchmarks/real_size.py --rows 20000 --mean-kib 1 --repeat 1 --s3  # a quick check

Builds a deterministic SFT JSONL file under `.cache/bench/` (seeded, no downloads): with
`--mean-kib K`, a mix of short and multi-turn chats, code and JSON answers, lines from
200 B to 32 KiB around a mean of K KiB; without it, the 6-turn rows of 5-10 KB the speed
page's first table used. Then, in one run, each step as a cold command (a new process,
as a person runs it, Python's start-up counted on both sides), wall time and peak RSS
from `/usr/bin/time -v`, beside its baseline in the same run:

| step | Podium | compared with |
|---|---|---|
| import | `podium import data.jsonl` | DuckDB `COPY (read_json(...)) TO x.parquet` |
| first page, deep page (row at 90%) | `podium show [--offset]` | DuckDB `read_parquet([files])` |
| search, filter on split | `podium show --search/--where` | DuckDB count + first page |
| count by source | `podium sql` | DuckDB's own query on the files |
| pages in a warm process | Podium's `page()` | a DuckDB connection |
| validation | `podium validate --rule json --roles tool` | DuckDB `json_valid` |
| export | `podium export t x.parquet` | DuckDB `COPY (read_parquet(...))` |
| edit, removal, label of a row | `podium edit/delete-rows/label` | a cold first page |
| 1,000 labels in one action | `podium label ID...` | one label |
| maintain | `podium maintain` | — |
| Browse in Chromium (`--browser`) | first paint, page changes, search, sample | 10,000 rows |

`--s3` runs the reads again on a PostgreSQL catalog with an S3 warehouse (moto's server),
each against the local figure. The baselines read the Parquet data files of the snapshot
Podium wrote, in write order. Each figure is the median of `--repeat` runs, Podium and
baseline alternated; the table and `--out` JSON give each ratio and its goal (issue 37).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.scale import report  # noqa: E402
from benchmarks.scale.data import WORD, make_jsonl, make_mixed_jsonl  # noqa: E402
from benchmarks.scale.measure import Run, timed  # noqa: E402
from benchmarks.scale.report import Figure  # noqa: E402
from benchmarks.scale.steps import (  # noqa: E402
    Bench,
    Read,
    compare_reads,
    export_step,
    import_step,
    parquet_bytes,
    podium_reads,
    reads,
    review_steps,
    snapshot_files,
    validate_step,
    warm_pages,
)

CACHE = REPO / ".cache" / "bench"
__all__ = ["CACHE", "WORD", "Run", "make_jsonl", "timed"]  # what other benchmarks use


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument(
        "--mean-kib",
        type=float,
        help="Mixed rows of this mean size (200 B to 32 KiB); default: the 7 KiB rows.",
    )
    parser.add_argument("--repeat", type=int, default=3, help="Runs per step (median).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="Also write the results as JSON here.")
    parser.add_argument("--cache", type=Path, default=CACHE, help="Where data and runs go.")
    parser.add_argument(
        "--no-import-baseline",
        action="store_true",
        help="Skip DuckDB's JSONL-to-Parquet copy (at 2M+ rows it costs as long as the import).",
    )
    parser.add_argument("--s3", action="store_true", help="Also read on PostgreSQL + S3 (moto).")
    parser.add_argument("--keep", action="store_true", help="Keep the run's homes afterwards.")
    parser.add_argument(
        "--import-only",
        action="store_true",
        help="Only the import against DuckDB's COPY (the 10M figure without the other steps).",
    )
    parser.add_argument(
        "--browser",
        action="store_true",
        help="Also time the Browse page in Chromium, against a 10,000-row table.",
    )
    args = parser.parse_args()
    n = args.rows
    if args.mean_kib is not None:
        data = make_mixed_jsonl(n, args.mean_kib, args.seed, args.cache)
    else:
        data = make_jsonl(n, args.seed, args.cache)
    work = args.cache / f"run-{n}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env = {**os.environ, "PODIUM_HOME": str(work / "home"), "PYTHONPATH": str(REPO)}
    bench = Bench(n, args.repeat, data, work, env, args.seed)

    figures = [import_step(bench, not args.no_import_baseline)]
    files = snapshot_files(bench)
    s3 = None
    if not args.import_only:
        read_steps = reads(bench, files)
        local_reads = compare_reads(bench, read_steps)
        figures += local_reads
        figures.append(warm_pages(bench, files))
        figures.append(validate_step(bench, files))
        figures.append(export_step(bench, files))
        figures += review_steps(bench)
        if args.browser:
            from benchmarks.scale.browser import browser_steps

            figures += browser_steps(bench)
        s3 = on_s3(bench, figures[0], read_steps, local_reads) if args.s3 else None

    info: dict[str, Any] = {
        "date": report.now(),
        "machine": report.machine(),
        "commit": _commit(),
        "rows": n,
        "mean_kib_asked": args.mean_kib,
        "jsonl_bytes": data.stat().st_size,
        "mean_row_bytes": data.stat().st_size / n,
        "parquet_bytes": parquet_bytes(files),
        "data_files": len(files),
        "repeat": args.repeat,
        "seed": args.seed,
    }
    report.write(args.out, info, figures, s3)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


def on_s3(
    bench: Bench, local_import: Figure, steps: list[Read], local: list[Figure]
) -> list[Figure]:
    """The import and the reads on PostgreSQL + S3, each against the local run."""
    from benchmarks.scale.s3 import shared_store

    with shared_store() as store:
        env = {**bench.env, **store, "PODIUM_HOME": str(bench.work / "s3-home")}
        remote = Bench(bench.rows, bench.repeat, bench.data, bench.work, env, bench.seed)
        imported = timed(remote.podium("import", str(bench.data), "--table", "bench.sft"), env)
        figures = [Figure.timed("import (streaming)", imported, local_import.podium, "local run")]
        return figures + podium_reads(remote, steps, local, "s3")


def _commit() -> str:
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    )
    return out.stdout.strip() or "unknown"


if __name__ == "__main__":
    main()

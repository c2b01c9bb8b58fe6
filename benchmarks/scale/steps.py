"""The scale benchmark's steps, Podium against a baseline in the same run, cold commands
on both sides (Python start-up counted on both).

Reads first, on the freshly imported snapshot (the baselines read that snapshot's
Parquet files with DuckDB), then validation and export, then the review writes (each
against a cold first page, alternated), then `podium maintain`.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.scale.data import WORD
from benchmarks.scale.measure import (
    NAN,
    Run,
    Statements,
    baseline,
    median,
    progress,
    timed,
    timed_output,
    tree_bytes,
)
from benchmarks.scale.report import Check, Figure

TABLE = "bench.sft"
PAGE = 50
BULK_LABELS = 1000
MiB = 2**20


@dataclass
class Bench:
    """One run's data, work directory and environment (which store, which home)."""

    rows: int
    repeat: int
    data: Path
    work: Path
    env: dict[str, str]
    seed: int = 0

    def podium(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "podium.cli", *args]

    @property
    def home(self) -> Path:
        return Path(self.env["PODIUM_HOME"])


@dataclass
class Read:
    """A read step: the `podium` arguments, and DuckDB's statements for the same answer."""

    step: str
    args: list[str]
    statements: Statements
    goal: float | None = None


# ---------------------------------------------------------------------------- import


def import_step(b: Bench, duckdb_copy: bool) -> Figure:
    """`podium import` (streaming) against DuckDB's JSONL-to-Parquet COPY: rows/s and
    peak RSS. The first import makes the table the later steps use; repeats overwrite."""
    ours = [timed(b.podium("import", str(b.data), "--table", TABLE), b.env)]
    progress(f"import: {ours[0]}")
    copy: Statements = [
        (
            "COPY (SELECT * FROM read_json(?, format='newline_delimited')) "
            f"TO '{b.work / 'duckdb-import.parquet'}' (FORMAT parquet, COMPRESSION zstd)",
            [str(b.data)],
        )
    ]
    theirs: list[Run] = []
    for k in range(b.repeat):
        if duckdb_copy:
            theirs.append(timed(baseline(copy, b.work), b.env))
        if k + 1 < b.repeat:
            args = ("import", str(b.data), "--table", TABLE, "--mode", "overwrite")
            ours.append(timed(b.podium(*args), b.env))
    (b.work / "duckdb-import.parquet").unlink(missing_ok=True)
    mine, base = median(ours), median(theirs)
    fig = Figure.timed("import (streaming)", mine, base, "DuckDB COPY", 1.0, throughput=True)
    fig.checks.append(Check("Podium peak RSS MiB", mine.rss, "<=", 1024))
    fig.extra = {"Podium rows/s": b.rows / mine.wall, "DuckDB rows/s": b.rows / base.wall}
    progress(f"import: podium {mine}, duckdb {base}")
    return fig


def snapshot_files(b: Bench) -> list[str]:
    """The current snapshot's data files in write order (one import: plan order)."""
    code = (
        "import json; from podium.store.catalog.catalog import load_table; "
        f"t = load_table({TABLE!r}); "
        "print(json.dumps([task.file.file_path.removeprefix('file://') "
        "for task in t.scan().plan_files()]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=b.env, capture_output=True, text=True, check=True
    )
    files: list[str] = json.loads(out.stdout)
    return files


# ----------------------------------------------------------------------------- reads


def reads(b: Bench, files: list[str]) -> list[Read]:
    view = "read_parquet(?)"
    hit = "list_bool_or(list_transform(messages, lambda m: m.content ILIKE ?))"
    pattern, deep = f"%{WORD}%", b.rows * 9 // 10
    split = "split = 'test'"
    count_sql = "SELECT source, count(*) AS n FROM {} GROUP BY source ORDER BY source"
    return [
        Read(
            "cold first page",
            ["show", TABLE, "--limit", str(PAGE), "--json"],
            [(f"SELECT * FROM {view} LIMIT {PAGE}", [files])],
            0.5,
        ),
        Read(
            f"deep page (row {deep:,})",
            ["show", TABLE, "--offset", str(deep), "--limit", str(PAGE), "--json"],
            [(f"SELECT * FROM {view} LIMIT {PAGE} OFFSET {deep}", [files])],
            1.0,
        ),
        Read(
            "full-table search for a rare string (count + first page)",
            ["show", TABLE, "--search", WORD, "--limit", str(PAGE), "--json"],
            [
                (f"SELECT count(*) FROM {view} WHERE {hit}", [files, pattern]),
                (f"SELECT * FROM {view} WHERE {hit} LIMIT {PAGE}", [files, pattern]),
            ],
            1.0,
        ),
        Read(
            "filter on split (count + first page)",
            ["show", TABLE, "--where", split, "--limit", str(PAGE), "--json"],
            [
                (f"SELECT count(*) FROM {view} WHERE {split}", [files]),
                (f"SELECT * FROM {view} WHERE {split} LIMIT {PAGE}", [files]),
            ],
        ),
        Read(
            "`podium sql` count by source",
            ["sql", count_sql.format(TABLE), "--json"],
            [(count_sql.format(view), [files])],
        ),
    ]


def compare_reads(b: Bench, steps: list[Read]) -> list[Figure]:
    """Each read as a cold `podium` command and a cold DuckDB process, alternated."""
    figures = []
    for read in steps:
        ours, theirs = [], []
        for _ in range(b.repeat):
            ours.append(timed(b.podium(*read.args), b.env))
            theirs.append(timed(baseline(read.statements, b.work), b.env))
        fig = Figure.timed(read.step, median(ours), median(theirs), "DuckDB", read.goal)
        progress(f"{read.step}: podium {fig.podium}, duckdb {fig.baseline}")
        figures.append(fig)
    return figures


def podium_reads(b: Bench, steps: list[Read], local: list[Figure], where: str) -> list[Figure]:
    """The same reads against another store, each against the local run's figure."""
    figures = []
    for read, here in zip(steps, local, strict=True):
        mine = median([timed(b.podium(*read.args), b.env) for _ in range(b.repeat)])
        fig = Figure.timed(read.step, mine, here.podium, "local run", 2.0)
        progress(f"{where} {read.step}: {mine} (local {here.podium})")
        figures.append(fig)
    return figures


WARM = r"""
import json, random, statistics, sys, time
import duckdb
from podium.store.read.query import page
table, files, n, limit = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
offsets = random.Random(0).sample(range(max(1, n - limit)), min(21, max(1, n - limit)))
con = duckdb.connect()
sql = "SELECT * FROM read_parquet(?) LIMIT ? OFFSET ?"
ours, theirs = [], []
for k, offset in enumerate(offsets):
    t = time.perf_counter(); page(table, offset=offset, limit=limit, count=False)
    a = time.perf_counter() - t
    t = time.perf_counter(); con.execute(sql, [files, limit, offset]).to_arrow_table()
    b = time.perf_counter() - t
    if k or len(offsets) == 1:
        ours.append(a); theirs.append(b)
print(json.dumps([statistics.median(ours), statistics.median(theirs)]))
"""


def warm_pages(b: Bench, files: list[str]) -> Figure:
    """The app's case: one long-lived process paging, Podium's `page()` beside a DuckDB
    connection at the same seeded offsets (medians; one process, so no RSS)."""
    out = subprocess.run(
        [sys.executable, "-c", WARM, TABLE, json.dumps(files), str(b.rows), str(PAGE)],
        env=b.env,
        capture_output=True,
        text=True,
        check=True,
    )
    ours, theirs = json.loads(out.stdout.strip().splitlines()[-1])
    fig = Figure.timed(
        "page at random offsets, warm process (the app)", Run(ours, NAN), Run(theirs, NAN), "DuckDB"
    )
    progress(f"warm pages: podium {ours * 1000:.0f} ms, duckdb {theirs * 1000:.0f} ms")
    return fig


# ------------------------------------------------------------ validation and export


def validate_step(b: Bench, files: list[str]) -> Figure:
    """JSON validation of every tool turn of the whole table, in rows/s."""
    statement: Statements = [
        (
            "SELECT count(*) FILTER (WHERE NOT json_valid(m.content)), count(*) "
            "FROM (SELECT unnest(messages) AS m FROM read_parquet(?)) WHERE m.role = 'tool'",
            [files],
        )
    ]
    ours, theirs = [], []
    for _ in range(b.repeat):
        ours.append(
            timed(b.podium("validate", TABLE, "--rule", "json", "--roles", "tool", "--json"), b.env)
        )
        theirs.append(timed(baseline(statement, b.work), b.env))
    mine, base = median(ours), median(theirs)
    fig = Figure.timed("JSON validation of the whole table", mine, base, "DuckDB json_valid")
    fig.checks.append(Check("Podium rows/s", b.rows / mine.wall, ">=", 20_000))
    fig.extra = {"DuckDB rows/s": b.rows / base.wall}
    progress(f"validate: podium {mine}, duckdb {base}")
    return fig


def export_step(b: Bench, files: list[str]) -> Figure:
    """`podium export` to Parquet against DuckDB's COPY of the same snapshot's files."""
    target = b.work / "duckdb-export.parquet"
    copy: Statements = [
        (
            f"COPY (SELECT * FROM read_parquet(?)) TO '{target}' "
            "(FORMAT parquet, COMPRESSION zstd)",
            [files],
        )
    ]
    ours, theirs = [], []
    for k in range(b.repeat):
        ours.append(timed(b.podium("export", TABLE, f"bench-{k}.parquet"), b.env))
        theirs.append(timed(baseline(copy, b.work), b.env))
        (b.home / "exports" / f"bench-{k}.parquet").unlink(missing_ok=True)
        target.unlink(missing_ok=True)
    mine, base = median(ours), median(theirs)
    fig = Figure.timed("export to Parquet", mine, base, "DuckDB COPY", 0.8, throughput=True)
    progress(f"export: podium {mine}, duckdb {base}")
    return fig


# ---------------------------------------------------------------------- review writes


def review_steps(b: Bench) -> list[Figure]:
    """A single-row edit, removal and label, each against a cold first page run just
    before it (alternated), with the bytes each wrote; then 1,000 labels in one action
    against one label; then `podium maintain`."""
    rng = random.Random(b.seed)
    bulk = min(BULK_LABELS, b.rows // 2)
    picked = [f"row-{i:08d}" for i in rng.sample(range(b.rows), 3 * b.repeat + bulk)]
    singles = picked[: 3 * b.repeat]
    bulk_ids = picked[3 * b.repeat :]
    warehouse = b.home / "warehouse"
    actions: dict[str, Callable[[str], list[str]]] = {
        "single-row edit": lambda i: [
            "edit",
            TABLE,
            i,
            "--turn",
            "0",
            "--content",
            "fixed",
            "-m",
            "typo",
        ],
        "single-row removal": lambda i: ["delete-rows", TABLE, i, "-m", "junk"],
        "single-row label": lambda i: ["label", TABLE, i, "--label", "needs-fix"],
    }
    figures = []
    page0 = b.podium("show", TABLE, "--limit", str(PAGE), "--json")
    for step, make in actions.items():
        runs, pages, wrote = [], [], []
        for _ in range(b.repeat):
            pages.append(timed(page0, b.env))
            size = tree_bytes(warehouse)
            runs.append(timed(b.podium(*make(singles.pop())), b.env))
            wrote.append(tree_bytes(warehouse) - size)
        fig = Figure.timed(step, median(runs), median(pages), "cold first page", 3.0)
        fig.extra = {"MB written": max(wrote) / 1e6}
        if step == "single-row edit":
            fig.checks.append(Check("MB written", max(wrote) / 1e6, "<=", 5.0))
        progress(f"{step}: {fig.podium} ({fig.ratio:.2f}x page 0), {max(wrote) / 1e6:.3f} MB")
        figures.append(fig)
    one = figures[-1].podium
    size = tree_bytes(warehouse)
    many = timed(b.podium("label", TABLE, *bulk_ids, "--label", "good"), b.env)
    fig = Figure.timed(f"{bulk:,} labels in one action", many, one, "one label", 10.0)
    fig.extra = {"MB written": (tree_bytes(warehouse) - size) / 1e6}
    progress(f"bulk labels: {many} ({fig.ratio:.2f}x one label)")
    figures.append(fig)
    figures.append(maintain_step(b))
    return figures


def maintain_step(b: Bench) -> Figure:
    """`podium maintain` after the review writes: compaction, expiry (retention 0) and
    orphan removal, forced (nothing else reads or writes the benchmark's table)."""
    args = ["maintain", TABLE, "--retention-days", "0", "--grace-hours", "0", "--force", "--json"]
    run, out = timed_output(b.podium(*args), b.env)
    report = json.loads(out)
    before, after = report["before"], report["after"]
    fig = Figure("podium maintain afterwards", run, "—")
    fig.extra = {
        "files before": before["data_files"] + before["delete_files"],
        "files after": after["data_files"] + after["delete_files"],
        "MB on disk after": after["bytes_on_disk"] / 1e6,
    }
    progress(f"maintain: {run}, {fig.extra}")
    return fig


def parquet_bytes(files: list[str]) -> int:
    return sum(Path(f).stat().st_size for f in files if Path(f).exists())

"""Real-size tables: cold `podium` commands beside DuckDB on the same snapshot's files.

    python benchmarks/real_size.py --rows 200000            # ~1.5 GB JSONL, ~10 min
    python benchmarks/real_size.py --rows 2000000 --repeat 1 --no-import-baseline
    python benchmarks/real_size.py --rows 20000 --repeat 1  # a quick check

Builds a deterministic SFT JSONL file (seeded, no downloads; 6 turns and 5-10 KB of
text a row: prose, Python code and JSON tool results) under `.cache/bench/`, then
times each step as a cold command (a new process, as a person runs it) with its wall
time and peak RSS from `/usr/bin/time -v`, beside a baseline run the same way in the
same run:

| step | Podium | baseline |
|---|---|---|
| import | `podium import data.jsonl` | DuckDB `COPY (read_json(...)) TO x.parquet` |
| page 0 | `podium show --limit 50` | DuckDB `read_parquet([files]) LIMIT 50` |
| deep page | `podium show --offset 3/4 n` | the same with `OFFSET` |
| search | `podium show --search WORD` | DuckDB count + first 50 rows with `ILIKE` |
| validation | `podium validate --rule json --roles tool` | DuckDB `json_valid` count |

The baselines read the Parquet data files of the snapshot Podium wrote, in write order.
Ratios are Podium / baseline (lower is better); each figure is the median of
`--repeat` runs, Podium and baseline alternated.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / ".cache" / "bench"
TABLE = "bench.sft"
WORD = "quetzalcoatl"  # in one row of ~1,000, and in the very last row
PAGE = 50
BLOCK = 200_000  # rows generated; bigger files repeat this block with fresh ids
DATA_VERSION = 1  # bump when the generator changes, so cached files are rebuilt

# ---------------------------------------------------------------------------- data

_SYLLABLES = "ka lo mi ne ru ta shi po va de gri ul en or as it fe zo bra quin".split()


def _vocabulary(rng: random.Random, size: int = 4000) -> list[str]:
    words = {"".join(rng.choices(_SYLLABLES, k=rng.randint(1, 4))) for _ in range(size * 2)}
    return sorted(words)[:size]


class RowMaker:
    """Deterministic SFT conversations: a question, a tool call and its JSON result, an
    answer with a code block, a follow-up and a prose answer."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.words = _vocabulary(self.rng)
        self.names = [w for w in self.words if len(w) <= 8][:300]

    def prose(self, n_words: int) -> str:
        words = self.rng.choices(self.words, k=n_words)
        sentences, i = [], 0
        while i < len(words):
            k = self.rng.randint(6, 18)
            sentences.append(" ".join(words[i : i + k]).capitalize() + ".")
            i += k
        return " ".join(sentences)

    def code(self, n_lines: int) -> str:
        rng, names = self.rng, self.names
        fn = rng.choice(names)
        args = ", ".join(rng.sample(names, 2))
        lines = [f"def {fn}_{rng.randint(0, 999)}({args}):"]
        for j in range(n_lines):
            a, b = rng.sample(names, 2)
            lines.append(
                rng.choice(
                    [
                        f"    {a} = {b} * {rng.randint(2, 97)} + len({a!r})",
                        f"    if {a} > {rng.randint(0, 500)}:\n        return {b}",
                        f"    for {a}_{j} in range({rng.randint(3, 40)}):\n        {b} += {a}_{j}",
                        f"    {a}.append({{'{b}': {rng.random():.4f}}})",
                    ]
                )
            )
        lines.append(f"    return {rng.choice(names)}")
        return "\n".join(lines)

    def json_value(self, n_items: int) -> str:
        rng = self.rng
        items = [
            {
                "id": rng.randint(1, 10**9),
                "name": " ".join(rng.choices(self.words, k=3)),
                "score": round(rng.random(), 4),
                "tags": rng.sample(self.names, 3),
                "ok": rng.random() < 0.8,
            }
            for _ in range(n_items)
        ]
        return json.dumps({"results": items, "count": n_items}, ensure_ascii=False)

    def row(self, i: int, last: bool) -> dict:
        rng = self.rng
        question = self.prose(rng.randint(40, 120))
        if i % 997 == 0 or last:
            question += f" Also, what about {WORD}?"
        call = json.dumps(
            {"name": "search", "arguments": {"query": " ".join(rng.choices(self.words, k=4))}}
        )
        result = self.json_value(rng.randint(6, 14))
        if i % 211 == 0:
            result = result[: len(result) // 2]  # a truncated tool result: invalid JSON
        answer = (
            self.prose(rng.randint(80, 200))
            + "\n\n```python\n"
            + self.code(rng.randint(10, 30))
            + "\n```\n\n"
            + self.prose(rng.randint(30, 80))
        )
        return {
            "id": f"row-{i:08d}",
            "messages": [
                {"role": "user", "content": question},
                {"role": "assistant", "content": call},
                {"role": "tool", "content": result},
                {"role": "assistant", "content": answer},
                {"role": "user", "content": self.prose(rng.randint(20, 60))},
                {"role": "assistant", "content": self.prose(rng.randint(120, 320))},
            ],
            "source": f"synthetic-{i % 7}",
            "split": "test" if i % 10 == 0 else "train",
            "tags": ["bench", rng.choice(["code", "json", "prose"])],
            "metadata": {"difficulty": rng.randint(1, 5)},
            "created_at": "2025-01-01T00:00:00+00:00",
        }


def make_jsonl(rows: int, seed: int, cache: Path) -> Path:
    """The benchmark's input file, built once per (rows, seed, DATA_VERSION).

    Past BLOCK rows (a multiple of it), the BLOCK-row file repeats with fresh ids:
    generating 2M rows takes ~25 min of one core, copying ~2 min, and each block keeps
    the row sizes, the search word's density and its hit in the very last row."""
    path = cache / f"sft-{rows}-s{seed}-v{DATA_VERSION}.jsonl"
    if path.exists():
        return path
    cache.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    t0 = time.perf_counter()
    if rows > BLOCK and rows % BLOCK == 0:
        _repeat_block(make_jsonl(BLOCK, seed, cache), rows // BLOCK, tmp)
    else:
        maker = RowMaker(seed)
        with tmp.open("w", encoding="utf-8") as fh:
            for i in range(rows):
                fh.write(json.dumps(maker.row(i, i == rows - 1), ensure_ascii=False) + "\n")
    tmp.rename(path)
    size = path.stat().st_size
    print(f"built {path.name}: {size / 2**30:.2f} GiB in {time.perf_counter() - t0:.0f} s")
    return path


def _repeat_block(block: Path, times: int, out: Path) -> None:
    prefix = b'{"id": "row-'
    width = len(prefix) + 8
    with out.open("wb") as dst:
        for k in range(times):
            with block.open("rb") as src:
                for i, line in enumerate(src):
                    assert line.startswith(prefix), "the block's rows start with their id"
                    dst.write(b'{"id": "row-%08d' % (k * BLOCK + i) + line[width:])


# ------------------------------------------------------------------------ measuring


@dataclass
class Run:
    wall: float  # seconds
    rss: float  # peak resident set, MiB


def timed(cmd: list[str], env: dict[str, str]) -> Run:
    t0 = time.perf_counter()
    proc = subprocess.run(
        ["/usr/bin/time", "-v", *cmd], env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    rss_kb = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    return Run(wall, int(rss_kb.group(1)) / 1024 if rss_kb else float("nan"))


NAN = float("nan")


def progress(line: str) -> None:
    """One finished step, at once: a long run's partial results survive an interruption."""
    print(line, file=sys.stderr, flush=True)


def median(runs: list[Run]) -> Run:
    return Run(statistics.median(r.wall for r in runs), statistics.median(r.rss for r in runs))


# A baseline is DuckDB alone in a fresh Python process: the same cold start as `podium`.
# Its memory is capped (it spills past the cap) so a 2M-row import leaves a shared
# machine usable; at 200k rows it peaks below the cap.
DUCKDB = r"""
import json, sys, duckdb
con = duckdb.connect(config={"memory_limit": "6GB"})
for sql, params in json.load(open(sys.argv[1])):
    con.execute(sql, params).to_arrow_table()
"""

Statements = list[tuple[str, list[object]]]

# The app's case: one long-lived process paging a table. Podium's `page()` and a DuckDB
# connection each read the same 20 pages at seeded offsets (after one warm-up read);
# medians in milliseconds. Peak RSS is not compared (one process runs both).
WARM = r"""
import json, random, statistics, sys, time
import duckdb
from podium.store.read.query import page
table, files, n, limit = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
offsets = random.Random(0).sample(range(n - limit), 21)
con = duckdb.connect()
sql = "SELECT * FROM read_parquet(?) LIMIT ? OFFSET ?"
ours, theirs = [], []
for k, offset in enumerate(offsets):
    t = time.perf_counter(); page(table, offset=offset, limit=limit, count=False)
    a = time.perf_counter() - t
    t = time.perf_counter(); con.execute(sql, [files, limit, offset]).to_arrow_table()
    b = time.perf_counter() - t
    if k:
        ours.append(a); theirs.append(b)
print(json.dumps([statistics.median(ours), statistics.median(theirs)]))
"""


def baseline(statements: Statements, work: Path) -> list[str]:
    """The command that runs `statements` (SQL, parameters) in a fresh DuckDB process."""
    path = work / f"baseline-{len(list(work.glob('baseline-*.json')))}.json"
    path.write_text(json.dumps(statements))
    return [sys.executable, "-c", DUCKDB, str(path)]


def warm_pages(env: dict[str, str], files: list[str], n: int) -> tuple[Run, Run]:
    out = subprocess.run(
        [sys.executable, "-c", WARM, TABLE, json.dumps(files), str(n), str(PAGE)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    ours, theirs = json.loads(out.stdout.strip().splitlines()[-1])
    return Run(ours, NAN), Run(theirs, NAN)


def snapshot_files(env: dict[str, str]) -> list[str]:
    """The current snapshot's data files in write order (one import: plan order)."""
    code = (
        "import json; from podium.store.catalog.catalog import load_table; "
        f"t = load_table({TABLE!r}); "
        "print(json.dumps([task.file.file_path.removeprefix('file://') "
        "for task in t.scan().plan_files()]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


# ---------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3, help="Runs per step (median).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="Also write the results as JSON here.")
    parser.add_argument("--cache", type=Path, default=CACHE, help="Where data and runs go.")
    parser.add_argument(
        "--no-import-baseline",
        action="store_true",
        help="Skip DuckDB's JSONL-to-Parquet copy (at 2M rows it costs as long as the import).",
    )
    parser.add_argument(
        "--keep", action="store_true", help="Keep the imported table for a --reads-only run."
    )
    parser.add_argument(
        "--reads-only",
        action="store_true",
        help="Measure the reads again on the table a --keep run left (no import).",
    )
    args = parser.parse_args()
    n = args.rows

    data = make_jsonl(n, args.seed, args.cache)
    work = args.cache / f"run-{n}"
    if args.reads_only and not (work / "home").is_dir():
        raise SystemExit(f"--reads-only needs the table a --keep run left in {work}.")
    if not args.reads_only:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
    env = {
        **os.environ,
        "PODIUM_HOME": str(work / "home"),
        "PYTHONPATH": str(REPO),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", ""),
    }
    env = {k: v for k, v in env.items() if v}
    podium = [sys.executable, "-m", "podium.cli"]
    results: dict[str, tuple[Run, Run]] = {}

    if not args.reads_only:
        results["import"] = measure_import(args, data, work, env, podium)
    _measure_reads(args, n, data, work, env, podium, results)


def measure_import(
    args: argparse.Namespace, data: Path, work: Path, env: dict[str, str], podium: list[str]
) -> tuple[Run, Run]:
    # Import: once into the table the reads use, then again (overwrite) for the median.
    imports = [timed([*podium, "import", str(data), "--table", TABLE], env)]
    progress(f"import: {imports[0]}")
    copies: list[Run] = []
    copy: Statements = [
        (
            "COPY (SELECT * FROM read_json(?, format='newline_delimited')) "
            f"TO '{work / 'duckdb.parquet'}' (FORMAT parquet, COMPRESSION zstd)",
            [str(data)],
        )
    ]
    for k in range(args.repeat):
        if not args.no_import_baseline:
            copies.append(timed(baseline(copy, work), env))
        if k + 1 < args.repeat:
            cmd = [*podium, "import", str(data), "--table", TABLE, "--mode", "overwrite"]
            imports.append(timed(cmd, env))
    return median(imports), median(copies) if copies else Run(NAN, NAN)


def _measure_reads(
    args: argparse.Namespace,
    n: int,
    data: Path,
    work: Path,
    env: dict[str, str],
    podium: list[str],
    results: dict[str, tuple[Run, Run]],
) -> None:
    files = snapshot_files(env)
    parquet_bytes = sum(Path(f).stat().st_size for f in files)
    view = "read_parquet(?)"
    cond = "list_bool_or(list_transform(messages, lambda m: m.content ILIKE ?))"
    pattern = f"%{WORD}%"
    deep = n * 3 // 4
    steps = {
        "page 0": (
            ["show", TABLE, "--limit", str(PAGE), "--json"],
            [(f"SELECT * FROM {view} LIMIT {PAGE}", [files])],
        ),
        f"page at offset {deep:,}": (
            ["show", TABLE, "--offset", str(deep), "--limit", str(PAGE), "--json"],
            [(f"SELECT * FROM {view} LIMIT {PAGE} OFFSET {deep}", [files])],
        ),
        "search (count + first page)": (
            ["show", TABLE, "--search", WORD, "--limit", str(PAGE), "--json"],
            [
                (f"SELECT count(*) FROM {view} WHERE {cond}", [files, pattern]),
                (f"SELECT * FROM {view} WHERE {cond} LIMIT {PAGE}", [files, pattern]),
            ],
        ),
        "validate json (tool turns)": (
            ["validate", TABLE, "--rule", "json", "--roles", "tool", "--json"],
            [
                (
                    "SELECT count(*) FILTER (WHERE NOT json_valid(m.content)), count(*) "
                    f"FROM (SELECT unnest(messages) AS m FROM {view}) WHERE m.role = 'tool'",
                    [files],
                )
            ],
        ),
    }
    for name, (cmd, statements) in steps.items():
        ours, theirs = [], []
        for _ in range(args.repeat):
            ours.append(timed([*podium, *cmd], env))
            theirs.append(timed(baseline(statements, work), env))
        results[name] = (median(ours), median(theirs))
        progress(f"{name}: podium {results[name][0]}, duckdb {results[name][1]}")

    results["page at random offsets, warm process (as the app)"] = warm_pages(env, files, n)
    progress(f"warm pages: {results['page at random offsets, warm process (as the app)']}")
    print_table(n, data, files, parquet_bytes, args.repeat, results)
    if args.out:
        args.out.write_text(
            json.dumps(
                {
                    "rows": n,
                    "jsonl_bytes": data.stat().st_size,
                    "parquet_bytes": parquet_bytes,
                    "data_files": len(files),
                    "results": {
                        k: {"podium": vars(a), "duckdb": vars(b)} for k, (a, b) in results.items()
                    },
                },
                indent=2,
            )
        )
    if not (args.keep or args.reads_only):
        shutil.rmtree(work, ignore_errors=True)


def print_table(
    n: int,
    data: Path,
    files: list[str],
    parquet_bytes: int,
    repeat: int,
    results: dict[str, tuple[Run, Run]],
) -> None:
    cpus = os.cpu_count()
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    print(
        f"\n{n:,} rows; JSONL {data.stat().st_size / 2**30:.2f} GiB "
        f"({data.stat().st_size / n / 1024:.1f} KiB a row); Parquet "
        f"{parquet_bytes / 2**20:,.0f} MiB in {len(files)} data files; "
        f"{platform.machine()}, {cpus} cores, {mem:.0f} GiB; load "
        f"{os.getloadavg()[0]:.1f}; median of {repeat}\n"
    )
    print("| step (cold command) | Podium s / MiB | DuckDB s / MiB | time × | RSS × |")
    print("|---|---|---|---|---|")
    for name, (ours, theirs) in results.items():
        print(
            f"| {name} | {_shown(ours)} | {_shown(theirs)} | "
            f"{ours.wall / theirs.wall:.2f} | {ours.rss / theirs.rss:.2f} |"
        )


def _shown(run: Run) -> str:
    wall = f"{run.wall:.2f} s" if run.wall >= 1 else f"{run.wall * 1000:.0f} ms"
    return wall if run.rss != run.rss else f"{wall} / {run.rss:,.0f}"  # NaN: not measured


if __name__ == "__main__":
    main()

"""Review at real size: single-row edits, removals and labels against a cold page, then
80 mixed actions and `podium maintain`, on 200,000 rows of ~7 KiB.

    python benchmarks/review_edits.py                  # 200k rows (~10 min with the build)
    python benchmarks/review_edits.py --rows 20000     # a quick check

Uses `benchmarks/real_size.py`'s seeded rows (cached under `.cache/bench/`). Every
command is cold (a new process, as a person runs it; wall time and peak RSS from
`/usr/bin/time -v`), and its baseline is a cold `podium show --limit 50` (page 0) in
the same run. Reports:

- `edit`, `delete-rows`, `label` of one row: time and RSS as a ratio to page 0, and the
  warehouse's growth (goal: <= 3x page 0, <= 5 MB);
- that Podium, pyiceberg and DuckDB's own Iceberg reader (`.venv-duckdb-iceberg`) read
  the edited table identically (every id and a hash of every row's messages);
- after 80 mixed single-row actions, `podium maintain --retention-days 0 --grace-hours 0
  --force` (forced: the benchmark's own table, which nothing else reads or writes then):
  page 0 and a search against the freshly imported table (goal <= 1.5x), files before
  and after, the tagged pre-review snapshot unchanged, no file left unreferenced.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.real_size import CACHE, WORD, Run, make_jsonl, timed  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TABLE = "bench.review"
PODIUM = [sys.executable, "-m", "podium.cli"]
DUCKDB_PYTHON = REPO / ".venv-duckdb-iceberg" / "bin" / "python"

# Rows as (id, sha256 of the messages JSON), from any engine: the same bytes for the same rows.
DIGEST = r"""
import hashlib, json, sys
def digest(rows):
    return [(r["id"], hashlib.sha256(json.dumps(r["messages"], sort_keys=True,
            ensure_ascii=False).encode()).hexdigest()) for r in rows]
"""

PYICEBERG = (
    DIGEST
    + r"""
from podium.store.catalog.catalog import load_table
t = load_table(sys.argv[1])
out = []
for batch in t.scan(selected_fields=("id", "messages")).to_arrow_batch_reader():
    out += digest(batch.to_pylist())
print(json.dumps(sorted(out)))
"""
)

PODIUM_READ = (
    DIGEST
    + r"""
from podium.store.read.read import iter_batches
snapshot = sys.argv[2] if len(sys.argv) > 2 else None
out = []
for batch in iter_batches(sys.argv[1], snapshot, columns=["id", "messages"]):
    out += digest(batch.to_pylist())
print(json.dumps(out))
"""
)

DUCKDB_READ = (
    DIGEST
    + r"""
import duckdb, importlib.util, pathlib
def ext(name):
    root = pathlib.Path(importlib.util.find_spec(f"duckdb_extension_{name}").origin).parent
    return str(next(root.glob(f"extensions/*/{name}.duckdb_extension")))
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.execute("SET enable_progress_bar = false")  # it draws on stdout, which carries the rows
for n in ("avro", "iceberg"):
    con.load_extension(ext(n))
cur = con.execute("SELECT id, messages FROM iceberg_scan($1)", [sys.argv[1]])
out = []
while rows := cur.fetchmany(4096):
    out += digest([{"id": i, "messages": m} for i, m in rows])
print(json.dumps(sorted(out)))
"""
)


def run_json(cmd: list[str], env: dict[str, str]) -> Any:
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd[:4])}\n{out.stderr[-3000:]}")
    return json.loads(out.stdout)


def warehouse_bytes(home: Path) -> int:
    return sum(p.stat().st_size for p in (home / "warehouse").rglob("*") if p.is_file())


def median(runs: list[Run]) -> Run:
    return Run(statistics.median(r.wall for r in runs), statistics.median(r.rss for r in runs))


def cold(cmd: list[str], env: dict[str, str], repeat: int) -> Run:
    return median([timed(cmd, env) for _ in range(repeat)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3, help="Cold runs per step (median).")
    parser.add_argument("--actions", type=int, default=80)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--out", type=Path, help="Also write the results as JSON here.")
    args = parser.parse_args()

    data = make_jsonl(args.rows, args.seed, args.cache)
    home = args.cache / f"review-home-{args.rows}"
    subprocess.run(["rm", "-rf", str(home)], check=True)
    env = {
        **os.environ,
        "PODIUM_HOME": str(home),
        "PODIUM_FILE_ROOTS": str(data.parent),
    }
    res: dict[str, Any] = {"rows": args.rows}

    imported = timed([*PODIUM, "import", str(data), "--table", TABLE], env)
    res["import_s"] = imported.wall
    subprocess.run([*PODIUM, "tag", TABLE, "pre-review"], env=env, check=True, capture_output=True)
    page0 = [*PODIUM, "show", TABLE, "--limit", "50"]
    search = [*PODIUM, "show", TABLE, "--search", WORD, "--limit", "50"]
    fresh_page, fresh_search = cold(page0, env, args.repeat), cold(search, env, args.repeat)
    res["fresh"] = {"page0": vars(fresh_page), "search": vars(fresh_search)}
    print(f"fresh: page 0 {fresh_page.wall:.2f} s, search {fresh_search.wall:.2f} s", flush=True)

    rng = random.Random(args.seed)
    ids = [f"row-{i:08d}" for i in rng.sample(range(args.rows), 3 * args.repeat + args.actions)]
    actions = {
        "edit": lambda i: [
            *PODIUM,
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
        "delete-rows": lambda i: [*PODIUM, "delete-rows", TABLE, i, "-m", "junk"],
        "label": lambda i: [*PODIUM, "label", TABLE, i, "--label", "needs-fix"],
    }
    res["single"] = {}
    for name, make in actions.items():
        # Alternated with a page 0 each time, so a load that comes and goes hits both.
        runs, pages, growth = [], [], []
        for _ in range(args.repeat):
            pages.append(timed(page0, env))
            size = warehouse_bytes(home)
            runs.append(timed(make(ids.pop()), env))
            growth.append(warehouse_bytes(home) - size)
        m, p = median(runs), median(pages)
        res["single"][name] = {
            "wall_s": m.wall,
            "rss_mib": m.rss,
            "page0_s": p.wall,
            "x_page0": m.wall / p.wall,
            "growth_mb": max(growth) / 1e6,
        }
        print(
            f"{name}: {m.wall:.2f} s ({m.wall / p.wall:.2f}x page 0 at {p.wall:.2f} s), "
            f"{m.rss:.0f} MiB, +{max(growth) / 1e6:.3f} MB",
            flush=True,
        )

    ours = run_json([sys.executable, "-c", PODIUM_READ, TABLE], env)
    theirs = run_json([sys.executable, "-c", PYICEBERG, TABLE], env)
    metadata = run_json(
        [
            sys.executable,
            "-c",
            "import json,sys; from podium.store.catalog.catalog import load_table; "
            f"print(json.dumps(load_table({TABLE!r}).metadata_location))",
        ],
        env,
    )
    duck = run_json([str(DUCKDB_PYTHON), "-c", DUCKDB_READ, metadata], env)
    res["readers_agree"] = {
        "pyiceberg": sorted(ours) == theirs,
        "duckdb_iceberg": sorted(ours) == duck,
    }
    print(f"readers agree: {res['readers_agree']} ({len(ours)} rows)", flush=True)

    tagged = run_json([sys.executable, "-c", PODIUM_READ, TABLE, "pre-review"], env)
    mixed = ACTIONS_SCRIPT.replace("TABLE", repr(TABLE))
    out = run_json([sys.executable, "-c", mixed, json.dumps(ids[: args.actions])], env)
    res["mixed_actions"] = out
    print(f"{args.actions} mixed actions: {out['mean_s']:.2f} s each", flush=True)

    maintained = run_json(
        # Grace 0 (forced): nothing else reads or writes the benchmark's table meanwhile;
        # on a live table the default grace keeps in-flight writes and readers safe.
        [*PODIUM, "maintain", TABLE, "--retention-days", "0", "--grace-hours", "0", "--force"]
        + ["--json"],
        env,
    )
    res["maintain"] = maintained
    after_page, after_search = cold(page0, env, args.repeat), cold(search, env, args.repeat)
    res["after"] = {
        "page0": vars(after_page),
        "search": vars(after_search),
        "page0_x_fresh": after_page.wall / fresh_page.wall,
        "search_x_fresh": after_search.wall / fresh_search.wall,
    }
    res["tag_unchanged"] = tagged == run_json(
        [sys.executable, "-c", PODIUM_READ, TABLE, "pre-review"], env
    )
    res["unreferenced"] = run_json([sys.executable, "-c", UNREFERENCED, TABLE], env)
    b, a = maintained["before"], maintained["after"]
    files_before, files_after = (
        b["data_files"] + b["delete_files"],
        a["data_files"] + a["delete_files"],
    )
    print(
        f"maintain: files {files_before} -> {files_after}, "
        f"on disk {b['bytes_on_disk'] / 1e6:.0f} -> {a['bytes_on_disk'] / 1e6:.0f} MB; "
        f"page 0 {res['after']['page0_x_fresh']:.2f}x fresh, "
        f"search {res['after']['search_x_fresh']:.2f}x; "
        f"tag unchanged {res['tag_unchanged']}; unreferenced {len(res['unreferenced'])}",
        flush=True,
    )
    if args.out:
        args.out.write_text(json.dumps(res, indent=2))
    print(json.dumps(res, indent=2))


ACTIONS_SCRIPT = r"""
import json, sys, time
from podium.identity import User
from podium.review.annotations import annotate
from podium.review.changes import Change, commit_change
from podium.store.catalog.catalog import load_table
from podium.store.read.query import page
user = User(name="bench", role="admin", source="config")
times = []
for k, row in enumerate(json.loads(sys.argv[1])):
    t = time.perf_counter()
    if k % 3 == 0:
        commit_change(load_table(TABLE), Change(deletes=frozenset({row}), message="junk"), user)
    elif k % 3 == 1:
        [found] = page(TABLE, ids=[row], limit=1).rows
        messages = [dict(m) for m in found["messages"]]
        messages[0]["content"] = "fixed " + messages[0]["content"][:50]
        change = Change(updates={row: {"messages": messages}}, message="fix")
        commit_change(load_table(TABLE), change, user)
    else:
        annotate(load_table(TABLE), [row], user, label="good")
    times.append(time.perf_counter() - t)
print(json.dumps({"actions": len(times), "mean_s": sum(times) / len(times), "max_s": max(times)}))
"""

UNREFERENCED = r"""
import json, sys
from podium.store.maintenance.maintenance import unreferenced_files
print(json.dumps(unreferenced_files(sys.argv[1])))
"""


if __name__ == "__main__":
    main()

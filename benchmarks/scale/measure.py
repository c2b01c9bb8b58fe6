"""Cold commands, timed as a person runs them: a new process each, wall time and peak
RSS from `/usr/bin/time -v`. A baseline is DuckDB alone in a fresh Python process, so
both sides pay Python's start-up."""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

NAN = float("nan")


@dataclass
class Run:
    wall: float  # seconds
    rss: float  # peak resident set, MiB


def timed(cmd: list[str], env: dict[str, str]) -> Run:
    return timed_output(cmd, env)[0]


def timed_output(cmd: list[str], env: dict[str, str]) -> tuple[Run, str]:
    """The run and its standard output."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        ["/usr/bin/time", "-v", *cmd], env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    rss_kb = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    return Run(wall, int(rss_kb.group(1)) / 1024 if rss_kb else NAN), proc.stdout


def median(runs: list[Run]) -> Run:
    if not runs:
        return Run(NAN, NAN)
    return Run(statistics.median(r.wall for r in runs), statistics.median(r.rss for r in runs))


def progress(line: str) -> None:
    """One finished step, at once: a long run's partial results survive an interruption."""
    print(line, file=sys.stderr, flush=True)


# Its memory is capped (it spills past the cap) so a 10M-row import leaves a shared
# machine usable.
DUCKDB = r"""
import json, sys, duckdb
con = duckdb.connect(config={"memory_limit": "6GB"})
for sql, params in json.load(open(sys.argv[1])):
    con.execute(sql, params).to_arrow_table()
"""

Statements = list[tuple[str, list[object]]]


def baseline(statements: Statements, work: Path) -> list[str]:
    """The command that runs `statements` (SQL, parameters) in a fresh DuckDB process."""
    path = work / f"baseline-{len(list(work.glob('baseline-*.json')))}.json"
    path.write_text(json.dumps(statements))
    return [sys.executable, "-c", DUCKDB, str(path)]


def tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())

"""Every signal at scale, each in its own process, and Browse's near-duplicate filter cold.

    .venv/bin/python benchmarks/signals_scale.py --rows 1000000 --json

Writes `benchmarks/signals.py`'s kinds of rows (~1 KiB rows with near-copies, pasted eval
problems, private data, five languages; each row drawn from its own seed, made in a pool
of processes and written a chunk at a time, so memory stays bounded at 10M rows) into a
temporary Podium home, then runs each
signal as `compute_signals` does (scan the snapshot, compute, one commit) in a fresh
Python process, and reports each one's wall time and peak RSS (the process's own, its
VmHWM read every half second), their sum, and the machine's load average beside each.
A signal still running after `--timeout` seconds is stopped and reported as such, with
nothing written (a killed run leaves no table). Last, a fresh process times the Browse
filter "near-dup: in a cluster" cold (no cache of the page's or the reads'; its imports,
DuckDB's and the signals' classes' among them, and the catalog's first connection, which
a running app has made, apart): the table's
load, the facets of every current signal, the ids the filter keeps and the first page
of 50 rows, as the page reads them. Quality is `signals.py`'s business; this script
only measures time and memory.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from resource import RUSAGE_SELF, getrusage
from signal import SIGTERM
from signal import signal as on_signal
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

SIGNALS = ("exact-dup", "length", "contamination", "near-dup", "private-data", "language")

RUN = """
import json, sys
from podium.signals.job import SignalsConfig, compute_signals
signal = sys.argv[1]
extra = {"contamination": {"evals": ["bench.evals"]}} if signal == "contamination" else {}
compute_signals(SignalsConfig.model_validate(
    {"table": {"name": "bench.corpus"}, "signals": [signal], **extra}))
"""

BROWSE = """
import json, time
start = time.perf_counter()
import duckdb  # a running app has imported it for its first filter or search
from podium.signals import values
from podium.signals.listing import current_versions
from podium.store.catalog.catalog import load_table
from podium.store.read.query import page
for signal in SIGNALS:  # their classes, as the app's first Browse page with signals has
    current_versions()[signal]
took = {"imports": time.perf_counter() - start}
at = time.perf_counter()
load_table("bench.evals")  # a running app has its catalog open
took["catalog_open"] = time.perf_counter() - at
at = time.perf_counter()
table = load_table("bench.corpus")
sid = table.current_snapshot().snapshot_id
took["load"] = time.perf_counter() - at
at = time.perf_counter()
facets = values.facets(table, sid)
took["facets"] = time.perf_counter() - at
at = time.perf_counter()
chosen = [f for f in facets if f.signal == "near-dup" and f.value == "member"]
keep = values.narrowed(table, sid, chosen, None)
took["filter_ids"] = time.perf_counter() - at
at = time.perf_counter()
first = page("bench.corpus", ids=keep, limit=50, snapshot_id=sid)
took["first_page"] = time.perf_counter() - at
print(json.dumps({
    "seconds": round(sum(v for k, v in took.items() if k not in ("imports", "catalog_open")), 3),
    **{k: round(v, 3) for k, v in took.items()},
    "rows_in_filter": first.total, "shown": len(first.rows)}))
"""


def progress(what: dict[str, Any]) -> None:
    """A line on stderr as each step ends: a long run shows what it has measured so far."""
    print(json.dumps(what), file=sys.stderr, flush=True)


def load() -> float:
    return round(os.getloadavg()[0], 1)


def high_water_kib(pid: int) -> int:
    """The process's own peak RSS so far (Linux's VmHWM, of the memory it has had since
    its exec). wait4's ru_maxrss is no use here: a child forked from this process counts
    this process's resident memory at the fork (the corpus, over a GB at 1M rows)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def child(code: str, args: list[str], env: dict[str, str], timeout: float) -> dict[str, Any]:
    """Run `code` in a fresh Python: its wall time, its own peak RSS,
    the load average before and after, and what it printed."""
    start, load_before = time.perf_counter(), load()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            [sys.executable, "-P", "-c", code, *args],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        timed_out, peak_kib = False, 0
        try:
            while True:
                peak_kib = max(peak_kib, high_water_kib(proc.pid))
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if time.perf_counter() - start > timeout:
                    timed_out = True
                    os.killpg(proc.pid, 9)
                    pid, status, usage = os.wait4(proc.pid, 0)
                    break
                time.sleep(0.5)
        except BaseException:  # this run stopped: its child with it
            os.killpg(proc.pid, 9)
            os.wait4(proc.pid, 0)
            raise
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        printed, problems = out.read(), err.read()
    return {
        "seconds": round(time.perf_counter() - start, 1),
        "peak_rss_mb": round((peak_kib or usage.ru_maxrss) / 1024),
        "load_before": load_before,
        "load_after": load(),
        "timed_out": timed_out,
        "returncode": proc.returncode,
        "stdout": printed,
        "stderr": problems[-2000:],
    }


# A corpus of many parts is written one part (one append, one snapshot) at a time, so a
# `--home` run stopped midway goes on from its last whole part.
PART_ROWS = 1_000_000


def corpus_rows() -> int:
    """Rows `bench.corpus` already holds (0 if it does not exist)."""
    from podium.store.catalog.catalog import load_or_none

    table = load_or_none("bench.corpus")
    snapshot = table.current_snapshot() if table is not None else None
    return int(snapshot.summary.get("total-records", 0)) if snapshot is not None else 0


def write_streamed_corpus(rows: int, seed: int) -> int | None:
    """`signals.py`'s kinds of rows as `bench.corpus` and its eval problems as
    `bench.evals`, made a chunk at a time in a pool of processes (one per core) and
    written as they come: memory holds a few chunks, not the corpus (10 GB at 10M rows).
    Rows already in the corpus are kept and the rest appended. Returns the mean size in
    bytes of the rows written (None when none were)."""
    from functools import partial
    from multiprocessing import get_context

    from signals import streamed_problems, write_texts

    chunk, size = 5000, [0]

    def measured(chunks: Any) -> Any:
        for texts in chunks:
            size[0] += sum(len(t.encode()) for t in texts)
            yield texts

    done = corpus_rows()
    if done % chunk or done > rows:
        raise SystemExit(
            f"bench.corpus holds {done} rows, not a prefix of {rows}: use a new --home."
        )
    with get_context("spawn").Pool(os.cpu_count() or 1) as pool:
        for part in range(done, rows, PART_ROWS):
            end = min(part + PART_ROWS, rows)
            make = partial(texts_from, rows=end, chunk=chunk, seed=seed)
            chunks = pool.imap(make, range(part, end, chunk))
            write_texts("bench.corpus", "row", measured(chunks), start=part)
            progress({"corpus_rows": end})
    if not _exists("bench.evals"):
        write_texts("bench.evals", "eval", [streamed_problems(seed)])
    return round(size[0] / (rows - done)) if rows > done else None


def _exists(name: str) -> bool:
    from podium.store.catalog.catalog import load_or_none

    return load_or_none(name) is not None


def texts_from(start: int, rows: int, chunk: int, seed: int) -> list[str]:
    """One chunk of the streamed corpus (a pool worker's task)."""
    from signals import streamed_texts

    return streamed_texts(start, min(start + chunk, rows), seed)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--signals", default=",".join(SIGNALS), help="Comma-separated, in order.")
    parser.add_argument(
        "--timeout",
        type=float,
        default=1800,
        help="Seconds one signal may run before it is stopped.",
    )
    parser.add_argument("--json", action="store_true", help="Print one JSON document.")
    parser.add_argument(
        "--home",
        help="Podium home to keep the corpus in (made if missing, kept after the run): a "
        "run stopped while writing goes on from its last whole part of a million rows.",
    )
    parser.add_argument(
        "--corpus-only", action="store_true", help="Write the corpus, measure nothing else."
    )
    args = parser.parse_args()

    # stopped (a run that will not end in time), it still removes its home
    on_signal(SIGTERM, lambda *_: sys.exit(143))
    home = args.home or tempfile.mkdtemp(prefix="podium-bench-scale-")
    os.makedirs(home, exist_ok=True)
    env = {**os.environ, "PODIUM_HOME": home, "PYTHONPATH": str(ROOT)}
    os.environ["PODIUM_HOME"] = home
    report: dict[str, Any] = {"rows": args.rows, "cpus": os.cpu_count(), "signals": {}}
    try:
        start = time.perf_counter()
        report["mean_row_bytes"] = write_streamed_corpus(args.rows, args.seed)
        report["corpus_seconds"] = round(time.perf_counter() - start, 1)
        # this process wrote it (Linux counts ru_maxrss in KiB)
        report["corpus_peak_rss_mb"] = round(getrusage(RUSAGE_SELF).ru_maxrss / 1024)
        progress(report)
        chosen = [] if args.corpus_only else [s.strip() for s in args.signals.split(",")]
        for signal in [s for s in chosen if s]:
            ran = child(RUN, [signal], env, args.timeout)
            report["signals"][signal] = {k: v for k, v in ran.items() if k != "stdout"}
            if not ran["timed_out"] and ran["returncode"] == 0:
                report["signals"][signal].pop("stderr")
            progress({signal: report["signals"][signal]})
            if signal == "near-dup" and not ran["timed_out"] and ran["returncode"] == 0:
                browse = child(f"SIGNALS = {SIGNALS!r}" + BROWSE, [], env, 600)
                report["browse_near_dup_first_page"] = {
                    **json.loads(browse["stdout"] or "{}"),
                    "process_seconds": browse["seconds"],
                    "peak_rss_mb": browse["peak_rss_mb"],
                    "load_before": browse["load_before"],
                }
                progress({"browse": report["browse_near_dup_first_page"]})
        done = [v for v in report["signals"].values() if not v["timed_out"]]
        report["seconds_all_signals"] = round(sum(v["seconds"] for v in done), 1)
        report["peak_rss_mb"] = max((v["peak_rss_mb"] for v in done), default=0)
    finally:
        if not args.home:
            shutil.rmtree(home, ignore_errors=True)
    print(json.dumps(report, indent=2) if args.json else report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

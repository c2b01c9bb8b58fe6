"""The fault matrix: every write path x every failpoint x every action, on a store.

For one case: a fresh table, the write run as the real CLI with one failpoint armed
(`PODIUM_FAILPOINTS`), then, in this process:
- the table reads as its state before the write or after it, never a mix (`rows_lost`
  counts rows that match neither; `unreadable` says whether the head could be read);
- no file a live snapshot or kept metadata file references is missing;
- `podium maintain --all --grace-hours 0 --force` (the next maintenance) leaves no file
  under the table's location that no snapshot references, and the table reads the same.

The retry cases (`retry_cases.py`: a staged job output retried after compaction, an
import job whose connections are cut after the catalog's COMMIT, a full disk) are cases
of the same matrix with the same checks.

The sweep cases (`sweep_cases.py`: `maintain --all` beside tables in nested namespaces,
named outside Podium's rule, inside another table's folder, at a namespace's folder,
referencing another table's file, with partition statistics) are cases of the same
matrix: every such table keeps its rows and files.

`run_matrix(store, cases)` returns one `Outcome` per case; `tests/faults/test_fault_matrix.py`
runs a seeded sample in CI, `make fault-matrix` (`python tests/faults/fault_matrix.py`) the
whole matrix on both stores and writes test-artifacts/fault-matrix.json and the README table.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent / "review"), str(HERE.parent / "integration")]

import cli_fork  # noqa: E402
from review_data import make_table, row_id  # noqa: E402

from podium.config import reset_settings  # noqa: E402

PATHS = ("edit", "delete-rows", "label", "import-append", "import-create", "compact")
POINTS = ("write.between_files", "commit.before", "commit.after")
ACTIONS = ("raise", "kill")
ROWS = 60
SMALL_FILES = "3000"  # bytes: every write here rolls over into several files


@dataclass(frozen=True)
class Case:
    path: str
    point: str
    action: str


@dataclass
class Outcome:
    store: str
    path: str
    point: str
    action: str
    exit_code: int
    state: str  # "before", "after" or "mixed"
    rows_lost: int
    unreadable: bool
    missing_files: int
    left_after_maintain: int


def all_cases() -> list[Case]:
    from retry_cases import retry_case_points
    from sweep_cases import sweep_paths

    writes = [Case(p, q, a) for p in PATHS for q in POINTS for a in ACTIONS]
    return writes + [Case(*c) for c in retry_case_points()] + [Case(*c) for c in sweep_paths()]


# ---- stores ----


@contextmanager
def local_store(root: Path) -> Iterator[dict[str, str]]:
    yield {"PODIUM_HOME": str(root / "home")}


@contextmanager
def postgres_s3_store(root: Path) -> Iterator[dict[str, str]]:
    from postgres import postgres_server  # type: ignore[import-not-found]
    from s3_store import s3_server  # type: ignore[import-not-found]

    with postgres_server() as url, s3_server() as s3:
        yield {
            "PODIUM_HOME": str(root / "home"),
            "PODIUM_CATALOG_URI": url,
            "PODIUM_WAREHOUSE": f"s3://{s3.bucket}/warehouse",
            "PODIUM_CATALOG_PROPERTIES": json.dumps(s3.catalog_properties),
        }


STORES: dict[str, Callable[[Path], Any]] = {
    "sqlite+local": local_store,
    "postgres+s3": postgres_s3_store,
}


# ---- one case ----


def _podium(env: dict[str, str], *args: str, faults: str = "") -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **env, "PODIUM_FAILPOINTS": faults}
    if faults:
        full["PODIUM_TARGET_FILE_BYTES"] = SMALL_FILES
    return cli_fork.run(
        [sys.executable, "-m", "podium.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=full,
    )


def _jsonl(path: Path, first: int, n: int) -> Path:
    with path.open("w") as out:
        for i in range(first, first + n):
            messages = [
                {"role": "user", "content": f"question {i}"},
                {"role": "assistant", "content": f"answer {i}\nsecond line"},
            ]
            out.write(json.dumps({"id": row_id(i), "messages": messages}) + "\n")
    return path


def _state(name: str) -> dict[str, str] | None:
    """id -> the row's turns as JSON; None when the table does not exist."""
    from podium.store.catalog.catalog import table_exists
    from podium.store.read.query import page

    if not table_exists(name):
        return None
    rows = page(name, limit=10_000).rows
    return {r["id"]: json.dumps(r["messages"], sort_keys=True) for r in rows}


def _labels(name: str) -> set[tuple[str, str]] | None:
    from podium.review.annotations import annotations_table
    from podium.store.catalog.catalog import load_table, table_exists

    notes = annotations_table(name)
    if not table_exists(notes):
        return None
    return {(r["row_id"], r["label"]) for r in load_table(notes).scan().to_arrow().to_pylist()}


def _compacted(name: str) -> bool:
    from podium.store.catalog.catalog import load_table

    head = load_table(name).current_snapshot()
    summary = head.summary if head is not None else None
    return summary is not None and summary.additional_properties.get("podium.action") == "compact"


def _missing(name: str) -> int:
    from podium.store.catalog.catalog import load_table, table_exists
    from podium.store.maintenance.maintenance import referenced_files

    if not table_exists(name):
        return 0
    table = load_table(name)
    return sum(1 for p in referenced_files(table) if not table.io.new_input(p).exists())


def _left_over(name: str) -> int:
    """Unreferenced files under the table's location; for a table the catalog does not
    know (a first import that never committed), every file under the warehouse that
    carries its name."""
    from pyarrow.fs import FileSelector, FileType
    from pyiceberg.io.pyarrow import PyArrowFileIO

    from podium.config import get_settings
    from podium.store.catalog.catalog import parse_name, table_exists
    from podium.store.maintenance.maintenance import unreferenced_files

    if table_exists(name):
        return len(unreferenced_files(name))
    settings = get_settings()
    warehouse = settings.warehouse.rstrip("/")
    scheme, _, rest = warehouse.partition("://")
    if not rest:
        scheme, rest = "file", warehouse
    netloc = rest.split("/", 1)[0] if scheme != "file" else ""
    fs = PyArrowFileIO(settings.catalog_properties).fs_by_scheme(scheme, netloc)
    root = rest if scheme != "file" else "/" + rest.lstrip("/")
    try:
        infos = fs.get_file_info(FileSelector(root, recursive=True))
    except FileNotFoundError:
        return 0
    table = parse_name(name)[1]
    return sum(1 for i in infos if i.type == FileType.File and f"/{table}/" in i.path)


def run_case(store: str, env: dict[str, str], case: Case, n: int, work: Path) -> Outcome:
    """One write with one fault; the checks above. `n` keeps table names apart."""
    from retry_cases import RETRY_PATHS, run_retry_case

    if case.path in RETRY_PATHS:  # retries, resumes, cut connections, a full disk
        return run_retry_case(store, env, case, n, work)  # type: ignore[no-any-return]
    from sweep_cases import PREFIX, run_sweep_case

    if case.path.startswith(PREFIX):  # maintain --all beside foreign tables
        return run_sweep_case(store, env, case, n, work)  # type: ignore[no-any-return]
    table = f"fm.t{n}"
    faults = f"{case.point}={case.action}"
    watched = table  # the table whose states are compared
    if case.path == "import-create":
        watched = f"fm.new{n}"
    else:
        make_table(table, ROWS, file_bytes=int(SMALL_FILES))
    if case.path == "compact":
        for i in (3, 7, 11):
            _podium(
                env, "edit", table, row_id(i), "--turn", "1", "--content", f"fixed {i}", "-m", "e"
            )
        _podium(env, "delete-rows", table, row_id(20), "-m", "junk")
    before = _state(watched)
    labels_before = _labels(table)

    if case.path == "edit":
        args = ["edit", table, row_id(3), "--turn", "1", "--content", "fixed", "-m", "m"]
    elif case.path == "delete-rows":
        args = ["delete-rows", table, row_id(4), row_id(5), "-m", "junk"]
    elif case.path == "label":
        args = ["label", table, row_id(5), "--label", "bad"]
    elif case.path == "import-append":
        more = _jsonl(work / f"more{n}.jsonl", ROWS, 40)
        args = ["import", str(more), "--out", table, "--mode", "append"]
    elif case.path == "import-create":
        more = _jsonl(work / f"new{n}.jsonl", 0, 40)
        args = ["import", str(more), "--out", watched]
    else:
        args = ["maintain", table, "--no-expire", "--no-remove-orphans"]
    proc = _podium(env, *args, faults=faults)
    reset_settings()

    after = _expected_after(case.path, before, n)
    unreadable = False
    try:
        now = _state(watched)
    except Exception:  # noqa: BLE001 - an unreadable head is what the matrix counts
        now, unreadable = None, True
    if case.path == "label":
        labels_now = _labels(table)
        landed = labels_now is not None and (row_id(5), "bad") in labels_now
        state = "after" if landed else "before"
        if not landed and labels_now not in (None, labels_before):
            state = "mixed"
        lost = 0 if now == before else len(set((before or {}).items()) ^ set((now or {}).items()))
    elif case.path == "compact" and now == before:  # no row changes: the head tells
        state, lost = ("after" if _compacted(table) else "before"), 0
    elif now == before:
        state, lost = "before", 0
    elif now == after:
        state, lost = "after", 0
    else:
        closer = min(
            (before or {}, after or {}),
            key=lambda s: len(set(s.items()) ^ set((now or {}).items())),
        )
        state, lost = "mixed", len(set(closer.items()) ^ set((now or {}).items()))
    missing = _missing(watched) + (_missing(f"{table}__annotations") if case.path == "label" else 0)

    sweep = _podium(
        env, "maintain", "--all", "--retention-days", "7", "--grace-hours", "0", "--force"
    )
    reset_settings()
    left = _left_over(watched) + (
        _left_over(f"{table}__annotations") if case.path == "label" else 0
    )
    if sweep.returncode != 0:
        left = max(left, 1)
    elif _state(watched) != now and not unreadable:
        state = "mixed"
    return Outcome(
        store,
        case.path,
        case.point,
        case.action,
        proc.returncode,
        state,
        lost,
        unreadable,
        missing,
        left,
    )


def _expected_after(path: str, before: dict[str, str] | None, n: int) -> dict[str, str] | None:
    rows = dict(before or {})
    if path == "edit":
        turns = json.loads(rows[row_id(3)])
        turns[1]["content"] = "fixed"
        rows[row_id(3)] = json.dumps(turns, sort_keys=True)
    elif path == "delete-rows":
        rows.pop(row_id(4)), rows.pop(row_id(5))
    elif path in ("import-append", "import-create"):
        first = ROWS if path == "import-append" else 0
        for i in range(first, first + 40):
            rows[row_id(i)] = json.dumps(
                [
                    {"content": f"question {i}", "role": "user"},
                    {"content": f"answer {i}\nsecond line", "role": "assistant"},
                ],
                sort_keys=True,
            )
    return rows


def run_matrix(store: str, cases: list[Case], run: Callable[..., Any] = run_case) -> list[Any]:
    """Run `cases` on a fresh `store`, one table each: `run(store, env, case, n, root)`
    for each (`run_case`'s `Outcome`, or what another runner returns)."""
    out: list[Any] = []
    with tempfile.TemporaryDirectory(prefix="podium-faults-") as tmp:
        root = Path(tmp)
        with STORES[store](root) as env:
            saved = {k: os.environ.get(k) for k in env}
            os.environ.update(env)
            reset_settings()
            try:
                for n, case in enumerate(cases):
                    out.append(run(store, env, case, n, root))
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
                reset_settings()
    return out


def table_markdown(outcomes: list[Outcome]) -> str:
    lines = [
        "| store | write paths x points x actions | rows lost | unreadable heads | "
        "missing files | left after maintain |",
        "|---|---|---|---|---|---|",
    ]
    for store in sorted({o.store for o in outcomes}):
        mine = [o for o in outcomes if o.store == store]
        paths = len({o.path for o in mine})
        points = len({o.point for o in mine})
        actions = len({o.action for o in mine})
        lines.append(
            f"| {store} | {paths} x {points} x {actions} = {len(mine)} | "
            f"{sum(o.rows_lost for o in mine)} | {sum(o.unreadable for o in mine)} | "
            f"{sum(o.missing_files for o in mine)} | {sum(o.left_after_maintain for o in mine)} |"
        )
    return "\n".join(lines)


def main() -> None:
    stores = sys.argv[1:] or list(STORES)
    outcomes: list[Outcome] = []
    for store in stores:
        outcomes.extend(run_matrix(store, all_cases()))
    artifacts = HERE.parent.parent / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    (artifacts / "fault-matrix.json").write_text(
        json.dumps([asdict(o) for o in outcomes], indent=2)
    )
    print(table_markdown(outcomes))
    bad = [
        o for o in outcomes if o.rows_lost or o.unreadable or o.missing_files or o.state == "mixed"
    ]
    for o in bad:
        print("FAILED:", asdict(o))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

"""The fault matrix's sweep cases: `podium maintain --all` beside tables it did not make.

Each case lays out one foreign layout in a fresh namespace, plants the files of a table
the catalog does not know (a first import killed before its commit), then runs
`maintain --all --retention-days 0 --grace-hours 0 --force` with a fault at
`maintain.orphans.before_delete` (or none), then once more without one, and checks:
- every table of the layout reads the rows it read before (`state` "before", else
  "mixed"; `rows_lost` counts rows that differ) and can be read (`unreadable`);
- no file any of them references is missing (`missing_files`);
- the planted files and the Podium table's unreferenced files are gone after the clean
  run (`left_after_maintain`), which must succeed.

Layouts: a table in a nested namespace (`ext.lvl.nested`), one named outside Podium's
rule (`ext.bad-name`), one stored inside a Podium table's folder, one whose location is
the folder of a namespace holding a Podium table, one referencing a data file inside a
Podium table's folder, and a tagged snapshot of a Podium table with a partition
statistics file. The faulted run is the one whose exit code is recorded.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "store")]

from foreign_tables import batch, foreign_table  # noqa: E402

LAYOUTS = ("nested", "bad-name", "inside-table", "namespace-folder", "borrowed", "part-stats")
FAULTS = (("none", "none"), ("maintain.orphans.before_delete", "raise"))
FAULTS_KILL = (("maintain.orphans.before_delete", "kill"),)
PREFIX = "sweep-"

Ident = tuple[str, ...]


def sweep_paths() -> list[tuple[str, str, str]]:
    """(path, point, action) of every sweep case."""
    return [(PREFIX + layout, p, a) for layout in LAYOUTS for p, a in FAULTS + FAULTS_KILL]


def _catalog() -> Any:
    from podium.store.catalog.catalog import open_catalog

    return open_catalog()


def _rows(ident: Ident) -> list[str]:
    data = _catalog().load_table(ident).scan().to_arrow().to_pylist()
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in data)


def _missing(ident: Ident) -> int:
    from podium.store.maintenance.table_files import referenced_files

    table = _catalog().load_table(ident)
    return sum(1 for p in referenced_files(table) if not table.io.new_input(p).exists())


def _write(io: Any, path: str, data: bytes | None = None) -> None:
    with io.new_output(path).create(overwrite=True) as out:
        if data is None:
            pq.write_table(batch(5, start=1000), out)
        else:
            out.write(data)


def _layout(layout: str, n: int) -> list[Ident]:
    """Make the layout's tables; returns every table whose rows and files must survive."""
    from review_data import make_table  # type: ignore[import-not-found]

    from podium.config import get_settings
    from podium.store.catalog.catalog import load_table

    warehouse = get_settings().warehouse.rstrip("/")
    mine: Ident = (f"sw{n}", "t")
    make_table(".".join(mine), 30, file_bytes=3000)
    podium_table = load_table(".".join(mine))
    location = podium_table.location().rstrip("/")
    foreign: dict[str, tuple[Ident, str | None]] = {
        "nested": ((f"ext{n}", "lvl", "nested"), None),
        "bad-name": ((f"ext{n}", "bad-name"), None),
        "inside-table": ((f"ext{n}", "inner"), f"{location}/inner"),
        "namespace-folder": ((f"ext{n}", "wide"), f"{warehouse}/sw{n}"),
    }
    if layout in foreign:
        ident, where = foreign[layout]
        foreign_table(ident, location=where)
        return [mine, ident]
    if layout == "borrowed":
        # Nested, so Podium never compacts it (a rewrite would free the file rightly).
        ident = (f"ext{n}", "lvl", "borrower")
        other = foreign_table(ident, location=f"{warehouse}/elsewhere{n}")
        borrowed = f"{location}/data/borrowed.parquet"
        _write(other.io, borrowed)
        other.add_files([borrowed])
        return [mine, ident]
    from pyiceberg.table.statistics import PartitionStatisticsFile
    from pyiceberg.table.update import SetPartitionStatisticsUpdate

    stats = f"{location}/metadata/partition-stats-{n}.parquet"
    _write(podium_table.io, stats, b"PAR1 partition statistics")
    head = podium_table.current_snapshot()
    assert head is not None
    entry = PartitionStatisticsFile(
        snapshot_id=head.snapshot_id, statistics_path=stats, file_size_in_bytes=25
    )
    with podium_table.transaction() as tx:
        tx._apply((SetPartitionStatisticsUpdate(partition_statistics=entry),))
    # Tagged, so expiry keeps the snapshot and the metadata keeps naming the file.
    load_table(".".join(mine)).manage_snapshots().create_tag(head.snapshot_id, "stats").commit()
    return [mine]


def _plant(n: int) -> list[str]:
    """Files of a table the catalog does not know, in a table's layout."""
    from pyiceberg.io import load_file_io

    from podium.config import get_settings

    settings = get_settings()
    io = load_file_io(settings.catalog_properties, settings.warehouse)
    base = f"{settings.warehouse.rstrip('/')}/sw{n}/ghost"
    paths = [f"{base}/data/00000-0-ghost.parquet", f"{base}/metadata/00000-ghost.metadata.json"]
    for path in paths:
        _write(io, path, b"{}")
    return paths


def run_sweep_case(store: str, env: dict[str, str], case: Any, n: int, work: Path) -> Any:
    """One sweep case (`case.path` is PREFIX + a layout): the matrix's Outcome."""
    from fault_matrix import Outcome, _podium  # type: ignore[import-not-found]
    from pyiceberg.io import load_file_io

    from podium.config import get_settings, reset_settings
    from podium.store.maintenance.orphans import unreferenced_files

    guarded = _layout(case.path.removeprefix(PREFIX), n)
    before = {ident: _rows(ident) for ident in guarded}
    planted = _plant(n)
    sweep = ("maintain", "--all", "--retention-days", "0", "--grace-hours", "0", "--force")
    faults = "" if case.point == "none" else f"{case.point}={case.action}"
    proc = _podium(env, *sweep, faults=faults)
    clean = _podium(env, *sweep)
    reset_settings()

    unreadable, lost, missing = False, 0, 0
    for ident in guarded:
        try:
            now = _rows(ident)
            missing += _missing(ident)
        except Exception:  # noqa: BLE001 - an unreadable table is what the matrix counts
            unreadable = True
            continue
        lost += len(set(before[ident]) ^ set(now))
    settings = get_settings()
    io = load_file_io(settings.catalog_properties, settings.warehouse)
    left = sum(1 for p in planted if io.new_input(p).exists())
    try:
        left += len(unreferenced_files(".".join(guarded[0])))
    except Exception:  # noqa: BLE001 - the Podium table is gone: counted as unreadable
        unreadable = True
    if clean.returncode != 0:
        left = max(left, 1)
    state = "before" if not lost and not unreadable else "mixed"
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

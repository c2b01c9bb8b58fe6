"""Which snapshots of a table must survive expiry, and who names each: a job (its pinned
inputs and its outputs, so every checkpoint's training data and every output
`podium jobs rerun --compare` checks against) or another table's lineage. The `maintain`
job keeps them and reports them (podium/jobs/maintain.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select

from podium.errors import InvalidInput
from podium.jobs.tables import FINISHED, db, jobs
from podium.store.catalog.catalog import full_name
from podium.store.catalog.every_table import CatalogTable, every_table
from podium.store.schema import PROP_LINEAGE_PREFIX

__all__ = [
    "Lineage",
    "Pins",
    "job_pins",
    "job_snapshots",
    "lineage_pins",
    "lineage_snapshots",
    "tables_lineage",
]


_REF = re.compile(r"^(?P<name>[^@\s]+)@(?P<snapshot>-?\d+)$")


def _same_table(name: str, table: str) -> bool:
    """Whether `name` (as a job or lineage wrote it) names `table`; a name outside
    Podium's rule names none of Podium's tables."""
    try:
        return full_name(name) == table
    except InvalidInput:
        return name == table


def _pinned(values: Iterable[Any], table: str) -> set[int]:
    """Snapshot ids of `table` in strings like "ns.t@123", anywhere in JSON values."""
    out: set[int] = set()
    stack = list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            match = _REF.match(value.strip())
            if match and _same_table(match["name"], table):
                out.add(int(match["snapshot"]))
            elif value[:1] in "[{":
                try:
                    stack.append(json.loads(value))
                except ValueError:
                    pass
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return out


def _output_snapshots(outputs: str, table: str) -> set[int]:
    """Snapshots of `table` in a job's recorded outputs ({"tables": [{"name", "snapshot_id"}]})."""
    try:
        recorded = json.loads(outputs)
    except ValueError:
        return set()
    tables = recorded.get("tables") if isinstance(recorded, dict) else None
    out = set()
    for entry in tables if isinstance(tables, list) else ():
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        sid = entry.get("snapshot_id")
        if isinstance(sid, int) and _same_table(entry["name"], table):
            out.add(sid)
    return out


Pins = dict[int, list[str]]  # snapshot id -> who keeps it, in words
Lineage = list[tuple[str, dict[str, str]]]  # (table, its lineage properties) of each table


def _add(pins: Pins, snapshots: Iterable[int], why: str) -> None:
    for sid in snapshots:
        pins.setdefault(sid, []).append(why)


def job_pins(table: str, pin_days: float | None = None, now: datetime | None = None) -> Pins:
    """Snapshots of `table` that a job names, with the job: its pinned inputs, its
    outputs (so every checkpoint's training data and every output a re-run compares
    against). With `pin_days`, a job that ended more than that many days ago keeps
    nothing; one not ended yet always does. A maintain job's own outputs are its report,
    not a dataset: naming them would pin one more snapshot each run."""
    since = None if pin_days is None else (now or datetime.now(UTC)) - timedelta(days=pin_days)
    with db().connect() as con:
        rows = con.execute(
            select(
                jobs.c.id,
                jobs.c.kind,
                jobs.c.status,
                jobs.c.finished_at,
                jobs.c.inputs,
                jobs.c.outputs,
            )
        ).all()
    pins: Pins = {}
    for job_id, kind, status, finished, inputs, outputs in rows:
        if since is not None and status in FINISHED and finished is not None:
            ended = finished if finished.tzinfo else finished.replace(tzinfo=UTC)
            if ended < since:
                continue
        when = f"{status} {finished:%Y-%m-%d}" if finished is not None else status
        named = _pinned([v for v in (inputs, outputs) if v], table)
        if outputs and kind != "maintain":
            named |= _output_snapshots(outputs, table)
        _add(pins, named, f"job {job_id} ({kind}, {when})")
    return pins


def job_snapshots(table: str, pin_days: float | None = None) -> set[int]:
    """The snapshots `job_pins` names."""
    return set(job_pins(table, pin_days))


def tables_lineage(tables: list[CatalogTable] | None = None) -> Lineage:
    """Every readable table's lineage properties, any namespace depth (loaded once for a
    run over many tables; `tables` when they are loaded already)."""
    return [
        (
            entry.name,
            {k: v for k, v in entry.table.properties.items() if k.startswith(PROP_LINEAGE_PREFIX)},
        )
        for entry in (every_table() if tables is None else tables)
        if entry.table is not None
    ]


def lineage_pins(
    table: str,
    lineage: Lineage | None = None,
    pin_days: float | None = None,
) -> Pins:
    """Snapshots of `table` that a job (`job_pins`) or another table's lineage
    properties name, with who names them."""
    pins = job_pins(table, pin_days)
    for other, props in tables_lineage() if lineage is None else lineage:
        named = _pinned(list(props.values()), table)
        validated = props.get(f"{PROP_LINEAGE_PREFIX}validated_table")
        snapshot = props.get(f"{PROP_LINEAGE_PREFIX}validated_snapshot")
        if validated and snapshot and _same_table(validated, table) and snapshot.isdigit():
            named.add(int(snapshot))
        _add(pins, named, f"lineage of table {other}")
    return pins


def lineage_snapshots(table: str, lineage: Lineage | None = None) -> set[int]:
    """The snapshots `lineage_pins` names."""
    return set(lineage_pins(table, lineage))

"""The validation report table: one row per failing turn, tied to the snapshot checked.

A report is an Iceberg table like any other (default `<ns>.<table>__validation`), so
it can be browsed, queried and joined; its properties say which table and snapshot
it describes, which is how Browse knows whether its "malformed only" filter applies.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyiceberg.table import Table

from podium.store.catalog import kinds
from podium.store.catalog.catalog import load_or_none, load_table, parse_name
from podium.store.read.read import iter_table_batches, read_small_table
from podium.store.schema import PROP_LINEAGE_PREFIX
from podium.store.write.describing import Describing

REPORT_KIND = kinds.VALIDATION_REPORT
PROP_VALIDATED_TABLE = f"{PROP_LINEAGE_PREFIX}validated_table"
PROP_VALIDATED_SNAPSHOT = f"{PROP_LINEAGE_PREFIX}validated_snapshot"
PROP_RULES = "podium.validate.rules"
PROP_EXTRACT = "podium.validate.extract"
PROP_ROLES = "podium.validate.roles"
PROP_SUMMARY = "podium.validate.summary"
# A report describes one snapshot of its table, as a signal does (store/write/describing.py).
REPORT = Describing(
    REPORT_KIND, PROP_VALIDATED_TABLE, PROP_VALIDATED_SNAPSHOT, "a validation report"
)

REPORT_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string()),
        pa.field("turn", pa.int32()),
        pa.field("role", pa.string()),
        pa.field("rule", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("message", pa.string()),
        pa.field("line", pa.int32()),
        pa.field("column", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("message_offset", pa.int64()),
        pa.field("excerpt", pa.string()),
    ]
)


def report_name(table: str) -> str:
    ns, name = parse_name(table)
    return f"{ns}.{name}__validation"


def write_report(
    name: str,
    failures: Iterable[pa.RecordBatch],
    properties: Mapping[str, str],
    final_properties: Callable[[], Mapping[str, str]] | None = None,
) -> int | None:
    """Create or replace report `name` with the streamed `failures` in one commit;
    returns its new snapshot id. Concurrent runs writing one report each commit whole
    (the last one wins) and leave no data files behind.

    Refuses to overwrite a table that is not a validation report, so a mistyped
    `--report` can never clobber a dataset.
    """
    with warnings.catch_warnings():
        # Replacing a report with an empty one deletes nothing, which pyiceberg warns about.
        warnings.filterwarnings("ignore", message="Delete operation did not match any records")
        table = REPORT.replace(
            name,
            failures,
            schema=REPORT_SCHEMA,
            properties=properties,
            final_properties=final_properties,
            advice="choose another --report name",
        )
    snapshot = table.current_snapshot()
    return snapshot.snapshot_id if snapshot else None


def failure_batch(failures: Sequence[Mapping[str, Any]]) -> pa.RecordBatch:
    """Report rows as one Arrow batch of the report's schema."""
    return pa.RecordBatch.from_pylist(list(failures), schema=REPORT_SCHEMA)


def report_for(
    table: str, snapshot_id: int | str | None = None, report: str | None = None
) -> str | None:
    """Name of the report describing `table` at `snapshot_id` (default current), if any."""
    name = report or report_name(table)
    loaded = load_or_none(name)
    if loaded is None or not report_covers(loaded, load_table(table), snapshot_id):
        return None
    return name


def report_covers(report: Table, table: Table, snapshot_id: int | str | None = None) -> bool:
    """Whether `report` is a validation report of `table` at `snapshot_id` (default:
    its current snapshot)."""
    return REPORT.covers(report, table, snapshot_id)


def read_report(name: str) -> pa.Table:
    """All rows of report `name` (empty with the report schema when nothing failed).

    Bounded: a report too big to hold is refused; page it with `podium show` instead."""
    table = load_table(name)
    snapshot = table.current_snapshot()
    if snapshot is None:
        return REPORT_SCHEMA.empty_table()
    return read_small_table(table, snapshot.snapshot_id)


def malformed_ids(
    table: str, snapshot_id: int | str | None = None, report: str | None = None
) -> set[str] | None:
    """Ids of rows with a failing turn, or None when no report covers this snapshot."""
    name = report_for(table, snapshot_id, report)
    return None if name is None else failing_ids_in(load_table(name))


def failing_ids_in(report: Table) -> set[str]:
    """Ids of the rows a loaded validation report names (each has a failing turn)."""
    snapshot = report.current_snapshot()
    if snapshot is None:
        return set()
    return {
        i
        for batch in iter_table_batches(report, snapshot.snapshot_id, columns=["id"])
        for i in batch.column("id").to_pylist()
        if i is not None
    }


def report_summary(name: str) -> dict[str, Any]:
    """The summary stored with a report (counts by rule and kind, rows, turns) and the
    settings of the run (rules, extract, roles)."""
    props = load_table(name).properties
    summary: dict[str, Any] = json.loads(props.get(PROP_SUMMARY) or "{}")
    summary["rules"] = json.loads(props.get(PROP_RULES) or "[]")
    summary["roles"] = json.loads(props.get(PROP_ROLES) or "[]")
    summary["extract"] = props.get(PROP_EXTRACT, "whole")
    return summary

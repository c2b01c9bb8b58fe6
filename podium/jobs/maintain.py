"""The `maintain` job: compact a table, expire its old snapshots, remove orphan files.

    podium maintain team.sft                          # defaults: keep 7 days, grace 1 day
    podium maintain team.sft --retention-days 0 --grace-hours 0   # everything now
    podium maintain team.sft --no-expire --no-remove-orphans      # compaction only

The work is `podium.store.maintenance`'s; this module adds what only the job layer
knows: which snapshots must survive expiry because a run card or a checkpoint's
training job names them (the jobs' pinned inputs and outputs) or another table's
lineage does. Tags and branches are protected by Iceberg itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import select

from podium.config import get_settings
from podium.jobs.tables import db, jobs
from podium.reporting import JobOutputs, Reporter
from podium.store import maintenance
from podium.store.catalog import full_name, list_tables, load_table
from podium.store.schema import PROP_LINEAGE_PREFIX
from podium.store.users import author_name


class MaintainConfig(BaseModel):
    """Compact, expire and clean one table (kind: maintain)."""

    table: str = Field(description="Table to maintain (NAMESPACE.TABLE).")
    compact: bool = Field(
        True, description="Rewrite small data files and delete files into target-size files."
    )
    expire: bool = Field(True, description="Expire snapshots older than the retention.")
    retention_days: float = Field(
        7.0,
        ge=0,
        description="Snapshots newer than this stay (time travel); tagged, branched and "
        "lineage-named snapshots always stay.",
    )
    remove_orphans: bool = Field(
        True, description="Delete files no live snapshot references (after the grace period)."
    )
    grace_hours: float = Field(
        24.0,
        ge=0,
        description="Only files older than this are removed, so a write in flight is never "
        "touched; 0 removes every unreferenced file now.",
    )


_REF = re.compile(r"^(?P<name>[^@\s]+)@(?P<snapshot>-?\d+)$")


def _pinned(values: Iterable[Any], table: str) -> set[int]:
    """Snapshot ids of `table` in strings like "ns.t@123", anywhere in JSON values."""
    out: set[int] = set()
    stack = list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            match = _REF.match(value.strip())
            if match and full_name(match["name"]) == table:
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


def lineage_snapshots(table: str) -> set[int]:
    """Snapshots of `table` that a job's card (inputs, outputs: so every checkpoint's
    training data) or another table's lineage properties name."""
    with db().connect() as con:
        rows = con.execute(select(jobs.c.inputs, jobs.c.outputs)).all()
    keep = _pinned([v for row in rows for v in row if v], table)
    for other in list_tables():
        props = load_table(other).properties
        lineage = [v for k, v in props.items() if k.startswith(PROP_LINEAGE_PREFIX)]
        keep |= _pinned(lineage, table)
        validated = props.get(f"{PROP_LINEAGE_PREFIX}validated_table")
        snapshot = props.get(f"{PROP_LINEAGE_PREFIX}validated_snapshot")
        if validated and snapshot and full_name(validated) == table and snapshot.isdigit():
            keep.add(int(snapshot))
    return keep


def run_maintain(cfg: MaintainConfig, reporter: Reporter) -> JobOutputs:
    name = full_name(cfg.table)
    before = maintenance.footprint(name)
    reporter.log(f"{name} before: {before.to_dict()}")
    summary: dict[str, Any] = {"table": name, "before": before.to_dict()}
    steps = [s for s in ("compact", "expire", "remove_orphans") if getattr(cfg, s)]
    for done, step in enumerate(steps):
        reporter.check_cancelled()
        reporter.progress(done, len(steps), step.replace("_", " "))
        if step == "compact":
            compaction = maintenance.compact(
                name, author=author_name(), target_file_bytes=get_settings().target_file_bytes
            )
            summary["compaction"] = compaction.to_dict()
            reporter.log(f"compaction: {compaction.to_dict()}")
        elif step == "expire":
            keep = lineage_snapshots(name)
            cutoff = datetime.now(UTC) - timedelta(days=cfg.retention_days)
            expired = maintenance.expire(name, older_than=cutoff, keep=keep)
            summary["expired_snapshots"] = len(expired)
            summary["kept_for_lineage"] = sorted(keep)
            reporter.log(f"expired {len(expired)} snapshots; kept for lineage: {sorted(keep)}")
        else:
            files, size = maintenance.remove_orphans(name, grace_s=cfg.grace_hours * 3600)
            summary["orphans_removed"] = {"files": files, "bytes": size}
            reporter.log(f"removed {files} orphan files ({size} bytes)")
    after = maintenance.footprint(name)
    summary["after"] = after.to_dict()
    reporter.progress(len(steps), len(steps), "done")
    reporter.log(f"{name} after: {after.to_dict()}")
    return JobOutputs(tables=[name], summary=summary)

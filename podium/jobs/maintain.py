"""The `maintain` job: compact a table, expire its old snapshots, remove orphan files.

    podium maintain team.sft                          # defaults: keep 7 days, grace 1 day
    podium maintain team.sft --retention-days 0 --grace-hours 1   # all but the last hour
    podium maintain team.sft --no-expire --no-remove-orphans      # compaction only
    podium maintain --all                             # every table, and the warehouse

The work is the store's (`podium.store.maintenance.maintenance`, `store.maintenance.expiry`,
`store.maintenance.warehouse_sweep`); this module adds what only the job layer knows:
which snapshots must survive expiry because a job names them (its pinned inputs and its
outputs, so every checkpoint's training data and every job `podium jobs rerun --compare`
can check) or another table's lineage does. Refs and what was a head within the grace
period are kept by the store.

A grace period under `GRACE_FLOOR_HOURS` is refused unless `force` is set: a write
still in flight (files written, commit not yet landed) and a reader still on a previous
head both count on it.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator
from sqlalchemy import select

from podium.config import get_settings
from podium.errors import InvalidInput, PodiumError
from podium.jobs.tables import db, jobs
from podium.reporting import JobOutputs, Reporter
from podium.store.catalog.catalog import full_name, list_tables, load_table
from podium.store.maintenance import expiry, maintenance, warehouse_sweep
from podium.store.schema import PROP_LINEAGE_PREFIX
from podium.store.state.users import author_name

GRACE_FLOOR_HOURS = 1.0


class MaintainConfig(BaseModel):
    """Compact, expire and clean one table or all of them (kind: maintain)."""

    table: str | None = Field(None, description="Table to maintain (NAMESPACE.TABLE).")
    all_tables: bool = Field(
        False,
        description="Maintain every table, then remove files under the warehouse that "
        "belong to no table the catalog knows (after the grace period).",
    )
    force: bool = Field(
        False,
        description=f"Allow a grace period under {GRACE_FLOOR_HOURS:g} hour (a write in "
        "flight or a reader of a previous head may then fail).",
    )
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
        "touched, and a snapshot that was a head this recently is kept, so a reader that "
        f"started on it finishes; under {GRACE_FLOOR_HOURS:g} only with --force.",
    )

    @field_validator("grace_hours")
    @classmethod
    def _grace_floor(cls, value: float, info: ValidationInfo) -> float:
        if value < GRACE_FLOOR_HOURS and not info.data.get("force"):
            raise ValueError(
                f"below the floor of {GRACE_FLOOR_HOURS:g} hour: a write in flight would lose "
                "its files and a reader of a previous head would fail; pass --force "
                "(force: true) to go below it on a table nothing else is using"
            )
        return value

    @model_validator(mode="after")
    def _one_table_or_all(self) -> MaintainConfig:
        if (self.table is None) == (not self.all_tables):
            raise ValueError("name one table or pass --all (all_tables: true), not both")
        return self


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
        if isinstance(sid, int) and full_name(entry["name"]) == table:
            out.add(sid)
    return out


def job_snapshots(table: str) -> set[int]:
    """Snapshots of `table` that a job names: its pinned inputs, its outputs (so every
    checkpoint's training data and every output a re-run compares against). A maintain
    job's own outputs are its report, not a dataset: naming them would pin one more
    snapshot each run."""
    with db().connect() as con:
        rows = con.execute(select(jobs.c.kind, jobs.c.inputs, jobs.c.outputs)).all()
    keep = _pinned([v for _, *values in rows for v in values if v], table)
    for kind, _, outputs in rows:
        if outputs and kind != "maintain":
            keep |= _output_snapshots(outputs, table)
    return keep


def tables_lineage() -> list[dict[str, str]]:
    """Every table's lineage properties (loaded once for a run over many tables)."""
    return [
        {k: v for k, v in load_table(t).properties.items() if k.startswith(PROP_LINEAGE_PREFIX)}
        for t in list_tables()
    ]


def lineage_snapshots(table: str, lineage: list[dict[str, str]] | None = None) -> set[int]:
    """Snapshots of `table` that a job (`job_snapshots`) or another table's lineage
    properties name."""
    keep = job_snapshots(table)
    for props in tables_lineage() if lineage is None else lineage:
        keep |= _pinned(list(props.values()), table)
        validated = props.get(f"{PROP_LINEAGE_PREFIX}validated_table")
        snapshot = props.get(f"{PROP_LINEAGE_PREFIX}validated_snapshot")
        if validated and snapshot and full_name(validated) == table and snapshot.isdigit():
            keep.add(int(snapshot))
    return keep


def run_maintain(cfg: MaintainConfig, reporter: Reporter) -> JobOutputs:
    if not cfg.all_tables:
        assert cfg.table is not None  # the config's validator: one table or all
        name = full_name(cfg.table)
        return JobOutputs(tables=[name], summary=maintain_table(cfg, name, reporter))
    names = list_tables()
    lineage = tables_lineage() if cfg.expire else []
    summary: dict[str, Any] = {"tables": {}, "failed": {}}
    for name in names:
        reporter.check_cancelled()
        try:
            summary["tables"][name] = maintain_table(cfg, name, reporter, lineage)
        except PodiumError as exc:  # one table's conflict must not stop the others
            summary["failed"][name] = str(exc)
            reporter.log(f"{name}: {exc}")
    files, size = warehouse_sweep.remove_warehouse_orphans(grace_s=cfg.grace_hours * 3600)
    summary["warehouse_orphans_removed"] = {"files": files, "bytes": size}
    reporter.log(f"warehouse: removed {files} files of no known table ({size} bytes)")
    if summary["failed"]:
        failed = ", ".join(summary["failed"])
        raise InvalidInput(
            f"maintain --all: {len(summary['failed'])} of {len(names)} tables failed "
            f"({failed}); the others were maintained. Run `podium maintain TABLE` for "
            f"each: {'; '.join(f'{n}: {e}' for n, e in summary['failed'].items())}"
        )
    return JobOutputs(tables=names, summary=summary)


def _named_now(keep: frozenset[int], table: str) -> set[int]:
    return set(keep) | job_snapshots(table)


def maintain_table(
    cfg: MaintainConfig,
    name: str,
    reporter: Reporter,
    lineage: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """Compaction, expiry and orphan removal of one table, as `cfg` says; the summary."""
    grace_s = cfg.grace_hours * 3600
    before = maintenance.footprint(name)
    reporter.log(f"{name} before: {before.to_dict()}")
    summary: dict[str, Any] = {"table": name, "before": before.to_dict()}
    steps = [s for s in ("compact", "expire", "remove_orphans") if getattr(cfg, s)]
    for done, step in enumerate(steps):
        reporter.check_cancelled()
        reporter.progress(done, len(steps), f"{name}: {step.replace('_', ' ')}")
        if step == "compact":
            compaction = maintenance.compact(
                name, author=author_name(), target_file_bytes=get_settings().target_file_bytes
            )
            summary["compaction"] = compaction.to_dict()
            reporter.log(f"compaction: {compaction.to_dict()}")
        elif step == "expire":
            keep = lineage_snapshots(name, lineage)
            named = functools.partial(_named_now, frozenset(keep), name)
            cutoff = datetime.now(UTC) - timedelta(days=cfg.retention_days)
            expired = expiry.expire(
                name,
                older_than=cutoff,
                # Asked again just before the commit: a job queued meanwhile may pin one.
                keep=named,
                grace_s=grace_s,
            )
            summary["expired_snapshots"] = len(expired)
            summary["kept_for_lineage"] = sorted(keep)
            reporter.log(f"expired {len(expired)} snapshots; kept for lineage: {sorted(keep)}")
        else:
            files, size = maintenance.remove_orphans(name, grace_s=grace_s)
            summary["orphans_removed"] = {"files": files, "bytes": size}
            reporter.log(f"removed {files} orphan files ({size} bytes)")
    after = maintenance.footprint(name)
    summary["after"] = after.to_dict()
    reporter.progress(len(steps), len(steps), f"{name}: done")
    reporter.log(f"{name} after: {after.to_dict()}")
    return summary

"""The `maintain` job: compact a table, expire its old snapshots, remove orphan files.

    podium maintain team.sft                          # defaults: keep 7 days, grace 1 day
    podium maintain team.sft --retention-days 0 --grace-hours 1   # all but the last hour
    podium maintain team.sft --no-expire --no-remove-orphans      # compaction only
    podium maintain --all                             # every table, and the warehouse
    podium maintain team.sft --job-pin-days 30        # jobs ended 30+ days ago pin nothing

The work is the store's (`podium.store.maintenance.maintenance`, `store.maintenance.expiry`,
`store.maintenance.orphans`, `store.maintenance.warehouse_sweep`); this module adds what
only the job layer knows (`podium.jobs.pins`): which snapshots must survive expiry
because a job names them (its pinned inputs and its outputs, so every checkpoint's
training data and every job `podium jobs rerun --compare` can check) or another table's
lineage does. Refs and what
was a head within the grace period are kept by the store. Each run says which snapshots
past the retention those pins keep, who names each, and the files and bytes only they
hold (compaction cannot free them); `job_pin_days` lets the pins of jobs that ended long
ago end.

A grace period under `GRACE_FLOOR_HOURS` is refused unless `force` is set: a write
still in flight (files written, commit not yet landed) and a reader still on a previous
head both count on it.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from podium.config import get_settings
from podium.errors import InvalidInput, PodiumError
from podium.jobs.pins import Lineage, job_snapshots, lineage_pins, tables_lineage
from podium.reporting import JobOutputs, Reporter
from podium.store.catalog.catalog import full_name
from podium.store.catalog.every_table import every_table
from podium.store.maintenance import expiry, maintenance, orphans, warehouse_sweep
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
    job_pin_days: float | None = Field(
        None,
        ge=0,
        description="Jobs that ended more than this many days ago stop keeping the snapshots "
        "they name (inputs and outputs) from expiry; unset, a job keeps them while its record "
        "exists. Tags and other tables' lineage keep theirs whatever this says.",
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


def _podium_name(name: str) -> bool:
    try:
        return full_name(name) == name
    except InvalidInput:
        return False


def run_maintain(cfg: MaintainConfig, reporter: Reporter) -> JobOutputs:
    if not cfg.all_tables:
        assert cfg.table is not None  # the config's validator: one table or all
        name = full_name(cfg.table)
        return JobOutputs(tables=[name], summary=maintain_table(cfg, name, reporter))
    return _maintain_all(cfg, reporter)


def _maintain_all(cfg: MaintainConfig, reporter: Reporter) -> JobOutputs:
    """Every table Podium can name is compacted and expired; then, with the whole
    catalog read once (`orphans.take_guard`), each one's orphans are removed and the
    warehouse swept. A table another engine made with a name outside Podium's rule (in a
    nested namespace, `ext.bad-name`) is not Podium's to rewrite: it is skipped, and its
    files are guarded like every table's. A table that cannot be read fails, and no file
    is deleted anywhere (which files it needs is unknown)."""
    catalog = every_table()
    names = [e.name for e in catalog if e.table is not None and _podium_name(e.name)]
    summary: dict[str, Any] = {"tables": {}, "failed": {}, "skipped": {}}
    for entry in catalog:
        if entry.table is None:
            summary["failed"][entry.name] = f"cannot be read: {entry.problem}"
        elif entry.name not in names:
            summary["skipped"][entry.name] = (
                "named outside Podium's rule (NAMESPACE.TABLE of letters, digits and '_'): "
                "not compacted or expired (its own engine maintains it); every file it "
                "references is kept"
            )
    for name, why in {**summary["failed"], **summary["skipped"]}.items():
        reporter.log(f"{name}: {why}")
    lineage = tables_lineage(catalog) if cfg.expire else []
    done: dict[str, dict[str, Any]] = {}
    for name in names:
        reporter.check_cancelled()
        try:
            done[name] = _before_and_commits(cfg, name, reporter, lineage)
        except PodiumError as exc:  # one table's conflict must not stop the others
            summary["failed"][name] = str(exc)
            reporter.log(f"{name}: {exc}")
    guard = orphans.take_guard()
    try:
        guard.check_readable("orphan removal of every table and the warehouse sweep")
    except PodiumError as exc:  # each table's removal would say the same
        summary["orphans_skipped"] = str(exc)
        reporter.log(str(exc))
        for name, why in guard.unreadable.items():  # one may have broken since the listing
            summary["failed"].setdefault(name, f"cannot be read: {why}")
    for name, one in done.items():
        try:
            if cfg.remove_orphans and "orphans_skipped" not in summary:
                _remove_orphans(cfg, name, reporter, one, guard)
            summary["tables"][name] = _after(name, reporter, one)
        except PodiumError as exc:
            summary["failed"].setdefault(name, str(exc))
            reporter.log(f"{name}: {exc}")
    try:
        files, size = warehouse_sweep.remove_warehouse_orphans(grace_s=cfg.grace_hours * 3600)
    except PodiumError as exc:
        summary["warehouse_skipped"] = str(exc)
        reporter.log(f"warehouse: {exc}")
        files = size = 0
    else:
        reporter.log(f"warehouse: removed {files} files of no known table ({size} bytes)")
    summary["warehouse_orphans_removed"] = {"files": files, "bytes": size}
    if summary["failed"]:
        raise InvalidInput(_failure(summary, len(catalog), guard.unreadable))
    return JobOutputs(tables=names, summary=summary)


def _failure(summary: dict[str, Any], tables: int, unreadable: dict[str, str]) -> str:
    """One message for the tables `maintain --all` could not maintain, and what to do."""
    failed = summary["failed"]
    out = f"maintain --all: {len(failed)} of {tables} tables failed; the others were maintained."
    if unreadable:
        out += (
            f" {', '.join(sorted(unreadable))} cannot be read, so no file was deleted "
            "anywhere (which files it needs is unknown): restore its metadata or drop it "
            "from the catalog, then run maintain --all again ("
            + "; ".join(f"{n}: {why}" for n, why in sorted(unreadable.items()))
            + ")."
        )
    others = {n: e for n, e in failed.items() if n not in unreadable}
    if others:
        out += " Run `podium maintain TABLE` for each of: " + "; ".join(
            f"{n}: {e}" for n, e in others.items()
        )
    return out


def _named_now(keep: frozenset[int], table: str, pin_days: float | None) -> set[int]:
    return set(keep) | job_snapshots(table, pin_days)


def maintain_table(
    cfg: MaintainConfig,
    name: str,
    reporter: Reporter,
    lineage: Lineage | None = None,
) -> dict[str, Any]:
    """Compaction, expiry and orphan removal of one table, as `cfg` says; the summary."""
    summary = _before_and_commits(cfg, name, reporter, lineage)
    if cfg.remove_orphans:
        _remove_orphans(cfg, name, reporter, summary, orphans.take_guard())
    return _after(name, reporter, summary)


def _before_and_commits(
    cfg: MaintainConfig,
    name: str,
    reporter: Reporter,
    lineage: Lineage | None = None,
) -> dict[str, Any]:
    """The footprint before, then compaction and expiry as `cfg` says; the summary."""
    before = maintenance.footprint(name)
    reporter.log(f"{name} before: {before.to_dict()}")
    summary: dict[str, Any] = {"table": name, "before": before.to_dict()}
    steps = [s for s in ("compact", "expire") if getattr(cfg, s)]
    for done, step in enumerate(steps):
        reporter.check_cancelled()
        reporter.progress(done, len(steps) + 1, f"{name}: {step}")
        if step == "compact":
            compaction = maintenance.compact(
                name, author=author_name(), target_file_bytes=get_settings().target_file_bytes
            )
            summary["compaction"] = compaction.to_dict()
            reporter.log(f"compaction: {compaction.to_dict()}")
        else:
            _expire(cfg, name, reporter, summary, lineage)
    return summary


def _expire(
    cfg: MaintainConfig,
    name: str,
    reporter: Reporter,
    summary: dict[str, Any],
    lineage: Lineage | None,
) -> None:
    pins = lineage_pins(name, lineage, cfg.job_pin_days)
    keep = set(pins)
    named = functools.partial(_named_now, frozenset(keep), name, cfg.job_pin_days)
    cutoff = datetime.now(UTC) - timedelta(days=cfg.retention_days)
    expired = expiry.expire(
        name,
        older_than=cutoff,
        # Asked again just before the commit: a job queued meanwhile may pin one.
        keep=named,
        grace_s=cfg.grace_hours * 3600,
    )
    summary["expired_snapshots"] = len(expired)
    summary["kept_for_lineage"] = sorted(keep)
    reporter.log(f"expired {len(expired)} snapshots; kept for lineage: {sorted(keep)}")
    held = maintenance.held_past_retention(name, keep, cutoff)
    summary["pinned"] = {
        "snapshots": [{"snapshot_id": sid, "kept_by": pins[sid]} for sid in held.snapshots],
        "files": held.files,
        "bytes": held.bytes,
    }
    if held.snapshots:
        reporter.log(
            f"kept {len(held.snapshots)} snapshots past the retention because jobs or "
            f"lineage name them; they hold {held.files} files ({held.bytes} bytes) the "
            f"head does not: "
            + "; ".join(f"{sid}: {', '.join(pins[sid])}" for sid in held.snapshots)
        )


def _remove_orphans(
    cfg: MaintainConfig,
    name: str,
    reporter: Reporter,
    summary: dict[str, Any],
    guard: orphans.Guard,
) -> None:
    reporter.check_cancelled()
    files, size = orphans.remove_orphans(name, grace_s=cfg.grace_hours * 3600, guard=guard)
    summary["orphans_removed"] = {"files": files, "bytes": size}
    reporter.log(f"removed {files} orphan files ({size} bytes)")


def _after(name: str, reporter: Reporter, summary: dict[str, Any]) -> dict[str, Any]:
    after = maintenance.footprint(name)
    summary["after"] = after.to_dict()
    reporter.progress(1, 1, f"{name}: done")
    reporter.log(f"{name} after: {after.to_dict()}")
    return summary

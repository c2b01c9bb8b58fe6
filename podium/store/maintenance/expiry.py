"""Snapshot expiry that never takes a snapshot from under a ref, a job or a reader.

pyiceberg's `ExpireSnapshots` commits with only `AssertTableUUID`, and removing a
snapshot also drops every ref pointing at it: a tag made between planning and commit
would vanish with its snapshot. Here the commit carries requirements on every ref the
plan saw (pyiceberg's `AssertRefSnapshotId`, and on catalogs that check requirements
themselves, SQL ones, that the set of refs is exactly the planned one), so any ref that
moved, appeared or went away meanwhile fails the commit (`CommitFailedException`) and
expiry plans again on the new metadata.

What stays, whatever its age:
- every ref's head (branches and tags) when the commit lands;
- what `keep` names (the job layer's: jobs' inputs and outputs, other tables' lineage),
  asked again just before the commit;
- every snapshot that was the head of any ref within the grace period: one committed
  within it, and one a ref still pointed at when the period began (read from the
  snapshot log, the metadata files current within the period, and each ref's history),
  so a reader that started on a head finishes even if the table moved on meanwhile.
"""

from __future__ import annotations

import gzip
import json
import logging
import time
from collections.abc import Callable, Collection, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.table.update import (
    AssertRefSnapshotId,
    AssertTableUUID,
    RemoveSnapshotsUpdate,
    ValidatableTableRequirement,
)

from podium.errors import InvalidInput
from podium.failpoints import hit
from podium.store.catalog.catalog import load_table
from podium.store.read.plan import warm_after_commit

if TYPE_CHECKING:
    from pyiceberg.table import Table
    from pyiceberg.table.metadata import TableMetadata

log = logging.getLogger("podium")

ATTEMPTS = 5  # plans tried before giving up: each failed one saw a concurrent ref change

Keep = Collection[int] | Callable[[], Collection[int]]


class AssertRefsAsPlanned(ValidatableTableRequirement):
    """Every ref (name and snapshot) is exactly as planned: none moved, none was
    created (a tag on a doomed snapshot), none removed. Checked by catalogs that
    validate requirements locally (pyiceberg's SQL catalog, Podium's lean one)."""

    type: Literal["podium-assert-refs-as-planned"] = Field(default="podium-assert-refs-as-planned")
    refs: dict[str, int]

    def validate(self, base_metadata: TableMetadata | None) -> None:  # type: ignore[override]
        if base_metadata is None:
            raise CommitFailedException("Requirement failed: current table metadata is missing")
        found = {name: ref.snapshot_id for name, ref in base_metadata.refs.items()}
        if found != self.refs:
            changed = sorted(set(found.items()) ^ set(self.refs.items()))
            raise CommitFailedException(
                f"Requirement failed: refs changed since expiry planned: {changed}"
            )


def expire(
    name: str,
    *,
    older_than: datetime,
    keep: Keep = (),
    grace_s: float = 0.0,
    now: float | None = None,
    attempts: int = ATTEMPTS,
) -> list[int]:
    """Drop snapshots committed before `older_than`, except ref heads, `keep` and what
    was a head within `grace_s` before `now`; returns the ids dropped. Re-plans when a
    ref changed between planning and commit."""
    for _ in range(attempts):
        table = load_table(name)
        kept = _kept(keep)
        doomed = plan_expiry(table, older_than=older_than, keep=kept, grace_s=grace_s, now=now)
        if not doomed:
            return []
        hit("maintain.expire.before_commit")
        if set(doomed) & set(_kept(keep)):  # a job named one of them meanwhile
            continue
        try:
            table.catalog.commit_table(
                table, _requirements(table), (RemoveSnapshotsUpdate(snapshot_ids=doomed),)
            )
        except CommitFailedException as exc:
            log.warning("expiry of %s planned again: %s", name, exc)
            continue
        warm_after_commit(load_table(name))
        return doomed
    raise InvalidInput(
        f"{name} kept changing while snapshots were being expired ({attempts} plans, each "
        "overtaken by a new tag, branch or commit); nothing was expired. Run maintain again."
    )


def _kept(keep: Keep) -> set[int]:
    return set(keep() if callable(keep) else keep)


def _requirements(table: Table) -> tuple[Any, ...]:
    refs = {name: ref.snapshot_id for name, ref in table.metadata.refs.items()}
    requirements: list[Any] = [AssertTableUUID(uuid=table.metadata.table_uuid)]
    requirements += [AssertRefSnapshotId(ref=n, snapshot_id=s) for n, s in sorted(refs.items())]
    if _validates_locally(table):
        requirements.append(AssertRefsAsPlanned(refs=refs))
    return tuple(requirements)


def _validates_locally(table: Table) -> bool:
    """A REST catalog sends requirements to its server, which knows only the spec's."""
    return not type(table.catalog).__module__.startswith("pyiceberg.catalog.rest")


def plan_expiry(
    table: Table,
    *,
    older_than: datetime,
    keep: Collection[int] = (),
    grace_s: float = 0.0,
    now: float | None = None,
) -> list[int]:
    """The snapshots `expire` would drop now."""
    now = time.time() if now is None else now
    protected = set(keep) | {r.snapshot_id for r in table.metadata.refs.values()}
    protected |= heads_since(table, int((now - grace_s) * 1000))
    cutoff_ms = older_than.timestamp() * 1000
    return [
        s.snapshot_id
        for s in table.snapshots()
        if s.timestamp_ms < cutoff_ms and s.snapshot_id not in protected
    ]


def heads_since(table: Table, since_ms: int) -> set[int]:
    """Snapshots that were the head of some ref at any time from `since_ms` to now."""
    metadata = table.metadata
    heads = {r.snapshot_id for r in metadata.refs.values()}
    # Committed within the period: each was a head when it landed.
    heads |= {s.snapshot_id for s in metadata.snapshots if s.timestamp_ms >= since_ms}
    heads |= _main_heads_since(metadata, since_ms)
    heads |= _ref_heads_in_metadata_since(table, since_ms)
    # A ref that advanced by commits: its head when the period began is the newest
    # ancestor older than it (covers a metadata log trimmed to its last 100 files).
    for ref in metadata.refs.values():
        for snapshot in _ancestors(metadata, ref.snapshot_id):
            if snapshot.timestamp_ms < since_ms:
                heads.add(snapshot.snapshot_id)
                break
    return heads


def _main_heads_since(metadata: TableMetadata, since_ms: int) -> set[int]:
    """From the snapshot log: each entry was the current snapshot until the next one."""
    log_entries = metadata.snapshot_log
    out = set()
    for k, entry in enumerate(log_entries):
        until = log_entries[k + 1].timestamp_ms if k + 1 < len(log_entries) else None
        if until is None or until >= since_ms:
            out.add(entry.snapshot_id)
    return out


def _ref_heads_in_metadata_since(table: Table, since_ms: int) -> set[int]:
    """Every ref head in the metadata files that were the table's within the period
    (a branch deleted or reset meanwhile, a tag moved: not in the current refs)."""
    entries = table.metadata.metadata_log
    out: set[int] = set()
    for k, entry in enumerate(entries):
        until = (
            entries[k + 1].timestamp_ms if k + 1 < len(entries) else table.metadata.last_updated_ms
        )
        if until < since_ms:
            continue
        try:
            out |= _ref_heads_in_file(table, entry.metadata_file)
        except (OSError, ValueError) as exc:  # gone or unreadable: the ancestor rule covers
            log.warning("could not read %s for its refs: %s", entry.metadata_file, exc)
    return out


def _ref_heads_in_file(table: Table, path: str) -> set[int]:
    with table.io.new_input(path).open() as stream:
        raw = stream.read()
    if path.endswith(".gz.metadata.json") or raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    document = json.loads(raw)
    out = {int(ref["snapshot-id"]) for ref in (document.get("refs") or {}).values()}
    current = document.get("current-snapshot-id")
    if current is not None and current != -1:
        out.add(int(current))
    return out


def _ancestors(metadata: TableMetadata, snapshot_id: int) -> Iterable[Any]:
    seen: set[int] = set()
    snapshot = metadata.snapshot_by_id(snapshot_id)
    while snapshot is not None and snapshot.snapshot_id not in seen:
        seen.add(snapshot.snapshot_id)
        yield snapshot
        parent = snapshot.parent_snapshot_id
        snapshot = metadata.snapshot_by_id(parent) if parent is not None else None

"""The Review page's snapshot tools, without Streamlit: pickers that take ids, tags and
branches; diffs; tags, branches and fast-forward; and one line on what `podium
maintain` would tidy."""

from __future__ import annotations

from collections.abc import Mapping

from podium.app.rows.view_state import snapshot_label
from podium.identity import User
from podium.review.diff import SnapshotDiff, diff_snapshots
from podium.review.refs import Ref, create_branch, create_tag, fast_forward, list_refs
from podium.store.catalog.catalog import load_table
from podium.store.read.snapshots import SnapshotInfo, list_snapshots


def snapshot_choices(name: str) -> list[str]:
    """What a snapshot picker offers: tags and branches, then snapshot ids newest first
    (a picker also accepts any name typed in)."""
    table = load_table(name)
    refs = [r.name for r in list_refs(name)]
    ids = [str(s.snapshot_id) for s in reversed(list_snapshots(table))]
    return refs + [i for i in ids if i not in refs]


def snapshots_by_id(name: str) -> dict[int, SnapshotInfo]:
    return {s.snapshot_id: s for s in list_snapshots(load_table(name))}


def choice_label(
    name: str, choice: str, snapshots: Mapping[int, SnapshotInfo] | None = None
) -> str:
    """A picker's choice in the one snapshot format (`view_state.snapshot_label`): a tag
    or branch as 'cleaned (tag) · 2026-11-22 03:10:05 · 1,200 rows', an id as its time
    and rows; a name typed in that names nothing yet, as typed."""
    snapshots = snapshots or {}
    if choice.isdigit():
        info = snapshots.get(int(choice))
        return snapshot_label(info) if info else choice
    ref = next((r for r in list_refs(name) if r.name == choice), None)
    info = snapshots.get(ref.snapshot_id) if ref else None
    if ref is None or info is None:
        return choice
    return snapshot_label(info, [] if ref.name == "main" else [f"{ref.name} ({ref.kind})"])


def diff(name: str, a: str | int | None, b: str | int | None) -> SnapshotDiff:
    return diff_snapshots(name, a, b)


def diff_summary(d: SnapshotDiff) -> str:
    return (
        f"{len(d.added):,} added, {len(d.removed):,} removed, {len(d.changed):,} changed "
        f"(snapshot {d.a} → {d.b}; {d.files_read} data files read, {d.files_shared} shared)"
    )


def tag(name: str, tag_name: str, user: User, snapshot: int | str | None = None) -> Ref:
    return create_tag(name, tag_name.strip(), user, snapshot)


def branch(name: str, branch_name: str, user: User, snapshot: int | str | None = None) -> Ref:
    return create_branch(name, branch_name.strip(), user, snapshot)


def merge(name: str, branch_name: str, user: User) -> Ref:
    return fast_forward(name, branch_name, user)


def merge_question(name: str, branch_name: str) -> str:
    """What "Fast-forward main" asks before main moves: what main gains from the branch."""
    d = diff(name, "main", branch_name)
    return (
        f"Fast-forward main of {name} to branch {branch_name}? Main then holds "
        f"{len(d.added):,} rows added, {len(d.removed):,} removed and {len(d.changed):,} "
        "changed on the branch; older snapshots keep main as it is now."
    )


def table_health(name: str) -> str:
    """One line on what `podium maintain` would tidy: files, delete files, snapshots, bytes."""
    from podium.store.maintenance.maintenance import footprint

    f = footprint(name)
    parts = [
        f"{f.data_files:,} data files",
        f"{f.delete_files:,} delete files"
        + (" (edits not compacted yet)" if f.delete_files else ""),
        f"{f.snapshots:,} snapshots",
        f"{f.files_on_disk:,} files, {f.bytes_on_disk / 2**20:,.1f} MiB on disk",
    ]
    return " · ".join(parts)

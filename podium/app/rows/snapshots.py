"""Snapshots as Browse and Review pick them, and the way from review to training.

A picker's value (id, tag or branch) as a snapshot id, the branches an edit can go to,
a branch holding only the rows with one label, and the Train page's link for a tag, a
branch or a label.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from pyiceberg.table import Table

from podium.app.page_tables import PageTables
from podium.app.rows.filters import ALL, filter_ids
from podium.app.rows.view_state import snapshot_label
from podium.errors import InvalidInput, NotFound
from podium.identity import User
from podium.review import annotations as ann
from podium.review.changes import (
    Change,
    commit_change,
)
from podium.review.refs import Ref, create_branch, refs_of
from podium.store.catalog.catalog import load_table
from podium.store.read.snapshots import list_snapshots, resolve_snapshot


def resolve(name: str, choice: str | int | None) -> int | None:
    """A picker's value (id, tag or branch) as a snapshot id, with the clear NotFound
    message when it names nothing."""
    return resolve_snapshot(load_table(name), choice)


def branches(table: Table) -> list[str]:
    """Branches an edit can go to: main first."""
    return ["main", *(r.name for r in refs_of(table) if r.kind == "branch" and r.name != "main")]


def train_params(name: str, snapshot: str | int | None) -> dict[str, str]:
    """The Train page's query parameters for training on `name` at a tag, branch or id."""
    params = {"table": name, "kind": "sft"}
    if snapshot not in (None, ""):
        params["snapshot"] = str(snapshot)
    return params


def linked_snapshot_labels(
    name: str, labels: Mapping[int, str], linked: str | None
) -> dict[int | str, str]:
    """The Train page's snapshot choices with a linked id, tag or branch first: a name
    stays a name (the card keeps it and pins its snapshot when written)."""
    if not linked:
        return {k: v for k, v in labels.items()}
    table = load_table(name)
    try:
        sid = resolve_snapshot(table, linked)
    except NotFound:  # a stale link: the usual choices
        return {k: v for k, v in labels.items()}
    value: int | str = int(linked) if linked.lstrip("-").isdigit() else linked
    label = labels.get(sid or 0, str(sid))
    if isinstance(value, str):  # the tag or branch, then its snapshot as every picker says it
        info = next((s for s in list_snapshots(table) if s.snapshot_id == sid), None)
        kind = next((r.kind for r in refs_of(table) if r.name == linked), "ref")
        label = snapshot_label(info, [f"{linked} ({kind})"]) if info else f"{linked} ({kind})"
    # A tag's snapshot is offered once, as the tag: the id beside it had the same label
    # (each label names its tags), and the picker kept the id, so the card lost the tag.
    return {value: label, **{k: v for k, v in labels.items() if k not in (value, sid)}}


def labelled_snapshot(name: str, label: str, user: User, base: int | str | None = None) -> Ref:
    """A branch holding only the rows labelled `label` (main untouched), so a filter can
    be trained on like any snapshot: `<label>-only-<UTC time>`."""
    tables = PageTables(name)
    table = tables.table
    sid = resolve_snapshot(table, base)
    keep = ann.annotated_ids(tables.notes, label=label)
    if not keep:
        raise InvalidInput(f"No row of {name} is labelled {label!r} yet; label some first.")
    drop = filter_ids(tables, ALL, user, snapshot_id=sid)
    drop_set = set(drop) - keep
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    ref = create_branch(name, f"{label}-only-{stamp}", user, sid)
    if drop_set:
        change = Change(deletes=frozenset(drop_set), message=f"only rows labelled {label}")
        table.refresh()  # the branch was made after the table was loaded
        done = commit_change(table, change, user, branch=ref.name)
        return Ref(ref.name, "branch", done.snapshot_id)
    return ref

"""What Browse's review tools and the Review page show and do, without Streamlit.

- Annotations on the rows a page shows, and the review filters ("unlabelled", a
  label such as "bad", "by me") as a page of rows: label and author filters read the
  annotations table's matching ids; "unlabelled" subtracts the positions of annotated
  rows from the positions the view's search and filters keep. The data table is read
  only for the page's rows.
- Saves are `podium.app.review_saves`'s.
- Bulk actions on the current filter, with the count shown before anything is written.
- The review queue: a cursor over the rows the reviewer holds, which the queue hands out
  (claims live in the state database, so a reload resumes where it was).
- Snapshot pickers that take ids, tags and branches; diffs; tags, branches and
  fast-forward; a row's history; and the Train page link for a tag or a label.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
from pyiceberg.table import Table

from podium.app.page_tables import PageTables
from podium.app.review_saves import rows_text
from podium.errors import InvalidInput, NotFound
from podium.identity import User
from podium.review import annotations as ann
from podium.review import queues
from podium.review.changes import (
    Change,
    commit_change,
)
from podium.review.diff import SnapshotDiff, diff_snapshots
from podium.review.history import row_history
from podium.review.refs import Ref, create_branch, create_tag, fast_forward, list_refs, refs_of
from podium.store.catalog.catalog import load_table
from podium.store.read import scan
from podium.store.read.query import FilterValue, Page, SnapshotView, matching_positions, open_view
from podium.store.read.snapshots import SnapshotInfo, list_snapshots, resolve_snapshot
from podium.store.state.users import acting_user
from podium.validate.report import failing_ids_in

ALL, UNLABELLED, BY_ME = "all", ann.UNLABELLED, "by me"
LABEL_KEYS = 3  # keys 1-3 label with the first three labels of the table's label set


def current_user() -> User:
    """Who acts in the app: the one resolution every page uses (the OS user in local
    mode)."""
    return acting_user()


# ---- annotations on rows, and the review filters ----


def review_filters(table: Table) -> list[str]:
    """The choices of Browse's review filter: every row, unlabelled, by me, each label."""
    return [ALL, UNLABELLED, BY_ME, *ann.label_set(table)]


def annotations_by_row(
    notes: Table | None, ids: Collection[str]
) -> dict[str, list[ann.Annotation]]:
    """The latest annotation of each author on each of `ids` (the rows on screen), from
    annotations table `notes` (`PageTables.notes`)."""
    out: dict[str, list[ann.Annotation]] = {}
    for a in ann.latest(notes, ids=[i for i in ids if i]):
        out.setdefault(a.row_id, []).append(a)
    return out


def annotation_text(notes: Sequence[ann.Annotation]) -> str:
    """'good (alice) · bad, rating 2, "typo in step 3" (bob)' for a row's caption."""
    parts = []
    for a in notes:
        bits = [b for b in (a.label, ", ".join(a.tags)) if b]
        if a.rating is not None:
            bits.append(f"rating {a.rating}")
        if a.note:
            bits.append(f"“{a.note}”")
        if bits:
            parts.append(f"{', '.join(bits)} ({a.author})")
    return " · ".join(parts)


def review_ids(tables: PageTables, which: str, user: User) -> set[str] | None:
    """Ids a label or "by me" filter keeps (None: the filter keeps every row, and the
    annotations table is not loaded)."""
    if which in (ALL, UNLABELLED):
        return None
    if which == BY_ME:
        return ann.annotated_ids(tables.notes, author=user.name)
    return ann.annotated_ids(tables.notes, label=which)


def _kept_positions(
    tables: PageTables,
    view: SnapshotView,
    which: str,
    user: User,
    *,
    search: str | None,
    where: str | None,
    filters: Mapping[str, FilterValue] | None,
    keep: Collection[str] | None,
) -> np.ndarray:
    """Positions of the rows the view's filters and the review filter `which` keep."""
    ids = review_ids(tables, which, user)
    if keep is not None:
        ids = set(keep) if ids is None else ids & set(keep)
    kept = matching_positions(view, search=search, where=where, filters=filters, ids=ids)
    labelled = ann.annotated_ids(tables.notes) if which == UNLABELLED else set()
    if labelled:
        seen = matching_positions(view, search=search, where=where, filters=filters, ids=labelled)
        kept = np.setdiff1d(kept, seen, assume_unique=True)
    return kept


def review_page(
    tables: PageTables,
    which: str,
    user: User,
    *,
    offset: int = 0,
    limit: int = 25,
    search: str | None = None,
    where: str | None = None,
    filters: Mapping[str, FilterValue] | None = None,
    keep: Collection[str] | None = None,
    snapshot_id: int | str | None = None,
) -> Page:
    """One page of the rows passing the view's filters and the review filter `which`."""
    if offset < 0 or limit < 0:
        raise InvalidInput("Offset and page size must not be negative.")
    view = open_view(tables.name, snapshot_id)
    kept = _kept_positions(
        tables, view, which, user, search=search, where=where, filters=filters, keep=keep
    )
    raw = scan.read_positions(view.table, view.plan, kept[offset : offset + limit])
    return Page(
        scan.to_rows(view.canonical(raw)),
        len(kept),
        offset,
        limit,
        view.snapshot_id,
        list(view.schema.names),
    )


# ---- bulk actions on the current filter ----


def filter_ids(
    tables: PageTables,
    which: str,
    user: User,
    *,
    search: str | None = None,
    where: str | None = None,
    filters: Mapping[str, FilterValue] | None = None,
    keep: Collection[str] | None = None,
    failing_report: Table | None = None,
    snapshot_id: int | str | None = None,
) -> list[str]:
    """Every id the current view keeps (optionally only rows failing a validation
    report), read from the `id` column of the matching rows only."""
    narrowed = set(keep) if keep is not None else None
    if failing_report is not None:
        bad = failing_ids_in(failing_report)
        narrowed = bad if narrowed is None else narrowed & bad
    view = open_view(tables.name, snapshot_id)
    positions = _kept_positions(
        tables, view, which, user, search=search, where=where, filters=filters, keep=narrowed
    )
    found = scan.read_positions(view.table, view.plan, positions, ["id"]).column("id")
    return sorted(i for i in found.to_pylist() if i is not None)


def confirm_text(action: str, ids: Sequence[str]) -> str:
    """'Label 312 rows needs-fix?' before a bulk action writes anything."""
    return f"{action} {rows_text(len(ids))}?" if ids else "No rows match the current filter."


# ---- the review queue ----


def start_queue(
    name: str,
    size: int,
    user: User,
    *,
    sampled: bool,
    seed: int = 0,
    search: str | None = None,
    where: str | None = None,
    queue: str = "default",
) -> queues.Queue:
    return queues.create_queue(
        name,
        size,
        user,
        name=queue,
        seed=seed if sampled else None,
        search=search or None,
        where=where or None,
    )


def queue_row(name: str, user: User, cursor: int, queue: str = "default") -> dict[str, Any] | None:
    """The row at `cursor` among the rows `user` holds in the queue (claiming more as
    needed); None when the queue has nothing left for them."""
    held = queues.claim_next(name, user, cursor + 1, name=queue)
    if not held:
        return None
    return held[min(cursor, len(held) - 1)]


def label_keys(table: Table) -> dict[str, str]:
    """{"1": "good", "2": "bad", "3": "needs-fix"}: the Review page's label keys."""
    return {str(i + 1): label for i, label in enumerate(ann.label_set(table)[:LABEL_KEYS])}


# ---- snapshots, refs, diffs, history ----


def snapshot_choices(name: str) -> list[str]:
    """What a snapshot picker offers: tags and branches, then snapshot ids newest first
    (a picker also accepts any name typed in)."""
    table = load_table(name)
    refs = [r.name for r in list_refs(name)]
    ids = [str(s.snapshot_id) for s in reversed(list_snapshots(table))]
    return refs + [i for i in ids if i not in refs]


def snapshots_by_id(name: str) -> dict[int, SnapshotInfo]:
    return {s.snapshot_id: s for s in list_snapshots(load_table(name))}


def choice_label(name: str, choice: str, snapshots: Mapping[int, Any] | None = None) -> str:
    """'reviewed (tag) · 1234' or '1234 · 2026-11-22 03:10 · 1,200 rows'."""
    if choice.isdigit():
        info = (snapshots or {}).get(int(choice))
        return (
            f"{choice} · {info.committed_at[:16].replace('T', ' ')} · {info.total_rows:,} rows"
            if info
            else choice
        )
    return choice


def resolve(name: str, choice: str | int | None) -> int | None:
    """A picker's value (id, tag or branch) as a snapshot id, with the clear NotFound
    message when it names nothing."""
    return resolve_snapshot(load_table(name), choice)


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


def branches(table: Table) -> list[str]:
    """Branches an edit can go to: main first."""
    return ["main", *(r.name for r in refs_of(table) if r.kind == "branch" and r.name != "main")]


def history_rows(tables: PageTables, row_id: str) -> list[dict[str, Any]]:
    """A row's changes and annotations, oldest first, as table rows (when, what, who)."""
    return [
        {
            "when": e["at"][:19].replace("T", " "),
            "what": e["kind"],
            "author": e["author"],
            "detail": e["detail"],
            "snapshot": str(e["snapshot_id"] or ""),
        }
        for e in row_history(tables.table, tables.notes, row_id)
    ]


# ---- from review to training ----


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
    try:
        sid = resolve(name, linked)
    except NotFound:  # a stale link: the usual choices
        return {k: v for k, v in labels.items()}
    value: int | str = int(linked) if linked.lstrip("-").isdigit() else linked
    label = labels.get(sid or 0, str(sid)) if isinstance(value, int) else f"{linked} → {sid}"
    return {value: label, **{k: v for k, v in labels.items() if k != value}}


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


def delete_question(row_id: str) -> str:
    """What "Delete row" asks before it removes anything."""
    return (
        f"Delete row {row_id}? The next snapshot will not hold it; older snapshots and "
        "its history keep it."
    )


@dataclass(frozen=True)
class Removal:
    """A removal the page asks about before doing it: one turn of a row, or the row."""

    row_id: str
    turn: int | None  # None: the whole row
    why: str
    question: str  # names what goes, so the answer is about this turn or row
    yes: str  # the confirming button's label


def removal(row: Mapping[str, Any], turn: int | None, why: str) -> Removal:
    """What "Remove turn" (`turn`) or "Delete row" (`turn` None) will remove, to ask
    before anything is written. The reason is checked first: a removal without one
    would be refused after the confirmation, which then asked for nothing."""
    row_id = str(row["id"])
    if not why.strip():
        what = "the row" if turn is None else f"turn {turn}"
        raise InvalidInput(f"Say why before removing {what}: the reason is kept in the snapshot.")
    if turn is None:
        return Removal(row_id, None, why.strip(), delete_question(row_id), f"Yes, delete {row_id}")
    messages = list(row.get("messages") or [])
    if not 0 <= turn < len(messages):
        raise InvalidInput(f"Row {row_id} has no turn {turn}; it has {len(messages)}.")
    role = messages[turn].get("role") or "no role"
    content = str(messages[turn].get("content") or "")
    start = " ".join(content.split())
    start = start if len(start) <= 60 else start[:59] + "…"
    question = (
        f"Remove turn {turn} ({role}) of row {row_id}? It reads: “{start}”. The next "
        "snapshot will not hold it; older snapshots and the row's history keep it."
    )
    return Removal(row_id, turn, why.strip(), question, f"Yes, remove turn {turn}")


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

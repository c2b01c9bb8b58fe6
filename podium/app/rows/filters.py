"""Labels on the rows a page shows and the review filters, without Streamlit.

The review filters ("unlabelled", a label such as "bad", "by me") as a page of rows:
label and author filters read the annotations table's matching ids; "unlabelled"
subtracts the positions of annotated rows from the positions the view's search and
filters keep. The data table is read only for the page's rows. Bulk actions on the
current filter show their count before anything is written (saves: `rows.saves`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TypedDict, Unpack

import numpy as np
import pyarrow as pa
from pyiceberg.table import Table

from podium.app.page_tables import PageTables
from podium.app.rows.saves import rows_text
from podium.errors import InvalidInput
from podium.identity import User
from podium.review import annotations as ann
from podium.store.read import arrow_rows, by_position
from podium.store.read.query import FilterValue, Page, SnapshotView, matching_positions, open_view
from podium.validate.report import failing_ids_in

ALL, UNLABELLED, BY_ME = "all", ann.UNLABELLED, "by me"


LABEL_KEYS = 3  # keys 1-3 label with the first three labels of the table's label set


def review_filters(table: Table) -> list[str]:
    """The choices of Browse's review filter: every row, unlabelled, by me, each label."""
    return [ALL, UNLABELLED, BY_ME, *ann.label_set(table)]


def annotations_at(notes: Table | None) -> ann.RowHistories:
    """`notes`' annotations (`ann.histories`), read once per snapshot for every session
    (and for the label that follows: `ann.kept_histories`)."""
    return ann.kept_histories(notes)


def latest_of(notes: Table | None) -> pa.Table:
    """`notes`' latest annotations (as `ann.latest_table`), from the one read of its
    snapshot that also answers every row's history: a label made ten sessions read the
    new snapshot's files twice, once for each."""
    return annotations_at(notes).latest


def annotations_by_row(
    notes: Table | None, ids: Collection[str]
) -> dict[str, list[ann.Annotation]]:
    """The latest annotation of each author on each of `ids` (the rows on screen), from
    annotations table `notes` (`PageTables.notes`)."""
    out: dict[str, list[ann.Annotation]] = {}
    for a in ann.pick(latest_of(notes), [i for i in ids if i]):
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
    raw = by_position.read_positions(view.table, view.plan, kept[offset : offset + limit])
    return Page(
        arrow_rows.to_rows(view.canonical(raw)),
        len(kept),
        offset,
        limit,
        view.snapshot_id,
        list(view.schema.names),
    )


class Narrowing(TypedDict, total=False):
    """What narrows the rows a bulk action acts on, beyond the review filter."""

    search: str | None
    where: str | None
    filters: Mapping[str, FilterValue] | None
    keep: Collection[str] | None  # only these ids
    failing_report: Table | None  # only rows failing this validation report
    snapshot_id: int | str | None


def _filter_positions(
    tables: PageTables, which: str, user: User, narrowing: Narrowing
) -> tuple[SnapshotView, np.ndarray]:
    keep, report = narrowing.get("keep"), narrowing.get("failing_report")
    narrowed = set(keep) if keep is not None else None
    if report is not None:
        bad = failing_ids_in(report)
        narrowed = bad if narrowed is None else narrowed & bad
    view = open_view(tables.name, narrowing.get("snapshot_id"))
    positions = _kept_positions(
        tables,
        view,
        which,
        user,
        search=narrowing.get("search"),
        where=narrowing.get("where"),
        filters=narrowing.get("filters"),
        keep=narrowed,
    )
    return view, positions


def filter_count(tables: PageTables, which: str, user: User, **narrowing: Unpack[Narrowing]) -> int:
    """How many rows `filter_ids` would name, without reading their ids: the bulk
    actions show it on every run of Browse, and reading 10M ids took seconds each."""
    narrows = any(narrowing.get(k) is not None for k in ("keep", "failing_report")) or any(
        narrowing.get(k) for k in ("search", "where", "filters")
    )
    if which == ALL and not narrows:
        return open_view(tables.name, narrowing.get("snapshot_id")).plan.total
    return len(_filter_positions(tables, which, user, narrowing)[1])


def filter_ids(
    tables: PageTables, which: str, user: User, **narrowing: Unpack[Narrowing]
) -> list[str]:
    """Every id the current view keeps (optionally only rows failing a validation
    report), read from the `id` column of the matching rows only."""
    view, positions = _filter_positions(tables, which, user, narrowing)
    found = by_position.read_positions(view.table, view.plan, positions, ["id"]).column("id")
    return sorted(i for i in found.to_pylist() if i is not None)


def confirm_text(action: str, count: int) -> str:
    """'Label 312 rows needs-fix?' before a bulk action writes anything."""
    return f"{action} {rows_text(count)}?" if count else "No rows match the current filter."

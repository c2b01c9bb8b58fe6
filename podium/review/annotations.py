"""Labels, ratings and notes on rows, appended to an Iceberg table beside the data.

Table `NS.NAME` keeps its annotations in `NS.NAME__annotations`: one row per
annotation (row id, the snapshot it was made on, author, time, label, free tags,
rating, note), only ever appended, so every judgement stays on record. What a page
shows is the latest annotation per row and author; a new annotation carries over the
fields it does not set from that author's previous one, so adding a note keeps the
label. A label comes from the table's label set (property `podium.labels`, default
good, bad, needs-fix); anything else is a free tag.

Reads are DuckDB queries over the annotations table's files, restricted to the ids a
page shows or returning the ids a filter keeps; the data table itself is never read.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import (
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    TimestamptzType,
)

from podium.config import get_settings
from podium.errors import InvalidInput, NotFound
from podium.identity import User, require
from podium.store.catalog import kinds
from podium.store.catalog.catalog import full_name, load_or_none, name_of
from podium.store.read import connections, duckdb_views
from podium.store.read.kept import Kept
from podium.store.read.plan import plan_snapshot
from podium.store.read.snapshots import resolve_snapshot
from podium.store.schema import PROP_KIND
from podium.store.state.state_peek import may_hold_rows
from podium.store.write.row_locations import files_holding
from podium.store.write.write import create_batches, write_into

LABELS_PROPERTY = "podium.labels"
DEFAULT_LABELS = ("good", "bad", "needs-fix")
SUFFIX = "__annotations"
UNLABELLED = "unlabelled"

SCHEMA = Schema(
    NestedField(1, "row_id", StringType(), required=False),
    NestedField(2, "snapshot_id", LongType(), required=False),
    NestedField(3, "author", StringType(), required=False),
    NestedField(4, "at", TimestamptzType(), required=False),
    NestedField(5, "label", StringType(), required=False),
    NestedField(6, "tags", ListType(7, StringType(), element_required=False), required=False),
    NestedField(8, "rating", IntegerType(), required=False),
    NestedField(9, "note", StringType(), required=False),
)
ARROW_SCHEMA = pa.schema(
    [
        ("row_id", pa.string()),
        ("snapshot_id", pa.int64()),
        ("author", pa.string()),
        ("at", pa.timestamp("us", tz="UTC")),
        ("label", pa.string()),
        ("tags", pa.list_(pa.string())),
        ("rating", pa.int32()),
        ("note", pa.string()),
    ]
)
FIELDS = ("label", "tags", "rating", "note")


@dataclass(frozen=True)
class Annotation:
    row_id: str
    author: str
    at: str
    snapshot_id: int | None
    label: str | None
    tags: list[str]
    rating: int | None
    note: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _held(table: Table, sid: int | None, ids: Sequence[str]) -> set[str]:
    return set().union(*files_holding(table, sid, ids).values()) if ids else set()


def _check_rows(table: Table, sid: int | None, ids: Sequence[str]) -> None:
    """Every id is a row of the snapshot it was read at, and still a row of the table
    now: a row removed since (a reviewer's screen or queue may still show it) is not
    labelled."""
    name = name_of(table)
    held = _held(table, sid, ids)
    missing = [i for i in ids if i not in held]
    if missing:
        raise NotFound(
            f"{name} has no row with id {', '.join(map(repr, missing[:5]))}; nothing was recorded."
        )
    head = resolve_snapshot(table, None)
    if head != sid:
        now = _held(table, head, ids)
        gone = [i for i in ids if i not in now]
        if gone:
            raise NotFound(
                f"Row {', '.join(map(repr, gone[:5]))} of {name} was removed after "
                f"snapshot {sid}; nothing was recorded. Reload to see the table as it is now."
            )


def annotations_table(name: str) -> str:
    return full_name(name) + SUFFIX


def load_annotations(name: str) -> Table | None:
    """Table `name`'s annotations table, or None before its first annotation (one load)."""
    return load_or_none(annotations_table(name))


def label_set(table: Table) -> list[str]:
    raw = table.properties.get(LABELS_PROPERTY)
    return list(json.loads(raw)) if raw else list(DEFAULT_LABELS)


def annotate(
    table: Table,
    ids: Sequence[str],
    user: User,
    *,
    label: str | None = None,
    tags: Sequence[str] | None = None,
    rating: int | None = None,
    note: str | None = None,
    snapshot: int | str | None = None,
    check_ids: bool = True,
) -> int:
    """Append one annotation per row of `table` (one snapshot of its annotations table,
    loaded here once, or created by the first annotation).

    Fields left None keep the author's previous value; `label=""` clears the label.
    Returns the annotations table's new snapshot id.
    """
    require(user, "annotate")
    ids = sorted(set(ids))
    if not ids:
        raise InvalidInput("Name at least one row to annotate.")
    if label is None and tags is None and rating is None and note is None:
        raise InvalidInput("Nothing to record: give a label, tags, a rating or a note.")
    name = name_of(table)
    labels = label_set(table)
    if label and label not in labels:
        raise InvalidInput(
            f"{label!r} is not in {name}'s label set ({', '.join(labels)}); "
            "use it as a free tag (--tag) instead."
        )
    if rating is not None and not 1 <= rating <= 5:
        raise InvalidInput(f"A rating is 1-5, not {rating}.")
    sid = resolve_snapshot(table, snapshot)
    if check_ids:
        _check_rows(table, sid, ids)
    notes = load_annotations(name)
    previous = {
        a.row_id: a for a in pick(kept_histories(notes).latest, ids) if a.author == user.name
    }
    now = datetime.now(UTC)
    rows = []
    for row_id in ids:
        prev = previous.get(row_id)
        rows.append(
            {
                "row_id": row_id,
                "snapshot_id": sid,
                "author": user.name,
                "at": now,
                "label": (label or None) if label is not None else (prev.label if prev else None),
                "tags": list(tags) if tags is not None else (prev.tags if prev else []),
                "rating": rating if rating is not None else (prev.rating if prev else None),
                "note": note if note is not None else (prev.note if prev else None),
            }
        )
    batches = [pa.RecordBatch.from_pylist(rows, ARROW_SCHEMA)]
    properties = {PROP_KIND: kinds.ANNOTATIONS, "podium.annotates": name}
    written = (
        write_into(notes, batches, properties=properties)
        if notes is not None
        else create_batches(annotations_table(name), batches, schema=SCHEMA, properties=properties)
    )
    if may_hold_rows(
        "SELECT 1 FROM podium_review_queues WHERE table_name = ? LIMIT 1", [name]
    ):  # a table no queue names has nothing to mark; a CLI label then skips SQLAlchemy
        from podium.review.queue_tables import mark_reviewed

        mark_reviewed(name, ids, user)
    current = written.current_snapshot()
    assert current is not None
    return current.snapshot_id


def _connection(notes: Table | None) -> Any:
    """A guarded connection where `ann` is every annotation in `notes` (or None when
    there is no annotations table yet)."""
    if notes is None:
        return None
    plan = plan_snapshot(notes, resolve_snapshot(notes, None))
    con = connections.connect_plans([plan])
    duckdb_views.register_snapshot(con, "ann", notes, plan)
    con.execute(
        "CREATE TEMP VIEW latest AS SELECT * FROM ann QUALIFY row_number() OVER "
        '(PARTITION BY row_id, author ORDER BY "at" DESC, __pos DESC) = 1'
    )
    return con


def _annotation(r: dict[str, Any]) -> Annotation:
    return Annotation(
        row_id=r["row_id"],
        author=r["author"],
        at=r["at"].isoformat(timespec="seconds"),
        snapshot_id=r["snapshot_id"],
        label=r["label"],
        tags=list(r["tags"] or []),
        rating=r["rating"],
        note=r["note"],
    )


def latest(
    notes: Table | None, *, ids: Collection[str] | None = None, author: str | None = None
) -> list[Annotation]:
    """The latest annotation per row and author in annotations table `notes` (None: none
    yet, see `load_annotations`), for `ids` (default: every row)."""
    con = _connection(notes)
    if con is None:
        return []
    sql = "SELECT * FROM latest WHERE true"
    params: dict[str, Any] = {}
    if ids is not None:
        params["ids"] = sorted(set(ids))
        sql += " AND list_contains($ids, row_id)"
    if author is not None:
        params["author"] = author
        sql += " AND author = $author"
    rows = con.sql(sql + ' ORDER BY row_id, "at"', params=params).to_arrow_table().to_pylist()
    return [_annotation(r) for r in rows]


def latest_table(notes: Table | None) -> pa.Table:
    """Every row's latest annotation per author in `notes`, as Arrow (compact to keep in
    memory; `pick` reads some rows' out of it), ordered as `latest` orders them."""
    con = _connection(notes)
    if con is None:
        return pa.table({"row_id": pa.array([], pa.string())})
    return con.sql('SELECT * FROM latest ORDER BY row_id, "at"').to_arrow_table()


def pick(every: pa.Table, ids: Collection[str]) -> list[Annotation]:
    """The annotations of `ids` in `latest_table`'s answer."""
    if not every.num_rows or not ids:
        return []
    wanted = pa.array(sorted(set(ids)), pa.string())
    return [_annotation(r) for r in every.filter(pc.is_in(every["row_id"], wanted)).to_pylist()]


def history(notes: Table | None, row_id: str) -> list[Annotation]:
    """Every annotation ever made on one row, oldest first (one row's read: the CLI's;
    the app answers every row of a snapshot from one `histories`)."""
    con = _connection(notes)
    if con is None:
        return []
    rows = con.sql(
        'SELECT * FROM ann WHERE row_id = $id ORDER BY "at"', params={"id": row_id}
    ).to_arrow_table()
    return [_annotation(r) for r in rows.to_pylist()]


def annotated_ids(
    notes: Table | None, *, label: str | None = None, author: str | None = None
) -> set[str]:
    """Ids whose latest annotation (by anyone, or by `author`) in `notes` has `label`
    (any label when None, i.e. every annotated row)."""
    con = _connection(notes)
    if con is None:
        return set()
    sql = "SELECT DISTINCT row_id FROM latest WHERE true"
    params: dict[str, Any] = {}
    if label is not None:
        params["label"] = label
        sql += " AND (label = $label OR list_contains(tags, $label))"
    if author is not None:
        params["author"] = author
        sql += " AND author = $author"
    return set(con.sql(sql, params=params).to_arrow_table().column("row_id").to_pylist())


@dataclass(frozen=True)
class RowHistories:
    """Every annotation in one snapshot of an annotations table, ordered by row, then
    time, then write order, with each row's span in it: one read of the snapshot answers
    the history of every row (`of`), where `history` reads the table again per row, and
    every row's latest annotations (`latest`), where `latest_table` reads it again."""

    rows: pa.Table  # with the write order (`duckdb_views.POS`) of each annotation
    spans: dict[str, tuple[int, int]]  # row id -> (first, end) positions in `rows`

    def of(self, row_id: str) -> list[Annotation]:
        """Every annotation on `row_id`, oldest first, as `history` gives them."""
        start, end = self.spans.get(row_id, (0, 0))
        return [_annotation(r) for r in self.rows.slice(start, end - start).to_pylist()]

    @functools.cached_property
    def latest(self) -> pa.Table:
        """Every row's latest annotation per author, as `latest_table` gives them."""
        by_author = self.rows.take(
            pc.sort_indices(
                self.rows,
                [(c, "ascending") for c in ("row_id", "author", "at", duckdb_views.POS)],
            )
        )
        count = by_author.num_rows
        if count == 0:
            return by_author
        ids, authors = by_author["row_id"], by_author["author"]
        # The last of each (row, author) run is where the next row's id or author differs.
        ends = pc.or_(
            pc.not_equal(ids.slice(0, count - 1), ids.slice(1)),
            pc.not_equal(authors.slice(0, count - 1), authors.slice(1)),
        )
        last = pa.chunked_array([*pc.fill_null(ends, True).chunks, pa.array([True])])
        latest = by_author.filter(last)
        return latest.take(pc.sort_indices(latest, [("row_id", "ascending"), ("at", "ascending")]))


def histories(notes: Table | None) -> RowHistories:
    """Every row's annotations in `notes` (None: no annotations table yet), one read."""
    con = _connection(notes)
    if con is None:
        empty = ARROW_SCHEMA.append(pa.field(duckdb_views.POS, pa.int64())).empty_table()
        return RowHistories(empty, {})
    rows = con.sql(f'SELECT * FROM ann ORDER BY row_id, "at", {duckdb_views.POS}').to_arrow_table()
    if not rows.num_rows:
        return RowHistories(rows, {})
    # The rows come sorted by id, so each id's annotations are one run of equal ids.
    runs = pc.run_end_encode(rows["row_id"].combine_chunks())
    ends = runs.run_ends.to_pylist()
    starts = [0, *ends[:-1]]
    ids = runs.values.to_pylist()
    return RowHistories(rows, dict(zip(ids, zip(starts, ends, strict=True), strict=True)))


# Every annotation of a table, by snapshot of its annotations table: a snapshot never
# changes (a label commits a new one, named by a new metadata file), so every session,
# page of rows, open row's history and the next label's carried-over fields share one
# read until the next label. Nothing here depends on the viewer.
_kept: Kept[tuple[str, str, int], RowHistories] = Kept(4)


def kept_histories(notes: Table | None) -> RowHistories:
    """`histories(notes)`, read once per snapshot of `notes` in this process."""
    current = notes.current_snapshot() if notes is not None else None
    if notes is None or current is None:
        return histories(None)
    key = (get_settings().catalog_uri, notes.metadata_location, current.snapshot_id)
    return _kept.get(key, lambda: histories(notes))

"""Edits and removals of rows: one new snapshot per save, merge-on-read.

A `Change` names rows by id: new values for some (an edited message list, say) and
rows to remove. `commit_change` finds where those ids live (manifest bounds on `id`,
then Parquet row-group statistics, then the `id` column of the few row groups left),
and commits ONE snapshot, on `main` or on a branch, that adds a small data file with
the edited rows and a position-delete file naming the rows removed or replaced
(`store.position_deletes`, committed by `store.row_delta`). It writes bytes in
proportion to the rows changed, never a rewrite of the data files that hold them
(a 256 MiB file per edit before); `podium maintain` compacts them later. The delete
file also says which new row replaces which old one, so Podium shows an edited row in
its old place; other engines (pyiceberg, DuckDB's Iceberg reader) read the same rows.

The snapshot summary records `podium.author`, `podium.message`, `podium.action` and
`podium.rows` (the ids touched). That summary is also the conflict check: an edit
names the snapshot it was made on (`base`); before committing, every snapshot since
then is looked at, and if one touched the same rows the edit is refused with who did
it and when. Two edits committed at once collide in the catalog's commit check; the loser re-plans
on the new head (after the same conflict check) and lands too.
"""

from __future__ import annotations

import bisect
import itertools
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.conversions import from_bytes
from pyiceberg.exceptions import CommitFailedException, ValidationException
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.manifest import DataFile, DataFileContent
from pyiceberg.table import Table
from pyiceberg.table.refs import MAIN_BRANCH
from pyiceberg.table.snapshots import Operation
from pyiceberg.types import StringType

from podium.config import get_settings
from podium.errors import InvalidInput, NotFound
from podium.identity import User, require
from podium.store.catalog import load_table
from podium.store.file_writer import FileWriter
from podium.store.plan import open_parquet, plan_snapshot, row_group_sizes, warm_after_commit
from podium.store.position_deletes import Replacement, write_delete_file
from podium.store.row_delta import commit_row_delta, live_files
from podium.store.schema import PROP_MAPPING, ROLES
from podium.store.snapshots import resolve_snapshot

log = logging.getLogger("podium")

AUTHOR = "podium.author"
MESSAGE = "podium.message"
ACTION = "podium.action"
ROWS = "podium.rows"
ROWS_COUNT = "podium.rows-count"
MAX_IDS_IN_SUMMARY = 10_000  # beyond this a bulk change is recorded by count only
ATTEMPTS = 8


class EditConflict(InvalidInput):
    """The rows an edit touches were changed since the snapshot it was made on."""


@dataclass(frozen=True)
class Change:
    """New column values for some rows and rows to remove, all named by id."""

    updates: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    deletes: frozenset[str] = frozenset()
    message: str = ""

    @property
    def ids(self) -> list[str]:
        return sorted(set(self.updates) | set(self.deletes))

    @property
    def action(self) -> str:
        if self.updates and self.deletes:
            return "edit+delete"
        return "delete" if self.deletes else "edit"


@dataclass(frozen=True)
class Committed:
    snapshot_id: int
    parent_id: int | None
    rows: list[str]
    files_written: int  # the edited rows' data file(s) and one position-delete file
    bytes_written: int
    attempts: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "snapshot_id": self.snapshot_id,
            "parent_id": self.parent_id,
            "rows": self.rows,
            "files_written": self.files_written,
            "bytes_written": self.bytes_written,
            "attempts": self.attempts,
        }


# ---- message-level edits (pure functions over a row's message list) ----


def _check_index(messages: Sequence[Mapping[str, Any]], index: int) -> None:
    if not 0 <= index < len(messages):
        raise InvalidInput(
            f"This row has {len(messages)} messages (0-{len(messages) - 1}); there is no "
            f"message {index}."
        )


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise InvalidInput(f"Unknown role {role!r}; use one of {', '.join(ROLES)}.")


def set_message(
    messages: Sequence[Mapping[str, Any]],
    index: int,
    *,
    content: str | None = None,
    role: str | None = None,
) -> list[dict[str, Any]]:
    """`messages` with message `index` given new content and/or role."""
    _check_index(messages, index)
    if role is not None:
        _check_role(role)
    out = [dict(m) for m in messages]
    if content is not None:
        out[index]["content"] = content
    if role is not None:
        out[index]["role"] = role
    return out


def add_turn(
    messages: Sequence[Mapping[str, Any]], role: str, content: str, at: int | None = None
) -> list[dict[str, Any]]:
    """`messages` with a new turn inserted at `at` (default: the end)."""
    _check_role(role)
    out = [dict(m) for m in messages]
    at = len(out) if at is None else at
    if not 0 <= at <= len(out):
        raise InvalidInput(f"A turn can be inserted at 0-{len(out)}, not {at}.")
    out.insert(at, {"role": role, "content": content})
    return out


def remove_turn(messages: Sequence[Mapping[str, Any]], index: int) -> list[dict[str, Any]]:
    _check_index(messages, index)
    return [dict(m) for i, m in enumerate(messages) if i != index]


# ---- the commit ----


def branch_head(table: Table, branch: str = MAIN_BRANCH) -> int | None:
    """The snapshot a branch points at (None: an empty table's main)."""
    if branch == MAIN_BRANCH:
        current = table.current_snapshot()
        return current.snapshot_id if current else None
    ref = table.refs().get(branch)
    if ref is None or ref.snapshot_ref_type.value != "branch":
        raise NotFound(
            f"Table {'.'.join(table.name())} has no branch {branch!r}; create it with "
            f"`podium branch {'.'.join(table.name())} {branch}`."
        )
    return ref.snapshot_id


def commit_change(
    name: str,
    change: Change,
    user: User,
    *,
    base: int | str | None = None,
    branch: str = MAIN_BRANCH,
) -> Committed:
    """Apply `change` to table `name` as one new snapshot on `branch`.

    `base` is the snapshot (id, tag or branch) the change was made on; default: the
    branch head now. Raises `EditConflict` when a snapshot committed since `base`
    touched any of the same rows, `NotFound` for ids the table does not hold.
    """
    require(user, "edit")
    ids = change.ids
    if not ids:
        raise InvalidInput("Nothing to change: name at least one row to edit or delete.")
    if not change.message.strip():
        raise InvalidInput("Say why: an edit needs a message (it is kept in the snapshot).")
    table = load_table(name)
    if PROP_MAPPING in table.properties and change.updates:
        raise InvalidInput(
            f"{name} is a mapped foreign table; edit it after importing it as an SFT table."
        )
    base_id = resolve_snapshot(table, base) if base is not None else branch_head(table, branch)
    props = _summary(change, user)
    for attempt in range(1, ATTEMPTS + 1):
        table = load_table(name)
        head = branch_head(table, branch)
        check_unchanged(table, base_id, head, set(ids))
        located = locate_rows(table, head, ids)
        missing = [i for i in ids if i not in located]
        if missing:
            raise NotFound(
                f"{name} has no row with id {', '.join(map(repr, missing[:5]))}"
                + (f" (and {len(missing) - 5} more)" if len(missing) > 5 else "")
                + "; nothing was changed."
            )
        written: list[DataFile] = []
        try:
            written = _write_delta(table, located, change)
            commit_row_delta(
                table,
                add=written,
                properties=props,
                branch=branch,
                operation=Operation.OVERWRITE if change.updates else Operation.DELETE,
            )
        except (CommitFailedException, ValidationException) as exc:
            _discard(table, written)
            log.info("edit of %s lost a commit race (%s); retrying on the new head", name, exc)
            continue
        except BaseException:
            _discard(table, written)
            raise
        table = warm_after_commit(load_table(name))
        new_head = branch_head(table, branch)
        assert new_head is not None
        return Committed(
            new_head, head, ids, len(written), sum(f.file_size_in_bytes for f in written), attempt
        )
    raise EditConflict(
        f"{name} kept changing under this edit ({ATTEMPTS} tries); reload and try again."
    )


def _summary(change: Change, user: User) -> dict[str, str]:
    ids = change.ids
    props = {
        AUTHOR: user.name,
        MESSAGE: change.message.strip(),
        ACTION: change.action,
        ROWS_COUNT: str(len(ids)),
    }
    if len(ids) <= MAX_IDS_IN_SUMMARY:
        props[ROWS] = json.dumps(ids, ensure_ascii=False)
    return props


def touched_rows(summary: Mapping[str, str]) -> set[str] | None:
    """The ids a snapshot's summary says it touched; None = unknown (treat as all)."""
    raw = summary.get(ROWS)
    return set(json.loads(raw)) if raw is not None else None


def check_unchanged(table: Table, base: int | None, head: int | None, ids: set[str]) -> None:
    """Refuse when a snapshot after `base` up to `head` changed any of `ids`."""
    sid = head
    while sid is not None and sid != base:
        snap = table.snapshot_by_id(sid)
        if snap is None:
            break
        summary = snap.summary
        props = dict(summary.additional_properties) if summary else {}
        operation = summary.operation.value if summary else "unknown"
        at = datetime.fromtimestamp(snap.timestamp_ms / 1000, UTC).isoformat(timespec="seconds")
        who = props.get(AUTHOR, "another writer")
        if operation != "append" or ROWS in props:
            touched = touched_rows(props)
            hit = sorted(ids if touched is None else ids & touched)
            if hit:
                what = f"row {hit[0]!r}" + (f" (and {len(hit) - 1} more)" if len(hit) > 1 else "")
                why = f" ({props[MESSAGE]})" if MESSAGE in props else ""
                raise EditConflict(
                    f"{what} was changed by {who} at {at}{why} after snapshot {base}; "
                    "reload and make the edit again. Nothing was written."
                )
        sid = snap.parent_snapshot_id
    if sid != base:
        raise EditConflict(
            f"Snapshot {base} is not an earlier state of this branch (it was rolled back or "
            "replaced); reload and make the edit again. Nothing was written."
        )


def _bounds(table: Table, snapshot_id: int | None) -> dict[str, tuple[str | None, str | None]]:
    """Each live data file's `id` bounds from its manifest entry."""
    id_field = table.schema().find_field("id").field_id
    out: dict[str, tuple[str | None, str | None]] = {}
    for data_file, _ in live_files(table, snapshot_id):
        if data_file.content != DataFileContent.DATA:
            continue
        lo_raw = (data_file.lower_bounds or {}).get(id_field)
        hi_raw = (data_file.upper_bounds or {}).get(id_field)
        out[data_file.file_path] = (
            from_bytes(StringType(), lo_raw) if lo_raw is not None else None,
            from_bytes(StringType(), hi_raw) if hi_raw is not None else None,
        )
    return out


def locate_rows(
    table: Table, snapshot_id: int | None, ids: Sequence[str]
) -> dict[str, list[tuple[str, int]]]:
    """Where each of `ids` lives in a snapshot: (data file, physical row) of every live
    copy. Opens only files whose `id` bounds admit an id, and in them only the row groups
    whose statistics do, so a few rows of a 2M-row table cost a few footers. Rows deleted
    by position (an edited row's old version) are not live and not returned."""
    if snapshot_id is None:
        return {}
    plan = plan_snapshot(table, snapshot_id)
    runs: dict[str, list[tuple[int, int]]] = {}
    for f in plan.files:
        runs.setdefault(f.path, []).append((f.first, f.first + f.records))
    bounds = _bounds(table, snapshot_id)
    wanted = sorted(set(ids))
    out: dict[str, list[tuple[str, int]]] = {}
    for path, spans in runs.items():
        lo, hi = bounds.get(path, (None, None))
        candidates = [i for i in wanted if (lo is None or i >= lo) and (hi is None or i <= hi)]
        if not candidates:
            continue
        starts = [a for a, _ in spans]
        for row_id, row in _ids_in_file(table, path, candidates):
            k = bisect.bisect_right(starts, row) - 1
            if k >= 0 and row < spans[k][1]:
                out.setdefault(row_id, []).append((path, row))
    return out


def rows_by_id(
    name: str, ids: Sequence[str], snapshot: int | str | None = None, branch: str = MAIN_BRANCH
) -> tuple[int | None, dict[str, dict[str, Any]]]:
    """The snapshot read (`snapshot`, else the branch head) and the rows of `ids` in it,
    found as an edit finds them (manifest bounds and row-group statistics on `id`), so
    reading the row an edit starts from costs a few footers, not a scan of the table."""
    table = load_table(name)
    sid = resolve_snapshot(table, snapshot) if snapshot is not None else branch_head(table, branch)
    located = locate_rows(table, sid, ids)
    found = [(i, places[0]) for i in ids if (places := located.get(i))]
    rows = _read_rows(table, [place for _, place in found])
    return sid, {i: row for (i, _), row in zip(found, rows, strict=True)}


def files_holding(table: Table, snapshot_id: int | None, ids: Sequence[str]) -> dict[str, set[str]]:
    """The data files of a snapshot holding live copies of any of `ids`, with those ids."""
    out: dict[str, set[str]] = {}
    for row_id, places in locate_rows(table, snapshot_id, ids).items():
        for path, _ in places:
            out.setdefault(path, set()).add(row_id)
    return out


def _ids_in_file(table: Table, path: str, candidates: list[str]) -> list[tuple[str, int]]:
    """(id, physical row) of the rows of one data file whose id is a candidate."""
    parquet = open_parquet(table, path)
    column = parquet.schema_arrow.get_field_index("id")
    meta = parquet.metadata
    found: list[tuple[str, int]] = []
    start = 0
    for g in range(meta.num_row_groups):
        rows = meta.row_group(g).num_rows
        stats = meta.row_group(g).column(column).statistics
        if (
            stats is None
            or not stats.has_min_max
            or any(stats.min <= i <= stats.max for i in candidates)
        ):
            values = parquet.read_row_group(g, columns=["id"]).column("id")
            hits = pc.is_in(values, pa.array(candidates, pa.string()))
            for k in pc.indices_nonzero(hits).to_pylist():
                found.append((values[k].as_py(), start + k))
        start += rows
    return found


def _read_rows(table: Table, places: Sequence[tuple[str, int]]) -> list[dict[str, Any]]:
    """The stored rows at (data file, physical row), in the order given."""
    schema = schema_to_pyarrow(table.schema(), include_field_ids=False)
    by_path: dict[str, list[int]] = {}
    for path, row in places:
        by_path.setdefault(path, []).append(row)
    got: dict[tuple[str, int], dict[str, Any]] = {}
    for path, rows in by_path.items():
        parquet = open_parquet(table, path)
        sizes = row_group_sizes(table, path, parquet)
        edges = list(itertools.accumulate(sizes, initial=0))
        for row in sorted(set(rows)):
            g = bisect.bisect_right(edges, row) - 1
            data = parquet.read_row_group(g).slice(row - edges[g], 1)
            got[(path, row)] = data.select(
                [c for c in schema.names if c in data.column_names]
            ).to_pylist()[0]
    return [got[p] for p in places]


def _write_delta(
    table: Table, located: Mapping[str, list[tuple[str, int]]], change: Change
) -> list[DataFile]:
    """The files of one change: the edited rows as a new data file, and one position
    delete file naming every row removed or replaced (and what replaces it)."""
    deleted = [place for places in located.values() for place in places]
    written: list[DataFile] = []
    replacements: list[Replacement] = []
    try:
        updated = [(i, place) for i in sorted(change.updates) for place in located.get(i, [])]
        if updated:
            old = _read_rows(table, [place for _, place in updated])
            schema = schema_to_pyarrow(table.schema(), include_field_ids=False)
            rows = [{**row, **change.updates[i]} for (i, _), row in zip(updated, old, strict=True)]
            batch = pa.RecordBatch.from_pylist(rows, schema)
            writer = FileWriter(table.transaction(), get_settings().target_file_bytes)
            try:
                new_files = writer.write(iter([batch]), None)
            except BaseException:
                writer.discard()
                raise
            written.extend(new_files)
            targets = [
                (f.file_path, r) for f in new_files for r in range(f.record_count)
            ]  # the writer keeps row order across the files it rolls over
            replacements = [
                Replacement(old_path, old_row, new_path, new_row)
                for (_, (old_path, old_row)), (new_path, new_row) in zip(
                    updated, targets, strict=True
                )
            ]
        written.append(write_delete_file(table, deleted, replacements))
    except BaseException:
        _discard(table, written)
        raise
    return written


def _discard(table: Table, files: Iterable[DataFile]) -> None:
    for data_file in files:
        try:
            table.io.delete(data_file.file_path)
        except Exception as exc:  # an orphan file is harmless: readers follow manifests
            log.warning("could not delete orphan data file %s: %s", data_file.file_path, exc)

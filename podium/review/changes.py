"""Edits and removals of rows: one new snapshot per save, copy-on-write by data file.

A `Change` names rows by id: new values for some (an edited message list, say) and
rows to remove. `commit_change` finds the data files that hold those ids (manifest
bounds on `id`, then Parquet row-group statistics, then the `id` column of the few
row groups left), rewrites only those files, and commits ONE overwrite snapshot that
swaps them, on `main` or on a branch. pyiceberg's own `delete`/`overwrite` would write
two snapshots (delete, then append) and an edit could be seen half done.

The snapshot summary records `podium.author`, `podium.message`, `podium.action` and
`podium.rows` (the ids touched). That summary is also the conflict check: an edit
names the snapshot it was made on (`base`); before committing, every snapshot since
then is looked at, and if one touched the same rows the edit is refused with who did
it and when. Two edits of different rows that rewrite the same data file collide in
pyiceberg's commit validation; the loser re-plans on the new head (after the same
conflict check) and lands too.
"""

from __future__ import annotations

import itertools
import json
import logging
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyiceberg.conversions import from_bytes
from pyiceberg.exceptions import CommitFailedException, ValidationException
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.io.pyarrow import ArrowScan, _dataframe_to_data_files, schema_to_pyarrow
from pyiceberg.manifest import DataFile, DataFileContent
from pyiceberg.table import FileScanTask, Table
from pyiceberg.table.refs import MAIN_BRANCH
from pyiceberg.types import StringType

from podium.errors import InvalidInput, NotFound
from podium.identity import User, require
from podium.store.catalog import load_table
from podium.store.plan import warm_after_commit
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
    files_rewritten: int
    attempts: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "snapshot_id": self.snapshot_id,
            "parent_id": self.parent_id,
            "rows": self.rows,
            "files_rewritten": self.files_rewritten,
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
        holding = files_holding(table, head, ids)
        found = set().union(*holding.values()) if holding else set()
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFound(
                f"{name} has no row with id {', '.join(map(repr, missing[:5]))}"
                + (f" (and {len(missing) - 5} more)" if len(missing) > 5 else "")
                + "; nothing was changed."
            )
        written: list[DataFile] = []
        try:
            txn = table.transaction()
            with txn.update_snapshot(snapshot_properties=props, branch=branch).overwrite() as op:
                for data_file in holding:
                    op.delete_data_file(data_file)
                    for new_file in _rewrite(table, data_file, change):
                        written.append(new_file)
                        op.append_data_file(new_file)
            txn.commit_transaction()
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
        return Committed(new_head, head, ids, len(holding), attempt)
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


def _live_files(table: Table, snapshot_id: int | None) -> Iterator[DataFile]:
    snap = table.snapshot_by_id(snapshot_id) if snapshot_id is not None else None
    if snap is None:
        return
    for manifest in snap.manifests(table.io):
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
            if entry.data_file.content == DataFileContent.DATA:
                yield entry.data_file


def files_holding(
    table: Table, snapshot_id: int | None, ids: Sequence[str]
) -> dict[DataFile, set[str]]:
    """The data files of a snapshot that hold any of `ids`, with the ids each holds.

    Opens only files whose `id` bounds admit an id, and in them only the row groups
    whose statistics do: a few rows of a 2M-row table cost a few footers.
    """
    id_field = table.schema().find_field("id").field_id
    wanted = sorted(set(ids))
    out: dict[DataFile, set[str]] = {}
    for data_file in _live_files(table, snapshot_id):
        lo_raw = (data_file.lower_bounds or {}).get(id_field)
        hi_raw = (data_file.upper_bounds or {}).get(id_field)
        lo = from_bytes(StringType(), lo_raw) if lo_raw is not None else None
        hi = from_bytes(StringType(), hi_raw) if hi_raw is not None else None
        candidates = [i for i in wanted if (lo is None or i >= lo) and (hi is None or i <= hi)]
        if candidates:
            held = _ids_in_file(table, data_file.file_path, candidates)
            if held:
                out[data_file] = held
    return out


def _ids_in_file(table: Table, path: str, candidates: list[str]) -> set[str]:
    with table.io.new_input(path).open() as stream:
        parquet = pq.ParquetFile(stream)
        column = parquet.schema_arrow.get_field_index("id")
        meta = parquet.metadata
        groups = []
        for g in range(meta.num_row_groups):
            stats = meta.row_group(g).column(column).statistics
            if stats is not None and stats.has_min_max:
                if not any(stats.min <= i <= stats.max for i in candidates):
                    continue
            groups.append(g)
        if not groups:
            return set()
        values = parquet.read_row_groups(groups, columns=["id"]).column("id")
    hits = pc.filter(values, pc.is_in(values, pa.array(candidates, pa.string())))
    return set(hits.to_pylist())


def _rewrite(table: Table, data_file: DataFile, change: Change) -> list[DataFile]:
    """The file's rows with `change` applied, streamed into new data files."""
    schema = schema_to_pyarrow(table.schema(), include_field_ids=False)
    scan = ArrowScan(table.metadata, table.io, table.schema(), AlwaysTrue())
    batches = (
        _apply(batch.cast(schema), change)
        for batch in scan.to_record_batches([FileScanTask(data_file)])
    )
    reader = pa.RecordBatchReader.from_batches(schema, (b for b in batches if b.num_rows))
    return list(
        _dataframe_to_data_files(
            table.metadata, reader, table.io, write_uuid=uuid.uuid4(), counter=itertools.count()
        )
    )


def _apply(batch: pa.RecordBatch, change: Change) -> pa.RecordBatch:
    ids = batch.column("id")
    if change.deletes:
        batch = batch.filter(
            pc.invert(pc.is_in(ids, pa.array(sorted(change.deletes), pa.string())))
        )
        ids = batch.column("id")
    if not change.updates or batch.num_rows == 0:
        return batch
    hit = pc.is_in(ids, pa.array(sorted(change.updates), pa.string()))
    rows = [i for i, h in enumerate(hit.to_pylist()) if h]
    if not rows:
        return batch
    parts: list[pa.RecordBatch] = []
    start = 0
    for i in rows:
        parts.append(batch.slice(start, i - start))
        old = batch.slice(i, 1).to_pylist()[0]
        parts.append(
            pa.RecordBatch.from_pylist([{**old, **change.updates[old["id"]]}], batch.schema)
        )
        start = i + 1
    parts.append(batch.slice(start))
    return (
        pa.Table.from_batches([p for p in parts if p.num_rows], batch.schema)
        .combine_chunks()
        .to_batches()[0]
    )


def _discard(table: Table, files: Iterable[DataFile]) -> None:
    for data_file in files:
        try:
            table.io.delete(data_file.file_path)
        except Exception as exc:  # an orphan file is harmless: readers follow manifests
            log.warning("could not delete orphan data file %s: %s", data_file.file_path, exc)

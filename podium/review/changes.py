"""Edits and removals of rows: one new snapshot per save, merge-on-read.

A `Change` names rows by id: new values for some (an edited message list, say) and
rows to remove. `commit_change` finds where those ids live (`store.write.row_locations`)
and commits ONE snapshot, on `main` or on a branch, that adds a small data file with
the edited rows and a position-delete file naming the rows removed or replaced
(`store.write.position_deletes`, committed by `store.write.row_delta`). It writes bytes in
proportion to the rows changed, never a rewrite of the data files that hold them
(a 256 MiB file per edit before); `podium maintain` compacts them later. The delete
file also says which new row replaces which old one, so Podium shows an edited row in
its old place; other engines (pyiceberg, DuckDB's Iceberg reader) read the same rows.

The snapshot summary records `podium.author`, `podium.message`, `podium.action` and
`podium.rows` (the ids touched). That summary is also the conflict check: an edit
names the snapshot it was made on (`base`); before committing, every snapshot since
then is looked at, and if one touched the same rows the edit is refused with who did
it and when. Two edits committed at once collide in the catalog's commit check; the
loser re-plans on the new head (after the same conflict check) and lands too.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
from pyiceberg.exceptions import CommitFailedException, ValidationException
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.manifest import DataFile
from pyiceberg.table import Table
from pyiceberg.table.refs import MAIN_BRANCH
from pyiceberg.table.snapshots import Operation

from podium.config import get_settings
from podium.errors import InvalidInput, NotFound
from podium.identity import User, require
from podium.store.catalog.catalog import name_of
from podium.store.catalog.commit_outcome import TOKEN, commit_checked, new_token
from podium.store.read.plan import warm_after_commit
from podium.store.read.snapshots import resolve_snapshot
from podium.store.schema import PROP_MAPPING, ROLES
from podium.store.write.file_writer import FileWriter
from podium.store.write.position_deletes import Replacement, write_delete_file
from podium.store.write.row_delta import check_row_changes_supported, commit_row_delta
from podium.store.write.row_locations import branch_head, locate_rows, read_rows_at

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
        return asdict(self)


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


def commit_change(
    table: Table,
    change: Change,
    user: User,
    *,
    base: int | str | None = None,
    branch: str = MAIN_BRANCH,
) -> Committed:
    """Apply `change` to `table` as one new snapshot on `branch`; `table` is then at
    that snapshot (pyiceberg's commit updates it in place: nothing is loaded again).

    `base` is the snapshot (id, tag or branch) the change was made on; default: the
    branch head of `table` as loaded. Raises `EditConflict` when a snapshot committed
    since `base` touched any of the same rows, `NotFound` for ids the table does not hold.
    """
    require(user, "edit")
    ids = change.ids
    if not ids:
        raise InvalidInput("Nothing to change: name at least one row to edit or delete.")
    if not change.message.strip():
        raise InvalidInput("Say why: an edit needs a message (it is kept in the snapshot).")
    name = name_of(table)
    check_row_changes_supported(table)
    if PROP_MAPPING in table.properties and change.updates:
        raise InvalidInput(
            f"{name} is a mapped foreign table; edit it after importing it as an SFT table."
        )
    base_id = resolve_snapshot(table, base) if base is not None else branch_head(table, branch)
    props = _summary(change, user)
    for attempt in range(1, ATTEMPTS + 1):
        if attempt > 1:
            table.refresh()  # another writer committed first: re-plan on the new head
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
        written = _write_delta(table, located, change)  # removes its files if it fails
        token = new_token()
        try:
            settled = commit_checked(
                functools.partial(
                    commit_row_delta,
                    table,
                    add=written,
                    properties={**props, TOKEN: token},
                    branch=branch,
                    operation=Operation.OVERWRITE if change.updates else Operation.DELETE,
                ),
                token=token,
                reload=table.refresh,  # on an unknown outcome: is the snapshot there?
                discard=functools.partial(_discard, table, written),
                what=f"{change.action} on {name}",
            )
        except (CommitFailedException, ValidationException) as exc:
            log.info("edit of %s lost a commit race (%s); retrying on the new head", name, exc)
            continue
        table = warm_after_commit(settled if settled is not None else table)
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
            old = read_rows_at(table, [place for _, place in updated])
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

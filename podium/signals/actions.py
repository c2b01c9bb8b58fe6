"""Acting on a signal: its rows handed to the review changes that exist. Computing a
signal never changes the table; an action is one merge-on-read snapshot with author and
reason (`podium.review.changes.commit_change`), previewed with its count first, and
undone by time travel like any edit. Like every review change, an edit goes to `main`
or to a branch (Browse's "edits go to" setting): on a branch it is checked against the
snapshot the signal describes, so a row changed on the branch since is refused, not
overwritten."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pyiceberg.table.refs import MAIN_BRANCH

from podium.errors import InvalidInput
from podium.identity import require
from podium.review.changes import Change, commit_change
from podium.signals.registry import signal_kind
from podium.signals.values import REMOVES, ids_for, ids_to_remove
from podium.store.catalog.catalog import full_name, load_table, name_of
from podium.store.read.snapshots import resolve_snapshot
from podium.store.state.users import acting_user

if TYPE_CHECKING:
    from pyiceberg.table import Table

SHOWN_IDS = 20  # of the rows an action touches, named in its result (the first, sorted)


def remove_by_signal(
    table: str,
    signal: str,
    *,
    why: str | None = None,
    preview: bool = False,
    branch: str = MAIN_BRANCH,
) -> dict[str, Any]:
    """Remove the rows the current `signal` names (near-dup, exact-dup: all but each
    cluster's canonical row; `SIGNAL=VALUE`, a facet: `rubric=<5`, `language=fr`): one
    snapshot, or only the count with `preview`."""
    spec, _, value = signal.partition("=")  # rubric=<5: a facet, as training's exclusions
    name, value = signal_kind(spec).name, value.strip()
    if not preview:  # the role before any read: a viewer is told so, not "0 rows"
        require(acting_user(), "edit")
    loaded = load_table(full_name(table))
    sid = resolve_snapshot(loaded, None)
    if value:
        ids = ids_for(loaded, sid, name, value)
        what = f"the rows of {name}={value}"
    else:
        ids = ids_to_remove(loaded, sid, name)
        what = REMOVES[name][1]
    message = why or f"signals: remove {what} ({name} of snapshot {sid})"
    result = _edit_result(loaded, sid, ids, message, branch, signal=name)
    if preview or not ids:
        return result
    return _committed(result, loaded, Change(deletes=frozenset(ids), message=message))


def _edit_result(
    loaded: Table, sid: int | None, ids: Iterable[str], message: str, branch: str, **named: Any
) -> dict[str, Any]:
    """What an edit by a signal reports before its commit: the table, `named`, the rows
    it touches (the first SHOWN_IDS by id), its message, and where it goes."""
    touched = sorted(ids)
    return {
        "table": name_of(loaded),
        **named,
        "rows": len(touched),
        "ids": touched[:SHOWN_IDS],
        "message": message,
        "snapshot_id": None,
        "parent_id": sid,
        "branch": branch,
    }


def _committed(result: dict[str, Any], loaded: Table, change: Change) -> dict[str, Any]:
    """`result` once `change` is committed on its branch over its parent snapshot."""
    committed = commit_change(
        loaded, change, acting_user(), base=result["parent_id"], branch=result["branch"]
    )
    return {**result, "snapshot_id": committed.snapshot_id, "parent_id": committed.parent_id}


def placeholder(kind: str) -> str:
    """What a redacted span becomes: its kind, so a reader knows what was there."""
    return f"[{kind.upper()}]"


def redacted(text: str, spans: list[tuple[int, int, str]]) -> str:
    """`text` with each (start, end, kind) span replaced by its placeholder; spans that
    overlap one already replaced are skipped (the first, longest one wins)."""
    out: list[str] = []
    at = 0
    for start, end, kind in sorted(spans, key=lambda s: (s[0], -s[1])):
        if start < at or end > len(text):
            continue
        out.append(text[at:start])
        out.append(placeholder(kind))
        at = end
    out.append(text[at:])
    return "".join(out)


def redact_private_data(
    table: str,
    *,
    kinds: list[str] | None = None,
    why: str | None = None,
    preview: bool = False,
    branch: str = MAIN_BRANCH,
) -> dict[str, Any]:
    """Replace every span the current private-data signal found (of `kinds`, default
    all) by a placeholder such as `[SECRET]`: one edit snapshot of the rows touched."""
    from podium.signals.values import current_signal, hits_by_row
    from podium.store.read import by_position
    from podium.store.read.query import matching_positions, open_view

    if not preview:  # the role before any read, as for remove
        require(acting_user(), "edit")
    loaded = load_table(full_name(table))
    sid = resolve_snapshot(loaded, None)
    hits = hits_by_row(current_signal(loaded, sid, "private-data"), kinds)
    spans = sum(len(v) for v in hits.values())
    message = why or (
        f"signals: redact {spans} private-data spans ({', '.join(kinds or ['every kind'])}) "
        f"of snapshot {sid}"
    )
    result = _edit_result(loaded, sid, hits, message, branch, spans=spans)
    if preview or not hits:
        return result
    view = open_view(name_of(loaded), sid)
    positions = matching_positions(view, ids=list(hits))
    rows = view.canonical(by_position.read_positions(view.table, view.plan, positions)).to_pylist()
    updates: dict[str, dict[str, Any]] = {}
    for row in rows:
        by_turn: dict[int, list[tuple[int, int, str]]] = {}
        for turn, start, end, kind in hits[str(row["id"])]:
            by_turn.setdefault(turn, []).append((start, end, kind))
        messages = [dict(m) for m in row.get("messages") or []]
        for turn, found in by_turn.items():
            if 0 <= turn < len(messages) and isinstance(messages[turn].get("content"), str):
                messages[turn]["content"] = redacted(messages[turn]["content"], found)
        updates[str(row["id"])] = {"messages": messages}
    return _committed(result, loaded, Change(updates=updates, message=message))


def label_by_signal(
    table: str,
    signal: str,
    *,
    value: str | None = None,
    label: str | None = None,
    tags: list[str] | None = None,
    preview: bool = False,
) -> dict[str, Any]:
    """Annotate the rows a current signal names (a facet: `value`, default what `remove`
    takes) with a label from the table's set or tags: one snapshot of its annotations."""
    from podium.review.annotations import annotate, annotations_table
    from podium.signals.values import ids_for

    name = signal_kind(signal).name
    if not preview:
        require(acting_user(), "annotate")
    loaded = load_table(full_name(table))
    sid = resolve_snapshot(loaded, None)
    if value is None:
        if name not in REMOVES:
            raise InvalidInput(f"Say which {name} value to label (--value, e.g. en).")
        value = REMOVES[name][0]
    ids = ids_for(loaded, sid, name, value)
    result: dict[str, Any] = {
        "table": annotations_table(name_of(loaded)),
        "signal": name,
        "value": value,
        "rows": len(ids),
        "ids": sorted(ids)[:SHOWN_IDS],
        "snapshot_id": None,
    }
    if preview or not ids:
        return result
    result["snapshot_id"] = annotate(
        loaded, sorted(ids), acting_user(), label=label, tags=tags, snapshot=sid
    )
    return result

"""What the signals current for a snapshot say about one opened row, as plain text for
Browse: the spans found (secrets masked), the eval row a span matches, the other members
of its cluster; and the canonical row an opened copy is shown beside."""

from __future__ import annotations

from pyiceberg.table import Table

from podium.signals.values import CLUSTERED, signal_statuses

EVIDENCE_CHARS = 160  # of a span or a cluster member shown beside the row


def _shown(text: str, start: int, end: int) -> str:
    piece = text[start:end]
    return piece if len(piece) <= EVIDENCE_CHARS else piece[: EVIDENCE_CHARS - 1] + "…"


def _masked(value: str) -> str:
    """A secret shown by its ends only: enough to find it, not to use it."""
    return value if len(value) <= 8 else f"{value[:4]}…{value[-2:]}"


def evidence(
    table: Table, snapshot_id: int | None, row: dict[str, object]
) -> list[tuple[str, list[str]]]:
    """What each signal current for `snapshot_id` says about one row, as (signal, lines
    of plain text): the spans found (secrets masked), the eval row a span matches, the
    other members of its cluster. Each signal table is read for this row's id only."""
    from podium.store.read.query import page

    row_id = str(row.get("id"))
    messages = row.get("messages") or []
    assert isinstance(messages, list)

    def text_of(turn: int) -> str:
        if 0 <= turn < len(messages) and isinstance(messages[turn], dict):
            content = messages[turn].get("content")
            return content if isinstance(content, str) else ""
        return ""

    out: list[tuple[str, list[str]]] = []
    for status in signal_statuses(table, snapshot_id):
        if not status.current:
            continue
        found = page(status.table, ids=[row_id], limit=1000).rows
        if not found:
            continue
        lines: list[str] = []
        if status.signal == "private-data":
            for hit in found:
                value = text_of(int(hit["turn"]))[hit["start"] : hit["end"]]
                shown = _masked(value) if hit["kind"] == "secret" else value
                lines.append(
                    f"turn {hit['turn']}, characters {hit['start']}-{hit['end']}: "
                    f"{hit['kind']} ({hit['detail']}) {shown!r}"
                )
        elif status.signal == "contamination":
            for hit in found:
                span = _shown(text_of(int(hit["turn"])), hit["start"], hit["end"])
                lines.append(
                    f"turn {hit['turn']}, characters {hit['start']}-{hit['end']} "
                    f"({hit['ngrams']} n-grams) match {hit['eval_table']} row "
                    f"{hit['eval_id']}: {span!r}"
                )
        elif status.signal in CLUSTERED:
            (member,) = found[:1]
            cluster = str(member["cluster"])
            others = page(status.table, filters={"cluster": cluster}, limit=50).rows
            ids = sorted(str(o["id"]) for o in others if str(o["id"]) != row_id)
            role = "canonical row" if member["is_canonical"] else f"duplicate of {cluster}"
            lines.append(f"{role}; cluster of {member['size']}: {', '.join(ids[:20])}")
        elif status.signal == "language":
            lines.append(str(found[0]["language"]))
        elif status.signal == "rubric":
            score = found[0]["score"]
            shown = "unparsed" if score is None else f"{score}/10"
            lines.append(f"quality {shown}: {found[0]['reason'] or found[0]['problem'] or ''}")
        elif status.signal == "length":
            lines.append(f"{found[0]['chars']} characters, {found[0]['words']} words")
        else:
            continue
        out.append((status.signal, lines))
    return out


def canonical_of(table: Table, snapshot_id: int | None, row_id: str, signal: str) -> str | None:
    """The canonical row of `row_id`'s cluster in the current `signal` (near-dup,
    exact-dup), or None when it is no other row's copy or the signal is not current."""
    from podium.store.read.query import page

    for status in signal_statuses(table, snapshot_id):
        if status.signal == signal and status.current:
            found = page(status.table, ids=[row_id], limit=1).rows
            if found and not found[0]["is_canonical"]:
                return str(found[0]["cluster"])
    return None

"""Acting on a signal from Browse, without Streamlit: which actions the signals current
for the shown snapshot offer, and each one's preview (how many rows, which ones, a
sample) and write, through `podium.signals.actions` (the functions the CLI calls), so
the page and `podium signals remove|redact|label` are one code path."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from podium.app.views.browse.model import preview
from podium.errors import InvalidInput
from podium.identity import Action
from podium.signals import actions
from podium.signals.store import signal_table_name
from podium.signals.values import CLUSTERED, Facet
from podium.store.read.query import page

SAMPLE_ROWS = 3  # rows a preview shows in full (of the `actions.SHOWN_IDS` it names)


@dataclass(frozen=True)
class SignalAct:
    """One action on a current signal: `value` is the facet a label takes."""

    key: str
    title: str
    signal: str
    needs: Action
    value: str | None = None

    @property
    def labels(self) -> bool:
        return self.needs == "annotate"

    def run(
        self,
        table: str,
        *,
        preview: bool,
        why: str | None = None,
        label: str | None = None,
        tags: Sequence[str] = (),
        branch: str = "main",
    ) -> dict[str, Any]:
        """The action's preview (nothing written) or its one snapshot, on `branch` (the
        page's "edits go to"; labels go to the annotations table, as the page's do)."""
        if self.labels:
            if not preview and not label and not tags:
                raise InvalidInput("Choose a label or write a tag for these rows first.")
            return actions.label_by_signal(
                table,
                self.signal,
                value=self.value,
                label=label or None,
                tags=list(tags) or None,
                preview=preview,
            )
        if self.key == "redact":
            return actions.redact_private_data(
                table, why=why or None, preview=preview, branch=branch
            )
        return actions.remove_by_signal(
            table, self.signal, why=why or None, preview=preview, branch=branch
        )


def offered(current: Sequence[str], chosen: Sequence[Facet]) -> list[SignalAct]:
    """The actions the `current` signals allow, and a label for each facet `chosen` in
    the Signals filter (the rows the reviewer is looking at)."""
    out = [
        SignalAct(f"keep.{s}", f"Keep one per cluster ({s})", s, "edit")
        for s in CLUSTERED
        if s in current
    ]
    if "contamination" in current:
        out.append(SignalAct("contaminated", "Remove contaminated rows", "contamination", "edit"))
    if "private-data" in current:
        out.append(SignalAct("private", "Remove rows with private data", "private-data", "edit"))
        out.append(SignalAct("redact", "Redact private data", "private-data", "edit"))
    for facet in chosen:
        out.append(
            SignalAct(
                f"label.{facet.signal}={facet.value}",
                f"Label these rows ({facet.label})",
                facet.signal,
                "annotate",
                facet.value,
            )
        )
    return out


def summary(act: SignalAct, result: dict[str, Any]) -> str:
    """What the preview says the action will do."""
    rows = f"{result['rows']:,} row" + ("" if result["rows"] == 1 else "s")
    if act.key == "redact":
        return f"Would redact {result['spans']:,} spans in {rows} (one edit snapshot)."
    if act.labels:
        return f"Would annotate {rows} (one snapshot of {result['table']})."
    return f"Would remove {rows}: {result['message']}."


def done_text(act: SignalAct, result: dict[str, Any]) -> str:
    """What the page says after the write."""
    if act.labels:
        return f"Annotated {result['rows']:,} rows ({act.signal}={result['value']})."
    verb = "Redacted" if act.key == "redact" else "Removed"
    where = "" if result["branch"] == "main" else f" on branch {result['branch']}"
    return (
        f"{verb} {result['rows']:,} rows: snapshot {result['snapshot_id']}{where} "
        f"(parent {result['parent_id']})."
    )


def sample(act: SignalAct, table: str, snapshot_id: int | None, ids: Sequence[str]) -> list[str]:
    """A line for each of the first rows the action touches: its first prompt, or for a
    redaction the turn as it will read (placeholders in place of the spans)."""
    shown = list(ids)[:SAMPLE_ROWS]
    if not shown:
        return []
    rows = page(table, ids=shown, limit=SAMPLE_ROWS, snapshot_id=snapshot_id).rows
    spans: dict[str, list[dict[str, Any]]] = {}
    if act.key == "redact":
        hits = page(signal_table_name(table, "private-data"), ids=shown, limit=1000).rows
        for hit in hits:
            spans.setdefault(str(hit["id"]), []).append(hit)
    lines = []
    for row in sorted(rows, key=lambda r: str(r.get("id"))):
        row_id = str(row.get("id"))
        messages = list(row.get("messages") or [])
        found = spans.get(row_id)
        if found:
            turn = int(found[0]["turn"])
            text = str((messages[turn] if turn < len(messages) else {}).get("content") or "")
            here = [(h["start"], h["end"], h["kind"]) for h in found if h["turn"] == turn]
            lines.append(f"{row_id}, turn {turn}: {preview(actions.redacted(text, here))}")
            continue
        first = next((m.get("content") for m in messages if m.get("role") == "user"), "")
        last = next((m.get("content") for m in reversed(messages)), "")
        lines.append(f"{row_id}: {preview(first)} → {preview(last)}")
    return lines

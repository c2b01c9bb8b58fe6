"""An opened near-duplicate beside its cluster's canonical row, the words that differ
marked on each side (Compare's bounded word diff), without Streamlit."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyiceberg.table import Table

from podium.compare.diff import side_by_side_html
from podium.signals.evidence import canonical_of
from podium.signals.values import CLUSTERED
from podium.store.catalog.catalog import name_of
from podium.store.read.query import page


@dataclass(frozen=True)
class DuplicatePair:
    signal: str
    canonical: str  # the canonical row's id
    row_html: str  # the opened row, its words not in the canonical row marked
    canonical_html: str


def row_text(row: Mapping[str, Any]) -> str:
    """A row's turns as one text, each after its role."""
    return "\n\n".join(
        f"{m.get('role')}: {m.get('content') or ''}" for m in row.get("messages") or [] if m
    )


def duplicate_pair(
    table: Table, snapshot_id: int | None, row: Mapping[str, Any]
) -> DuplicatePair | None:
    """The opened row beside its canonical row, when a current near-dup (exact-dup,
    semantic-dup) signal names it as a copy."""
    row_id = str(row.get("id"))
    for signal in CLUSTERED:
        canonical = canonical_of(table, snapshot_id, row_id, signal)
        if canonical is None:
            continue
        found = page(name_of(table), ids=[canonical], limit=1, snapshot_id=snapshot_id).rows
        if not found:
            continue
        ours, theirs = side_by_side_html([row_text(row), row_text(found[0])])
        return DuplicatePair(signal, canonical, ours, theirs)
    return None

"""The signals stored for a table, each current or stale for a snapshot: what
`podium signals list` prints and Browse shows."""

from __future__ import annotations

from podium.signals.registry import SIGNAL_KINDS
from podium.signals.store import SignalStatus, list_signals
from podium.store.catalog.catalog import full_name, load_table
from podium.store.read.snapshots import resolve_snapshot


def current_versions() -> dict[str, int]:
    """The version this Podium computes of every signal it knows."""
    return {name: kind.load().version for name, kind in SIGNAL_KINDS.items()}


def signals_for(table: str, snapshot: int | str | None = None) -> list[SignalStatus]:
    loaded = load_table(full_name(table))
    return list_signals(loaded, resolve_snapshot(loaded, snapshot), current_versions())

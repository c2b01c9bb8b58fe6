"""The signals stored for a table, each current or stale for a snapshot: what
`podium signals list` prints and Browse shows."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from podium.signals.registry import SIGNAL_KINDS
from podium.signals.store import SignalStatus, list_signals
from podium.store.catalog.catalog import full_name, load_table
from podium.store.read.snapshots import resolve_snapshot


class CurrentVersions(Mapping[str, int]):
    """The version this Podium computes of every signal it knows, each looked up (its
    module imported) only when a stored signal of that kind is checked: listing the
    signals of a table never imports lingua or a vector library it does not hold."""

    def __getitem__(self, name: str) -> int:
        return SIGNAL_KINDS[name].load().version

    def __iter__(self) -> Iterator[str]:
        return iter(SIGNAL_KINDS)

    def __len__(self) -> int:
        return len(SIGNAL_KINDS)


def current_versions() -> Mapping[str, int]:
    return CurrentVersions()


def signals_for(table: str, snapshot: int | str | None = None) -> list[SignalStatus]:
    loaded = load_table(full_name(table))
    return list_signals(loaded, resolve_snapshot(loaded, snapshot), current_versions())

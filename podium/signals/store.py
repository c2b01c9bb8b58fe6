"""Where a signal's values live: one Iceberg table per signal beside the table it
describes, `NS.TABLE__sig_KIND` (`demo.chat__sig_near_dup`), with `id` and the signal's
typed columns.

Its properties name what it describes and how it was computed: the input table and
snapshot (lineage, as a validation report's do), the signal, its version and its
settings with their hash. A signal is *current* for a snapshot when the table and
snapshot match and its version is the one this Podium computes; otherwise it is
*stale*, and says why. Each run replaces the table whole in one commit: a signal and a
validation report are both `Describing` tables (podium/store/write/describing.py), so a
run that fails or is killed leaves the previous values, never half of new ones.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from pyiceberg.table import Table

from podium.signals.facet_counts import FacetCount
from podium.store.catalog import kinds
from podium.store.catalog.catalog import load_or_none, name_of, parse_name
from podium.store.catalog.names import table_names
from podium.store.schema import PROP_KIND, PROP_LINEAGE_PREFIX
from podium.store.write.describing import Describing

SIGNAL_SUFFIX = "__sig_"  # reserved (store.catalog.table_name.RESERVED_NAMES: *.*__sig_*)
SIGNAL_KIND = kinds.SIGNAL
PROP_SIGNAL = "podium.signal.name"
PROP_VERSION = "podium.signal.version"
PROP_SETTINGS = "podium.signal.settings"
PROP_SETTINGS_HASH = "podium.signal.settings_hash"
PROP_SUMMARY = "podium.signal.summary"
PROP_TABLE = f"{PROP_LINEAGE_PREFIX}signal_table"
PROP_SNAPSHOT = f"{PROP_LINEAGE_PREFIX}signal_snapshot"
# A signal describes one snapshot of its table, as a validation report does.
SIGNAL = Describing(SIGNAL_KIND, PROP_TABLE, PROP_SNAPSHOT, "a signal")


def signal_table_name(table: str, signal: str) -> str:
    """`ns.chat` + `near-dup` -> `ns.chat__sig_near_dup`."""
    ns, name = parse_name(table)
    return f"{ns}.{name}{SIGNAL_SUFFIX}{signal.replace('-', '_')}"


def settings_json(settings: Mapping[str, Any]) -> str:
    """Settings as canonical JSON (sorted keys), the text their hash is taken of."""
    return json.dumps(settings, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def settings_hash(settings: Mapping[str, Any]) -> str:
    return hashlib.sha256(settings_json(settings).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Described:
    """What a signal run describes and how: the properties its table gets."""

    signal: str
    version: int
    settings: Mapping[str, Any]
    table: str
    snapshot_id: int

    def properties(self, lineage: Mapping[str, str]) -> dict[str, str]:
        return {
            **lineage,
            **SIGNAL.lineage(self.table, self.snapshot_id),
            PROP_SIGNAL: self.signal,
            PROP_VERSION: str(self.version),
            PROP_SETTINGS: settings_json(self.settings),
            PROP_SETTINGS_HASH: settings_hash(self.settings),
        }


def write_signal(
    name: str,
    batches: Iterable[pa.RecordBatch],
    schema: pa.Schema,
    described: Described,
    lineage: Mapping[str, str],
    summary: Callable[[], Mapping[str, int]],
) -> Table:
    """Create or replace signal table `name` with `batches` in one commit, its facets
    counted on the way and kept with it. Refuses to replace a table that is not this
    signal of this table (a dataset, another signal)."""
    count = FacetCount(described.signal)

    def final() -> dict[str, str]:
        return {PROP_SUMMARY: json.dumps(dict(summary()), sort_keys=True), **count.kept()}

    return dataclasses.replace(SIGNAL, what=f"the {described.signal} signal").replace(
        name,
        count.through(batches),
        schema=schema,
        properties=described.properties(lineage),
        final_properties=final,
        also_owned=lambda existing: existing.properties.get(PROP_SIGNAL) == described.signal,
        advice="drop or rename it, then run again",
    )


@dataclass(frozen=True)
class SignalStatus:
    """A stored signal table and whether it describes the snapshot asked about."""

    signal: str
    table: str  # the signal table
    described_table: str
    described_snapshot: int | None
    version: int
    settings: dict[str, Any]
    settings_hash: str
    summary: dict[str, int] = field(default_factory=dict)
    stale: str = ""  # why it does not describe the snapshot asked about ("" = current)

    @property
    def current(self) -> bool:
        return not self.stale

    def to_dict(self) -> dict[str, Any]:
        return {
            "signal": self.signal,
            "table": self.table,
            "described_table": self.described_table,
            "described_snapshot": self.described_snapshot,
            "version": self.version,
            "settings": self.settings,
            "settings_hash": self.settings_hash,
            "summary": self.summary,
            "current": self.current,
            "stale": self.stale,
        }


def signal_status(
    stored: Table, table: Table, snapshot_id: int | None, versions: Mapping[str, int]
) -> SignalStatus | None:
    """The status of `stored` for `table` at `snapshot_id`; None when `stored` is not a
    signal of `table` at all. `versions`: the version this Podium computes per signal."""
    props = stored.properties
    of_table, described = SIGNAL.described(stored)
    if props.get(PROP_KIND) != SIGNAL_KIND or of_table != name_of(table):
        return None
    signal = props.get(PROP_SIGNAL, "")
    version = int(props.get(PROP_VERSION, "0") or 0)
    stale = ""
    if described != snapshot_id:
        stale = f"computed for snapshot {described}, not {snapshot_id}"
    elif signal in versions and versions[signal] != version:
        stale = (
            f"computed by version {version} of {signal}; this Podium computes {versions[signal]}"
        )
    return SignalStatus(
        signal=signal,
        table=name_of(stored),
        described_table=name_of(table),
        described_snapshot=described,
        version=version,
        settings=json.loads(props.get(PROP_SETTINGS) or "{}"),
        settings_hash=props.get(PROP_SETTINGS_HASH, ""),
        summary=json.loads(props.get(PROP_SUMMARY) or "{}"),
        stale=stale,
    )


def signal_tables_of(table: Table) -> list[str]:
    """Names of the tables beside `table` named as its signals (`NS.T__sig_*`)."""
    prefix = name_of(table) + SIGNAL_SUFFIX
    return [n for n in table_names() if n.startswith(prefix)]


def list_signals(
    table: Table, snapshot_id: int | None, versions: Mapping[str, int]
) -> list[SignalStatus]:
    """Every stored signal of `table`, current or stale for `snapshot_id`. A signal
    table deleted meanwhile is simply not listed."""
    return [status for status, _ in stored_signals(table, snapshot_id, versions)]


def stored_signals(
    table: Table, snapshot_id: int | None, versions: Mapping[str, int]
) -> list[tuple[SignalStatus, Table]]:
    """`list_signals`, each with its signal table as loaded for its status (a reader of
    their values, Browse's facets, loads none of them again)."""
    found = []
    for name in signal_tables_of(table):
        stored = load_or_none(name)
        if stored is None:
            continue
        status = signal_status(stored, table, snapshot_id, versions)
        if status is not None:
            found.append((status, stored))
    return sorted(found, key=lambda pair: pair[0].signal)

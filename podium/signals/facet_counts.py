"""A signal's facets (rows per value a reader can filter on), counted once from its rows
as the run writes them and kept in the signal table's properties, in the same commit
as those rows: Browse's cold open reads a property instead of every signal table (the
language signal alone is a row per row of the table).

The kept counts name how many rows they were counted over; a signal table whose
current snapshot holds another number of rows (or an older one, with no kept counts)
is counted afresh from its columns, so a count is never of other rows than those shown.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.table import Table

from podium.store.read.read import iter_table_batches

PROP_FACETS = "podium.signal.facets"

# Signals stored as clusters with a canonical row each (podium.signals.clusters): their
# facets, removal, sorting and evidence are the same.
CLUSTERED = ("near-dup", "exact-dup", "semantic-dup")
# The columns each counted signal's facets read.
FACET_COLUMNS: dict[str, tuple[str, ...]] = {
    **{s: ("is_canonical",) for s in CLUSTERED},
    "contamination": ("id",),
    "private-data": ("id", "kind"),
    "rubric": ("score",),
    "language": ("language",),
}


@dataclass(frozen=True)
class Facet:
    """One choice a reader can filter on: `signal` + `value` (see `values.ids_for`)."""

    signal: str
    value: str  # "member", "duplicate", "contaminated", "any", a private-data kind, "en"
    label: str
    rows: int


@dataclass
class FacetCount:
    """Facets of one signal, counted a batch of its rows at a time."""

    signal: str
    rows: int = 0  # signal rows seen
    _canonical: int = 0
    _ids: dict[str, set[str]] = field(default_factory=dict)  # value -> distinct row ids
    _values: dict[str, int] = field(default_factory=dict)  # value -> rows
    _scores: dict[int | None, int] = field(default_factory=dict)

    @property
    def counted(self) -> bool:
        return self.signal in FACET_COLUMNS

    def add(self, batch: pa.RecordBatch) -> None:
        s = self.signal
        self.rows += batch.num_rows
        if s in CLUSTERED:
            self._canonical += int(pc.sum(batch.column("is_canonical")).as_py() or 0)
        elif s == "contamination":
            self._ids.setdefault("contaminated", set()).update(batch.column("id").to_pylist())
        elif s == "private-data":
            every = self._ids.setdefault("any", set())
            ids, kinds = batch.column("id").to_pylist(), batch.column("kind").to_pylist()
            for row_id, kind in zip(ids, kinds, strict=True):
                self._ids.setdefault(kind, set()).add(row_id)
                every.add(row_id)
        elif s == "rubric":
            for score in batch.column("score").to_pylist():
                self._scores[score] = self._scores.get(score, 0) + 1
        elif s == "language":
            counted = pc.value_counts(batch.column("language"))
            values, ns = counted.field("values").to_pylist(), counted.field("counts").to_pylist()
            for value, n in zip(values, ns, strict=True):
                self._values[value] = self._values.get(value, 0) + n

    def through(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """`batches` as they are, counted on their way to the writer."""
        for batch in batches:
            if self.counted:
                self.add(batch)
            yield batch

    def facets(self) -> list[Facet]:
        s = self.signal
        if s in CLUSTERED:
            return [
                Facet(s, "member", f"{s}: in a cluster", self.rows),
                Facet(s, "duplicate", f"{s}: not canonical", self.rows - self._canonical),
            ]
        if s == "contamination":
            return [
                Facet(s, "contaminated", "contaminated", len(self._ids.get("contaminated", ())))
            ]
        if s == "private-data":
            found = [Facet(s, "any", "private data: any", len(self._ids.get("any", ())))]
            kinds = sorted(k for k in self._ids if k != "any")
            return found + [Facet(s, k, f"private data: {k}", len(self._ids[k])) for k in kinds]
        if s == "rubric":
            return self._rubric_facets()
        if s == "language":
            ordered = sorted(self._values.items(), key=lambda kv: -kv[1])
            return [Facet(s, value, f"language: {value}", n) for value, n in ordered]
        return []

    def _rubric_facets(self) -> list[Facet]:
        s = self.signal
        scored = [n for n in self._scores if n is not None]
        found = [
            Facet(
                s,
                f">={n}",
                f"quality ≥ {n}",
                sum(c for x, c in self._scores.items() if x is not None and x >= n),
            )
            for n in sorted(scored, reverse=True)
        ]
        if self._scores.get(None):
            found.append(Facet(s, "unparsed", "quality: unparsed", self._scores[None]))
        return found

    def kept(self) -> dict[str, str]:
        """The properties that keep these counts beside the rows they were counted over."""
        if not self.counted:
            return {}
        facets = [[f.value, f.label, f.rows] for f in self.facets()]
        return {PROP_FACETS: json.dumps({"rows": self.rows, "facets": facets})}


def kept_facets(signal: str, stored: Table) -> list[Facet] | None:
    """The counts the run kept, if they were counted over the rows `stored` holds now."""
    raw = stored.properties.get(PROP_FACETS)
    snapshot = stored.current_snapshot()
    if not raw or snapshot is None or snapshot.summary is None:
        return None
    kept = json.loads(raw)
    if str(kept.get("rows")) != snapshot.summary.get("total-records"):
        return None
    return [Facet(signal, value, label, int(n)) for value, label, n in kept["facets"]]


def counted_facets(signal: str, stored: Table) -> list[Facet]:
    """The facets of `stored` counted afresh from the columns they read."""
    count = FacetCount(signal)
    snapshot = stored.current_snapshot()
    if signal in FACET_COLUMNS and snapshot is not None:
        columns = list(FACET_COLUMNS[signal])
        for batch in iter_table_batches(stored, snapshot.snapshot_id, columns=columns):
            count.add(batch)
    return count.facets()


def facets_of(signal: str, stored: Table) -> list[Facet]:
    """`signal`'s facets: the counts kept when it ran, else counted afresh."""
    kept = kept_facets(signal, stored)
    return kept if kept is not None else counted_facets(signal, stored)

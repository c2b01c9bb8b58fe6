"""Tables that describe one snapshot of another table: a validation report, a signal.

Each is replaced whole by every run (one commit, `replace_batches`), carries lineage
properties naming the table and snapshot it describes, and covers a snapshot when they
match. One shape for all of them, so a new kind (an embedding index, a judge's scores)
is declared in three names, not written again:

    REPORT = Describing("validation-report", "podium.lineage.validated_table", ...)
    REPORT.replace(name, batches, schema=..., properties=...)   # refuses other tables
    REPORT.covers(report_table, table, snapshot_id)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import pyarrow as pa
from pyiceberg.table import Table

from podium.errors import InvalidInput
from podium.store.catalog.catalog import name_of
from podium.store.read.snapshots import resolve_snapshot
from podium.store.schema import PROP_KIND
from podium.store.write.replace import replace_batches


@dataclass(frozen=True)
class Describing:
    kind: str  # the describing table's podium.kind
    table_prop: str  # lineage property naming the described table
    snapshot_prop: str  # ... and its snapshot
    what: str  # "a validation report": how a refusal names the kind

    def lineage(self, table: str, snapshot_id: int | None) -> dict[str, str]:
        return {PROP_KIND: self.kind, self.table_prop: table, self.snapshot_prop: str(snapshot_id)}

    def described(self, describing: Table) -> tuple[str | None, int | None]:
        """The table and snapshot `describing` says it describes (None when unknown)."""
        props = describing.properties
        raw = props.get(self.snapshot_prop, "")
        return props.get(self.table_prop), int(raw) if raw.lstrip("-").isdigit() else None

    def covers(self, describing: Table, table: Table, snapshot_id: int | str | None = None) -> bool:
        """Whether `describing` is of this kind and describes `table` at `snapshot_id`
        (default: its current snapshot)."""
        sid = resolve_snapshot(table, snapshot_id)
        return describing.properties.get(PROP_KIND) == self.kind and self.described(describing) == (
            name_of(table),
            sid,
        )

    def replace(
        self,
        name: str,
        batches: Iterable[pa.RecordBatch],
        *,
        schema: pa.Schema,
        properties: Mapping[str, str],
        final_properties: Callable[[], Mapping[str, str]] | None = None,
        also_owned: Callable[[Table], bool] = lambda table: True,
        advice: str = "choose another name",
    ) -> Table:
        """Create or replace `name` with `batches` in one commit; refuses to replace a
        table of another kind (or that `also_owned` rejects), so a mistyped name can
        never clobber a dataset."""

        def may_replace(existing: Table) -> None:
            kind = existing.properties.get(PROP_KIND)
            if kind != self.kind or not also_owned(existing):
                raise InvalidInput(
                    f"Table {name_of(existing)} exists and is not {self.what} "
                    f"(podium.kind={kind!r}); {advice}."
                )

        return replace_batches(
            name,
            batches,
            schema=schema,
            properties={PROP_KIND: self.kind, **properties},
            final_properties=final_properties,
            may_replace=may_replace,
        )

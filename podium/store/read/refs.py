"""A reference to one table as it was at one snapshot: the unit of job inputs.

A card may name the snapshot by a tag or branch (`ref: reviewed-2026-11`, or that name
written where the snapshot id goes). When the card is written, `pinned` resolves the
name to the snapshot id it points at now and keeps the name beside it, so a run reads
exactly that snapshot even if the branch moves later, and its lineage still says which
reviewed state it was meant to train on (`demo.chat@123#reviewed-2026-11`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, model_validator

from podium.store.catalog.catalog import full_name, load_table
from podium.store.read.snapshots import resolve_snapshot


def _is_ref_name(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip()) and not value.strip().isdigit()


class TableRef(BaseModel):
    """An input table pinned to a snapshot (None = current when the card is written)."""

    name: str = Field(description="Table as NAMESPACE.TABLE.")
    snapshot_id: int | None = Field(None, description="Iceberg snapshot to read; None = current.")
    ref: str | None = Field(
        None,
        description="Tag or branch the snapshot was chosen by; resolved to `snapshot_id` "
        "when the card is written and kept in the card and lineage.",
    )

    @model_validator(mode="before")
    @classmethod
    def _ref_in_snapshot_field(cls, data: Any) -> Any:
        # Every snapshot picker accepts a tag or branch name, so a card or form may put
        # one where the id goes.
        if isinstance(data, dict) and _is_ref_name(data.get("snapshot_id")):
            return {**data, "snapshot_id": None, "ref": data.get("ref") or data["snapshot_id"]}
        return data

    def pinned(self) -> TableRef:
        """This reference with a full table name and an existing snapshot id: the given
        id, else the one `ref` names now, else the current one."""
        table = load_table(self.name)
        wanted = self.snapshot_id if self.snapshot_id is not None else self.ref
        sid = resolve_snapshot(table, wanted)
        return TableRef(name=full_name(self.name), snapshot_id=sid, ref=self.ref)

    def __str__(self) -> str:
        text = self.name if self.snapshot_id is None else f"{self.name}@{self.snapshot_id}"
        return text + (f"#{self.ref}" if self.ref else "")


def parse_ref_text(text: str) -> tuple[str, int | None, str | None]:
    """(table, snapshot id, ref name) from `str(TableRef)`, as lineage records it."""
    rest, _, ref = text.partition("#")
    name, _, snap = rest.partition("@")
    return name, int(snap) if snap and snap != "None" else None, ref or None

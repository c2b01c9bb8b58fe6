"""A reference to one table as it was at one snapshot: the unit of job inputs."""

from __future__ import annotations

from pydantic import BaseModel, Field


class TableRef(BaseModel):
    """An input table pinned to a snapshot (None = current when the card is written)."""

    name: str = Field(description="Table as NAMESPACE.TABLE.")
    snapshot_id: int | None = Field(None, description="Iceberg snapshot to read; None = current.")

    def __str__(self) -> str:
        return self.name if self.snapshot_id is None else f"{self.name}@{self.snapshot_id}"

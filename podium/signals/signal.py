"""The one signal interface: a declared output schema and a computation.

Two shapes, as in Lilac (one small class per signal, `compute` over a batch) and
datatrove (heavy work as stages, each with its own output):

- a `RowSignal` maps a batch of turns to a batch of values; the runner streams the
  snapshot through it and writes what comes out;
- a `TableSignal` needs every row before it can say anything (duplicates,
  contamination): `run` gets a `Source` it may scan more than once and yields values
  when its stages are done.

Every output batch has the signal's `schema`, whose first column is the row `id`. A
signal that finds nothing for a row writes no value for it (a row without secrets is
absent from the private-data table). `version` changes whenever the same settings would
give other values: a stored signal of another version is stale.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar

import pyarrow as pa
from pyiceberg.table import Table

from podium.reporting import Reporter
from podium.signals.settings import SignalSettings
from podium.signals.turns import Turns

S = TypeVar("S", bound=SignalSettings)


class Source(Protocol):
    """The snapshot a signal describes, scannable more than once."""

    @property
    def table(self) -> str: ...

    @property
    def snapshot_id(self) -> int: ...

    @property
    def total(self) -> int: ...

    def turns(self) -> Iterator[Turns]:
        """Every row's chosen turns, in write order, one bounded batch at a time."""
        ...


class Signal(ABC, Generic[S]):
    name: ClassVar[str]  # "near-dup": the CLI's and the table's name (as near_dup)
    version: ClassVar[int]
    stage: ClassVar[Literal["row", "table"]]
    schema: ClassVar[pa.Schema]
    description: ClassVar[str]

    def __init__(self, settings: S) -> None:
        self.settings = settings

    def check(self) -> None:
        """Refuse bad settings that need the world (an eval table that does not exist)
        before anything is read or written. Default: nothing to check."""

    def prepare(self) -> None:
        """Load what the run itself needs (a model's server) once the job runs, after
        `check`; preflight does not call it. Default: nothing."""

    def pinned(self) -> dict[str, Any]:
        """What the run read besides the table (an eval table's snapshot), stored with the
        settings so that the signal says exactly what it compared against."""
        return {}

    def summary(self) -> dict[str, int]:
        """Counts stored with the signal table once it is written."""
        return {}

    def after_write(self, written: Table) -> None:
        """Build what lives beside the committed signal table (a vector index, titles).
        Default: nothing."""

    def empty(self) -> pa.RecordBatch:
        return pa.RecordBatch.from_pylist([], schema=self.schema)


class RowSignal(Signal[S]):
    stage: ClassVar[Literal["row", "table"]] = "row"

    @abstractmethod
    def compute(self, turns: Turns) -> pa.RecordBatch:
        """Values for one batch of rows (any number of output rows per input row)."""


class TableSignal(Signal[S]):
    stage: ClassVar[Literal["row", "table"]] = "table"

    @abstractmethod
    def run(self, source: Source, reporter: Reporter) -> Iterator[pa.RecordBatch]:
        """Values for the whole snapshot, once every stage has seen what it needs."""

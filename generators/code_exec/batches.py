"""What a code-exec batch is made of and leaves behind, shared by the build, the verify
pass and the Ray driver: the time spent, the finished rows, and their commit."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from generators.code_exec import tables
from generators.sandbox import Sandbox
from podium.store.catalog.catalog import table_exists
from podium.store.write.write import write_table


@dataclass
class Spent:
    """Where a build's time went: proposing inputs (the model) vs running the calls."""

    propose_s: float = 0.0
    sandbox_s: float = 0.0  # summed over sandbox nodes on Ray (they overlap)
    sandbox_runs: int = 0

    def add(self, propose_s: float = 0.0, sandbox_s: float = 0.0, sandbox_runs: int = 0) -> None:
        self.propose_s += propose_s
        self.sandbox_s += sandbox_s
        self.sandbox_runs += sandbox_runs


def chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass
class Finished:
    """One batch's rows as they are stored, with what to count of them."""

    rows: list[dict[str, Any]]
    schema: pa.Schema
    counts: dict[str, int]  # statuses (build) or outcomes (verify)
    runs: int  # sandbox executions


# A batch's work on a node's sandbox pool: a picklable callable (a `partial` of a
# module function) made by the driver, so a build and a verify share the nodes.
BatchWork = Callable[[Sandbox], Finished]


def write_batch(
    name: str, rows: list[dict[str, Any]], schema: Any, properties: dict[str, str]
) -> None:
    first = not table_exists(name)
    write_table(
        name,
        tables.to_arrow(rows, schema),
        mode="create" if first else "append",
        properties=properties if first else None,
    )

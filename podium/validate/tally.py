"""Counts of the failures a validation run streamed past, bounded whatever the table's size.

Kept per batch of rows and added up, so a run split over processes or Ray tasks
counts exactly what one process would.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Summary:
    table: str
    snapshot_id: int | None
    report: str
    report_snapshot_id: int | None = None
    rows: int = 0
    turns: int = 0
    failures: int = 0
    failing_rows: int = 0
    by_rule: dict[str, int] = field(default_factory=dict)
    by_kind: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Tally:
    failures: int = 0
    failing_rows: int = 0
    by_kind: dict[str, Counter[str]] = field(default_factory=dict)

    def add(self, failures: list[dict[str, Any]]) -> None:
        # A row's turns are checked in one batch, so distinct ids per batch add up to
        # the failing rows without a set of every id in the table.
        self.failures += len(failures)
        self.failing_rows += len({f["id"] for f in failures})
        for f in failures:
            self.by_kind.setdefault(f["rule"], Counter())[f["kind"]] += 1

    def merge(self, other: Tally) -> None:
        self.failures += other.failures
        self.failing_rows += other.failing_rows
        for rule, kinds in other.by_kind.items():
            self.by_kind.setdefault(rule, Counter()).update(kinds)

    def fill(self, summary: Summary) -> None:
        summary.failures = self.failures
        summary.failing_rows = self.failing_rows
        totals = Counter({rule: sum(kinds.values()) for rule, kinds in self.by_kind.items()})
        summary.by_rule = dict(totals.most_common())
        summary.by_kind = {rule: dict(self.by_kind[rule].most_common()) for rule in summary.by_rule}

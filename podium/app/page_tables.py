"""The tables one draw of a page touches, each loaded from the catalog at most once.

A page names one table; drawing it reads that table's properties and refs, its
annotations table and its validation report, in many functions. A page makes one
`PageTables` per run of its script and passes it (or the loaded tables it holds) down,
so each table is loaded once per draw, and only when something needs it: rows come
from the plan cache (`store.read.plan_cache`) without loading anything.
"""

from __future__ import annotations

import functools

from pyiceberg.table import Table

from podium.jobs.partial import partial_note
from podium.review.annotations import load_annotations
from podium.store.catalog.catalog import full_name, load_or_none, load_table
from podium.validate.report import report_covers, report_name


class PageTables:
    """Table `name` and the tables beside it, loaded on first use."""

    def __init__(self, name: str) -> None:
        self.name = full_name(name)

    @functools.cached_property
    def table(self) -> Table:
        return load_table(self.name)

    @property
    def partial(self) -> str | None:
        """Why the job writing this table left it part-written ("failed at 40 of 100;
        running it again resumes"), or None."""
        return partial_note(self.table.properties)

    @functools.cached_property
    def notes(self) -> Table | None:
        """The annotations table (None before the first annotation)."""
        return load_annotations(self.name)

    @functools.cached_property
    def _report(self) -> Table | None:
        return load_or_none(report_name(self.name))

    def report(self, snapshot_id: int | str | None) -> Table | None:
        """The validation report when it covers `snapshot_id` (None: no report, or one
        of another snapshot)."""
        report = self._report
        if report is None or not report_covers(report, self.table, snapshot_id):
            return None
        return report

"""The `podium jobs` list in a terminal: one line per job at 80 columns, and why each
queued job waits.

    out.print(jobs_table(rows, out.width))
    for line in waiting_lines(rows, out.width): out.print(line)
"""

from __future__ import annotations

import textwrap

from rich import box
from rich.table import Table

from podium.jobs.lanes import waiting_reason
from podium.jobs.logbook import duration_text
from podium.jobs.progress import progress_short
from podium.jobs.queue import Job, active_jobs


def waiting_lines(rows: list[Job], width: int) -> list[str]:
    """Under the table, one line per queued job (wrapped at `width`): why it has not
    started."""
    queued = [j for j in rows if j["status"] == "queued"]
    if not queued:
        return []
    active = active_jobs()
    return [
        textwrap.fill(
            f"{j['id']} is {waiting_reason(j, active)}",
            width=max(40, width),
            subsequent_indent="    ",
        )
        for j in queued
    ]


# What the jobs table (SIMPLE_HEAD without edges, collapsed padding) draws besides
# its cells: a divider and one space between columns.
_GAP = 2
_KIND_SHORT = 8  # a kind shortened this far still reads ("code-ex…"); the count goes first


def jobs_table(rows: list[Job], width: int) -> Table:
    """One line per job at 80 columns: id, kind, status, progress, duration; progress
    messages are for `podium jobs show` (they wrapped every row into three lines).

    The id and the status are never cut (an id is copied, "succee…" says nothing): where
    the line would not fit `width`, the kind (the id names it too) is shortened, then the
    count gives way to its percentage."""
    cells = [[j["id"], j["kind"], j["status"], progress_short(j), duration_text(j)] for j in rows]
    header = ["id", "kind", "status", "done", "time"]

    def widths() -> list[int]:
        found = [max(len(c) for c in column) for column in zip(header, *cells, strict=False)]
        found[1] = min(found[1], 16)
        return found

    budget = width - _GAP * (len(header) - 1)
    if sum(widths()) - max(0, widths()[1] - _KIND_SHORT) > budget:
        for row, job in zip(cells, rows, strict=True):
            row[3] = progress_short(job).rsplit(" ", 1)[-1]  # "1,200/1,200 100%" -> "100%"
    id_w, kind_w, status_w, done_w, time_w = widths()
    kind_w = max(4, min(kind_w, budget - id_w - status_w - done_w - time_w))
    table = Table(
        box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=False, collapse_padding=True
    )
    table.add_column("id", no_wrap=True, width=id_w)  # copied and grepped; never cut
    table.add_column("kind", no_wrap=True, overflow="ellipsis", width=kind_w)
    table.add_column("status", no_wrap=True, width=status_w)
    table.add_column("done", justify="right", no_wrap=True, width=done_w)
    table.add_column("time", justify="right", no_wrap=True, width=time_w)
    for row in cells:
        table.add_row(*row)
    return table

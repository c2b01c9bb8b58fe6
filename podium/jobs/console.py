"""The reporter `podium run` uses: a rich progress bar on the terminal, plus the DB."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from podium.jobs.reporter import JobReporter
from podium.terminal_text import safe_console


class ConsoleReporter(JobReporter):
    def __init__(
        self, job_id: str, log_path: str | Path, lineage: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(job_id, log_path, lineage)
        # Progress messages and log lines name files, keys and errors: neutralised.
        self.console = safe_console(stderr=True)
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        self.task = self.bar.add_task(job_id, total=None)

    def __enter__(self) -> ConsoleReporter:
        super().__enter__()
        self.bar.start()
        return self

    def close(self) -> None:
        self.bar.stop()
        super().close()

    def progress(self, done: int, total: int | None = None, message: str = "") -> None:
        super().progress(done, total, message)
        description = escape(message or self.job_id)
        self.bar.update(self.task, completed=done, total=total, description=description)

    def phase(self, message: str) -> None:
        super().phase(message)
        self.bar.update(self.task, description=escape(message))

    def log(self, message: str) -> None:
        super().log(message)
        self.bar.console.print(message, highlight=False, markup=False)

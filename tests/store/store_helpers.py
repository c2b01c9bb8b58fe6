"""Helpers shared by the store tests."""

from __future__ import annotations

from podium.reporting import Reporter


class Recorder(Reporter):
    """A reporter that keeps every progress call, to check what a bar would show."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[int, int | None, str]] = []

    def progress(self, done: int, total: int | None = None, message: str = "") -> None:
        self.calls.append((done, total, message))

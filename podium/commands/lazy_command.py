"""A command built only when it runs or shows its help.

A generated job command (`podium.commands.options.job_command`) imports its kind's model,
and with it pyarrow and pyiceberg. A module whose quick commands (`podium tables`) share
it with such a command hands out this stand-in, so listing or running the quick ones
never pays for that import.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click


class LazyCommand(click.Command):
    def __init__(self, name: str, build: Callable[[], click.Command]) -> None:
        super().__init__(name)
        self._build = build
        self._built: click.Command | None = None

    def real(self) -> click.Command:
        if self._built is None:
            self._built = self._build()
        return self._built

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        # The context names the real command, so click parses and invokes that one.
        return self.real().make_context(info_name, args, parent=parent, **extra)

    def get_short_help_str(self, limit: int = 45) -> str:
        return self.real().get_short_help_str(limit)

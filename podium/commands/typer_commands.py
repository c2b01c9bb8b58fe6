"""Registering a command module's typer functions under their command names."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer


def add_commands(app: typer.Typer, commands: Mapping[str, Callable[..., Any]]) -> None:
    """Each function in `commands` becomes `podium NAME` (the mapping's key)."""
    for name, function in commands.items():
        app.command(name)(function)

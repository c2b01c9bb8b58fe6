"""`podium start KIND [OPTIONS]`: any job kind, its options generated from its model.

    podium start --help                       # every kind, plugins included
    podium start export --input demo.chat --path out.jsonl
    podium start test-steps --steps 3 --set sleep=0.1 --card run.md

The area commands (`podium generate`, `podium train sft`, ...) are the same generated
commands with their conveniences; `start` reaches kinds that have no area command,
such as a plugin's (PODIUM_JOB_PLUGINS).
"""

from __future__ import annotations

import click

from podium.commands.options import job_command
from podium.jobs.kinds import KINDS
from podium.jobs.plugins import load_plugins


class KindGroup(click.Group):
    """One subcommand per registered kind, built only when that kind is named."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        load_plugins()
        return sorted(KINDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        load_plugins()
        return job_command(cmd_name) if cmd_name in KINDS else None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, KINDS[name].description) for name in self.list_commands(ctx)]
        with formatter.section("Kinds"):
            formatter.write_dl(rows)


def click_commands() -> dict[str, click.Command]:
    return {
        "start": KindGroup(
            "start",
            help="Start a job of any kind from options generated from its config model.",
            no_args_is_help=True,
        )
    }

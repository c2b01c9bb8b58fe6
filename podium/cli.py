"""The `podium` command: a workbench for LLM post-training data.

\b
    podium demo                          # load the demo tables into $PODIUM_HOME
    podium tables                        # list tables (--json everywhere a list is printed)
    podium import data.jsonl --out ns.name   [--format openai|sharegpt|prompt-response]
    podium show ns.name --search "error" --limit 5 [--snapshot ID] [--json]
    podium snapshots ns.name             # time travel: any id works with --snapshot
    podium export ns.name out.jsonl      # .jsonl or .parquet; re-import gives identical rows
    podium sql "SELECT count(*) FROM ns.name"
    podium app                           # the web UI on http://127.0.0.1:8501
    podium up                            # the web UI and the job worker together
    podium run CARD.md | submit CARD.md  # run a job card now, or queue it (podium worker)
    podium jobs [show|logs|cancel] ID    # the logbook from a shell
    podium validate ns.name --rule json-schema:schema.json
    podium signals run ns.name --signal near-dup,private-data   # list: stored signals
    podium models bootstrap | serve NAME # the base model; an OpenAI-compatible server
    podium generate --model base --table ns.name --out ns.samples
    podium sandbox run snippet.py        # untrusted code in the sandbox
    podium train sft --model base --table ns.name --out my-ckpt --preset cpu-smoke
    podium compare --models base,my-ckpt --table ns.prompts --out cmp
"""

# Each group of commands lives in `podium/commands/<area>.py`. The modules are imported
# only when one of their commands runs (or shows its help), so `podium --help` and quick
# commands never pay for pyiceberg, pyarrow, torch or streamlit.

from __future__ import annotations

import functools
import importlib
import sys
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    import typer

from podium.errors import PodiumError, outage_message
from podium.store.catalog.lean_imports import ONE_SHOT

# name -> (module, one-line help shown by `podium --help`). A module defines
# `register(app: typer.Typer)` and/or `click_commands() -> dict[str, click.Command]`.
COMMANDS: dict[str, tuple[str, str]] = {
    "tables": ("podium.commands.store", "List the tables in the catalog."),
    "import": ("podium.commands.store", "Import chat data into an SFT table (one commit)."),
    "show": ("podium.commands.show", "Show rows of a table: a page at any offset, search."),
    "snapshots": ("podium.commands.store", "List a table's snapshots, oldest first."),
    "export": ("podium.commands.store", "Export a table snapshot to JSONL or Parquet."),
    "demo": ("podium.commands.store", "Load the demo tables (made locally, no downloads)."),
    "sql": ("podium.commands.store", "Run a read-only SQL query (DuckDB dialect)."),
    "stats": ("podium.commands.store", "Rows, turns and characters per role of a table."),
    "map": ("podium.commands.store", "Map a foreign table's columns onto the SFT names."),
    "app": ("podium.commands.serve_app", "Serve the web UI."),
    "up": ("podium.commands.serve_app", "Serve the web UI and run a job worker beside it."),
    "run": ("podium.commands.jobs", "Run a run card in the foreground, recorded in the logbook."),
    "submit": ("podium.commands.jobs", "Queue a run card for `podium worker`."),
    "worker": ("podium.commands.jobs", "Execute queued jobs until stopped."),
    "jobs": ("podium.commands.jobs", "List, inspect, follow and cancel jobs; job kinds."),
    "start": ("podium.commands.start", "Start a job of any kind from options (all kinds)."),
    "validate": ("podium.commands.validate", "Validate every sample of a table snapshot."),
    "signals": ("podium.commands.signals", "Duplicates, contamination, private data, language."),
    "models": ("podium.commands.models", "The checkpoint registry and model servers."),
    "serve": ("podium.commands.models", "Start (or reuse) a model's vLLM server."),
    "generate": ("podium.commands.generate", "Sample a checkpoint on every prompt of a table."),
    "vibes": ("podium.commands.generate", "Vibe-check prompts and eval sets."),
    "sandbox": ("podium.commands.sandbox", "Run code in the sandbox."),
    "build": ("podium.commands.sandbox", "Build datasets by running code."),
    "train": ("podium.commands.train", "Train SFT and GRPO checkpoints with TRL."),
    "compare": ("podium.commands.compare", "Compare checkpoints side by side; ratings."),
    "vote": ("podium.commands.vote", "Vote blind on a comparison's answer pairs."),
    "judge": ("podium.commands.judge", "A model judges a comparison; its agreement with people."),
    "label": ("podium.commands.row_changes", "Label, tag, rate or note rows (annotations table)."),
    "edit": ("podium.commands.row_changes", "Edit a row's messages: one new snapshot."),
    "delete-rows": (
        "podium.commands.row_changes",
        "Remove rows (named or matching): one snapshot.",
    ),
    "tag": ("podium.commands.review", "Name a snapshot with a tag."),
    "branch": ("podium.commands.review", "Create a branch for edits, or fast-forward main."),
    "refs": ("podium.commands.review", "List a table's tags and branches."),
    "diff": ("podium.commands.review", "Rows added, removed, changed between two snapshots."),
    "maintain": ("podium.commands.maintain", "Compact a table, expire snapshots, remove orphans."),
    "review": ("podium.commands.review", "Review queues and row history."),
    "users": ("podium.commands.users", "Users and their roles (admins only)."),
}


@functools.cache
def module_commands(module_name: str) -> dict[str, click.Command]:
    """The commands a command module defines, as click commands."""
    module = importlib.import_module(module_name)
    commands: dict[str, click.Command] = {}
    if hasattr(module, "register"):
        import typer

        holder = typer.Typer(rich_markup_mode=None, pretty_exceptions_enable=False)
        holder.callback()(lambda: None)  # a callback keeps it a group, even with one command
        module.register(holder)
        names = [c.name for c in holder.registered_commands]
        names += [g.name for g in holder.registered_groups]
        for name in filter(None, names):
            commands[name] = TyperCommand(name, holder)
    if hasattr(module, "click_commands"):
        commands.update(module.click_commands())
    return commands


class TyperCommand(click.Command):
    """A command written with typer, which parses with its own copy of click: the
    arguments after the command's name are handed to typer as they are."""

    def __init__(self, name: str, holder: typer.Typer) -> None:
        super().__init__(name, add_help_option=False, help=COMMANDS.get(name, ("", ""))[1])
        self.holder = holder
        self.typer_name = name  # click types `self.name` as optional; this one is always set

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.args = list(args)
        return []

    def invoke(self, ctx: click.Context) -> Any:
        import typer

        group = typer.main.get_command(self.holder)
        return group.main(
            args=[self.typer_name, *ctx.args], prog_name="podium", standalone_mode=False
        )


class LazyGroup(click.Group):
    """A group whose subcommands are imported when used, not when listed."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        return module_commands(COMMANDS[cmd_name][0]).get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, text) for name, (_, text) in COMMANDS.items()])


app = LazyGroup(
    name="podium",
    help=__doc__,
    no_args_is_help=True,
    context_settings={"help_option_names": ["--help"]},
)


def _typer_errors() -> tuple[tuple[type[BaseException], ...], ...]:
    """typer's Abort, Exit and usage errors, when a typer command ran (it bundles its own
    click, so they are not click's); `podium show` and `--help` never import typer."""
    typer = sys.modules.get("typer")
    if typer is None:
        return (), (), ()
    return (typer.Abort,), (typer.Exit,), (typer.TyperException,)


def _report(message: str) -> None:
    from rich.text import Text

    from podium.commands.terminal import printable, safe_console

    # The message quotes user data (a line of a file, a value): never markup.
    text = Text.assemble(("error:", "bold red"), " ", printable(message))
    safe_console(stderr=True).print(text, highlight=False, soft_wrap=True)


def _is_settings_error(exc: Exception) -> bool:
    """A bad PODIUM_* value or podium.toml entry (podium.config is not imported for
    `--help`, so it is looked up only if a command loaded it)."""
    config = sys.modules.get("podium.config")
    return config is not None and isinstance(exc, config.SettingsError)


def _disk_full(exc: BaseException) -> PodiumError | None:
    """The one-line error for a command that ran out of disk space, else None."""
    from podium.errors import DiskFull, disk_full

    if not disk_full(exc):
        return None
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return DiskFull(
        f"the disk is full: {first}\nIceberg commits are atomic, so a table holds this "
        "command's change whole or not at all (`podium snapshots TABLE` shows which); free "
        "space on the disk, then run the command again if it did not land."
    )


def _damaged(exc: BaseException) -> str | None:
    """The one-line error for a table file that cannot be parsed, else None."""
    from podium.store.catalog.damaged_files import damaged_file_message

    return damaged_file_message(exc)


def main() -> None:
    try:
        # Without standalone mode, click returns a command's exit code instead of exiting.
        # `obj` tells commands they own this process, which ends with them (a test's
        # CliRunner sets none): a one-shot write may then skip imports for good.
        code = app.main(standalone_mode=False, obj={ONE_SHOT: True})
    except PodiumError as exc:
        _report(str(exc))
        sys.exit(exc.exit_code)
    except Exception as exc:
        if _is_settings_error(exc):
            _report(str(exc))
            sys.exit(2)
        full = _disk_full(exc)  # SQLite's "database or disk is full" is no outage
        if full is not None:
            _report(str(full))
            sys.exit(full.exit_code)
        damaged = _damaged(exc)
        if damaged is not None:
            _report(damaged)
            sys.exit(65)  # EX_DATAERR: a table's file cannot be parsed
        outage = outage_message(exc)
        if outage is not None:
            _report(outage)
            sys.exit(75)  # EX_TEMPFAIL: the same command may well work in a minute
        aborts, exits, usage = _typer_errors()
        if isinstance(exc, (click.exceptions.Abort, *aborts)):
            print("aborted", file=sys.stderr)
            sys.exit(130)
        if isinstance(exc, (click.exceptions.Exit, *exits)):
            sys.exit(getattr(exc, "exit_code", 0))
        if isinstance(exc, (click.ClickException, *usage)):  # usage errors
            show = getattr(exc, "show", None)
            show() if show else print(exc, file=sys.stderr)
            sys.exit(getattr(exc, "exit_code", 2))
        raise
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()

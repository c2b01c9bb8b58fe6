"""MkDocs hook: the command-line reference, generated from the `podium` command tree on
every build, so it cannot drift from the commands (nothing generated is committed).

Each top-level command gets one page, `reference/cli/NAME.md`, holding what `--help`
prints for it and for every subcommand below it (usage, help, options), and the nav's
"Command-line reference" entry is filled with those pages in `podium --help`'s order.

The tree is walked by duck typing: typer commands parse with typer's own copy of click,
so their classes are not click's. `render_pages()` is what the test checks.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PAGE_DIR = "reference/cli"
NAV_TITLE = "Command-line reference"
WIDTH = 100  # help text is formatted as on a 100-column terminal, whatever runs the build


def _import_cli() -> Any:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import podium.cli

    return podium.cli


def _resolve(command: Any) -> Any:
    """The command `--help` would describe: a lazy stand-in's real command, or the typer
    command a `TyperCommand` hands its arguments to."""
    real = getattr(command, "real", None)
    if callable(real):
        return real()
    holder = getattr(command, "holder", None)
    if holder is not None:
        import typer

        group = typer.main.get_command(holder)
        return group.commands[command.typer_name]
    return command


def _help_text(command: Any, path: str) -> str:
    ctx = command.context_class(
        command, info_name=path, terminal_width=WIDTH, max_content_width=WIDTH
    )
    return str(command.get_help(ctx)).rstrip()


def _walk(command: Any, path: str) -> Iterator[tuple[str, str]]:
    """(command path, help text) for `command` and every visible subcommand below it."""
    command = _resolve(command)
    yield path, _help_text(command, path)
    subcommands = getattr(command, "commands", None)
    if not isinstance(subcommands, dict):
        return
    ctx = command.context_class(command, info_name=path)
    for name in command.list_commands(ctx):
        sub = command.get_command(ctx, name)
        if sub is None or getattr(sub, "hidden", False):
            continue
        yield from _walk(sub, f"{path} {name}")


def top_level_commands() -> dict[str, str]:
    """name -> one-line help, as `podium --help` lists them (no command module imported)."""
    return {name: text for name, (_, text) in _import_cli().COMMANDS.items()}


def _page(name: str, summary: str, sections: list[tuple[str, str]]) -> str:
    lines = [
        f"# podium {name}",
        "",
        f"{summary}",
        "",
        "*Generated from the command itself at build time (`docs/hooks/cli_reference.py`).*",
        "",
    ]
    for path, text in sections:
        if path != f"podium {name}":
            lines += [f"## {path}", ""]
        lines += ["```text", text, "```", ""]
    return "\n".join(lines)


def _index(commands: dict[str, str]) -> str:
    lines = [
        f"# {NAV_TITLE}",
        "",
        "Every `podium` command with what its `--help` prints, generated from the commands",
        "on every build of these pages. The commands in use:",
        "[The command line](../../command-line.md).",
        "",
        "```text",
        _help_text(_import_cli().app, "podium"),
        "```",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    lines += [f"| [`podium {name}`]({name}.md) | {text} |" for name, text in commands.items()]
    return "\n".join(lines) + "\n"


def render_pages() -> dict[str, str]:
    """Page path under docs/ -> Markdown, for the index and every top-level command."""
    cli = _import_cli()
    commands = top_level_commands()
    import click

    ctx = click.Context(cli.app, info_name="podium")
    pages = {f"{PAGE_DIR}/index.md": _index(commands)}
    for name, summary in commands.items():
        command = cli.app.get_command(ctx, name)
        sections = list(_walk(command, f"podium {name}"))
        pages[f"{PAGE_DIR}/{name}.md"] = _page(name, summary, sections)
    return pages


def nav_entries() -> list[dict[str, str]]:
    entries = [{"Overview": f"{PAGE_DIR}/index.md"}]
    entries += [{f"podium {name}": f"{PAGE_DIR}/{name}.md"} for name in top_level_commands()]
    return entries


def _fill_nav(nav: Any) -> bool:
    """Replace the nav item titled NAV_TITLE by the generated pages; True once done."""
    if not isinstance(nav, list):
        return False
    for item in nav:
        if isinstance(item, dict):
            for title, value in item.items():
                if title == NAV_TITLE:
                    item[title] = nav_entries()
                    return True
                if _fill_nav(value):
                    return True
    return False


# --- MkDocs events -------------------------------------------------------------------


def on_config(config: Any) -> Any:
    if not _fill_nav(config["nav"]):
        raise ValueError(f"mkdocs.yml: the nav needs an entry titled {NAV_TITLE!r}")
    return config


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for path, content in render_pages().items():
        files.append(File.generated(config, path, content=content))
    return files

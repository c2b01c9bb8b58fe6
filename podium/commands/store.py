"""Data commands: tables, import, snapshots, export, demo, sql, stats, map (`show` is
in `podium/commands/show.py`)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import click
import typer

from podium.commands.import_command import import_command
from podium.commands.lazy_command import LazyCommand
from podium.commands.printing import console as _console
from podium.commands.printing import print_conversation as print_conversation  # review.py
from podium.commands.printing import print_json, print_rows, print_snapshots
from podium.commands.typer_commands import add_commands
from podium.errors import InvalidInput

# pyiceberg, pyarrow, pydantic models and rich are imported inside the commands: every
# `podium` call (and the worker's job processes) would otherwise pay for them at start-up,
# and `podium show --json` of a snapshot in the plan cache needs none but pyarrow.
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def __getattr__(name: str) -> Any:
    if name == "console":  # other command modules print through the same console
        return _console()
    raise AttributeError(name)


def tables(as_json: JsonFlag = False) -> None:
    """List the tables in the catalog."""
    from podium.store.catalog.names import table_names

    names = table_names()
    if as_json:
        print_json(names)
        return
    if not names:
        _console().print("No tables yet. Load the demo with `podium demo` or `podium import`.")
    for name in names:
        typer.echo(name)


def snapshots(
    name: Annotated[str, typer.Argument(help="NAMESPACE.TABLE")], as_json: JsonFlag = False
) -> None:
    """List a table's snapshots, oldest first; read any with `show --snapshot ID`."""
    from podium.store.catalog.catalog import load_table
    from podium.store.read.snapshots import list_snapshots

    snaps = [s.to_dict() for s in list_snapshots(load_table(name))]
    if as_json:
        print_json(snaps)
    else:
        print_snapshots(snaps, title=f"snapshots of {name}")


def demo(as_json: JsonFlag = False) -> None:
    """Load the demo tables (made locally, no downloads); existing ones are kept."""
    from generators.code_exec.demo_functions import DEMO_TABLE, load_demo_functions
    from podium.store.write.demo import load_demo

    created = load_demo()
    created[DEMO_TABLE] = load_demo_functions()
    if as_json:
        print_json(created)
        return
    for name, made in created.items():
        typer.echo(f"{name}: {'created' if made else 'already there'}")


def sql(
    query: Annotated[str, typer.Argument(help="One SELECT over tables named NAMESPACE.TABLE.")],
    max_rows: Annotated[
        int, typer.Option(help="Most rows to return (a LIMIT on the query).")
    ] = 100,
    timeout: Annotated[float, typer.Option(help="Stop the query after this many seconds.")] = 60.0,
    memory: Annotated[str, typer.Option(help="Memory cap for the query, e.g. 2GB.")] = "2GB",
    as_json: JsonFlag = False,
) -> None:
    """Run a read-only SQL query (DuckDB dialect); anything but SELECT is refused."""
    from podium.store.read.sql_console import run_sql

    rows = run_sql(query, max_rows=max_rows, timeout_s=timeout, memory_limit=memory).to_pylist()
    if as_json:
        print_json(rows)
    else:
        print_rows(rows)


def stats(
    name: Annotated[str, typer.Argument(help="NAMESPACE.TABLE")],
    snapshot: Annotated[str | None, typer.Option(help="Snapshot id.")] = None,
    search: Annotated[str | None, typer.Option(help="Only rows containing this text.")] = None,
    where: Annotated[str | None, typer.Option(help="Only rows passing this SQL condition.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Rows, turns and characters per role of an SFT table (or of the matching rows)."""
    from podium.store.read.stats import table_stats

    result = table_stats(name, snapshot, search=search, where=where).to_dict()
    if as_json:
        print_json(result)
        return
    _console().print(
        f"{result['rows']} rows, {result['turns']} turns ({result['mean_turns']} per row)"
    )
    print_rows(result["by_role"], title="by role")


def map_columns(
    name: Annotated[str, typer.Argument(help="NAMESPACE.TABLE")],
    messages: Annotated[str | None, typer.Option(help="Column holding the conversation.")] = None,
    role: Annotated[str | None, typer.Option(help="Key of a turn's speaker.")] = None,
    content: Annotated[str | None, typer.Option(help="Key of a turn's text.")] = None,
    id: Annotated[str | None, typer.Option("--id", help="Column holding the row id.")] = None,
) -> None:
    """Map a foreign table's columns onto the SFT names (stored in table properties)."""
    from podium.identity import require
    from podium.store.catalog.catalog import load_table
    from podium.store.schema import PROP_MAPPING
    from podium.store.state.users import acting_user
    from podium.store.write.write import set_properties

    require(acting_user(), "edit")  # how every reader sees the table's rows

    mapping = {
        k: v
        for k, v in {"messages": messages, "role": role, "content": content, "id": id}.items()
        if v
    }
    if not mapping:
        raise InvalidInput("Name at least one column to map, e.g. --messages conversations.")
    columns = load_table(name).schema().column_names
    missing = [v for k, v in mapping.items() if k in ("messages", "id") and v not in columns]
    if missing:
        raise InvalidInput(
            f"{name} has no column {', '.join(missing)}; columns: {', '.join(columns)}."
        )
    set_properties(name, {PROP_MAPPING: json.dumps(mapping)})
    typer.echo(f"{name}: mapped {mapping}")


def export_command() -> click.Command:
    """`podium export TABLE PATH`: generated like `podium import`. A relative PATH means
    one under the exports root (podium.paths), not the cwd: the export job resolves it."""
    from podium.commands.options import job_command

    return job_command(
        "export",
        arguments=("table.name", "path"),
        queue=False,
        help="Export a table snapshot to JSONL or Parquet (re-importing gives identical "
        "rows). PATH: an output .jsonl or .parquet file under $PODIUM_HOME/exports (a "
        "relative path is taken from there), the warehouse or a file_roots directory.",
    )


def click_commands() -> dict[str, click.Command]:
    # Built when used: their kinds' models import pyarrow, which `podium tables` avoids.
    return {
        "import": LazyCommand("import", import_command),
        "export": LazyCommand("export", export_command),
    }


def register(app: typer.Typer) -> None:
    add_commands(
        app,
        {
            "tables": tables,
            "snapshots": snapshots,
            "demo": demo,
            "sql": sql,
            "stats": stats,
            "map": map_columns,
        },
    )

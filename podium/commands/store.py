"""Data commands: tables, import, show, snapshots, export, demo, sql, stats, map."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from podium.commands.terminal import plain_text, printable
from podium.errors import InvalidInput
from podium.store.modes import ChatFormat, WriteMode

if TYPE_CHECKING:
    from rich.console import Console

# pyiceberg, pyarrow, pydantic models and rich are imported inside the commands: every
# `podium` call (and the worker's job processes) would otherwise pay for them at start-up,
# and `podium show --json` of a snapshot in the plan cache needs none but pyarrow.
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
CardOption = Annotated[
    Path | None,
    typer.Option("--card", help="Write the run card to this path and run nothing."),
]


@functools.cache
def _console() -> Console:
    from rich.console import Console

    return Console()


def __getattr__(name: str) -> Any:
    if name == "console":  # other command modules print through the same console
        return _console()
    raise AttributeError(name)


def print_json(value: Any) -> None:
    typer.echo(json.dumps(value, ensure_ascii=False, default=str, indent=2))


def print_rows(rows: list[dict[str, Any]], title: str | None = None) -> None:
    """Rows as a table. Cells, headers and title are data, never markup: `[/INST]` or
    `[bold` in a value prints as it is, and control characters print escaped."""
    from rich.table import Table as RichTable

    console = _console()
    if not rows:
        console.print("(no rows)")
        return
    table = RichTable(title=plain_text(title) if title else None, show_lines=False)
    for col in rows[0]:
        table.add_column(plain_text(str(col)), overflow="fold", max_width=80)
    for row in rows:
        table.add_row(*(plain_text(_cell(v)) for v in row.values()))
    console.print(table)


def print_conversation(row: dict[str, Any], max_chars: int = 600) -> None:
    """One SFT row as a readable block: a header line, then each turn."""
    from rich.text import Text

    console = _console()
    header = " · ".join(
        str(v) for v in (row.get("id"), row.get("source"), row.get("split")) if v is not None
    )
    tags = ", ".join(row.get("tags") or [])
    console.rule(
        Text.assemble((printable(header), "bold"), (printable(f"  {tags}") if tags else "", "dim")),
        align="left",
    )
    if row.get("system"):
        console.print(Text.assemble(("system: ", "dim"), printable(row["system"])))
    for msg in row.get("messages") or []:
        text = msg.get("content") or ""
        text = text if len(text) <= max_chars else text[:max_chars] + " …"
        style = {"user": "cyan", "assistant": "green"}.get(msg.get("role") or "", "magenta")
        console.print(
            Text.assemble((f"{printable(str(msg.get('role')))}: ", style), printable(text))
        )


def _cell(value: Any) -> str:
    if isinstance(value, list) and value and isinstance(value[0], dict) and "role" in value[0]:
        return "\n".join(f"[{m['role']}] {(m.get('content') or '')[:200]}" for m in value)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 300 else text[:300] + "…"


def tables(as_json: JsonFlag = False) -> None:
    """List the tables in the catalog."""
    from podium.store.names import table_names

    names = table_names()
    if as_json:
        print_json(names)
        return
    if not names:
        _console().print("No tables yet. Load the demo with `podium demo` or `podium import`.")
    for name in names:
        typer.echo(name)


def import_(
    path: Annotated[Path, typer.Argument(help="JSONL, Parquet, or a save_to_disk dataset dir.")],
    table: Annotated[str, typer.Option("--table", "-t", help="Target NAMESPACE.TABLE.")],
    format: Annotated[
        ChatFormat | None, typer.Option(help="Chat shape (detected if omitted).")
    ] = None,
    mode: Annotated[WriteMode, typer.Option(help="create, append or overwrite.")] = "create",
    prompt_column: Annotated[str | None, typer.Option(help="Prompt column name.")] = None,
    response_column: Annotated[str | None, typer.Option(help="Response column name.")] = None,
    allow_duplicate_ids: Annotated[
        bool,
        typer.Option(
            "--allow-duplicate-ids", help="Import rows that repeat an id (counted) instead."
        ),
    ] = False,
    card: CardOption = None,
) -> None:
    """Import chat data into an SFT table (one atomic commit; a bad line changes nothing)."""
    from podium.jobs.launch import run_or_write_card
    from podium.store.ingest import ImportConfig

    cfg = ImportConfig(
        path=str(path.expanduser().resolve()),
        table=table,
        format=format,
        mode=mode,
        prompt_column=prompt_column,
        response_column=response_column,
        allow_duplicate_ids=allow_duplicate_ids,
    )
    run_or_write_card("import", cfg, card)


def show(
    name: Annotated[str, typer.Argument(help="NAMESPACE.TABLE")],
    offset: Annotated[int, typer.Option(help="Rows to skip.")] = 0,
    limit: Annotated[int, typer.Option(help="Rows to show.")] = 10,
    search: Annotated[str | None, typer.Option(help="Case-insensitive text to find.")] = None,
    where: Annotated[
        str | None, typer.Option(help="SQL condition, e.g. \"split = 'test'\".")
    ] = None,
    snapshot: Annotated[str | None, typer.Option(help="Snapshot id (time travel).")] = None,
    count: Annotated[
        bool, typer.Option(help="Count every match (--no-count: stop at the page's last hit).")
    ] = True,
    as_json: JsonFlag = False,
) -> None:
    """Show rows of a table: a page at any offset, with search and filters."""
    from podium.store.query import page

    result = page(
        name,
        offset=offset,
        limit=limit,
        search=search,
        where=where,
        snapshot_id=snapshot,
        count=count,
    )
    if as_json:
        print_json(result.to_dict())
        return
    if "messages" in result.columns:
        for row in result.rows:
            print_conversation(row)
    else:
        print_rows(result.rows, title=f"{name} @ {result.snapshot_id}")
    end = result.offset + len(result.rows)
    of = "" if result.total is None else f" of {result.total}"
    _console().print(f"rows {result.offset + 1 if result.rows else 0}-{end}{of}")


def snapshots(
    name: Annotated[str, typer.Argument(help="NAMESPACE.TABLE")], as_json: JsonFlag = False
) -> None:
    """List a table's snapshots, oldest first; read any with `show --snapshot ID`."""
    from podium.store.catalog import load_table
    from podium.store.snapshots import list_snapshots

    snaps = [s.to_dict() for s in list_snapshots(load_table(name))]
    if as_json:
        print_json(snaps)
    else:
        print_rows(snaps, title=f"snapshots of {name}")


def export(
    name: Annotated[str, typer.Argument(help="NAMESPACE.TABLE")],
    path: Annotated[
        Path,
        typer.Argument(
            help="Output .jsonl or .parquet file under $PODIUM_HOME/exports (a relative path "
            "is taken from there), the warehouse or a file_roots directory."
        ),
    ],
    snapshot: Annotated[int | None, typer.Option(help="Snapshot id (default: current).")] = None,
    card: CardOption = None,
) -> None:
    """Export a table snapshot to JSONL or Parquet (re-importing gives identical rows)."""
    from podium.jobs.launch import run_or_write_card
    from podium.store.export import ExportConfig
    from podium.store.refs import TableRef

    # A relative path means one under the exports root (podium.paths), not the cwd.
    cfg = ExportConfig(input=TableRef(name=name, snapshot_id=snapshot), path=str(path))
    run_or_write_card("export", cfg, card)


def demo(as_json: JsonFlag = False) -> None:
    """Load the demo tables (made locally, no downloads); existing ones are kept."""
    from generators.code_exec.demo_functions import DEMO_TABLE, load_demo_functions
    from podium.store.demo import load_demo

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
    from podium.store.query import run_sql

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
    from podium.store.stats import table_stats

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
    from podium.store.catalog import load_table
    from podium.store.schema import PROP_MAPPING
    from podium.store.users import acting_user
    from podium.store.write import set_properties

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


def register(app: typer.Typer) -> None:
    app.command("tables")(tables)
    app.command("import")(import_)
    app.command("show")(show)
    app.command("snapshots")(snapshots)
    app.command("export")(export)
    app.command("demo")(demo)
    app.command("sql")(sql)
    app.command("stats")(stats)
    app.command("map")(map_columns)

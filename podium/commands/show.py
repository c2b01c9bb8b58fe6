"""`podium show`: a page of a table at any offset, with search and filters.

Written in click rather than typer: typer 0.29 builds a pydantic adapter for every
option when it parses (about 0.2 s with its import), which was most of a cold
`podium show` of a page the plan cache already knew.
"""

from __future__ import annotations

import click

from podium.commands.printing import console, print_conversation, print_json, print_rows


@click.command("show", help="Show rows of a table: a page at any offset, with search and filters.")
@click.argument("name", metavar="NAMESPACE.TABLE")
@click.option("--offset", default=0, show_default=True, help="Rows to skip.")
@click.option("--limit", type=int, default=10, show_default=True, help="Rows to show.")
@click.option("--search", default=None, help="Case-insensitive text to find.")
@click.option("--where", default=None, help="SQL condition, e.g. \"split = 'test'\".")
@click.option("--snapshot", default=None, help="Snapshot id (time travel).")
@click.option(
    "--count/--no-count",
    default=True,
    show_default=True,
    help="Count every match (--no-count: stop at the page's last hit).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def show(
    name: str,
    offset: int,
    limit: int,
    search: str | None,
    where: str | None,
    snapshot: str | None,
    count: bool,
    as_json: bool,
) -> None:
    from podium.store.read.query import page

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
    console().print(f"rows {result.offset + 1 if result.rows else 0}-{end}{of}")


def click_commands() -> dict[str, click.Command]:
    return {"show": show}

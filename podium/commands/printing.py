"""Rows, conversations and JSON on the terminal, for every command.

Cells, headers and titles are data, never markup: `[/INST]` or `[bold` in a value
prints as it is, and control characters print escaped (`podium.commands.terminal`).
Nothing here imports typer, so a command written directly in click (`podium show`)
starts without it.
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any

import click

from podium.commands.terminal import neutralise_json, plain_text, printable, safe_console

if TYPE_CHECKING:
    from rich.console import Console


@functools.cache
def console() -> Console:
    return safe_console()


def print_json(value: Any) -> None:
    click.echo(neutralise_json(json.dumps(value, ensure_ascii=False, default=str, indent=2)))


def print_rows(rows: list[dict[str, Any]], title: str | None = None) -> None:
    """Rows as a table."""
    from rich.table import Table as RichTable

    if not rows:
        console().print("(no rows)")
        return
    table = RichTable(title=plain_text(title) if title else None, show_lines=False)
    for col in rows[0]:
        table.add_column(plain_text(str(col)), overflow="fold", max_width=80)
    for row in rows:
        table.add_row(*(plain_text(_cell(v)) for v in row.values()))
    console().print(table)


def print_snapshots(snapshots: list[dict[str, Any]], title: str | None = None) -> None:
    """Snapshots as one line each (id, time, operation, rows, refs), and under the table
    each review summary (author, message, rows touched) as wrapped key=value lines: as a
    column, a JSON summary was squeezed one word wide."""
    import textwrap

    from rich.table import Table as RichTable

    if not snapshots:
        console().print("(no snapshots)")
        return
    from rich import box

    table = RichTable(
        title=plain_text(title) if title else None,
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    for name, justify in [
        ("snapshot", "left"), ("committed (UTC)", "left"), ("operation", "left"),
        ("added", "right"), ("rows", "right"), ("cur", "left"), ("refs", "left"),
    ]:  # fmt: skip
        table.add_column(name, justify=justify, no_wrap=name != "refs")  # type: ignore[arg-type]
    for snap in snapshots:
        table.add_row(
            str(snap["snapshot_id"]),
            str(snap["committed_at"])[:19].replace("T", " "),
            plain_text(str(snap["operation"])),
            f"{snap['added_rows']:,}",
            f"{snap['total_rows']:,}",
            "*" if snap["current"] else "",
            plain_text(", ".join(snap.get("refs") or ())),
        )
    out = console()
    out.print(table)
    width = max(40, out.width)
    for snap in snapshots:
        if not snap.get("summary"):
            continue
        pairs = "  ".join(
            f"{key.removeprefix('podium.')}={printable(str(value))}"
            for key, value in snap["summary"].items()
        )
        out.print(
            textwrap.fill(f"{snap['snapshot_id']}: {pairs}", width=width, subsequent_indent="    "),
            markup=False,
            highlight=False,
        )


def print_conversation(row: dict[str, Any], max_chars: int = 600) -> None:
    """One SFT row as a readable block: a header line, then each turn.

    Turns print soft-wrapped (the terminal folds long lines): rich's own word wrap of
    fifty multi-KB conversations cost more than reading the page did."""
    from rich.text import Text

    out = console()
    header = " · ".join(
        str(v) for v in (row.get("id"), row.get("source"), row.get("split")) if v is not None
    )
    tags = ", ".join(row.get("tags") or [])
    out.rule(
        Text.assemble((printable(header), "bold"), (printable(f"  {tags}") if tags else "", "dim")),
        align="left",
    )
    if row.get("system"):
        out.print(Text.assemble(("system: ", "dim"), printable(row["system"])), soft_wrap=True)
    for msg in row.get("messages") or []:
        text = msg.get("content") or ""
        text = text if len(text) <= max_chars else text[:max_chars] + " …"
        style = {"user": "cyan", "assistant": "green"}.get(msg.get("role") or "", "magenta")
        out.print(
            Text.assemble((f"{printable(str(msg.get('role')))}: ", style), printable(text)),
            soft_wrap=True,
        )


def _cell(value: Any) -> str:
    if isinstance(value, list) and value and isinstance(value[0], dict) and "role" in value[0]:
        return "\n".join(f"[{m['role']}] {(m.get('content') or '')[:200]}" for m in value)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 300 else text[:300] + "…"

"""`podium signals similar|coverage|topics`: the map's commands over stored embeddings.

podium signals run demo.chat --signal embedding,topics
podium signals similar demo.chat --text "how do I bake bread" -k 10
podium signals similar demo.chat --row r0001 -k 5 --json
podium signals topics demo.chat
podium signals coverage demo.vibes --train demo.chat --distance 0.5
"""

from __future__ import annotations

import json

import click
import typer
from rich.table import Table as RichTable

from podium.commands.terminal import neutralise_json, plain_text, safe_console
from podium.terminal_text import neutralise

console = safe_console()


@click.command("similar")
@click.argument("table")
@click.option("--text", default=None, help="Find rows like this text.")
@click.option("--row", default=None, help="Find rows like this row (its id).")
@click.option("-k", "k", default=10, show_default=True, help="How many rows.")
@click.option("--snapshot", default=None, help="Snapshot id, tag or branch (default: current).")
@click.option(
    "--exact/--approximate",
    default=None,
    help="Scan every vector, or use the index (default: exact under 20,000 rows).",
)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def similar_command(
    table: str,
    text: str | None,
    row: str | None,
    k: int,
    snapshot: str | None,
    exact: bool | None,
    as_json: bool,
) -> None:
    """The K rows of TABLE nearest a text or a row by meaning (cosine similarity of their
    embeddings; run the embedding signal first)."""
    from podium.signals.similar import row_texts, similar

    hits = similar(table, text=text, row=row, k=k, snapshot=snapshot, exact=exact)
    texts = row_texts(table, [h.id for h in hits])
    found = [{**h.to_dict(), "text": texts.get(h.id, "")} for h in hits]
    if as_json:
        typer.echo(neutralise_json(json.dumps(found, ensure_ascii=False, indent=2)))
        return
    shown = RichTable("score", "id", "text")
    for hit in found:
        shown.add_row(
            f"{hit['score']:.3f}", plain_text(str(hit["id"])), plain_text(str(hit["text"]))
        )
    console.print(shown)


@click.command("topics")
@click.argument("table")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def topics_command(table: str, as_json: bool) -> None:
    """The topics of TABLE's current topics signal: category, cluster, rows, title."""
    from podium.signals.topics import stored_topics

    topics = stored_topics(table)
    if as_json:
        typer.echo(neutralise_json(json.dumps(topics, ensure_ascii=False, indent=2)))
        return
    shown = RichTable("category", "cluster", "rows", "title")
    for t in topics:
        shown.add_row(str(t["category"]), str(t["cluster"]), str(t["rows"]), plain_text(t["title"]))
    console.print(shown)


@click.command("coverage")
@click.argument("eval_table")
@click.option("--train", "train", required=True, help="The training table.")
@click.option(
    "--distance",
    default=0.5,
    show_default=True,
    help="Cosine distance beyond which an eval prompt has no training row near it.",
)
@click.option(
    "--write",
    "write",
    default=None,
    metavar="NS.TABLE",
    help="Also write those prompts to this new table (for `podium generate`).",
)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def coverage_command(
    eval_table: str, train: str, distance: float, write: str | None, as_json: bool
) -> None:
    """The prompts of EVAL_TABLE with no row of the training table within DISTANCE
    (both need current embeddings of the same model), farthest first; --write saves them
    as a table to generate answers for."""
    from podium.signals.coverage import uncovered, write_uncovered
    from podium.signals.similar import row_texts

    if write:
        written = write_uncovered(eval_table, train, distance, write)
        typer.echo(
            neutralise(
                f"wrote {written['rows']} prompts to {written['table']}@{written['snapshot_id']};"
                f" next: podium generate --table {written['table']} --model NAME --out NS.TABLE"
            ),
            err=True,
        )

    far = uncovered(eval_table, train, distance)
    texts = row_texts(eval_table, [f.id for f in far])
    found = [{**f.to_dict(), "text": texts.get(f.id, "")} for f in far]
    if as_json:
        typer.echo(neutralise_json(json.dumps(found, ensure_ascii=False, indent=2)))
        return
    if not found:
        console.print(
            plain_text(f"Every prompt of {eval_table} has a training row within {distance}.")
        )
        return
    shown = RichTable("distance", "id", "nearest", "text")
    for f in found:
        shown.add_row(
            f"{f['distance']:.3f}",
            plain_text(str(f["id"])),
            plain_text(str(f["nearest"])),
            plain_text(str(f["text"])),
        )
    console.print(shown)

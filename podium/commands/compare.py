"""Comparison commands: checkpoints side by side, ratings from votes, training trends.

    podium compare --models base,json-sft --table demo.json_sft --out cmp.json_sft \
        [--max-tokens 64] [--check json] [--extract fenced] [--limit 50] [--card CARD.md]
    podium compare list [--json]                     # comparisons in the catalog
    podium compare ratings cmp.json_sft [--json]     # Bradley-Terry, win rates, pass rates
    podium compare trend --run json-sft --table evals.json --out cmp.json_trend --check json

Votes are cast on the Compare page (`podium app`); samples that already exist for a
checkpoint, prompt snapshot and sampling setup are reused, never generated again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from podium.errors import InvalidInput

console = Console(highlight=False, soft_wrap=True)
notes = Console(stderr=True, highlight=False, soft_wrap=True)  # keeps stdout for results
compare_app = typer.Typer(
    help="Compare checkpoints side by side on one prompt set; ratings from blind votes.",
    invoke_without_command=True,
)

TableOpt = Annotated[str | None, typer.Option("--table", help="Prompt set NAMESPACE.TABLE.")]
OutOpt = Annotated[str | None, typer.Option("--out", help="Comparison table to write.")]
SnapshotOpt = Annotated[int | None, typer.Option("--snapshot", help="Snapshot of --table.")]
MaxTokensOpt = Annotated[int, typer.Option("--max-tokens", help="Most tokens per answer.")]
TempOpt = Annotated[float, typer.Option("--temperature", help="0 = greedy.")]
CheckOpt = Annotated[
    list[str] | None, typer.Option("--check", help="Validation rule for every answer (repeatable).")
]
ExtractOpt = Annotated[
    str, typer.Option("--extract", help="Check the whole answer or its first fenced block.")
]
LimitOpt = Annotated[int | None, typer.Option("--limit", help="Only the first N prompts.")]
ColumnOpt = Annotated[str | None, typer.Option("--prompt-column", help="Plain-text prompt column.")]
CardOpt = Annotated[
    Path | None, typer.Option("--card", help="Write the run card here and run nothing.")
]
QueueOpt = Annotated[bool, typer.Option("--queue", help="Queue for `podium worker`.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _print_json(value: Any) -> None:
    typer.echo(json.dumps(value, ensure_ascii=False, default=str, indent=2))


def _launch(fields: dict[str, Any], card: Path | None, queue: bool) -> None:
    from podium.jobs.cards import validate_config
    from podium.jobs.launch import run_or_write_card

    cfg = validate_config("compare", {k: v for k, v in fields.items() if v is not None})
    run_or_write_card("compare", cfg, card, foreground=not queue)
    if card is None and not queue:
        notes.print(
            f"comparison in {fields['out']}; vote on the Compare page (`podium app`), "
            f"then `podium compare ratings {fields['out']}`"
        )


def _fields(
    models: list[str],
    table: str | None,
    out: str | None,
    snapshot: int | None,
    max_tokens: int,
    temperature: float,
    check: list[str] | None,
    limit: int | None,
    prompt_column: str | None,
    extract: str = "whole",
) -> dict[str, Any]:
    from podium.models import get_model

    if not table or not out:
        raise InvalidInput(
            "Give the prompt set and the comparison's name: --table NS.NAME --out NS.NAME."
        )
    return {
        # The card names checkpoints, not an alias that can move.
        "models": [get_model(m).name for m in models],
        "input": {"name": table, "snapshot_id": snapshot},
        "out": out,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "checks": check or [],
        "limit": limit,
        "prompt_column": prompt_column,
        "extract": extract,
    }


@compare_app.callback()
def compare(
    ctx: typer.Context,
    models: Annotated[str | None, typer.Option("--models", help="Checkpoints, A,B[,C,D].")] = None,
    table: TableOpt = None,
    out: OutOpt = None,
    snapshot: SnapshotOpt = None,
    max_tokens: MaxTokensOpt = 256,
    temperature: TempOpt = 0.0,
    check: CheckOpt = None,
    extract: ExtractOpt = "whole",
    limit: LimitOpt = None,
    prompt_column: ColumnOpt = None,
    card: CardOpt = None,
    queue: QueueOpt = False,
) -> None:
    """Answer one prompt set with each checkpoint and write a comparison table."""
    if ctx.invoked_subcommand is not None:
        return
    if not models:
        if table or out:
            raise InvalidInput("Name the checkpoints to compare: --models A,B[,C,D].")
        typer.echo(ctx.get_help())
        raise typer.Exit(0)
    names = [m.strip() for m in models.split(",") if m.strip()]
    _launch(
        _fields(
            names,
            table,
            out,
            snapshot,
            max_tokens,
            temperature,
            check,
            limit,
            prompt_column,
            extract,
        ),
        card,
        queue,
    )


@compare_app.command("list")
def list_cmd(as_json: JsonOpt = False) -> None:
    """Comparisons in the catalog."""
    from podium.compare.table import list_comparisons, load_comparison

    comparisons = [load_comparison(name) for name in list_comparisons()]
    if as_json:
        _print_json(
            [
                {"name": c.name, "models": c.models, "input": c.input_ref, "prompts": len(c.items)}
                for c in comparisons
            ]
        )
        return
    for c in comparisons:
        console.print(
            f"{c.name}  {', '.join(c.models)}  on {c.input_ref}  ({len(c.items)} prompts)"
        )


@compare_app.command("ratings")
def ratings(
    name: Annotated[str, typer.Argument(help="Comparison table NAMESPACE.TABLE.")],
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples for the intervals.")] = 200,
    as_json: JsonOpt = False,
) -> None:
    """Bradley-Terry ratings with 95% intervals, win rates and check pass rates."""
    from podium.compare.ratings import ratings_report
    from podium.compare.table import load_comparison
    from podium.compare.votes import list_votes

    comparison = load_comparison(name)
    report = ratings_report(comparison, list_votes(comparison.name), bootstrap)
    if as_json:
        _print_json(report)
        return
    out = Table(title=f"{report['comparison']}: {report['votes']} votes")
    for col in ("model", "rating", "95% interval", "votes", "wins", "checks passed"):
        out.add_column(col)
    for r in report["ratings"]:
        rate = report["pass_rates"][r["model"]]["all"]
        out.add_row(
            r["model"],
            f"{r['rating']:.0f}",
            f"{r['low']:.0f} to {r['high']:.0f}",
            str(r["votes"]),
            f"{r['wins']:g}",
            "-" if rate is None else f"{rate:.0%}",
        )
    console.print(out)


@compare_app.command("trend")
def trend(
    run: Annotated[str, typer.Option("--run", help="A checkpoint or job id of the training run.")],
    table: TableOpt = None,
    out: OutOpt = None,
    snapshot: SnapshotOpt = None,
    max_tokens: MaxTokensOpt = 256,
    check: CheckOpt = None,
    extract: ExtractOpt = "whole",
    limit: LimitOpt = None,
    card: CardOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Compare every checkpoint of a training run with its base on one eval set, by step."""
    from podium.compare.table import load_comparison
    from podium.compare.trends import run_checkpoints, trend_points, trend_rows
    from podium.compare.votes import list_votes

    base, checkpoints = run_checkpoints(run)
    names = [base, *(c.name for c in checkpoints)]
    fields = _fields(names, table, out, snapshot, max_tokens, 0.0, check, limit, None, extract)
    _launch(fields, card, False)
    if card is not None:
        return
    comparison = load_comparison(fields["out"])
    rows = trend_rows(trend_points(comparison, list_votes(comparison.name), fields["models"][0]))
    if as_json:
        _print_json(rows)
        return
    for r in rows:
        console.print(
            f"step {r['step']:>6}  {r['model']}  pass {r['pass_rate']}  "
            f"check-win vs base {r['check_win_rate']}  vote-win {r['vote_win_rate']}"
        )


def register(app: typer.Typer) -> None:
    app.add_typer(compare_app, name="compare")

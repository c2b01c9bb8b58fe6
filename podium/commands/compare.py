"""Comparison commands: checkpoints side by side, ratings from votes, training trends.

    podium compare --models base,json-sft --table demo.json_sft --out cmp.json_sft \
        [--max-tokens 64] [--check json] [--extract fenced] [--limit 50] [--card CARD.md]
    podium compare ... --set top_p=0.9 --set seed=3  # any card setting (`--help`)
    podium compare list [--json]                     # comparisons in the catalog
    podium compare ratings cmp.json_sft [--json]     # Bradley-Terry, win rates, pass rates
    podium compare trend --run json-sft --table evals.json --out cmp.json_trend --check json

`podium compare` itself is generated from the compare job's model (`podium.compare.job`):
every card field is an option. Votes are cast on the Compare page (`podium app`); samples
that already exist for a checkpoint, prompt snapshot and sampling setup are reused, never
generated again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from podium.commands.terminal import neutralise_json, plain_text, safe_console
from podium.errors import InvalidInput
from podium.validate.extract import EXTRACT_MODES

console = safe_console(highlight=False, soft_wrap=True)
notes = safe_console(stderr=True, highlight=False, soft_wrap=True)  # keeps stdout for results


def _print_json(value: Any) -> None:
    click.echo(neutralise_json(json.dumps(value, ensure_ascii=False, default=str, indent=2)))


def _checkpoints(models: list[str]) -> list[str]:
    """`--models A,B` as well as repeated `--models`; the card names checkpoints, not an
    alias that can move."""
    from podium.models import get_model

    names = [m.strip() for item in models for m in item.split(",") if m.strip()]
    return [get_model(m).name for m in names]


def _models_given(values: dict[str, Any], extra: dict[str, Any]) -> None:
    table = values.get("table") or values.get("input")  # input: its name before (--set)
    if not values.get("models"):
        if table or values.get("out"):
            raise InvalidInput("Name the checkpoints to compare: --models A,B[,C,D].")
        ctx = click.get_current_context()
        click.echo(ctx.get_help())
        ctx.exit(0)
    if not (table or {}).get("name") or not values.get("out"):
        raise InvalidInput(
            "Give the prompt set and the comparison's name: --table NS.NAME --out NS.NAME."
        )
    values["models"] = _checkpoints(values["models"])


def _say_where(config: Any, result: Any, deferred: bool, extra: dict[str, Any]) -> None:
    if not deferred:
        notes.print(
            f"comparison in {config.out}; vote on the Compare page (`podium app`), "
            f"then `podium compare ratings {config.out}`"
        )


def compare_group() -> click.Group:
    """`podium compare`: every CompareConfig field is an option; list, ratings and trend
    are its subcommands."""
    from podium.commands.options import job_command

    group = job_command(
        "compare",
        hook=_models_given,
        done=_say_where,
        cls=click.Group,
        help="Answer one prompt set with each checkpoint and write a comparison table.\n\n"
        "Subcommands: list, ratings, trend (`podium compare ratings --help`).",
    )
    assert isinstance(group, click.Group)
    group.invoke_without_command = True
    group.no_args_is_help = False  # bare `podium compare` prints help from the hook
    start = group.callback
    assert start is not None

    def callback(**given: Any) -> None:
        if click.get_current_context().invoked_subcommand is None:  # not `compare list`
            start(**given)

    group.callback = callback
    for command in (list_cmd, ratings, trend):
        group.add_command(command)
    return group


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_cmd(as_json: bool) -> None:
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


@click.command("ratings")
@click.argument("name", metavar="NAMESPACE.TABLE")
@click.option(
    "--bootstrap",
    type=int,
    default=200,
    show_default=True,
    help="Bootstrap resamples for the intervals.",
)
@click.option(
    "--with-judge",
    "with_judge",
    metavar="NAME[@VERSION]",
    help="Mix this judge's parsed verdicts into people's votes (default: people alone).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def ratings(name: str, bootstrap: int, with_judge: str | None, as_json: bool) -> None:
    """Bradley-Terry ratings with 95% intervals, win rates and check pass rates."""
    from podium.compare.ratings import rated_by, ratings_report
    from podium.compare.table import load_comparison
    from podium.compare.votes import list_votes

    comparison = load_comparison(name)
    judge = None
    if with_judge:
        from podium.compare.judge_mix import judge_votes

        judge = judge_votes(comparison, with_judge)
    report = ratings_report(comparison, list_votes(comparison.name), bootstrap, judge)
    if as_json:
        _print_json(report)
        return
    out = Table(title=plain_text(f"{report['comparison']}: {rated_by(report)}"))
    for col in ("model", "rating", "95% interval", "votes", "wins", "checks passed"):
        out.add_column(col)
    for r in report["ratings"]:
        rate = report["pass_rates"][r["model"]]["all"]
        out.add_row(
            r["model"],
            f"{r['rating']:.0f}",
            f"{r['low']:.0f} to {r['high']:.0f}",
            str(r["votes"]) if judge is None else f"{r['people_votes']} + {r['judge_votes']} judge",
            f"{r['wins']:g}",
            "-" if rate is None else f"{rate:.0%}",
        )
    console.print(out)


@click.command("trend")
@click.option("--run", "run", required=True, help="A checkpoint or job id of the training run.")
@click.option("--table", help="Prompt set NAMESPACE.TABLE.")
@click.option("--out", help="Comparison table to write.")
@click.option("--snapshot", type=int, help="Snapshot of --table.")
@click.option("--max-tokens", type=int, default=256, show_default=True, help="Most tokens.")
@click.option("--check", multiple=True, help="Validation rule for every answer (repeatable).")
@click.option(
    "--extract",
    type=click.Choice(EXTRACT_MODES),
    default="whole",
    show_default=True,
    help="Check the whole answer or its first fenced block.",
)
@click.option("--limit", type=int, help="Only the first N prompts.")
@click.option(
    "--card",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the run card here and run nothing.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def trend(
    run: str,
    table: str | None,
    out: str | None,
    snapshot: int | None,
    max_tokens: int,
    check: tuple[str, ...],
    extract: str,
    limit: int | None,
    card: Path | None,
    as_json: bool,
) -> None:
    """Compare every checkpoint of a training run with its base on one eval set, by step."""
    from podium.commands.options import start_job
    from podium.compare.table import load_comparison
    from podium.compare.trends import run_checkpoints, trend_points, trend_rows
    from podium.compare.votes import list_votes

    base, checkpoints = run_checkpoints(run)
    values: dict[str, Any] = {
        "models": [base, *(c.name for c in checkpoints)],
        "table": {"name": table, "snapshot_id": snapshot},
        "out": out,
        "max_tokens": max_tokens,
        "checks": list(check),
        "limit": limit,
        "extract": extract,
    }
    _models_given(values, {})
    config, _ = start_job("compare", values, card, False)
    if card is not None:
        return
    _say_where(config, None, False, {})
    comparison = load_comparison(config.out)
    rows = trend_rows(trend_points(comparison, list_votes(comparison.name), config.models[0]))
    if as_json:
        _print_json(rows)
        return
    for r in rows:
        console.print(
            f"step {r['step']:>6}  {r['model']}  pass {r['pass_rate']}  "
            f"check-win vs base {r['check_win_rate']}  vote-win {r['vote_win_rate']}"
        )


def click_commands() -> dict[str, click.Command]:
    return {"compare": compare_group()}

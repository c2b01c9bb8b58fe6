"""Judges beside people: a model judges a comparison's pairs; how far to trust it.

    podium judge run --comparison cmp.json_sft --judge base [--sample 50] [--prompt '...']
    podium judge agreement cmp.json_sft [--json]   # accuracy, kappa, position, length

`podium judge run` is generated from the judge job's model (`podium.compare.judge`):
every card field is an option, `--card`/`--queue` work as for every job.
"""

from __future__ import annotations

import json
from typing import Any

import click

from podium.commands.terminal import neutralise_json, safe_console
from podium.errors import InvalidInput

console = safe_console(highlight=False, soft_wrap=True)


def _fmt(value: Any) -> str:
    return "–" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


@click.command("agreement")
@click.argument("name", metavar="NAMESPACE.TABLE")
@click.option("--bootstrap", type=int, default=200, show_default=True, help="Resamples for CIs.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def agreement(name: str, bootstrap: int, as_json: bool) -> None:
    """Each judge's agreement with the human majority, position consistency, length bias."""
    from podium.compare.judge import list_verdicts
    from podium.compare.judge_agreement import agreement_report
    from podium.compare.table import load_comparison
    from podium.compare.votes import list_votes

    comparison = load_comparison(name)
    votes, verdicts = list_votes(comparison.name), list_verdicts(comparison.name)
    if not votes and not verdicts:
        raise InvalidInput(
            f"Comparison {comparison.name} has no votes and no judge verdicts yet; vote on "
            f"the Compare page or run `podium judge run --comparison {comparison.name} "
            "--judge MODEL`."
        )
    report = agreement_report(comparison, votes, verdicts, bootstrap)
    if as_json:
        click.echo(neutralise_json(json.dumps(report, ensure_ascii=False, indent=2)))
        return
    console.print(f"people: {report['people']['votes']} votes on {report['people']['pairs']} pairs")
    for judge, r in report["judges"].items():
        console.print(
            f"{judge}: accuracy {_fmt(r['accuracy'])}, kappa {_fmt(r['kappa'])} "
            f"({r['shared_pairs']} shared pairs) · position consistency "
            f"{_fmt(r['position_consistency'])} ({r['position_pairs']} pairs, {r['flips']} "
            f"flips) · unparsed {r['unparsed']} · preferred {_fmt(r['preferred_chars'])} "
            f"vs other {_fmt(r['other_chars'])} chars"
        )


def judge_group() -> click.Group:
    from podium.commands.options import job_command

    group = click.Group("judge", help="A model as a judge of a comparison's pairs.")
    run = job_command("judge", "run", help="Judge every pair of a comparison in both orders.")
    group.add_command(run)
    group.add_command(agreement)
    return group


def click_commands() -> dict[str, click.Command]:
    return {"judge": judge_group()}

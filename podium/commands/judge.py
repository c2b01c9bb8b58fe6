"""Judges beside people: a model judges a comparison's pairs; how far to trust it.

    podium judge run --comparison cmp.json_sft --judge base [--sample 50] [--prompt '...']
    podium judge agreement cmp.json_sft [--json]   # accuracy, kappa, position, length

`podium judge run` is generated from the judge job's model (`podium.compare.judge`):
every card field is an option, `--card`/`--queue` work as for every job.
"""

from __future__ import annotations

import json

import click

from podium.commands.terminal import neutralise_json, safe_console

console = safe_console(highlight=False, soft_wrap=True)


@click.command("agreement")
@click.argument("name", metavar="NAMESPACE.TABLE")
@click.option("--bootstrap", type=int, default=200, show_default=True, help="Resamples for CIs.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def agreement(name: str, bootstrap: int, as_json: bool) -> None:
    """Each judge's agreement with the human majority, position consistency, length bias."""
    from podium.compare.judge_agreement import comparison_agreement
    from podium.compare.table import load_comparison

    report = comparison_agreement(load_comparison(name), bootstrap)
    if as_json:
        click.echo(neutralise_json(json.dumps(report, ensure_ascii=False, indent=2)))
        return
    from podium.compare.judge_agreement import judge_line, win_rate_lines

    people = report["people"]
    lines = [f"people: {people['votes']} votes on {people['pairs']} pairs"]
    lines += [judge_line(judge, figures) for judge, figures in report["judges"].items()]
    for line in lines + win_rate_lines(report):
        console.print(line, markup=False)


def judge_group() -> click.Group:
    from podium.commands.options import job_command

    group = click.Group("judge", help="A model as a judge of a comparison's pairs.")
    group.add_command(
        job_command("judge", "run", help="Judge every pair of a comparison in both orders.")
    )
    group.add_command(agreement)
    return group


def click_commands() -> dict[str, click.Command]:
    return {"judge": judge_group()}

"""Judges beside people: a model judges a comparison's pairs; how far to trust it.

    podium judge add strict --model base --mode pairwise [--prompt-file P] [--max-tokens N]
    podium judge list [--json] / podium judge remove strict
    podium judge run --comparison cmp.json_sft --judge strict [--sample 50]
    podium judge agreement cmp.json_sft [--json]   # accuracy, kappa, position, length

`podium judge run` is generated from the judge job's model (`podium.compare.judge`):
every card field is an option, `--card`/`--queue` work as for every job.
"""

from __future__ import annotations

import json
from typing import IO

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
    from podium.compare.judge_scores import score_lines

    people = report["people"]
    lines = [f"people: {people['votes']} votes on {people['pairs']} pairs"]
    lines += [judge_line(judge, figures) for judge, figures in report["judges"].items()]
    for line in lines + win_rate_lines(report) + score_lines(report["rubric"]):
        console.print(line, markup=False)


@click.command("add")
@click.argument("name")
@click.option("--model", required=True, help="Registered checkpoint or endpoint that judges.")
@click.option(
    "--mode",
    type=click.Choice(["pairwise", "rubric"]),
    default="pairwise",
    show_default=True,
    help="pairwise: A, B or tie (comparisons); rubric: a 1-10 score (signal, GRPO reward).",
)
@click.option(
    "--prompt-file",
    type=click.File("r", encoding="utf-8"),
    default=None,
    help="The prompt template (pairwise: {question} {answer_a} {answer_b}; rubric: "
    "{question} {answer}); default: the built-in one.",
)
@click.option(
    "--max-tokens", type=int, default=512, show_default=True, help="Per verdict (464-4096)."
)
def add(name: str, model: str, mode: str, prompt_file: IO[str] | None, max_tokens: int) -> None:
    """Register a named judge: a model, a prompt and its settings."""
    from podium.compare.judge_registry import add_judge

    prompt = prompt_file.read() if prompt_file is not None else None
    judge = add_judge(name, model, mode, prompt, max_tokens)
    console.print(
        f"added judge {judge.name}: {judge.mode}, {judge.model}, {judge.prompt_version}",
        markup=False,
    )


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_cmd(as_json: bool) -> None:
    """The named judges: model, mode, prompt version, settings and who added each."""
    from podium.commands.printing import print_json, print_rows
    from podium.compare.judge_registry import list_judges

    rows = [j.to_dict() for j in list_judges()]
    if as_json:
        print_json(rows)
        return
    print_rows([{k: v for k, v in r.items() if k != "prompt"} for r in rows], title="judges")


@click.command("remove")
@click.argument("name")
def remove(name: str) -> None:
    """Forget a named judge (the verdicts it wrote stay)."""
    from podium.compare.judge_registry import remove_judge

    remove_judge(name)
    console.print(f"removed judge {name}", markup=False)


def judge_group() -> click.Group:
    from podium.commands.options import job_command

    group = click.Group("judge", help="A model as a judge of a comparison's pairs.")
    group.add_command(
        job_command("judge", "run", help="Judge every pair of a comparison in both orders.")
    )
    for command in (agreement, add, list_cmd, remove):
        group.add_command(command)
    return group


def click_commands() -> dict[str, click.Command]:
    return {"judge": judge_group()}

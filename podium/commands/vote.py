"""Blind votes in the terminal, into the same votes table as the Compare page.

    podium vote cmp.json_sft [--all]

Each prompt shows two answers as A and B (the same blind pair the page shows this voter:
`podium.compare.votes.blind_pair`); the checkpoints are named only after the vote.
Keys: a = A is better, b = B is better, t = tie, x = both bad, s = skip, q = quit.
Prompts already voted on by this voter are skipped unless --all. Votes are by the
acting user (PODIUM_USER in a shared deployment, else your login), never a typed name.
"""

from __future__ import annotations

from typing import Annotated

import click
import typer
from rich.panel import Panel
from rich.text import Text

from podium.commands.terminal import safe_console
from podium.compare.table import Comparison, Item, load_comparison
from podium.compare.votes import VERDICT_LABELS, blind_pair, cast_vote, voted_prompts
from podium.identity import require
from podium.store.state.users import acting_user

console = safe_console(highlight=False)
KEYS = {"a": "A", "b": "B", "t": "tie", "x": "both_bad"}
CHOICES = [*KEYS, "s", "q"]


def vote(
    comparison: Annotated[
        str, typer.Argument(help="Comparison table (see `podium compare list`).")
    ],
    all_prompts: Annotated[
        bool, typer.Option("--all", help="Also prompts you have voted on.")
    ] = False,
) -> None:
    """Vote blind on a comparison's answer pairs, prompt by prompt."""
    user = acting_user()
    require(user, "vote")  # before any prompt is shown, not after the first answer
    chosen = load_comparison(comparison)
    name = user.name
    done = voted_prompts(chosen.name, name)
    todo = [it for it in chosen.items if all_prompts or it.prompt_id not in done]
    console.print(f"{chosen.name}: {len(done)} of {len(chosen.items)} prompts voted by {name}")
    cast = 0
    for number, item in enumerate(todo, 1):
        key = _ask(chosen, item, name, f"{number}/{len(todo)}")
        if key == "q":
            break
        if key == "s":
            continue
        pair = blind_pair(chosen, item, name)
        cast_vote(chosen, pair, KEYS[key], user)
        cast += 1
        console.print(
            f"A was {pair.model_a}, B was {pair.model_b} · your vote: {VERDICT_LABELS[KEYS[key]]}"
        )
    console.print(f"{cast} vote{'s' if cast != 1 else ''} stored in compare.votes")


def _ask(comparison: Comparison, item: Item, voter: str, position: str) -> str:
    pair = blind_pair(comparison, item, voter)
    console.rule(f"prompt {position} · {item.prompt_id}")
    console.print(Panel(Text(item.prompt_text), title="prompt", title_align="left"))
    for side, model in (("A", pair.model_a), ("B", pair.model_b)):
        console.print(Panel(Text(item.answer_of(model).text), title=side, title_align="left"))
    answer: str = click.prompt(
        "a = A better, b = B better, t = tie, x = both bad, s = skip, q = quit",
        type=click.Choice(CHOICES, case_sensitive=False),
        show_choices=False,
    )
    return answer.lower()


def register(app: typer.Typer) -> None:
    app.command("vote")(vote)

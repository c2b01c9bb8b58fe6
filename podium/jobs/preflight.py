"""Checks before a job exists: the same ones whether it came from the CLI, a card or a form.

`preflight(kind, config)` pins every input table to a snapshot (so a missing table or
snapshot fails now, not in the worker) and runs the kind's own `preflight` function
(a registered model, a rule file that parses), which may also normalise the config,
e.g. name the checkpoint an alias points at.

It runs once per submission: `checked_card(card)` runs it and marks the card, and
`queue.create_job`, which every way of starting a job goes through, checks only a card
that is not marked yet. A command that writes or starts a card checks it first (so a
bad card is refused before anything is written) and hands the marked card on.
"""

from __future__ import annotations

from pydantic import BaseModel

from podium.jobs.cards import Card, pin_inputs
from podium.jobs.kinds import get_kind
from podium.jobs.plugins import load_plugins


def preflight(kind: str, config: BaseModel) -> BaseModel:
    """`config` pinned and checked against the world; raises PodiumError if it cannot run."""
    load_plugins()
    pinned = pin_inputs(config)
    check = get_kind(kind).preflight()
    if check is None:
        return pinned
    return check(pinned) or pinned


def checked_card(card: Card) -> Card:
    """`card` with its config through `preflight`, marked as checked; a card already
    marked is returned as it is (one preflight per submission)."""
    if card.checked:
        return card
    checked = Card(card.kind, preflight(card.kind, card.config), card.notes, card.environment)
    checked.checked = True
    return checked

"""Checks before a job exists: the same ones whether it came from the CLI, a card or a form.

`preflight(kind, config)` pins every input table to a snapshot (so a missing table or
snapshot fails now, not in the worker) and runs the kind's own `preflight` function
(a registered model, a rule file that parses), which may also normalise the config,
e.g. name the checkpoint an alias points at. `queue.create_job` calls it, and every
way of starting a job goes through `create_job`.
"""

from __future__ import annotations

from pydantic import BaseModel

from podium.jobs.cards import pin_inputs
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

"""What the Vibe-check page says and does, without Streamlit: storage and selection are
`generators.vibes`'s, named here so the view imports only this model."""

from __future__ import annotations

import re

from generators.vibes import VIBES_TABLE as VIBES_TABLE
from generators.vibes import all_tags as all_tags
from generators.vibes import answer_stream as answer_stream
from generators.vibes import build_eval_set as build_eval_set
from generators.vibes import clean_tags as clean_tags
from generators.vibes import list_vibes as list_vibes
from generators.vibes import may_submit as may_submit
from generators.vibes import submit_vibe as submit_vibe
from generators.vibes import vibe_id_for as vibe_id_for
from generators.vibes import vibe_stored as vibe_stored
from podium.identity import User as User


def submissions_caption(count: int, waiting_on: str | None = None) -> str:
    """ "3 submissions"; while a submission waits for `waiting_on`'s answer (it is stored
    with it, once the answer is in) "0 submissions · 1 more once ep has answered": the
    list is drawn before the answer streams, so it never reads as if the submit was lost.
    `waiting_on` "" means a submission being stored without an answer."""
    text = f"{count:,} submission{'' if count == 1 else 's'}"
    if waiting_on is None:
        return text
    return text + (f" · 1 more once {waiting_on} has answered" if waiting_on else " · 1 more")


def eval_set_name(tags: list[str]) -> str:
    """The eval-set table a filter proposes: 'evals.vibes_json_math' for the tags json
    and math (each made a legal name part), 'evals.vibes_selection' without tags."""
    parts = [re.sub(r"[^a-z0-9_]+", "_", t.lower()).strip("_") for t in tags]
    return "evals.vibes_" + ("_".join(p for p in parts if p) or "selection")


def count_text(n: int, noun: str) -> str:
    """'1 prompt', '3 prompts', '1,200 prompts'."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")

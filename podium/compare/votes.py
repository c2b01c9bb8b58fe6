"""Blind votes between two answers, stored in the Iceberg table `compare.votes`.

Which two checkpoints a voter sees for a prompt, and on which side, is drawn from a
hash of (voter, comparison, prompt): the same voter gets the same sides on every
rerun and page load, different voters get different ones, and nobody learns a side's
name before voting. Every vote is one append that records the exact sample ids and
which checkpoint was on which side; pyiceberg retries a commit that lost a race, so
concurrent voters lose nothing.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import pyarrow as pa

from generators.row_tables import append_row, ensure_row_table
from podium.compare.table import Comparison, Item
from podium.errors import InvalidInput
from podium.identity import User, require
from podium.store.catalog import kinds
from podium.store.catalog.catalog import full_name, table_exists
from podium.store.read.read import read_small

VOTES_TABLE = "compare.votes"
VOTES_KIND = kinds.COMPARE_VOTES
Verdict = Literal["A", "B", "tie", "both_bad"]
VERDICTS: tuple[str, ...] = ("A", "B", "tie", "both_bad")
VERDICT_LABELS = {"A": "A is better", "B": "B is better", "tie": "Tie", "both_bad": "Both bad"}
VOTES_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string()),
        pa.field("comparison", pa.string()),
        pa.field("prompt_id", pa.string()),
        pa.field("voter", pa.string()),
        pa.field("verdict", pa.string()),
        pa.field("model_a", pa.string()),
        pa.field("model_b", pa.string()),
        pa.field("sample_a", pa.string()),
        pa.field("sample_b", pa.string()),
        pa.field("winner", pa.string()),  # None for tie and both_bad
        pa.field("note", pa.string()),
        pa.field("created_at", pa.timestamp("us", tz="UTC")),
    ]
)


@dataclass(frozen=True)
class BlindPair:
    """What a voter sees: two sides whose names stay hidden until the vote."""

    prompt_id: str
    model_a: str
    model_b: str


def blind_pair(comparison: Comparison, item: Item, voter: str) -> BlindPair:
    models = [a.model for a in item.answers]
    if len(models) < 2:
        raise InvalidInput(f"Prompt {item.prompt_id} has fewer than two answers to compare.")
    seed = hashlib.sha256(f"{voter}\x00{comparison.name}\x00{item.prompt_id}".encode()).digest()
    rng = random.Random(seed)
    pair = list(rng.choice(list(itertools.combinations(models, 2))))
    rng.shuffle(pair)
    return BlindPair(item.prompt_id, pair[0], pair[1])


def ensure_votes_table() -> None:
    ensure_row_table(VOTES_TABLE, VOTES_SCHEMA, VOTES_KIND)


def cast_vote(
    comparison: Comparison, pair: BlindPair, verdict: str, voter: User, note: str = ""
) -> dict[str, Any]:
    """Store one vote by the authenticated `voter` (one atomic append); return its row."""
    require(voter, "vote")
    if verdict not in VERDICTS:
        raise InvalidInput(f"Unknown verdict {verdict!r}; use one of {', '.join(VERDICTS)}.")
    if not voter.name.strip():
        raise InvalidInput("A vote needs a voter name.")
    item = comparison.item(pair.prompt_id)
    a, b = item.answer_of(pair.model_a), item.answer_of(pair.model_b)
    winner = {"A": pair.model_a, "B": pair.model_b}.get(verdict)
    row = {
        "id": str(uuid.uuid4()),
        "comparison": comparison.name,
        "prompt_id": pair.prompt_id,
        "voter": voter.name.strip(),
        "verdict": verdict,
        "model_a": pair.model_a,
        "model_b": pair.model_b,
        "sample_a": a.sample_id,
        "sample_b": b.sample_id,
        "winner": winner,
        "note": note,
        "created_at": datetime.now(UTC),
    }
    ensure_votes_table()
    append_row(VOTES_TABLE, VOTES_SCHEMA, row)
    return row


def list_votes(comparison: str | None = None) -> list[dict[str, Any]]:
    """Votes (of one comparison), oldest first."""
    if not table_exists(VOTES_TABLE):
        return []
    rows = read_small(VOTES_TABLE)[0].to_pylist()
    if comparison is not None:
        name = full_name(comparison)
        rows = [r for r in rows if r["comparison"] == name]
    return sorted(rows, key=lambda r: r["created_at"])


def voted_prompts(comparison: str, voter: str) -> dict[str, dict[str, Any]]:
    """The latest vote of `voter` per prompt of `comparison`."""
    return {r["prompt_id"]: r for r in list_votes(comparison) if r["voter"] == voter}


def send_to_vibes(comparison: Comparison, prompt_id: str, submitter: User, note: str = "") -> str:
    """Store a prompt both answers failed as a vibe-check submission; returns its id."""
    from generators.vibes import submit_vibe

    item = comparison.item(prompt_id)
    answers = "\n\n".join(f"[{a.model}] {a.text}" for a in item.answers)
    return submit_vibe(
        item.prompt_text,
        ideal=note,
        tags=["compare", "both-bad"],
        checkpoint=",".join(a.model for a in item.answers),
        answer=answers,
        submitter=submitter,
    )

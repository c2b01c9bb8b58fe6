"""From an Iceberg snapshot to the Hugging Face datasets TRL trains on.

SFT rows become `{"messages": [...]}` conversations (the row's `system` column becomes
the first message). GRPO rows become `{"prompt": [...], "answer": str, "metadata": str}`:
the conversation up to its last assistant turn is the prompt, that turn is the
reference answer, and the metadata JSON travels along for rewards that need it (unit
tests, expected output). Problems with the data are found here, before any model loads.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from podium.errors import InvalidInput
from podium.store.read import iter_batches, open_snapshot
from podium.store.refs import TableRef

EVAL_SPLITS = ("eval", "validation", "test")


@dataclass
class Conversation:
    id: str
    messages: list[dict[str, str]]
    split: str | None
    metadata: str


@dataclass
class TrainingData:
    """Conversations read from one snapshot, with what was skipped and why."""

    table: str
    snapshot_id: int | None
    train: list[Conversation]
    eval: list[Conversation]
    skipped_no_assistant: int
    skipped_invalid: int


def _messages(row: dict[str, Any]) -> list[dict[str, str]]:
    msgs = [
        {"role": str(m.get("role") or ""), "content": str(m.get("content") or "")}
        for m in (row.get("messages") or [])
        if m is not None
    ]
    system = row.get("system")
    if system and (not msgs or msgs[0]["role"] != "system"):
        msgs.insert(0, {"role": "system", "content": str(system)})
    return msgs


def _has_assistant(msgs: list[dict[str, str]]) -> bool:
    return any(m["role"] == "assistant" and m["content"].strip() for m in msgs)


def malformed_row_ids(ref: TableRef, snapshot_id: int | None) -> set[str]:
    """Ids the validation report of this very snapshot marks malformed."""
    from podium.validate.report import malformed_ids

    ids = malformed_ids(ref.name, snapshot_id)
    if ids is None:
        raise InvalidInput(
            f"only_valid is set but no validation report covers {ref.name} at snapshot "
            f"{snapshot_id}; run `podium validate {ref.name} --rule RULE` first, or train "
            "on every row."
        )
    return ids


def load_training_data(
    ref: TableRef,
    *,
    only_valid: bool = False,
    max_rows: int | None = None,
    eval_fraction: float = 0.0,
    seed: int = 0,
    max_eval_rows: int = 64,
) -> TrainingData:
    """Read `ref` and split it; raises InvalidInput when nothing is trainable."""
    plan = open_snapshot(ref.name, ref.snapshot_id)[1]
    snapshot_id, columns = plan.snapshot_id, plan.column_names
    if "messages" not in columns:
        raise InvalidInput(
            f"Table {ref} has no `messages` column (columns: {', '.join(columns)}); "
            "training needs an SFT chat table. Import one with `podium import`."
        )
    bad = malformed_row_ids(ref, snapshot_id) if only_valid else set()
    rows: list[Conversation] = []
    no_assistant = invalid = 0
    for i, row in enumerate(_rows(ref.name, snapshot_id, columns)):
        row_id = str(row.get("id") if row.get("id") is not None else i)
        if row_id in bad:
            invalid += 1
            continue
        msgs = _messages(row)
        if not _has_assistant(msgs):
            no_assistant += 1
            continue
        rows.append(Conversation(row_id, msgs, row.get("split"), str(row.get("metadata") or "{}")))
    if not rows:
        reason = (
            f"all {invalid} rows are marked malformed by its validation report"
            if invalid and not no_assistant
            else "no row has an assistant turn to learn from"
        )
        raise InvalidInput(
            f"Table {ref.name} at snapshot {snapshot_id} has nothing to train on: {reason}. "
            "Training needs conversations with at least one non-empty assistant message."
        )
    train, evals = _split(rows, eval_fraction, seed, max_eval_rows)
    if max_rows is not None:
        train = train[:max_rows]
    return TrainingData(ref.name, snapshot_id, train, evals, no_assistant, invalid)


def _rows(name: str, snapshot_id: int | None, columns: list[str]) -> Iterator[dict[str, Any]]:
    """The snapshot's rows, streamed: only the columns training reads."""
    keep = [c for c in ("id", "messages", "system", "split", "metadata") if c in columns]
    for batch in iter_batches(name, snapshot_id, columns=keep):
        yield from batch.to_pylist()


def _split(
    rows: list[Conversation], eval_fraction: float, seed: int, max_eval: int
) -> tuple[list[Conversation], list[Conversation]]:
    """No eval set at fraction 0; else the table's own eval split if it has one (rows
    marked eval/validation/test never train), else a seeded random share; at most
    `max_eval` rows are evaluated, since every evaluation pass costs compute."""
    import random

    marked = [(r.split or "").lower() in EVAL_SPLITS for r in rows]
    train = [r for r, m in zip(rows, marked, strict=True) if not m]
    held = [r for r, m in zip(rows, marked, strict=True) if m]
    if eval_fraction <= 0 or not held:
        order = list(train)
        random.Random(seed).shuffle(order)
        n_eval = int(len(order) * eval_fraction)
        if eval_fraction > 0 and len(order) >= 4:
            n_eval = max(n_eval, 1)
        train, held = order[n_eval:], (order[:n_eval] if eval_fraction > 0 else [])
    else:
        random.Random(seed).shuffle(train)
    return train, held[:max_eval]


def sft_dataset(convs: list[Conversation]) -> Any:
    from datasets import Dataset

    return Dataset.from_list([{"messages": c.messages} for c in convs])


def prompt_and_answer(msgs: list[dict[str, str]]) -> tuple[list[dict[str, str]], str]:
    """Split a conversation before its last assistant turn."""
    last = max(i for i, m in enumerate(msgs) if m["role"] == "assistant")
    return msgs[:last], msgs[last]["content"]


def grpo_dataset(convs: list[Conversation]) -> Any:
    from datasets import Dataset

    records = []
    for c in convs:
        prompt, answer = prompt_and_answer(c.messages)
        if not any(m["role"] == "user" for m in prompt):
            continue
        records.append({"prompt": prompt, "answer": answer, "metadata": c.metadata, "id": c.id})
    if not records:
        raise InvalidInput(
            "No conversation has a user turn before its last assistant turn; GRPO needs "
            "prompts to sample completions for."
        )
    return Dataset.from_list(records)


def parse_metadata(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}

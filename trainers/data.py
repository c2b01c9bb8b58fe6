"""From an Iceberg snapshot to the Hugging Face datasets TRL trains on.

SFT rows become `{"messages": [...]}` conversations (the row's `system` column becomes
the first message). GRPO rows become `{"prompt": [...], "answer": str, "metadata": str}`:
the conversation up to its last assistant turn is the prompt, that turn is the
reference answer, and the metadata JSON travels along for rewards that need it (unit
tests, expected output). Problems with the data are found here, before any model loads.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from podium.config import get_settings
from podium.errors import InvalidInput
from podium.store.read.read import iter_batches, open_snapshot
from podium.store.read.refs import TableRef

EVAL_SPLITS = ("eval", "validation", "test")
NO_PROMPTS = (
    "No conversation has a user turn before its last assistant turn; GRPO needs "
    "prompts to sample completions for."
)


@dataclass
class Conversation:
    id: str
    messages: list[dict[str, str]]
    split: str | None
    metadata: str


class Conversations(Sequence[Conversation]):
    """Some rows of a datasets `Dataset` kept on disk (memory-mapped Arrow), read as
    Conversations one at a time: a big snapshot is never held in Python objects."""

    def __init__(self, rows: Any, indices: list[int]) -> None:
        self.rows, self.indices = rows, indices

    def __len__(self) -> int:
        return len(self.indices)

    @overload
    def __getitem__(self, i: int) -> Conversation: ...
    @overload
    def __getitem__(self, i: slice) -> Conversations: ...
    def __getitem__(self, i: int | slice) -> Conversation | Conversations:
        if isinstance(i, slice):
            return Conversations(self.rows, self.indices[i])
        row = self.rows[self.indices[i]]
        return Conversation(row["id"], row["messages"], row["split"], row["metadata"])

    def dataset(self, columns: Sequence[str]) -> Any:
        """These rows as a `Dataset` of `columns` (an index mapping: no copy)."""
        return self.rows.select(self.indices).select_columns(list(columns))


@dataclass
class TrainingData:
    """Conversations read from one snapshot, with what was skipped and why."""

    table: str
    snapshot_id: int | None
    train: Sequence[Conversation]
    eval: Sequence[Conversation]
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
    exclude_signals: Sequence[str] = (),
    max_rows: int | None = None,
    eval_fraction: float = 0.0,
    seed: int = 0,
    max_eval_rows: int = 64,
) -> TrainingData:
    """Read `ref` and split it; raises InvalidInput when nothing is trainable."""
    table, plan = open_snapshot(ref.name, ref.snapshot_id)
    snapshot_id, columns = plan.snapshot_id, plan.column_names
    if "messages" not in columns:
        raise InvalidInput(
            f"Table {ref} has no `messages` column (columns: {', '.join(columns)}); "
            "training needs an SFT chat table. Import one with `podium import`."
        )
    bad = malformed_row_ids(ref, snapshot_id) if only_valid else set()
    if exclude_signals:
        from podium.signals.values import excluded_ids

        bad |= excluded_ids(table, snapshot_id, exclude_signals)
    skipped = Counter[str]()

    def conversations() -> Iterator[dict[str, Any]]:
        for i, row in enumerate(_rows(ref.name, snapshot_id, columns)):
            row_id = str(row.get("id") if row.get("id") is not None else i)
            if row_id in bad:
                skipped["invalid"] += 1
                continue
            msgs = _messages(row)
            if not _has_assistant(msgs):
                skipped["no_assistant"] += 1
                continue
            metadata = str(row.get("metadata") or "{}")
            skipped["kept"] += 1
            yield {"id": row_id, "messages": msgs, "split": row.get("split"), "metadata": metadata}

    try:
        rows = _on_disk(conversations)
    except ValueError:
        if skipped["kept"]:
            raise
        rows = None  # `datasets` refuses to build a dataset from a stream of no rows
    no_assistant, invalid = skipped["no_assistant"], skipped["invalid"]
    if rows is None or not len(rows):
        reason = (
            f"all {invalid} rows are marked malformed by its validation report"
            + (" or left out by signals" if exclude_signals else "")
            if invalid and not no_assistant
            else "no row has an assistant turn to learn from"
        )
        raise InvalidInput(
            f"Table {ref.name} at snapshot {snapshot_id} has nothing to train on: {reason}. "
            "Training needs conversations with at least one non-empty assistant message."
        )
    splits = rows.data.column("split").to_pylist()
    train, evals = _split(splits, eval_fraction, seed, max_eval_rows)
    if max_rows is not None:
        train = train[:max_rows]
    return TrainingData(
        ref.name,
        snapshot_id,
        Conversations(rows, train),
        Conversations(rows, evals),
        no_assistant,
        invalid,
    )


def _rows(name: str, snapshot_id: int | None, columns: list[str]) -> Iterator[dict[str, Any]]:
    """The snapshot's rows, streamed: only the columns training reads."""
    keep = [c for c in ("id", "messages", "system", "split", "metadata") if c in columns]
    for batch in iter_batches(name, snapshot_id, columns=keep):
        yield from batch.to_pylist()


def _on_disk(rows: Callable[[], Iterator[dict[str, Any]]]) -> Any:
    """`rows` streamed into an Arrow file under Podium's home, read memory-mapped; the
    folder is fresh per load (the stream also counts what it skips) and removed at exit."""
    from datasets import Dataset, Features, List, Value

    root = get_settings().ensure_home() / "cache" / "training-data"
    root.mkdir(parents=True, exist_ok=True)
    folder = tempfile.mkdtemp(dir=root)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    text = Value("string")
    features = Features(
        {
            "id": text,
            "messages": List({"role": text, "content": text}),
            "split": text,
            "metadata": text,
        }
    )
    return Dataset.from_generator(rows, features=features, cache_dir=folder)


def _split(
    splits: list[str | None], eval_fraction: float, seed: int, max_eval: int
) -> tuple[list[int], list[int]]:
    """Row indices to train and evaluate on. No eval set at fraction 0; else the
    table's own eval split if it has one (rows marked eval/validation/test never
    train), else a seeded random share; at most `max_eval` rows are evaluated, since
    every evaluation pass costs compute."""
    import random

    marked = [(s or "").lower() in EVAL_SPLITS for s in splits]
    train = [i for i, m in enumerate(marked) if not m]
    held = [i for i, m in enumerate(marked) if m]
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


def sft_dataset(convs: Sequence[Conversation]) -> Any:
    if isinstance(convs, Conversations):
        return convs.dataset(["messages"])
    from datasets import Dataset

    return Dataset.from_list([{"messages": c.messages} for c in convs])


def prompt_and_answer(msgs: list[dict[str, str]]) -> tuple[list[dict[str, str]], str]:
    """Split a conversation before its last assistant turn."""
    last = max(i for i, m in enumerate(msgs) if m["role"] == "assistant")
    return msgs[:last], msgs[last]["content"]


def grpo_dataset(convs: Sequence[Conversation]) -> Any:
    if isinstance(convs, Conversations):
        records = convs.dataset(["id", "messages", "metadata"]).map(
            _grpo_record, remove_columns=["messages"]
        )
        records = records.filter(lambda r: r["prompt"] is not None)
        if not len(records):
            raise InvalidInput(NO_PROMPTS)
        return records
    from datasets import Dataset

    records = []
    for c in convs:
        prompt, answer = prompt_and_answer(c.messages)
        if not any(m["role"] == "user" for m in prompt):
            continue
        records.append({"prompt": prompt, "answer": answer, "metadata": c.metadata, "id": c.id})
    if not records:
        raise InvalidInput(NO_PROMPTS)
    return Dataset.from_list(records)


def _grpo_record(row: dict[str, Any]) -> dict[str, Any]:
    prompt, answer = prompt_and_answer(row["messages"])
    if not any(m["role"] == "user" for m in prompt):
        return {"prompt": None, "answer": answer}
    return {"prompt": prompt, "answer": answer}


def parse_metadata(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def fit_prompts(dataset: Any, tokenizer: Any, budget: int) -> tuple[Any, int]:
    """(the GRPO rows whose chat-formatted prompt has at most `budget` tokens, how many
    were left out). TRL never truncates a GRPO prompt, so a card's `max_length` is kept by
    leaving longer prompts out; none fitting is an error that names the field."""

    def fits(row: dict[str, Any]) -> bool:
        ids = tokenizer.apply_chat_template(
            row["prompt"], add_generation_prompt=True, tokenize=True, return_dict=True
        )["input_ids"]
        return len(ids) <= budget

    kept = dataset.filter(fits)
    if not len(kept):
        raise InvalidInput(
            f"No prompt fits max_length minus max_completion_length ({budget} tokens); "
            "raise max_length or lower max_completion_length."
        )
    return kept, len(dataset) - len(kept)

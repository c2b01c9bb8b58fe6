"""Prompts for generation, read from a table snapshot.

A chat row's prompt is its conversation up to (not including) its last assistant turn,
so a finished SFT example asks the model to redo its final answer; a row without an
assistant turn is used whole. A `prompt_column` holding plain text becomes one user
message instead. Column mappings stored on the table (ShareGPT names, etc.) apply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from podium.errors import InvalidInput
from podium.store.read.query import iter_rows, open_view
from podium.store.read.refs import TableRef
from podium.store.write.generated_ids import content_id

Message = dict[str, str]


@dataclass(frozen=True)
class Prompt:
    prompt_id: str
    messages: list[Message]


def prompt_messages(messages: list[dict[str, Any]], system: str | None = None) -> list[Message]:
    """The turns before the last assistant turn (all turns if there is none)."""
    turns = [
        {"role": str(m.get("role") or ""), "content": str(m.get("content") or "")}
        for m in messages or []
    ]
    last = max((i for i, m in enumerate(turns) if m["role"] == "assistant"), default=len(turns))
    turns = turns[:last]
    if system and not (turns and turns[0]["role"] == "system"):
        turns.insert(0, {"role": "system", "content": system})
    return turns


def load_prompts(
    ref: TableRef, prompt_column: str | None = None, limit: int | None = None
) -> tuple[list[Prompt], int | None, int]:
    """(prompts, snapshot id read, rows skipped) for the table snapshot in `ref`.

    Rows whose prompt has no user or system turn are skipped; a repeated id keeps its
    first row, so the prompt id is a key of the output table.
    """
    view = open_view(ref.name, ref.snapshot_id)
    snapshot_id = view.snapshot_id
    columns = list(view.schema.names)
    if prompt_column is not None:
        if prompt_column not in columns:
            raise InvalidInput(
                f"Table {ref.name} has no column {prompt_column!r}; its columns: "
                f"{', '.join(columns)}."
            )
        wanted = ["id", prompt_column] if "id" in columns else [prompt_column]
    else:
        if "messages" not in columns:
            raise InvalidInput(
                f"Table {ref.name} has no messages column (columns: {', '.join(columns)}); "
                "pass a prompt column (--prompt-column NAME) or map its columns."
            )
        wanted = [c for c in ("id", "messages", "system") if c in columns]
    # Browse's order, so "the first N prompts" are the rows `podium show --limit N` lists
    # (a DuckDB scan returns an edited row, rewritten to a new file, at the end).
    rows = iter_rows(view, wanted, batch_size=min(limit, 1024) if limit else 1024)
    prompts: list[Prompt] = []
    seen: set[str] = set()
    skipped = 0
    for row in rows:
        if prompt_column is not None:
            text = row.get(prompt_column)
            msgs = [{"role": "user", "content": str(text)}] if text not in (None, "") else []
        else:
            msgs = prompt_messages(row.get("messages") or [], row.get("system"))
        if not any(m["role"] in ("user", "system") and m["content"] for m in msgs):
            skipped += 1
            continue
        pid = str(row["id"]) if row.get("id") not in (None, "") else content_id(msgs)
        if pid in seen:
            skipped += 1
            continue
        seen.add(pid)
        prompts.append(Prompt(pid, msgs))
        if limit is not None and len(prompts) >= limit:
            break
    return prompts, snapshot_id, skipped

"""Vibe checks: prompts where a model does badly, collected as an Iceberg table.

Anyone submits a prompt, what a good answer looks like, tags and the checkpoint they
tried; the checkpoint's answer (streamed to them at once) is stored with it in
`vibes.prompts`. Each submission is one Iceberg append, and pyiceberg retries a commit
that lost a race, so concurrent submitters lose nothing. A selection of submissions
(by tag or id) becomes an eval set: an SFT-shaped table of user prompts that the
`generate` job runs against any checkpoint.

    podium vibes submit "Write a haiku about JSON" --ideal "5-7-5, mentions braces" \
        --tag poetry --model base
    podium vibes list --tag poetry
    podium vibes evalset --tag poetry --out evals.poetry
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from generators.client import ChatRequest, endpoint_for, stream_chat
from generators.row_tables import append_row, ensure_row_table
from podium.errors import InvalidInput, NotFound
from podium.identity import User, require
from podium.reporting import Reporter
from podium.store.catalog import kinds
from podium.store.catalog.catalog import table_exists
from podium.store.catalog.table_name import check_not_reserved
from podium.store.read.query import page
from podium.store.read.read import iter_batches
from podium.store.schema import PROP_KIND, PROP_LINEAGE_INPUT, PROP_LINEAGE_PREFIX, SFT_ARROW_SCHEMA
from podium.store.state.users import acting_user
from podium.store.write.write import write_table

VIBES_TABLE = "vibes.prompts"
VIBES_KIND = kinds.VIBES
EVAL_SET_KIND = kinds.EVAL_SET
VIBES_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string()),
        pa.field("prompt", pa.string()),
        pa.field("ideal", pa.string()),
        pa.field("tags", pa.list_(pa.field("element", pa.string()))),
        pa.field("checkpoint", pa.string()),
        pa.field("answer", pa.string()),
        pa.field("submitter", pa.string()),
        pa.field("created_at", pa.timestamp("us", tz="UTC")),
    ]
)


def ensure_vibes_table() -> None:
    ensure_row_table(VIBES_TABLE, VIBES_SCHEMA, VIBES_KIND)


def clean_tags(tags: Sequence[str] | str | None) -> list[str]:
    if isinstance(tags, str):
        tags = tags.split(",")
    return sorted({t.strip().lower() for t in tags or [] if t.strip()})


def answer_stream(
    checkpoint: str,
    prompt: str,
    max_tokens: int = 256,
    temperature: float = 0.7,
    user: User | None = None,
) -> Iterator[str]:
    """The checkpoint's answer to `prompt`, streamed (starts its server if needed).

    The role is checked now, before the server starts or the model is asked (the Vibe
    check and Generate's "Try a prompt" pages, `podium vibes submit`); a model without a
    running server is started only for a role that may start servers."""
    user = user or acting_user()
    require(user, "ask_model")
    endpoint = endpoint_for(checkpoint, user=user)
    request = ChatRequest(
        messages=[{"role": "user", "content": prompt}],
        max_tokens=max_tokens,
        temperature=temperature,
    )
    return stream_chat(endpoint, request)


def may_submit(user: User | None = None) -> User:
    """The submitter, once their role allows a vibe-check submission (before its answer
    is asked for)."""
    user = user or acting_user()
    require(user, "vibe")
    return user


def submit_vibe(
    prompt: str,
    ideal: str = "",
    tags: Sequence[str] | str | None = None,
    checkpoint: str = "",
    answer: str = "",
    submitter: User | None = None,
    idempotency_key: str | None = None,
) -> str:
    """Store one submission (one atomic append); returns its id.

    The submitter is the authenticated user (default: whoever is acting), never free text.

    With `idempotency_key` the id is derived from it, and a submission whose id is
    already stored is not stored again (a double click on Submit stores one row)."""
    user = may_submit(submitter)
    if not prompt.strip():
        raise InvalidInput("A vibe-check prompt cannot be empty.")
    ensure_vibes_table()
    vibe_id = vibe_id_for(idempotency_key) if idempotency_key else str(uuid.uuid4())
    if idempotency_key and vibe_stored(vibe_id):
        return vibe_id
    row = {
        "id": vibe_id,
        "prompt": prompt,
        "ideal": ideal,
        "tags": clean_tags(tags),
        "checkpoint": checkpoint,
        "answer": answer,
        "submitter": user.name,
        "created_at": datetime.now(UTC),
    }
    append_row(VIBES_TABLE, VIBES_SCHEMA, row)
    return vibe_id


def vibe_id_for(idempotency_key: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"podium-vibe:{idempotency_key}"))


def vibe_stored(vibe_id: str) -> bool:
    if not table_exists(VIBES_TABLE):
        return False
    return any(
        vibe_id in batch.column("id").to_pylist()
        for batch in iter_batches(VIBES_TABLE, columns=["id"])
    )


def list_vibes(
    tags: Sequence[str] | str | None = None,
    search: str | None = None,
    checkpoint: str | None = None,
    limit: int = 500,
) -> list[dict[str, Any]]:
    """Submissions, newest first, having any of `tags`, matching `search`."""
    if not table_exists(VIBES_TABLE):
        return []
    filters: dict[str, Any] = {}
    if clean_tags(tags):
        filters["tags"] = clean_tags(tags)
    if checkpoint:
        filters["checkpoint"] = checkpoint
    rows = page(VIBES_TABLE, limit=1_000_000, search=search or None, filters=filters).rows
    rows.sort(key=lambda r: r["created_at"], reverse=True)
    return rows[:limit]


def all_tags() -> list[str]:
    return sorted({t for r in list_vibes(limit=1_000_000) for t in r["tags"] or []})


def build_eval_set(
    out: str,
    *,
    tags: Sequence[str] | str | None = None,
    ids: Sequence[str] | None = None,
    reporter: Reporter | None = None,
) -> int:
    """Write the selected submissions as an SFT-shaped prompts table; returns its size.

    Each row's `messages` is the single user prompt; `metadata` keeps what good looks
    like and the answer that prompted the submission.
    """
    require(acting_user(), "vibe")  # before any table is created
    check_not_reserved(out)
    reporter = reporter or Reporter()
    if not tags and not ids:
        raise InvalidInput("Choose the eval set's prompts: give tags (--tag) or ids (--id).")
    if not table_exists(VIBES_TABLE):
        raise NotFound("No vibe-check submissions yet; submit some with `podium vibes submit`.")
    chosen = page(
        VIBES_TABLE,
        limit=1_000_000,
        filters={"tags": clean_tags(tags)} if tags else None,
        ids=list(ids) if ids else None,
    )
    if not chosen.rows:
        raise InvalidInput(f"No submissions match tags {clean_tags(tags)} / ids {list(ids or [])}.")
    rows = [
        {
            "id": r["id"],
            "messages": [{"role": "user", "content": r["prompt"]}],
            "system": None,
            "source": VIBES_TABLE,
            "split": "eval",
            "tags": r["tags"],
            "metadata": json.dumps(
                {
                    "ideal": r["ideal"],
                    "checkpoint": r["checkpoint"],
                    "answer": r["answer"],
                    "submitter": r["submitter"],
                }
            ),
            "created_at": r["created_at"],
        }
        for r in chosen.rows
    ]
    properties = {
        **reporter.lineage,
        PROP_KIND: EVAL_SET_KIND,
        PROP_LINEAGE_INPUT: f"{VIBES_TABLE}@{chosen.snapshot_id}",
        PROP_LINEAGE_PREFIX + "selection": json.dumps(
            {"tags": clean_tags(tags), "ids": list(ids or [])}
        ),
    }
    write_table(
        out,
        pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA),
        mode="create",
        properties=properties,
    )
    return len(rows)


def eval_set_written(count: int, out: str) -> str:
    """What building an eval set says: "Wrote 1 prompt to evals.x." (CLI and page)."""
    return f"Wrote {count:,} prompt{'' if count == 1 else 's'} to {out}."

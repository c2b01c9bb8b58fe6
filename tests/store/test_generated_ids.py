"""Ids for rows without one: content hashes made unique across batches, the ids already
handed out kept on disk rather than in a Python set."""

from __future__ import annotations

import tracemalloc
from contextlib import closing
from typing import Any

from podium.store.write.generated_ids import GeneratedIds, content_id


def rows(*contents: str, ids: list[str | None] | None = None) -> list[dict[str, Any]]:
    ids = ids or [None] * len(contents)
    return [
        {"id": row_id, "messages": [{"role": "user", "content": c}]}
        for c, row_id in zip(contents, ids, strict=True)
    ]


def test_the_same_content_gets_the_next_suffix_in_every_later_batch(podium_home):
    base = content_id([{"role": "user", "content": "same"}])
    with closing(GeneratedIds()) as ids:
        first, second, third = rows("same", "other"), rows("same"), rows("same", "same")
        ids.fill(first)
        ids.fill(second)
        ids.fill(third)
    assert first[0]["id"] == base and second[0]["id"] == f"{base}-2"
    assert [r["id"] for r in third] == [f"{base}-3", f"{base}-4"]
    assert first[1]["id"] == content_id([{"role": "user", "content": "other"}])


def test_explicit_ids_of_the_generated_shape_are_never_handed_out_again(podium_home):
    base = content_id([{"role": "user", "content": "x"}])
    with closing(GeneratedIds()) as ids:
        explicit = rows("anything", "else", ids=[base, "my-own-id"])
        ids.fill(explicit)
        later = rows("x")
        ids.fill(later)
    assert [r["id"] for r in explicit] == [base, "my-own-id"]  # explicit ids are kept
    assert later[0]["id"] == f"{base}-2"


def test_memory_stays_flat_as_the_import_grows(podium_home):
    """A set of every id grew ~100 bytes a row; 40,000 rows here would add ~4 MB."""
    with closing(GeneratedIds()) as ids:
        ids.fill(rows(*(f"warm {i}" for i in range(2_000))))
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for batch in range(20):
            ids.fill(rows(*(f"row {batch} {i}" for i in range(2_000))))
        grown = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
    assert grown < 1_000_000, grown

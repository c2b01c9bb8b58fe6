"""Search by meaning: the rows of a snapshot nearest a text or another row, by cosine
similarity of their embeddings. Exact (every vector read) where the table is small,
else the signal's approximate index (`podium.signals.vector_index`)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
from pyiceberg.table import Table

from podium.errors import InvalidInput, NotFound
from podium.signals.embedders import Vectors, embedder_for
from podium.signals.map_settings import EmbeddingSettings
from podium.signals.vector_index import dims_of, iter_vectors, load_index
from podium.signals.vectors import embedding_signal
from podium.store.catalog.catalog import name_of

EXACT_MAX_ROWS = 20_000  # below this, reading every vector is as fast as the index


@dataclass(frozen=True)
class Hit:
    id: str
    score: float  # cosine similarity, 1 = same direction

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "score": round(self.score, 6)}


def query_vector(stored: Table, text: str) -> Vectors:
    """`text` embedded by the model and dimensions the signal's vectors were made with."""
    settings = json.loads(stored.properties.get("podium.signal.settings") or "{}")
    wanted = EmbeddingSettings(
        model=settings.get("model", "wordllama"),
        dims=settings.get("dims"),
        max_chars=int(settings.get("max_chars", 4000)),
    )
    vector = embedder_for(wanted).embed([text])
    if not np.any(vector):
        raise InvalidInput("The query text has no words to embed; give some text.")
    first: Vectors = vector[0]
    return first


def row_vector(stored: Table, row: str) -> Vectors:
    snap = stored.current_snapshot()
    for ids, vectors in iter_vectors(stored, snap.snapshot_id if snap else None):
        where = np.flatnonzero(np.asarray(ids.to_pylist(), dtype=object) == row)
        if len(where):
            found: Vectors = vectors[int(where[0])]
            return found
    raise NotFound(
        f"Row {row!r} has no embedding in {name_of(stored)} (no such row, or no text in "
        "the turns embedded)."
    )


def exact_top(stored: Table, query: Vectors, k: int) -> list[Hit]:
    """Top k by a full scan of the vectors (what the index is measured against)."""
    snap = stored.current_snapshot()
    best_ids: list[str] = []
    best_scores = np.zeros(0, np.float32)
    for ids, vectors in iter_vectors(stored, snap.snapshot_id if snap else None):
        scores = vectors @ query
        keep = np.argsort(-scores, kind="stable")[:k]
        best_ids = best_ids + [ids[int(i)].as_py() for i in keep]
        best_scores = np.concatenate([best_scores, scores[keep]])
        order = np.argsort(-best_scores, kind="stable")[:k]
        best_ids = [best_ids[int(i)] for i in order]
        best_scores = best_scores[order]
    return [Hit(i, float(s)) for i, s in zip(best_ids, best_scores.tolist(), strict=True)]


def index_top(stored: Table, query: Vectors, k: int) -> list[Hit]:
    loaded = load_index(stored)
    if len(loaded.ids) == 0:
        return []
    matches = loaded.graph.search(query, min(k, len(loaded.ids)))
    keys = np.asarray(matches.keys, np.int64)
    distances = np.asarray(matches.distances, np.float32)
    ids = loaded.ids.take(keys).to_pylist()
    return [Hit(str(i), float(1 - d)) for i, d in zip(ids, distances.tolist(), strict=True)]


def similar(
    table: str,
    *,
    text: str | None = None,
    row: str | None = None,
    k: int = 10,
    snapshot: int | str | None = None,
    exact: bool | None = None,
) -> list[Hit]:
    """The k rows of `table` most like `text` or like row `row` (itself left out)."""
    if (text is None) == (row is None):
        raise InvalidInput("Give either a text or a row id to search near, not both.")
    if k < 1:
        raise InvalidInput(f"k={k}: ask for at least one row.")
    _, stored, _ = embedding_signal(table, snapshot)
    query = query_vector(stored, text) if text is not None else row_vector(stored, str(row))
    if query.shape[0] != dims_of(stored):
        raise InvalidInput(
            f"The query has {query.shape[0]} dimensions, {name_of(stored)} {dims_of(stored)}."
        )
    rows = int(json.loads(stored.properties.get("podium.signal.summary") or "{}").get("rows", 0))
    want = k + (1 if row is not None else 0)
    use_exact = rows <= EXACT_MAX_ROWS if exact is None else exact
    hits = exact_top(stored, query, want) if use_exact else index_top(stored, query, want)
    if row is not None:
        hits = [h for h in hits if h.id != row]
    return hits[:k]


def recall_at(exact_hits: list[list[str]], approx_hits: list[list[str]]) -> float:
    """Mean share of the exact top k the approximate top k found."""
    found = [
        len(set(a) & set(e)) / len(e) for e, a in zip(exact_hits, approx_hits, strict=True) if e
    ]
    return float(np.mean(found)) if found else 1.0


def row_texts(table: str, ids: list[str], chars: int = 300) -> dict[str, str]:
    """The first `chars` characters of each row's turns (role: text), found by id as
    an edit finds them (a few footers, not a scan)."""
    from podium.store.catalog.catalog import full_name, load_table
    from podium.store.write.row_locations import rows_by_id

    _, rows = rows_by_id(load_table(full_name(table)), ids)
    out = {}
    for row_id, row in rows.items():
        turns = row.get("messages") or []
        text = " | ".join(f"{t.get('role')}: {t.get('content') or ''}" for t in turns)
        out[row_id] = text[:chars]
    return out

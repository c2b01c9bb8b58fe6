"""The vectors of a snapshot: from its current embedding signal (what topics, the
projection, search and coverage read), or embedded now when there is none."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pyiceberg.table import Table

from podium.errors import InvalidInput
from podium.signals.embedders import Vectors, embedder_for
from podium.signals.map_settings import EmbeddingSettings
from podium.signals.signal import Source
from podium.signals.store import signal_status, signal_table_name
from podium.store.catalog.catalog import full_name, load_or_none, load_table
from podium.store.read.snapshots import resolve_snapshot


@dataclass
class SnapshotVectors:
    ids: pa.Array
    vectors: Vectors
    model: str
    dims: int


def embedding_signal(table: str, snapshot: int | str | None = None) -> tuple[Table, Table, int]:
    """The described table, its current embedding signal table and the snapshot, or a
    one-line refusal saying how to make one."""
    from podium.signals.embedding import Embedding

    loaded = load_table(full_name(table))
    sid = resolve_snapshot(loaded, snapshot)
    name = signal_table_name(full_name(table), "embedding")
    stored = load_or_none(name)
    run = f"run `podium signals run {full_name(table)} --signal embedding`"
    if stored is None or sid is None:
        raise InvalidInput(f"{full_name(table)} has no embeddings; {run}.")
    status = signal_status(stored, loaded, sid, {"embedding": Embedding.version})
    if status is None:
        raise InvalidInput(f"{name} is not an embedding signal of {full_name(table)}.")
    if status.stale:
        raise InvalidInput(
            f"The embeddings of {full_name(table)} are stale ({status.stale}); {run}."
        )
    return loaded, stored, sid


def stored_vectors(table: str, snapshot: int | str | None = None) -> SnapshotVectors:
    from podium.signals.vector_index import dims_of, iter_vectors

    _, stored, _ = embedding_signal(table, snapshot)
    snap = stored.current_snapshot()
    ids: list[pa.Array] = []
    parts: list[Vectors] = []
    for batch_ids, vectors in iter_vectors(stored, snap.snapshot_id if snap else None):
        ids.append(batch_ids.cast(pa.string()))
        parts.append(vectors)
    dims = dims_of(stored)
    return SnapshotVectors(
        pa.concat_arrays(ids) if ids else pa.array([], pa.string()),
        np.concatenate(parts) if parts else np.zeros((0, dims), np.float32),
        model_of(stored),
        dims,
    )


def model_of(signal_table: Table) -> str:
    """The model that made an embedding signal's vectors (its settings name it)."""
    settings = json.loads(signal_table.properties.get("podium.signal.settings") or "{}")
    return str(settings.get("model", ""))


@dataclass
class VectorBatches:
    """A snapshot's vectors read again for each pass, a batch at a time: what fits a
    model on a sample and then labels every row holds one batch, never all of them (at
    1M rows of 256 dimensions the whole matrix is 1 GB, 2 GB while it is gathered)."""

    count: int
    dims: int
    model: str
    read: Callable[[], Iterator[tuple[pa.Array, Vectors]]]

    def batches(self) -> Iterator[tuple[pa.Array, Vectors]]:
        return self.read()

    def sample(self, rows: int, seed: int) -> Vectors:
        """Every vector when there are at most `rows`, else `rows` drawn at random, in
        the order `numpy`'s `choice` draws them (as indexing the whole matrix would)."""
        if self.count <= rows:
            picks = np.arange(self.count)
        else:
            picks = np.random.default_rng(seed).choice(self.count, rows, False)
        order = np.argsort(picks, kind="stable")
        wanted = picks[order]
        out = np.empty((len(picks), self.dims), np.float32)
        start = done = 0
        for _, vectors in self.batches():
            end = start + len(vectors)
            upto = int(np.searchsorted(wanted, end))
            out[order[done:upto]] = vectors[wanted[done:upto] - start]
            done, start = upto, end
        return out


def stored_batches(table: str, snapshot: int | str | None = None) -> VectorBatches:
    """The current embedding signal's vectors, read from its table a batch at a time."""
    from podium.signals.vector_index import count_rows, dims_of, iter_vectors

    _, stored, _ = embedding_signal(table, snapshot)
    snap = stored.current_snapshot()
    sid = snap.snapshot_id if snap else None
    rows = count_rows(stored, sid)
    return VectorBatches(rows, dims_of(stored), model_of(stored), lambda: iter_vectors(stored, sid))


def source_batches(source: Source) -> VectorBatches:
    """The snapshot's stored embeddings when current, else embedded now (default model,
    held in memory: a table big enough for that to matter gets its embedding signal
    first, as the map's pages and commands say)."""
    try:
        return stored_batches(source.table, source.snapshot_id)
    except InvalidInput:
        pass
    found = source_vectors(source)
    return VectorBatches(
        len(found.ids), found.dims, found.model, lambda: iter([(found.ids, found.vectors)])
    )


def source_vectors(source: Source) -> SnapshotVectors:
    """The snapshot's stored embeddings when current, else embedded now (default model)."""
    try:
        return stored_vectors(source.table, source.snapshot_id)
    except InvalidInput:
        pass
    settings = EmbeddingSettings()
    embedder = embedder_for(settings)
    ids: list[str] = []
    parts: list[Vectors] = []
    for turns in source.turns():
        texts = turns.row_texts()
        keep = [i for i, t in enumerate(texts) if t.strip()]
        ids.extend(turns.ids[i] for i in keep)
        parts.append(embedder.embed([texts[i] for i in keep]))
    dims = settings.dims or 0
    vectors = np.concatenate(parts) if parts else np.zeros((0, dims), np.float32)
    return SnapshotVectors(pa.array(ids, pa.string()), vectors, settings.model, dims)

"""Coverage: the prompts of an eval set with no training row near them. Each eval
row's nearest training row by cosine distance (1 - similarity) of their embeddings; a
prompt is uncovered when that distance exceeds the threshold. The eval set's vectors are
read a batch at a time; the training table's are held only when it is small enough for
exact search, else its memory-mapped index answers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from podium.errors import InvalidInput
from podium.identity import require
from podium.signals.similar import EXACT_MAX_ROWS
from podium.signals.vector_index import load_index
from podium.signals.vectors import embedding_signal, stored_batches, stored_vectors
from podium.store.catalog.catalog import full_name, load_table
from podium.store.catalog.table_name import check_not_reserved
from podium.store.schema import PROP_KIND, PROP_LINEAGE_PREFIX, PROP_MAPPING
from podium.store.state.users import acting_user
from podium.store.write.row_locations import rows_by_id
from podium.store.write.write import write_table

PROP_COVERAGE = f"{PROP_LINEAGE_PREFIX}uncovered_by"  # eval@snapshot, train, distance


@dataclass(frozen=True)
class Nearest:
    id: str  # the eval row
    nearest: str  # the closest training row
    distance: float

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "nearest": self.nearest, "distance": round(self.distance, 6)}


def _model(table: str) -> tuple[str, int]:
    _, stored, _ = embedding_signal(table)
    settings = json.loads(stored.properties.get("podium.signal.settings") or "{}")
    return str(settings.get("model", "")), int(settings.get("dims", 0))


def nearest_training(eval_table: str, train_table: str) -> list[Nearest]:
    """Every embedded eval row with its nearest training row, farthest first."""
    eval_model, train_model = _model(eval_table), _model(train_table)
    if eval_model != train_model:
        raise InvalidInput(
            f"{full_name(eval_table)} was embedded by {eval_model[0]}:{eval_model[1]}, "
            f"{full_name(train_table)} by {train_model[0]}:{train_model[1]}; embed both with "
            "the same model and dimensions."
        )
    queries = stored_batches(eval_table)
    _, train_stored, _ = embedding_signal(train_table)
    rows = int(
        json.loads(train_stored.properties.get("podium.signal.summary") or "{}").get("rows", 0)
    )
    if queries.count == 0 or rows == 0:
        return []
    # the eval rows a batch at a time against the training rows: all of them when few
    # (exact), else their memory-mapped index
    train = stored_vectors(train_table) if rows <= EXACT_MAX_ROWS else None
    index = load_index(train_stored) if train is None else None
    found: list[Nearest] = []
    for ids, vectors in queries.batches():
        if train is not None:
            sims = vectors @ train.vectors.T
            best = sims.argmax(axis=1)
            near = train.ids.take(best).to_pylist()
            dist = 1 - sims[np.arange(len(best)), best]
        else:
            assert index is not None
            matches = index.graph.search(vectors, 1)
            keys = np.asarray(matches.keys, np.int64).reshape(-1)
            near = index.ids.take(keys).to_pylist()
            dist = np.asarray(matches.distances, np.float32).reshape(-1)
        found += [
            Nearest(str(i), str(n), float(d))
            for i, n, d in zip(ids.to_pylist(), near, dist.tolist(), strict=True)
        ]
    return sorted(found, key=lambda f: (-f.distance, f.id))


def uncovered(eval_table: str, train_table: str, distance: float) -> list[Nearest]:
    if not 0 < distance < 2:
        raise InvalidInput(f"distance={distance}: a cosine distance lies between 0 and 2.")
    return [n for n in nearest_training(eval_table, train_table) if n.distance > distance]


def write_uncovered(eval_table: str, train_table: str, distance: float, out: str) -> dict[str, Any]:
    """Write the uncovered eval rows, as they are, to a new table `out` (one commit, its
    author the acting user), ready for a generation job; refuses when there are none or
    `out` exists (nothing is written then)."""
    require(acting_user(), "run_job")  # the prompts of a generation job, as its table
    check_not_reserved(out)
    far = uncovered(eval_table, train_table, distance)
    if not far:
        raise InvalidInput(
            f"Every prompt of {full_name(eval_table)} has a training row within {distance}; "
            "there is nothing to write."
        )
    loaded = load_table(full_name(eval_table))
    sid, rows = rows_by_id(loaded, [f.id for f in far])
    arrow = loaded.schema().as_arrow()
    data = pa.Table.from_pylist([rows[f.id] for f in far if f.id in rows], schema=arrow)
    keep = {PROP_KIND: loaded.properties.get(PROP_KIND, "sft")}  # a prompt table as its source
    if PROP_MAPPING in loaded.properties:
        keep[PROP_MAPPING] = loaded.properties[PROP_MAPPING]
    lineage = {
        PROP_COVERAGE: json.dumps(
            {
                "eval": f"{full_name(eval_table)}@{sid}",
                "train": full_name(train_table),
                "distance": distance,
            }
        )
    }
    written = write_table(out, data, schema=loaded.schema(), properties={**keep, **lineage})
    snapshot = written.current_snapshot()
    return {
        "table": out,
        "snapshot_id": snapshot.snapshot_id if snapshot else None,
        "rows": data.num_rows,
    }

"""What the Map page shows, without Streamlit: every row of a table as a point (its
projection signal) with its topic and category (its topics signal), or the rows of
several tables on one map; search by meaning, the topics as Browse filters, and
coverage of an eval set by a training table.

The chart is `podium.app.views.map.figure`'s; what a selection on it selects is
`podium.app.views.map.selection`'s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from podium.errors import InvalidInput
from podium.signals.store import signal_status, signal_table_name
from podium.signals.topics import PROP_TOPICS, Topics
from podium.store.catalog.catalog import full_name, list_tables, load_or_none, load_table
from podium.store.read.read import iter_table_batches
from podium.store.read.snapshots import resolve_snapshot

MAX_POINTS = 2_000_000  # drawn; a bigger table shows an even sample of its rows
HOVER_CHARS = 160
GENERATE_SHOWN = ("model", "out", "max_tokens", "temperature", "n")  # the rest folded away
TITLES_ADVANCED = ("rows_per_topic", "chars_per_row", "max_tokens", "seed")  # topic-titles


def generate_advanced() -> list[str]:
    """The generation form's fields folded under "advanced" on this page."""
    from generators.generate import GenerateConfig

    return [f for f in GenerateConfig.model_fields if f not in (*GENERATE_SHOWN, "table")]


def mapped_tables() -> list[str]:
    """Tables with a projection signal (the ones the map can draw)."""
    names = set(list_tables())
    return sorted(
        t
        for t in names
        if "__" not in t.split(".")[-1] and signal_table_name(t, "projection") in names
    )


def _current(table: str, signal: str, version: int) -> pa.Table | None:
    loaded = load_table(full_name(table))
    stored = load_or_none(signal_table_name(full_name(table), signal))
    if stored is None:
        return None
    status = signal_status(stored, loaded, resolve_snapshot(loaded, None), {signal: version})
    if status is None or status.stale:
        return None
    snap = stored.current_snapshot()
    batches = list(iter_table_batches(stored, snap.snapshot_id if snap else None))
    return pa.Table.from_batches(batches) if batches else None


@dataclass
class MapData:
    table: str
    points: pd.DataFrame  # id, x, y, cluster, category, title (and table), as drawn
    titles: dict[int, str]
    total: int  # rows with a point (before sampling)
    tables: tuple[str, ...] = ()  # several tables on one map, colored by table


def load_map(table: str, max_points: int = MAX_POINTS) -> MapData:
    """The table's points, joined with its topics (when current)."""
    from podium.signals.projection import Projection

    points = _current(table, "projection", Projection.version)
    if points is None:
        raise InvalidInput(
            f"{full_name(table)} has no current projection; run "
            f"`podium signals run {full_name(table)} --signal embedding,topics,projection`."
        )
    topics = _current(table, "topics", Topics.version)
    frame = with_topics(points, topics)
    total = len(frame)
    if total > max_points:
        frame = frame.iloc[:: -(-total // max_points)].reset_index(drop=True)
    titles: dict[int, str] = {}
    if topics is not None:
        stored = load_table(signal_table_name(full_name(table), "topics"))

        for t in json.loads(stored.properties.get(PROP_TOPICS) or "[]"):
            titles[int(t["cluster"])] = str(t["title"])
    else:
        frame["cluster"] = 0
        frame["category"] = 0
    frame["cluster"] = frame["cluster"].fillna(-1).astype(np.int32)
    frame["category"] = frame["category"].fillna(-1).astype(np.int32)
    frame["title"] = frame["cluster"].map(titles).astype(object).fillna("")
    return MapData(full_name(table), frame, titles, total)


def with_topics(points: pa.Table, topics: pa.Table | None) -> pd.DataFrame:
    """The points (id, x, y) with each row's topic and category (a row without one gets
    none). Both signals are written from one scan of the table, so their ids usually come
    in the same order and the columns are taken as they are (a merge on a million string
    ids took 0.2 s); in any other order they are joined by id."""
    frame: pd.DataFrame
    if topics is None:
        frame = points.to_pandas()
        return frame
    ids, their = points.column("id"), topics.column("id")
    if len(ids) == len(their) and (not len(ids) or pc.all(pc.equal(ids, their)).as_py()):
        for name in ("cluster", "category"):
            points = points.append_column(name, topics.column(name))
        frame = points.to_pandas()
        return frame
    chosen = topics.select(["id", "cluster", "category"]).to_pandas()
    frame = points.to_pandas().merge(chosen, on="id", how="left")
    return frame


def load_tables_map(tables: list[str], max_points: int = MAX_POINTS) -> MapData:
    """Several tables (an SFT table, generated samples, a vibe eval set) on one map: one
    projection of all their embeddings, a trace per table."""
    from podium.signals.projection import joint_points

    names = list(dict.fromkeys(full_name(t) for t in tables))
    if len(names) < 2:
        raise InvalidInput("Choose two or more tables to draw on one map.")
    frames = []
    total = 0
    for found in joint_points(names, max_points):
        total += found.total
        ids = pd.Series(found.ids.to_pylist(), dtype=object)
        frames.append(
            pd.DataFrame(
                {"id": ids, "x": found.points[:, 0], "y": found.points[:, 1], "table": found.table}
            )
        )
    points = pd.concat(frames, ignore_index=True)
    points["cluster"] = -1
    points["category"] = -1
    points["title"] = points["table"]
    return MapData(names[0], points, {}, total, tuple(names))


def topic_choices(table: str) -> dict[str, str]:
    """Browse's Signals facets of the table's current topics (categories, then topics),
    each `topics=LEVEL=N` with its label and row count."""
    from podium.signals.values import facets

    loaded = load_table(full_name(table))
    return {
        f"{f.signal}={f.value}": f"{f.label} ({f.rows:,})"
        for f in facets(loaded, resolve_snapshot(loaded, None))
        if f.signal == "topics"
    }


def embedded_tables() -> list[str]:
    """Tables with an embedding signal (what coverage compares)."""
    names = set(list_tables())
    return sorted(
        t
        for t in names
        if "__" not in t.split(".")[-1] and signal_table_name(t, "embedding") in names
    )


def coverage_rows(eval_table: str, train_table: str, distance: float) -> list[dict[str, Any]]:
    """The eval prompts with no training row within `distance`, farthest first, each
    with its nearest training row and the start of its text."""
    from podium.signals.coverage import uncovered
    from podium.signals.similar import row_texts

    far = uncovered(eval_table, train_table, distance)
    texts = row_texts(eval_table, [f.id for f in far], HOVER_CHARS)
    return [{**f.to_dict(), "text": texts.get(f.id, "")} for f in far]


def prompts_name(eval_table: str) -> str:
    """A new table name for the uncovered prompts of `eval_table` (never an existing one)."""
    from podium.store.catalog.catalog import table_exists

    ns, name = full_name(eval_table).split(".", 1)
    base = f"{ns}.{name[:80]}_uncovered"
    found, n = base, 1
    while table_exists(found):
        n += 1
        found = f"{base}_{n}"
    return found


def prompt_table(eval_table: str, train_table: str, distance: float, out: str) -> dict[str, Any]:
    """Write the uncovered prompts to `out`; the generation job's `table` reference."""
    from podium.signals.coverage import write_uncovered

    written = write_uncovered(eval_table, train_table, distance, out)
    return {"name": written["table"], "snapshot_id": written["snapshot_id"]}


def similar_rows(table: str, *, text: str = "", row: str = "", k: int = 10) -> list[dict[str, Any]]:
    """Search by meaning from the page: the k rows like `text` or like row `row`, each
    with its score and the start of its text."""
    from podium.signals.similar import row_texts, similar

    text, row = text.strip(), row.strip()
    hits = similar(table, text=text or None, row=row or None, k=k)
    texts = row_texts(table, [h.id for h in hits], HOVER_CHARS)
    return [{**h.to_dict(), "text": texts.get(h.id, "")} for h in hits]

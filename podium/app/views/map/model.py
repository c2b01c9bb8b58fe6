"""What the Map page shows, without Streamlit: every row of a table as a point (its
projection signal), colored by topic (its topics signal) or category, with its id,
topic title and the start of its text for hover; the points selected on the map as a
Browse link that filters to them.

The chart is plotly's scattergl (WebGL) with lasso, box and click selection; hover text
is escaped, so a row's text never becomes markup.
"""

from __future__ import annotations

import colorsys
import html
import json
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pyarrow as pa

from podium.app.pages import url
from podium.errors import InvalidInput
from podium.signals.store import signal_status, signal_table_name
from podium.signals.topics import PROP_TOPICS, Topics
from podium.signals.turns import columns_of, turns_of
from podium.store.catalog.catalog import full_name, list_tables, load_or_none, load_table
from podium.store.read.read import iter_table_batches
from podium.store.read.scan import literal
from podium.store.read.snapshots import resolve_snapshot

LAYER = "points"
MAX_POINTS = 200_000  # drawn; a bigger table shows an even sample of its rows
MAX_LINKED = 500  # ids a Browse link filters to (the URL holds them)
HOVER_CHARS = 160
COLOR_BY = ("topic", "category")
GENERATE_SHOWN = ("model", "out", "max_tokens", "temperature", "n")  # the rest folded away


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
    points: pd.DataFrame  # id, x, y, cluster, category, title, text, color (and table)
    titles: dict[int, str]
    total: int  # rows with a point (before sampling)
    tables: tuple[str, ...] = ()  # several tables on one map, colored by table


def palette(n: int) -> list[list[int]]:
    """`n` distinct colors (hues evenly spaced), as RGB."""
    out = []
    for i in range(max(n, 1)):
        r, g, b = colorsys.hsv_to_rgb((i * 0.618033988749895) % 1, 0.65, 0.9)
        out.append([int(r * 255), int(g * 255), int(b * 255)])
    return out


def load_map(table: str, color_by: str = "topic", max_points: int = MAX_POINTS) -> MapData:
    """The table's points, joined with its topics (when current) and hover text."""
    from podium.signals.projection import Projection

    if color_by not in COLOR_BY:
        raise InvalidInput(f"Color by {color_by!r}: choose one of {', '.join(COLOR_BY)}.")
    points = _current(table, "projection", Projection.version)
    if points is None:
        raise InvalidInput(
            f"{full_name(table)} has no current projection; run "
            f"`podium signals run {full_name(table)} --signal embedding,topics,projection`."
        )
    frame = points.to_pandas()
    total = len(frame)
    if total > max_points:
        frame = frame.iloc[:: -(-total // max_points)].reset_index(drop=True)
    topics = _current(table, "topics", Topics.version)
    titles: dict[int, str] = {}
    if topics is not None:
        frame = frame.merge(
            topics.select(["id", "cluster", "category"]).to_pandas(), on="id", how="left"
        )
        stored = load_table(signal_table_name(full_name(table), "topics"))

        for t in json.loads(stored.properties.get(PROP_TOPICS) or "[]"):
            titles[int(t["cluster"])] = str(t["title"])
    else:
        frame["cluster"] = 0
        frame["category"] = 0
    frame["cluster"] = frame["cluster"].fillna(-1).astype(int)
    frame["category"] = frame["category"].fillna(-1).astype(int)
    frame["title"] = [titles.get(c, "") for c in frame["cluster"]]
    frame["text"] = _hover_texts(table, set(frame["id"]), frame["id"])
    key = "cluster" if color_by == "topic" else "category"
    colors = palette(int(frame[key].max()) + 1 if len(frame) else 1)
    frame["color"] = [colors[v] if v >= 0 else [160, 160, 160] for v in frame[key]]
    return MapData(full_name(table), frame, titles, total)


def load_tables_map(tables: list[str], max_points: int = MAX_POINTS) -> MapData:
    """Several tables (an SFT table, generated samples, a vibe eval set) on one map: one
    projection of all their embeddings, a color per table, hover text from each."""
    from podium.signals.projection import joint_points

    names = list(dict.fromkeys(full_name(t) for t in tables))
    if len(names) < 2:
        raise InvalidInput("Choose two or more tables to draw on one map.")
    colors = palette(len(names))
    frames = []
    total = 0
    for n, found in enumerate(joint_points(names, max_points)):
        total += found.total
        ids = pd.Series(found.ids.to_pylist(), dtype=object)
        frame = pd.DataFrame(
            {"id": ids, "x": found.points[:, 0], "y": found.points[:, 1], "table": found.table}
        )
        frame["text"] = _hover_texts(found.table, set(ids), ids)
        frame["color"] = [colors[n]] * len(frame)
        frames.append(frame)
    points = pd.concat(frames, ignore_index=True)
    points["cluster"] = -1
    points["category"] = -1
    points["title"] = points["table"]
    return MapData(names[0], points, {}, total, tuple(names))


def _hover_texts(table: str, wanted: set[str], order: pd.Series) -> list[str]:
    loaded = load_table(full_name(table))
    columns = columns_of(loaded)
    texts: dict[str, str] = {}
    for batch in iter_table_batches(
        loaded, resolve_snapshot(loaded, None), columns=[columns.id, columns.messages]
    ):
        turns = turns_of(batch, columns)
        for row_id, text in zip(turns.ids, turns.row_texts(" | "), strict=True):
            if row_id in wanted:
                texts[row_id] = text[:HOVER_CHARS]
    return [texts.get(i, "") for i in order]


def figure(data: MapData) -> Any:
    """The WebGL scatter (plotly's scattergl) of `data`'s points, lasso first: hover
    shows id, topic and text (as text, never markup); each point carries its row id.
    Several tables: a trace (and legend entry) per table, each point carrying [id, table]."""
    import plotly.graph_objects as go  # type: ignore[import-untyped]  # no type hints

    frame = data.points
    if data.tables:
        traces = [
            _scatter(
                part,
                [
                    f"{t} · {i}\n{x}"
                    for i, t, x in zip(part["id"], part["table"], part["text"], strict=True)
                ],
                [[i, t] for i, t in zip(part["id"], part["table"], strict=True)],
                t,
            )
            for t in data.tables
            for part in [frame[frame["table"] == t]]
        ]
    else:
        hover = [
            f"{i} · topic {c}: {t}\n{x}"
            for i, c, t, x in zip(
                frame["id"], frame["cluster"], frame["title"], frame["text"], strict=True
            )
        ]
        traces = [_scatter(frame, hover, list(frame["id"]), LAYER)]
    layout = go.Layout(
        dragmode="lasso",
        height=560,
        margin={"l": 0, "r": 0, "t": 0, "b": 0},
        showlegend=bool(data.tables),
        legend={"orientation": "h"},
        xaxis={"visible": False},
        yaxis={"visible": False, "scaleanchor": "x"},
    )
    return go.Figure(data=traces, layout=layout)


def _scatter(frame: pd.DataFrame, hover: list[str], custom: list[Any], name: str) -> Any:
    import plotly.graph_objects as go

    return go.Scattergl(
        x=frame["x"],
        y=frame["y"],
        mode="markers",
        marker={"color": [f"rgb({r},{g},{b})" for r, g, b in frame["color"]], "size": 6},
        customdata=custom,
        hovertext=[escape_hover(h) for h in hover],
        hoverinfo="text",
        name=name,
    )


def escape_hover(text: str) -> str:
    """Plotly's hover text is HTML-like markup: row text shows as text (`<`, `>`, `&`
    escaped) with its line breaks as plotly's `<br>`."""
    return html.escape(text, quote=False).replace("\n", "<br>")


def selected_ids(selection: Any) -> list[str]:
    """The row ids of the points a plotly chart's selection event holds (click, box or
    lasso), in the order selected."""
    points = ((selection or {}).get("selection") or {}).get("points") or []
    ids = [p.get("customdata") for p in points if isinstance(p, dict)]
    return list(dict.fromkeys(str(i[0] if isinstance(i, list) else i) for i in ids if i))


def selected_by_table(selection: Any, table: str) -> dict[str, list[str]]:
    """The selected row ids per table: a point of a several-table map carries [id,
    table]; a one-table map's points are all `table`'s."""
    points = ((selection or {}).get("selection") or {}).get("points") or []
    out: dict[str, list[str]] = {}
    for p in points:
        custom = p.get("customdata") if isinstance(p, dict) else None
        if isinstance(custom, list) and len(custom) > 1:
            row, where = custom[0], custom[1]
        elif custom:
            row, where = custom[0] if isinstance(custom, list) else custom, table
        else:
            continue
        ids = out.setdefault(str(where), [])
        if str(row) not in ids:
            ids.append(str(row))
    return out


def browse_filter(ids: list[str]) -> str:
    """A Browse filter (its `where`) matching exactly these rows; ids are quoted as SQL
    string literals (and Browse parses the filter again before it runs)."""
    if not ids:
        raise InvalidInput("Select some points first.")
    if len(ids) > MAX_LINKED:
        raise InvalidInput(
            f"{len(ids)} points selected; Browse takes at most {MAX_LINKED} by id. "
            "Select fewer, or filter Browse by the topic instead."
        )
    return "id IN (" + ", ".join(literal(i) for i in dict.fromkeys(ids)) + ")"


def browse_query(table: str, ids: list[str]) -> dict[str, str]:
    """The query string of the Browse page showing exactly these rows of `table`."""
    return {"table": full_name(table), "where": browse_filter(ids)}


def browse_link(table: str, ids: list[str]) -> str:
    return url("browse", **browse_query(table, ids))


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


def cluster_ids(data: MapData, cluster: int) -> list[str]:
    return [str(i) for i in data.points.loc[data.points["cluster"] == cluster, "id"]]


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

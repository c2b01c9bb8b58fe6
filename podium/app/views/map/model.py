"""What the Map page shows, without Streamlit: every row of a table as a point (its
projection signal), a trace per topic (its topics signal) or category, or per table on
a map of several; the points selected on the map as a Browse link that filters to them,
and the rows of clicked points.

The chart is plotly's scattergl (WebGL) with lasso, box and click selection. It is
built to draw a million points: each trace's x and y are float32 arrays (plotly sends
numpy arrays to the browser as base64 typed arrays), its color is one value, and no
point carries a string: hover shows the trace's name (the topic's title, escaped, so a
row's text or a model's title never becomes markup), a selection comes back as (trace,
index) and the ids are looked up here. The figure is built once per snapshot of the
tables and signals it draws and shared by every session.
"""

from __future__ import annotations

import colorsys
import html
import json
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from podium.app.pages import url
from podium.errors import InvalidInput
from podium.signals.store import signal_status, signal_table_name
from podium.signals.topics import PROP_TOPICS, Topics
from podium.store.catalog.catalog import full_name, list_tables, load_or_none, load_table
from podium.store.read.read import iter_table_batches
from podium.store.read.scan import literal
from podium.store.read.snapshots import resolve_snapshot

LAYER = "points"
MAX_POINTS = 2_000_000  # drawn; a bigger table shows an even sample of its rows
MAX_LINKED = 500  # ids a Browse link filters to (the URL holds them)
HOVER_CHARS = 160
COLOR_BY = ("topic", "category")
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


@dataclass
class Trace:
    """One trace of the map: its points' rows (in drawn order) and what it is named."""

    name: str
    table: str
    ids: npt.NDArray[np.object_]
    x: npt.NDArray[np.float32]
    y: npt.NDArray[np.float32]


@dataclass
class Drawn:
    """A map as drawn: its data, its traces and the figure (built once)."""

    data: MapData
    traces: list[Trace]
    figure: Any


def palette(n: int) -> list[list[int]]:
    """`n` distinct colors (hues evenly spaced), as RGB."""
    out = []
    for i in range(max(n, 1)):
        r, g, b = colorsys.hsv_to_rgb((i * 0.618033988749895) % 1, 0.65, 0.9)
        out.append([int(r * 255), int(g * 255), int(b * 255)])
    return out


def load_map(table: str, max_points: int = MAX_POINTS) -> MapData:
    """The table's points, joined with its topics (when current)."""
    from podium.signals.projection import Projection

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
    frame["cluster"] = frame["cluster"].fillna(-1).astype(np.int32)
    frame["category"] = frame["category"].fillna(-1).astype(np.int32)
    frame["title"] = frame["cluster"].map(titles).astype(object).fillna("")
    return MapData(full_name(table), frame, titles, total)


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


def traces(data: MapData, color_by: str = "topic") -> list[Trace]:
    """The map's traces: one per table on a map of several, else one per topic (or
    category), named by its title; rows with no topic last."""
    if color_by not in COLOR_BY:
        raise InvalidInput(f"Color by {color_by!r}: choose one of {', '.join(COLOR_BY)}.")
    frame = data.points
    if data.tables:
        key, names = frame["table"].to_numpy(), {t: t for t in data.tables}
        order: list[Any] = list(data.tables)
    else:
        column = "cluster" if color_by == "topic" else "category"
        key = frame[column].to_numpy()
        order = sorted(set(key.tolist()), key=lambda v: (v < 0, v))
        names = {v: _trace_name(color_by, int(v), data.titles) for v in order}
    ids = frame["id"].to_numpy(dtype=object)
    x = frame["x"].to_numpy(dtype=np.float32)
    y = frame["y"].to_numpy(dtype=np.float32)
    out = []
    for value in order:
        at = np.flatnonzero(key == value)
        table = str(value) if data.tables else data.table
        out.append(Trace(names[value], table, ids[at], x[at], y[at]))
    return out


def _trace_name(color_by: str, value: int, titles: dict[int, str]) -> str:
    if value < 0:
        return "no topic"
    if color_by == "category":
        return f"category {value}"
    title = titles.get(value, "")
    return f"{value}: {title}" if title else f"topic {value}"


def figure(data: MapData, color_by: str = "topic") -> Drawn:
    """The WebGL scatter (plotly's scattergl) of `data`'s points, lasso first: a trace
    per topic, category or table, each one color with its name (escaped) in the legend
    and in hover; x and y as float32 arrays and nothing per point beyond them."""
    import plotly.graph_objects as go  # type: ignore[import-untyped]  # no type hints

    drawn = traces(data, color_by)
    colors = palette(len(drawn))
    size = 6 if len(data.points) <= 100_000 else 3
    scatter = [
        go.Scattergl(
            x=t.x,
            y=t.y,
            mode="markers",
            marker={"color": "rgb({},{},{})".format(*colors[n]), "size": size},
            name=escape_hover(t.name),
            hovertemplate="%{fullData.name}<extra></extra>",
        )
        for n, t in enumerate(drawn)
    ]
    layout = go.Layout(
        dragmode="lasso",
        height=560,
        margin={"l": 0, "r": 0, "t": 0, "b": 0},
        showlegend=True,
        legend={"orientation": "h", "itemsizing": "constant"},
        xaxis={"visible": False},
        yaxis={"visible": False, "scaleanchor": "x"},
    )
    return Drawn(data, drawn, go.Figure(data=scatter, layout=layout))


def escape_hover(text: str) -> str:
    """Plotly's hover text is HTML-like markup: row text shows as text (`<`, `>`, `&`
    escaped) with its line breaks as plotly's `<br>`."""
    return html.escape(text, quote=False).replace("\n", "<br>")


_drawn: dict[tuple[Any, ...], Drawn] = {}
_drawn_lock = threading.Lock()
KEPT_MAPS = 4


def drawn_map(table: str, color_by: str = "topic", others: list[str] | None = None) -> Drawn:
    """The map of `table` (with `others` on it), built once per version of the tables and
    signal tables it draws (a commit to any of them names a new metadata file) and shared
    by every session: a million points are not read and encoded again on each rerun."""
    names = [full_name(t) for t in [table, *(others or [])]]
    signals = ("embedding",) if others else ("projection", "topics")
    key = (
        tuple(names),
        color_by,
        MAX_POINTS,
        tuple(_version(n) for n in names),
        tuple(_version(signal_table_name(n, s)) for n in names for s in signals),
    )
    with _drawn_lock:
        found = _drawn.get(key)
        if found is None:
            data = load_tables_map(names, MAX_POINTS) if others else load_map(table, MAX_POINTS)
            found = figure(data, color_by)
            _drawn[key] = found
            while len(_drawn) > KEPT_MAPS:
                _drawn.pop(next(iter(_drawn)))
        return found


def _version(name: str) -> str:
    loaded = load_or_none(name)
    return loaded.metadata_location if loaded is not None else ""


def _points(selection: Any) -> list[dict[str, Any]]:
    points = ((selection or {}).get("selection") or {}).get("points") or []
    return [p for p in points if isinstance(p, dict)]


def selected_points(selection: Any, drawn: Drawn) -> dict[tuple[str, str], Trace]:
    """The selected (table, row id)s, in the order selected, each with its trace: each
    point of a plotly selection event names its trace (`curve_number`) and its index in
    it; a point naming neither is skipped."""
    out: dict[tuple[str, str], Trace] = {}
    for p in _points(selection):
        curve, index = p.get("curve_number"), p.get("point_index")
        if not isinstance(curve, int) or not isinstance(index, int):
            continue
        if not 0 <= curve < len(drawn.traces) or not 0 <= index < len(drawn.traces[curve].ids):
            continue
        trace = drawn.traces[curve]
        out.setdefault((trace.table, str(trace.ids[index])), trace)
    return out


def selected_by_table(selection: Any, drawn: Drawn) -> dict[str, list[str]]:
    """The selected row ids per table, in the order selected."""
    out: dict[str, list[str]] = {}
    for table, row in selected_points(selection, drawn):
        out.setdefault(table, []).append(row)
    return out


def selected_rows(selection: Any, drawn: Drawn, most: int = 5) -> list[dict[str, Any]]:
    """The rows of the first `most` selected points (a click selects one): table, id,
    the trace's name (its topic) and the start of the row's text, read by id."""
    from podium.signals.similar import row_texts

    chosen = list(selected_points(selection, drawn).items())[:most]
    texts: dict[str, dict[str, str]] = {}
    for table in dict.fromkeys(t for (t, _), _ in chosen):
        texts[table] = row_texts(table, [i for (t, i), _ in chosen if t == table], HOVER_CHARS)
    return [
        {"table": t, "id": i, "topic": trace.name, "text": texts[t].get(i, "")}
        for (t, i), trace in chosen
    ]


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

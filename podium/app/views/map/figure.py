"""The Map page's chart, without Streamlit: plotly's scattergl (WebGL) with lasso, box
and click selection, a trace per topic (or category, or table on a map of several).

Up to RASTER_ABOVE points, every point is a marker: each trace's x and y are float32
arrays (plotly sends numpy arrays as base64 typed arrays), its color is one value, and no
point carries a string: hover shows the trace's name (the topic's title, escaped, so a
row's text or a model's title never becomes markup). Above it, every point is drawn on
the server into one image under the axes (`raster`), and only a seeded sample of them
are markers, for hover and click; a lasso or box then selects by its shape over every
point (`selection`): the page shows that image in the canvas component (`canvas`), so no
plotly figure is built for it. A map is built once per version of the tables and signals
it draws and shared by every session.
"""

from __future__ import annotations

import colorsys
import html
import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from podium.app.views.map import model as map_model
from podium.app.views.map import raster as map_raster
from podium.app.views.map.model import MapData
from podium.errors import InvalidInput
from podium.signals.store import signal_table_name
from podium.store.catalog.catalog import full_name, load_or_none

COLOR_BY = ("topic", "category")
DRAW = ("auto", "points", "image")  # auto: an image above RASTER_ABOVE points
RASTER_ABOVE = 100_000
SAMPLE_POINTS = 10_000  # markers over the image (hover and click), seeded
SAMPLE_LEAST = 50  # markers per trace at least (a small topic still has hover)
PLACEHOLDER_TEXT = "Drawing the map…"
HEIGHT = 560  # the chart's, and its placeholder's (the page does not jump between them)


@dataclass
class Trace:
    """One trace of the map: its points' rows (in drawn order) and what it is named."""

    name: str
    table: str
    ids: npt.NDArray[np.object_]
    x: npt.NDArray[np.float32]
    y: npt.NDArray[np.float32]


@dataclass
class AllPoints:
    """Every point of a map in one set of arrays, y-sorted (what a shape selects from)."""

    x: npt.NDArray[np.float64]
    y: npt.NDArray[np.float64]
    ids: npt.NDArray[np.object_]
    table: npt.NDArray[np.int32]  # each point's table, as its place in `tables`
    tables: list[str]


@dataclass
class Drawn:
    """A map as drawn: its data, the traces with markers (a sample of `everything`'s
    points when an image draws them all), and either its plotly figure (built once) or
    its image (the canvas draws it; no figure)."""

    data: MapData
    traces: list[Trace]
    figure: Any = None
    everything: list[Trace] = field(default_factory=list)
    raster: map_raster.Raster | None = None

    @cached_property
    def all_points(self) -> AllPoints:
        traces = self.everything or self.traces
        y = np.concatenate([t.y for t in traces]).astype(np.float64)
        order = np.argsort(y, kind="stable")
        x = np.concatenate([t.x for t in traces]).astype(np.float64)
        ids = np.concatenate([t.ids for t in traces])
        tables = list(dict.fromkeys(t.table for t in traces))
        table = np.concatenate(
            [np.full(len(t.ids), tables.index(t.table), np.int32) for t in traces]
        )
        return AllPoints(x[order], y[order], ids[order], table[order], tables)


def palette(n: int) -> list[list[int]]:
    """`n` distinct colors (hues evenly spaced), as RGB."""
    out = []
    for i in range(max(n, 1)):
        r, g, b = colorsys.hsv_to_rgb((i * 0.618033988749895) % 1, 0.65, 0.9)
        out.append([int(r * 255), int(g * 255), int(b * 255)])
    return out


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


def sampled(drawn: list[Trace], most: int | None = None, seed: int = 0) -> list[Trace]:
    """About `most` (SAMPLE_POINTS) of the traces' points, evenly across them (each
    keeps at least SAMPLE_LEAST, or all it has), in drawn order; the same on every build."""
    most = SAMPLE_POINTS if most is None else most
    total = sum(len(t.ids) for t in drawn)
    if total <= most:
        return drawn
    rng = np.random.default_rng(seed)
    out = []
    for t in drawn:
        take = min(len(t.ids), max(SAMPLE_LEAST, round(len(t.ids) * most / total)))
        at = np.sort(rng.choice(len(t.ids), take, replace=False))
        out.append(Trace(t.name, t.table, t.ids[at], t.x[at], t.y[at]))
    return out


def as_image(data: MapData, draw: str) -> bool:
    if draw not in DRAW:
        raise InvalidInput(f"Draw {draw!r}: choose one of {', '.join(DRAW)}.")
    return draw == "image" or (draw == "auto" and len(data.points) > RASTER_ABOVE)


def figure(data: MapData, color_by: str = "topic", draw: str = "auto") -> Drawn:
    """`data`'s map: a trace per topic, category or table. Drawn as an image with a
    sample of markers on it when `as_image` (the canvas component shows it: a plotly
    figure of it would be built for nothing: 0.2-0.3 s of a 1M map's cold draw, plotly's
    import included), else as a plotly figure (`plotly_figure`) of every point."""
    everything = traces(data, color_by)
    if not as_image(data, draw):
        drawn = Drawn(data, everything, everything=everything)
        drawn.figure = plotly_figure(drawn)
        return drawn
    drawn = Drawn(data, sampled(everything), everything=everything)
    drawn.raster = _image(everything, palette(len(everything)))
    return drawn


def plotly_figure(drawn: Drawn) -> Any:
    """The WebGL scatter (plotly's scattergl) of `drawn`'s markers, lasso first, each
    trace one color with its name (escaped) in the legend and in hover; x and y as
    float32 arrays and nothing per point beyond them. A map drawn as an image gets it
    under the axes (the Map page shows such a map in the canvas; benchmarks compare)."""
    import plotly.graph_objects as go  # type: ignore[import-untyped]  # no type hints

    colors = palette(len(drawn.everything or drawn.traces))
    size = 6 if len(drawn.data.points) <= 100_000 or drawn.raster is not None else 3
    scatter = [
        go.Scattergl(
            x=t.x,
            y=t.y,
            mode="markers",
            marker={"color": "rgb({},{},{})".format(*colors[n]), "size": size},
            name=escape_hover(t.name),
            hovertemplate="%{fullData.name}<extra></extra>",
        )
        for n, t in enumerate(drawn.traces)
    ]
    layout = go.Layout(
        dragmode="lasso",
        height=HEIGHT,
        margin={"l": 0, "r": 0, "t": 0, "b": 0},
        showlegend=True,
        legend={"orientation": "h", "itemsizing": "constant"},
        xaxis={"visible": False},
        yaxis={"visible": False, "scaleanchor": "x"},
    )
    fig = go.Figure(data=scatter, layout=layout)
    if drawn.raster is not None:
        _place(fig, drawn.raster)
    return fig


def placeholder() -> Any:
    """An empty chart of the map's size saying the map is being drawn. The page shows it
    in the chart's slot before reading the points: Streamlit's browser code loads its
    plotly.js (a 4.7 MB script, fetched and compiled the first time a plotly chart is
    shown) while the server still reads and draws the points, instead of after."""
    import plotly.graph_objects as go

    return go.Figure(
        layout=go.Layout(
            height=HEIGHT,
            margin={"l": 0, "r": 0, "t": 0, "b": 0},
            xaxis={"visible": False},
            yaxis={"visible": False},
            annotations=[
                {
                    "text": PLACEHOLDER_TEXT,
                    "showarrow": False,
                    "xref": "paper",
                    "yref": "paper",
                    "x": 0.5,
                    "y": 0.5,
                    "font": {"size": 16},
                }
            ],
        )
    )


def _image(everything: list[Trace], colors: list[list[int]]) -> map_raster.Raster:
    x = np.concatenate([t.x for t in everything])
    y = np.concatenate([t.y for t in everything])
    rgb = np.asarray(colors, np.uint8)
    per_point = np.repeat(rgb[: len(everything)], [len(t.ids) for t in everything], axis=0)
    return map_raster.draw(x, y, per_point)


def _place(fig: Any, drawn: map_raster.Raster) -> None:
    """The image under the axes, covering its extent (the axes span it too)."""
    box = drawn.extent
    fig.add_layout_image(
        source=drawn.uri,
        xref="x",
        yref="y",
        x=box.x0,
        y=box.y1,
        sizex=box.x1 - box.x0,
        sizey=box.y1 - box.y0,
        xanchor="left",
        yanchor="top",
        sizing="stretch",
        layer="below",
    )
    fig.update_xaxes(range=[box.x0, box.x1])
    fig.update_yaxes(range=[box.y0, box.y1])


def escape_hover(text: str) -> str:
    """Plotly's hover text is HTML-like markup: row text shows as text (`<`, `>`, `&`
    escaped) with its line breaks as plotly's `<br>`."""
    return html.escape(text, quote=False).replace("\n", "<br>")


_drawn: dict[tuple[Any, ...], Drawn] = {}
_drawn_lock = threading.Lock()
KEPT_MAPS = 4


def drawn_map(
    table: str, color_by: str = "topic", others: list[str] | None = None, draw: str = "auto"
) -> Drawn:
    """The map of `table` (with `others` on it), built once per version of the tables and
    signal tables it draws (a commit to any of them names a new metadata file) and shared
    by every session: a million points are not read and encoded again on each rerun."""
    names = [full_name(t) for t in [table, *(others or [])]]
    key = _key(table, color_by, others, draw)
    with _drawn_lock:
        found = _drawn.get(key)
        if found is None:
            most = map_model.MAX_POINTS
            data = (
                map_model.load_tables_map(names, most)
                if others
                else map_model.load_map(table, most)
            )
            found = figure(data, color_by, draw)
            _drawn[key] = found
            while len(_drawn) > KEPT_MAPS:
                _drawn.pop(next(iter(_drawn)))
        return found


def is_drawn(
    table: str, color_by: str = "topic", others: list[str] | None = None, draw: str = "auto"
) -> bool:
    """Whether `drawn_map` has this map built for the tables' current versions (it then
    returns at once, without reading the points). Read without the lock: a map another
    session is building still counts as not built."""
    return _key(table, color_by, others, draw) in _drawn


def expects_image(table: str, others: list[str] | None = None, draw: str = "auto") -> bool:
    """Whether the map will be drawn as an image, known before its points are read: its
    projection signal's row count (from the snapshot summary) against RASTER_ABOVE. The
    page then loads no plotly.js for it."""
    from podium.store.read.snapshots import live_rows

    if draw != "auto":
        return draw == "image"
    rows = 0
    for name in [table, *(others or [])]:
        loaded = load_or_none(signal_table_name(full_name(name), "projection"))
        snap = loaded.current_snapshot() if loaded is not None else None
        rows += live_rows(snap.summary.additional_properties) if snap and snap.summary else 0
    return rows > RASTER_ABOVE


def _key(table: str, color_by: str, others: list[str] | None, draw: str) -> tuple[Any, ...]:
    names = [full_name(t) for t in [table, *(others or [])]]
    signals = ("embedding",) if others else ("projection", "topics")
    return (
        tuple(names),
        color_by,
        draw,
        map_model.MAX_POINTS,
        RASTER_ABOVE,
        tuple(_version(n) for n in names),
        tuple(_version(signal_table_name(n, s)) for n in names for s in signals),
    )


def _version(name: str) -> str:
    loaded = load_or_none(name)
    return loaded.metadata_location if loaded is not None else ""

"""What a selection on the Map selects, without Streamlit, and the Browse view of it.

Streamlit hands back plotly's selection event: the points the browser found (each its
trace, `curve_number`, and its index in it) and the shapes drawn, a lasso's vertices and
a box's corners, in data coordinates. When every point is a marker, the points are the
selection. When the map is an image (`figure.RASTER_ABOVE`), only a sample are markers,
so a lasso or box selects by its shape: every point inside it (even-odd rule, over all
points, in float64), here on the server; a click still selects its marker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from podium.app.pages import url
from podium.app.views.map.figure import AllPoints, Drawn, Trace
from podium.app.views.map.model import HOVER_CHARS
from podium.errors import InvalidInput
from podium.store.catalog.catalog import full_name
from podium.store.read.connections import literal

MAX_LINKED = 500  # ids a Browse link filters to (the URL holds them); more go by the session


@dataclass(frozen=True)
class Shape:
    """A lasso (a closed polygon) or a box, in data coordinates."""

    x: tuple[float, ...]
    y: tuple[float, ...]
    box: bool


def _selection(selection: Any) -> dict[str, Any]:
    found = (selection or {}).get("selection") or {}
    return found if isinstance(found, dict) else {}


def _points(selection: Any) -> list[dict[str, Any]]:
    return [p for p in _selection(selection).get("points") or [] if isinstance(p, dict)]


def shapes(selection: Any) -> list[Shape]:
    """The lassos and boxes of a selection event; one without finite coordinates (a
    lasso of fewer than 3 vertices, a box without 2 corners) is skipped."""
    out = []
    for kind, least in (("box", 2), ("lasso", 3)):
        for shape in _selection(selection).get(kind) or []:
            if not isinstance(shape, dict):
                continue
            try:
                x = tuple(float(v) for v in shape.get("x") or [])
                y = tuple(float(v) for v in shape.get("y") or [])
            except (TypeError, ValueError):
                continue
            if len(x) == len(y) >= least and np.isfinite(x + y).all():
                out.append(Shape(x, y, kind == "box"))
    return out


def inside(shape: Shape, points: AllPoints) -> npt.NDArray[np.bool_]:
    """Which points (y-sorted) lie inside `shape`: a box by its ranges (edges included),
    a lasso by the even-odd rule. Each edge only tests the points within its own band
    of y (a slice of the y-sorted points), so a lasso over a million points is a few
    passes over them, not one per edge."""
    if shape.box:
        x0, x1 = sorted(shape.x[:2])
        y0, y1 = sorted(shape.y[:2])
        lo = int(np.searchsorted(points.y, y0, side="left"))
        hi = int(np.searchsorted(points.y, y1, side="right"))
        out = np.zeros(len(points.y), np.bool_)
        out[lo:hi] = (points.x[lo:hi] >= x0) & (points.x[lo:hi] <= x1)
        return out
    odd = np.zeros(len(points.y), np.bool_)
    xs, ys = np.asarray(shape.x), np.asarray(shape.y)
    for x1, y1, x2, y2 in zip(xs, ys, np.roll(xs, -1), np.roll(ys, -1), strict=True):
        if y1 == y2:
            continue  # a level edge is never crossed by a level ray
        # the points with min(y1, y2) <= y < max(y1, y2): a ray to +x from each may cross
        lo, hi = np.searchsorted(points.y, sorted((y1, y2)), side="left")
        py = points.y[lo:hi]
        crossing = points.x[lo:hi] < x1 + (py - y1) * (x2 - x1) / (y2 - y1)
        odd[lo:hi] ^= crossing
    return odd


def shape_ids(selection: Any, drawn: Drawn) -> dict[str, list[str]] | None:
    """The ids inside the selection's shapes, per table, or None when it has no shape
    or every point is a marker (the browser's points are then the selection)."""
    found = shapes(selection)
    if drawn.raster is None or not found:
        return None
    points = drawn.all_points
    chosen = np.zeros(len(points.y), np.bool_)
    for shape in found:
        chosen |= inside(shape, points)
    out: dict[str, list[str]] = {}
    table, ids = points.table[chosen], points.ids[chosen]
    for n, name in enumerate(points.tables):
        if (table == n).any():
            out[name] = ids[table == n].tolist()  # the ids are str already
    return out


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
    """The selected row ids per table: inside the shapes drawn on an image, else the
    selected points in the order selected."""
    by_shape = shape_ids(selection, drawn)
    if by_shape is not None:
        return by_shape
    out: dict[str, list[str]] = {}
    for table, row in selected_points(selection, drawn):
        out.setdefault(table, []).append(row)
    return out


def selected_rows(selection: Any, drawn: Drawn, most: int = 5) -> list[dict[str, Any]]:
    """The rows of the first `most` selected markers (a click selects one): table, id,
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

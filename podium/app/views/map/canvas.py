"""The Map's image mode drawn by a small Streamlit component instead of plotly: the
server's PNG of every point on a canvas with axes, the sampled markers (hover: the
topic; click: the row) and a lasso and a box tool (`canvas_js`). Plotly.js alone took
2.1-2.7 s to show a bare chart in this machine's Chromium, more than the 3 s goal
leaves once Streamlit's own page has loaded; this draw is one image and a few thousand
circles. Maps drawn point by point (below `figure.RASTER_ABOVE`) stay plotly charts.

The component's value is plotly's selection event shape, so `selection` selects from
either chart the same way.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from podium.app.views.map.canvas_js import JS
from podium.app.views.map.figure import HEIGHT, Drawn, palette

COMPONENT = "podium_map_canvas"
DIGITS = 5  # decimals of a marker's data coordinates sent (hover and click only)


def canvas_data(drawn: Drawn) -> dict[str, Any]:
    """What the component draws: the image and its extent, and the sampled markers per
    trace (coordinates, the trace's color and its name, shown as text)."""
    if drawn.raster is None:
        raise ValueError("canvas_data draws a map drawn as an image (drawn.raster)")
    colors = palette(len(drawn.everything or drawn.traces))
    box = drawn.raster.extent
    return {
        "image": drawn.raster.uri,
        "extent": [box.x0, box.x1, box.y0, box.y1],
        "height": HEIGHT,
        "marker_size": 5,
        "traces": [
            {
                "name": t.name,
                "color": "rgb({},{},{})".format(*colors[n]),
                "x": np.round(t.x.astype(np.float64), DIGITS).tolist(),
                "y": np.round(t.y.astype(np.float64), DIGITS).tolist(),
            }
            for n, t in enumerate(drawn.traces)
        ],
    }


def as_event(value: Any) -> dict[str, Any]:
    """The component's value (its `selection` state: points, a lasso or a box) as
    plotly's selection event, which `selection` reads; anything else selects nothing."""
    chosen = value.get("selection") if hasattr(value, "get") else None
    if not isinstance(chosen, dict):
        return {"selection": {}}
    return {"selection": {k: v for k, v in chosen.items() if k in ("points", "lasso", "box")}}


def _component() -> Any:
    import streamlit as st

    return st.components.v2.component(COMPONENT, js=JS, isolate_styles=False)


# Every session's script runs in its own thread and draws through these: one lock, as
# checking then evicting the oldest kept map from two threads at once raised KeyError
# (both popped it) or RuntimeError (the dict changed under `iter`).
_lock = threading.Lock()
_mount: Any = None
_sent: dict[int, tuple[Drawn, dict[str, Any]]] = {}  # a drawn map's data, built once
KEPT = 4


def sent_data(drawn: Drawn) -> dict[str, Any]:
    """`canvas_data(drawn)`, built once per drawn map (maps are shared by every session)
    and kept for the last KEPT maps."""
    with _lock:
        found = _sent.get(id(drawn))
        if found is None or found[0] is not drawn:
            found = (drawn, canvas_data(drawn))
            _sent[id(drawn)] = found
            while len(_sent) > KEPT:
                _sent.pop(next(iter(_sent)))
        return found[1]


def _mounted() -> Any:
    global _mount
    with _lock:
        if _mount is None:  # registered once per process: a second registration warns
            _mount = _component()
        return _mount


def show(drawn: Drawn, key: str) -> dict[str, Any]:
    """Mount the canvas for `drawn` in the page; its selection as plotly's event."""
    value = _mounted()(key=key, data=sent_data(drawn), on_selection_change=lambda: None)
    return as_event(value)

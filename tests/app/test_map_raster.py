"""A big map drawn as one image (every point counted into its pixel, colored by its
topic) and a lasso or box on it selecting exactly the points inside, over all points:
checked against a per-point count and a plain even-odd test written out here."""

from __future__ import annotations

import base64
import io

import numpy as np
import pandas as pd
import pytest
from even_odd import even_odd

from podium.app.views.map import figure as map_figure
from podium.app.views.map import raster as map_raster
from podium.app.views.map import selection as map_selection
from podium.app.views.map.model import MapData


def blobs(n: int, seed: int = 0) -> MapData:
    """`n` points in 3 topics, each topic a blob of its own."""
    rng = np.random.default_rng(seed)
    cluster = np.arange(n) % 3
    centers = np.array([[-10.0, 0.0], [10.0, 0.0], [0.0, 12.0]])
    xy = centers[cluster] + rng.normal(0, 2.0, (n, 2))
    frame = pd.DataFrame(
        {
            "id": [f"r{i:05d}" for i in range(n)],
            "x": xy[:, 0].astype(np.float32),
            "y": xy[:, 1].astype(np.float32),
            "cluster": cluster.astype(np.int32),
            "category": np.zeros(n, np.int32),
        }
    )
    return MapData("t.chat", frame, {0: "a", 1: "b", 2: "c"}, n)


def test_every_point_is_counted_into_its_pixel_with_its_topics_color() -> None:
    data = blobs(30_000)
    drawn = map_figure.figure(data, draw="image")
    assert drawn.raster is not None
    x, y = data.points["x"].to_numpy(), data.points["y"].to_numpy()
    extent = drawn.raster.extent
    shape = (drawn.raster.height, drawn.raster.width)
    pixels = map_raster.pixel_of(x, y, extent, shape)
    grid = map_raster.counts(pixels, shape)
    assert grid.sum() == len(x)  # every point, none twice
    # a few points by hand: the pixel the grid put them in holds them
    for i in (0, 1, 2, 17_001):
        col = int((x[i] - extent.x0) / (extent.x1 - extent.x0) * shape[1])
        row = int((extent.y1 - y[i]) / (extent.y1 - extent.y0) * shape[0])
        assert pixels[i] == row * shape[1] + col and grid[row, col] >= 1

    from PIL import Image

    png = base64.b64decode(drawn.raster.uri.removeprefix("data:image/png;base64,"))
    image = np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))
    assert image.shape == (shape[0], shape[1], 4)
    assert ((image[..., 3] > 0) == (grid > 0)).all()  # drawn exactly where points are
    assert image[..., 3][grid == 1].min() == round(255 * map_raster.FAINTEST)
    assert image[..., 3].max() == 255  # the densest pixel is opaque
    colors = map_figure.palette(3)
    topic = data.points["cluster"].to_numpy()
    for t in range(3):  # a pixel holding one topic's points only has that topic's color
        own = np.bincount(pixels[topic == t], minlength=grid.size).reshape(shape)
        alone = (own > 0) & (own == grid)
        assert alone.sum() > 100
        assert (image[..., :3][alone] == colors[t]).all()
    # a pixel shared by two topics is their mix, weighted by their counts
    rgb = np.asarray(colors, np.uint8)[[0, 1, 1]]
    mixed = map_raster.compose(np.array([0, 0, 0]), rgb, (1, 1))[0, 0]
    assert list(mixed[:3]) == [round((colors[0][c] + 2 * colors[1][c]) / 3) for c in range(3)]


def test_an_image_map_draws_a_sample_of_markers_and_a_lasso_selects_every_point_inside(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(map_figure, "SAMPLE_POINTS", 600)
    data = blobs(9_000)
    drawn = map_figure.figure(data)  # auto: 9,000 points are drawn as markers
    assert drawn.raster is None and not drawn.figure.layout.images
    monkeypatch.setattr(map_figure, "RASTER_ABOVE", 5_000)
    drawn = map_figure.figure(data)
    assert drawn.raster is not None
    assert drawn.figure is None  # the canvas shows an image map: no plotly figure built
    figure = map_figure.plotly_figure(drawn)  # as a plotly figure: the image under the axes
    [image] = figure.layout.images
    assert image.layer == "below" and image.xref == "x" and image.source == drawn.raster.uri
    assert image.sizex == pytest.approx(drawn.raster.extent.x1 - drawn.raster.extent.x0)
    markers = sum(len(t.ids) for t in drawn.traces)
    assert 550 <= markers <= 650 and len(figure.data) == 3
    assert sum(len(t.ids) for t in drawn.everything) == 9_000
    with pytest.raises(Exception, match="choose one of auto, points, image"):
        map_figure.figure(data, draw="pixels")

    # a concave lasso (a "U" around the left blob and over the top one) and a box
    xs = [-16.0, 4.0, 4.0, -4.0, -4.0, 4.0, 4.0, -16.0]
    ys = [-6.0, -6.0, -2.0, -2.0, 10.0, 10.0, 18.0, 18.0]
    event = {
        "selection": {
            "points": [{"curve_number": 0, "point_index": 0}],
            "lasso": [{"xref": "x", "yref": "y", "x": xs, "y": ys}],
            "box": [{"x": [12.0, 8.0], "y": [3.0, -1.0]}, {"x": [1], "y": ["a"]}],
        }
    }
    points = data.points
    expected = [
        i
        for i, px, py in zip(points["id"], points["x"], points["y"], strict=True)
        if even_odd(float(px), float(py), xs, ys) or (8 <= px <= 12 and -1 <= py <= 3)
    ]
    found = map_selection.selected_by_table(event, drawn)
    assert list(found) == ["t.chat"] and sorted(found["t.chat"]) == sorted(expected)
    assert 1_000 < len(expected) < 8_000  # the shapes cut through the blobs
    # a click on an image map selects its marker; shapes are ignored on a points map
    click = {"selection": {"points": [{"curve_number": 1, "point_index": 2}]}}
    assert map_selection.selected_by_table(click, drawn) == {
        "t.chat": [str(drawn.traces[1].ids[2])]
    }
    assert map_selection.shape_ids(event, map_figure.figure(blobs(50))) is None
    # shapes Streamlit could hand back broken are skipped, not guessed at
    assert map_selection.shapes({"selection": {"lasso": [{"x": [1, 2], "y": [1, 2]}]}}) == []
    assert map_selection.shapes({"selection": {"box": [{"x": [0, "nan"], "y": [0, 1]}]}}) == []


def test_a_box_on_an_image_of_several_tables_selects_each_tables_rows() -> None:
    data = blobs(3_000)
    frame = data.points.assign(table=np.where(np.arange(3_000) % 2, "t.gen", "t.chat"))
    several = MapData("t.chat", frame, {}, 3_000, ("t.chat", "t.gen"))
    drawn = map_figure.figure(several, draw="image")
    assert drawn.figure is None
    assert [t.name for t in drawn.traces] == ["t.chat", "t.gen"]
    box = {"selection": {"box": [{"x": [-20.0, 0.0], "y": [-10.0, 10.0]}]}}
    inside = frame[frame["x"].between(-20, 0) & frame["y"].between(-10, 10)]
    found = map_selection.selected_by_table(box, drawn)
    assert {t: sorted(ids) for t, ids in found.items()} == {
        t: sorted(rows["id"]) for t, rows in inside.groupby("table")
    }
    assert len(found) == 2 and min(len(ids) for ids in found.values()) > 100

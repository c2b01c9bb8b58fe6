"""The Map's image mode in the canvas component: what the page sends it (the image,
its extent, the sampled markers with their traces' names and colors) and its value
(the `selection` state it sets) turned into rows by the server, as plotly's event is."""

from __future__ import annotations

import json

import pytest
from even_odd import even_odd
from test_map_raster import blobs

from podium.app.views.map import canvas as map_canvas
from podium.app.views.map import figure as map_figure
from podium.app.views.map import selection as map_selection


def test_the_canvas_gets_the_image_and_markers_and_its_selection_selects_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(map_figure, "SAMPLE_POINTS", 300)
    data = blobs(4_000)
    drawn = map_figure.figure(data, draw="image")
    assert drawn.raster is not None
    sent = map_canvas.canvas_data(drawn)
    json.dumps(sent)  # the component takes JSON
    box = drawn.raster.extent
    assert sent["image"] == drawn.raster.uri and sent["extent"] == [box.x0, box.x1, box.y0, box.y1]
    assert [t["name"] for t in sent["traces"]] == ["0: a", "1: b", "2: c"]
    assert [len(t["x"]) for t in sent["traces"]] == [len(t.ids) for t in drawn.traces]
    assert sent["traces"][1]["x"][2] == pytest.approx(float(drawn.traces[1].x[2]), abs=1e-5)
    assert len({t["color"] for t in sent["traces"]}) == 3
    with pytest.raises(ValueError, match="drawn as an image"):
        map_canvas.canvas_data(map_figure.figure(blobs(50)))

    # a lasso drawn on the canvas (its vertices in data coordinates): every point inside
    xs = [-16.0, 4.0, 4.0, -4.0, -4.0, 4.0, 4.0, -16.0]
    ys = [-6.0, -6.0, -2.0, -2.0, 10.0, 10.0, 18.0, 18.0]
    value = {"selection": {"lasso": [{"x": xs, "y": ys}]}}
    found = map_selection.selected_by_table(map_canvas.as_event(value), drawn)
    points = data.points
    expected = [
        i
        for i, px, py in zip(points["id"], points["x"], points["y"], strict=True)
        if even_odd(float(px), float(py), xs, ys)
    ]
    assert 500 < len(expected) < 3_500 and sorted(found["t.chat"]) == sorted(expected)
    # a click on a marker: its row
    click = map_canvas.as_event({"selection": {"points": [{"curve_number": 2, "point_index": 5}]}})
    assert map_selection.selected_by_table(click, drawn) == {
        "t.chat": [str(drawn.traces[2].ids[5])]
    }
    # no selection yet (the component's first value), or something else: nothing selected
    for nothing in (None, {}, {"selection": None}, {"selection": "lasso"}, "x"):
        assert map_selection.selected_by_table(map_canvas.as_event(nothing), drawn) == {}
    unknown = map_canvas.as_event({"selection": {"polygon": [{"x": xs, "y": ys}]}})
    assert unknown == {"selection": {}}


def test_topics_join_the_points_by_id_in_any_order() -> None:
    import pyarrow as pa

    from podium.app.views.map.model import with_topics

    points = pa.table({"id": ["a", "b", "c", "d"], "x": [0.0, 1, 2, 3], "y": [3.0, 2, 1, 0]})
    same = pa.table({"id": ["a", "b", "c", "d"], "cluster": [1, 2, 3, 4], "category": [0, 0, 1, 1]})
    expected = {"a": (1, 0), "b": (2, 0), "c": (3, 1), "d": (4, 1)}

    def topics_of(frame: object) -> dict[str, tuple[int, int]]:
        return {
            r.id: (int(r.cluster), int(r.category))
            for r in frame.itertuples()  # type: ignore[attr-defined]
        }

    aligned = with_topics(points, same)
    assert list(aligned["id"]) == ["a", "b", "c", "d"] and topics_of(aligned) == expected
    shuffled = with_topics(points, same.take([2, 0, 3, 1]))  # another order: joined by id
    assert list(shuffled["id"]) == ["a", "b", "c", "d"] and topics_of(shuffled) == expected
    assert list(shuffled["x"]) == [0.0, 1.0, 2.0, 3.0]
    fewer = with_topics(points, same.take([3, 0]))  # rows without a topic get none
    assert fewer["cluster"].isna().tolist() == [False, True, True, False]
    assert list(with_topics(points, None).columns) == ["id", "x", "y"]


def test_sessions_drawing_maps_at_once_each_get_their_maps_data(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every session's script thread asks for a map's canvas data: eight threads over
    more maps than are kept, switching as often as Python allows, each get the data of
    the map they asked for and never an error (two threads evicting the same oldest map
    raised KeyError without the lock)."""
    import sys
    import threading

    monkeypatch.setattr(map_figure, "SAMPLE_POINTS", 60)
    maps = [map_figure.figure(blobs(300, seed=s), draw="image") for s in range(map_canvas.KEPT + 3)]
    monkeypatch.setattr(map_canvas, "_sent", {})
    errors: list[BaseException] = []
    wrong: list[int] = []
    start = threading.Barrier(8)

    def session(n: int) -> None:
        start.wait()
        try:
            for i in range(5_000):
                at = (i * (n + 1)) % len(maps)
                sent = map_canvas.sent_data(maps[at])
                if sent["image"] != maps[at].raster.uri:  # type: ignore[union-attr]
                    wrong.append(at)
        except BaseException as exc:  # noqa: BLE001 - collected for the assert below
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=session, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == [] and wrong == []
    assert len(map_canvas._sent) <= map_canvas.KEPT

"""The Map page (AppTest): the WebGL scatter is drawn lasso first, a table past the
point limit says it draws an even sample, a lasso's selection becomes the link that
opens Browse filtered to exactly those rows, and a topic opens Browse with its Signals
filter on that topic (Browse's own facet, also offered there)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from app_pages import open_page

from podium.app.views.map import figure as map_figure
from podium.app.views.map import model as map_model
from podium.app.views.map import selection as map_selection
from podium.errors import InvalidInput
from podium.signals.actions import remove_by_signal
from podium.signals.job import SignalsConfig, compute_signals
from podium.signals.values import ids_for
from podium.store.catalog.catalog import load_table
from podium.store.read.read import read_small

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "signals"))
from signal_tables import write_chat  # noqa: E402
from topic_corpus import topic_rows  # noqa: E402


def point(drawn: map_figure.Drawn, row: str) -> dict[str, int]:
    """A point of a plotly selection event: its trace and index."""
    curve = next(n for n, t in enumerate(drawn.traces) if row in t.ids)
    return {"curve_number": curve, "point_index": list(drawn.traces[curve].ids).index(row)}


def test_the_map_draws_a_sample_and_a_lasso_opens_browse(
    podium_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_chat("t.chat", [text for text, _ in topic_rows(40, k=4)])
    compute_signals(
        SignalsConfig.model_validate(
            {
                "table": {"name": "t.chat"},
                "signals": ["embedding,topics,projection"],
                "roles": ["assistant"],
                "topics": {"clusters": 4, "categories": 2},
            }
        )
    )
    monkeypatch.setattr(map_model, "MAX_POINTS", 25)
    at = open_page("map", table="t.chat")
    captions = " ".join(c.value for c in at.caption)
    assert "40 rows with a point, an even sample of 20 drawn" in captions
    [chart] = at.get("plotly_chart")
    assert '"scattergl"' in chart.proto.spec and '"lasso"' in chart.proto.spec
    assert not [b for b in at.get("page_link") if "selected rows" in b.proto.label]

    drawn = map_figure.drawn_map("t.chat")  # the one the page drew (built once, shared)
    assert len(drawn.data.points) == 20
    lasso = {"points": [point(drawn, "r0004"), point(drawn, "r0008")], "lasso": [{}]}
    at.session_state["map.chart"] = {"selection": lasso}
    at.run()
    assert not at.exception, at.exception
    [link] = [b for b in at.get("page_link") if "selected rows" in b.proto.label]
    assert link.proto.label == "Open the 2 selected rows in Browse"
    assert link.proto.query_string == "table=t.chat&where=id+IN+%28%27r0004%27%2C+%27r0008%27%29"

    # a topic, from the map into Browse's Signals filter
    topics = map_model.topic_choices("t.chat")
    assert list(topics)[:2] == ["topics=category=0", "topics=category=1"]
    stored = read_small("t.chat__sig_topics")[0].to_pylist()
    cluster = stored[0]["cluster"]
    members = sorted(r["id"] for r in stored if r["cluster"] == cluster)
    key = f"topics=cluster={cluster}"
    assert topics[key].startswith(f"topic {cluster}: ") and f"({len(members)})" in topics[key]
    at.selectbox(key="map.topic").set_value(key).run()
    at.button(key="map.open_topic").click().run()
    assert not at.exception, at.exception
    assert at.multiselect(key="browse.signals").value == [key]
    assert f"Rows 1–{len(members)} of {len(members)}" in [c.value for c in at.caption]

    loaded = load_table("t.chat")
    snapshot = loaded.current_snapshot().snapshot_id  # type: ignore[union-attr]
    assert sorted(ids_for(loaded, snapshot, "topics", f"cluster={cluster}")) == members
    removed = remove_by_signal("t.chat", f"topics=cluster={cluster}", preview=True)
    assert removed["rows"] == len(members)
    with pytest.raises(InvalidInput, match="use cluster=N"):
        ids_for(loaded, snapshot, "topics", "title=bread")

    # drawn as one image: a box selects every drawn point inside it, and more rows than a
    # link holds go to Browse by id in the session
    monkeypatch.setattr(map_selection, "MAX_LINKED", 3)
    at = open_page("map", table="t.chat", draw="image")
    assert at.radio(key="map.draw").value == "image"
    drawn = map_figure.drawn_map("t.chat", draw="image")
    assert drawn.raster is not None
    assert not at.get("plotly_chart")  # the canvas component draws it, no plotly.js
    [canvas] = at.get("bidi_component")
    sent = json.loads(canvas.proto.json)
    assert sent["image"] == drawn.raster.uri and len(sent["traces"]) == len(drawn.traces)
    xs = drawn.data.points["x"].to_numpy()
    right = float(np.sort(xs)[9])  # a drawn point's own x: the box's edge holds it
    expected = sorted(drawn.data.points["id"][xs <= right])
    box = {"x": [float(xs.min()) - 1, right], "y": [-1e9, 1e9]}
    at.session_state["map.canvas"] = {"selection": {"box": [box]}}
    at.run()
    assert not at.exception, at.exception
    [opens] = [b for b in at.button if b.key == "map.open_ids.t.chat"]
    assert opens.label == "Open the 10 selected rows in Browse" and len(expected) == 10
    opens.click().run()
    assert not at.exception, at.exception
    assert at.session_state["browse.ids"] == {"table": "t.chat", "ids": set(expected)}
    assert "Rows 1–10 of 10" in [c.value for c in at.caption]
    assert "Only the 10 rows selected on the Map." in [c.value for c in at.caption]


def test_several_tables_on_one_map_and_a_lasso_opens_each_in_browse(podium_home: Path) -> None:
    write_chat("t.chat", [text for text, _ in topic_rows(20, k=4)])
    write_chat("t.vibes", ["What do vaccines do to a virus?", "Who scored the goal?"], "v")
    compute_signals(
        SignalsConfig.model_validate(
            {"table": {"name": "t.chat"}, "signals": ["embedding,projection"]}
        )
    )
    compute_signals(
        SignalsConfig.model_validate({"table": {"name": "t.vibes"}, "signals": ["embedding"]})
    )
    at = open_page("map", table="t.chat")
    at.multiselect(key="map.with").set_value(["t.vibes"]).run()
    assert not at.exception, at.exception
    [chart] = at.get("plotly_chart")
    assert '"name":"t.chat"' in chart.proto.spec and '"name":"t.vibes"' in chart.proto.spec
    assert '"showlegend":true' in chart.proto.spec

    drawn = map_figure.drawn_map("t.chat", "topic", ["t.vibes"])
    lasso = {"points": [point(drawn, "r0003"), point(drawn, "v0001")]}
    at.session_state["map.chart"] = {"selection": lasso}
    at.run()
    assert not at.exception, at.exception
    links = {b.proto.label: b.proto.query_string for b in at.get("page_link")}
    assert links["Open the 1 selected rows in Browse (t.chat)"].startswith("table=t.chat&where=")
    assert links["Open the 1 selected rows in Browse (t.vibes)"] == (
        "table=t.vibes&where=id+IN+%28%27v0001%27%29"
    )


def test_titles_by_a_model_queued_from_the_map_and_shown_on_it(
    podium_home: Path, tmp_path: Path
) -> None:
    import json

    from podium.jobs.queue import list_jobs
    from podium.models import register_model
    from podium.signals.topics import set_topic_titles

    write_chat("t.chat", [text for text, _ in topic_rows(20, k=2)])
    compute_signals(
        SignalsConfig.model_validate(
            {
                "table": {"name": "t.chat"},
                "signals": ["embedding,topics,projection"],
                "topics": {"clusters": 2, "categories": 1},
            }
        )
    )
    (tmp_path / "m").mkdir()
    register_model("m", kind="base", path=str(tmp_path / "m"))
    at = open_page("map", table="t.chat")
    assert at.selectbox(key="map.titles.model").value == "m"
    at.button(key="FormSubmitter:map.titles-Queue job").click().run()
    assert not at.exception, at.exception
    [job] = [j for j in list_jobs() if j["kind"] == "topic-titles"]
    config = json.loads(job["config"])
    assert config["table"] == "t.chat" and config["model"] == "m"

    # what the job writes when it finishes (on a real vLLM in test_embedding_vllm.py):
    # the legend and hover name the topic by its title, as text
    set_topic_titles("t.chat", {0: {"title": "Football <b>matches</b>", "description": "."}}, "m")
    at.run()
    assert not at.exception, at.exception
    [chart] = at.get("plotly_chart")
    names = [t["name"] for t in json.loads(chart.proto.spec)["data"]]
    assert "0: Football &lt;b&gt;matches&lt;/b&gt;" in names

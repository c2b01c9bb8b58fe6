"""The Map page's model without Streamlit: points joined with their topics and hover
text, a WebGL scatter (lasso first) that draws them, and a selection turned into a
Browse filter that Browse's own filter parser accepts and that matches exactly the
selected rows."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from signal_tables import write_chat
from topic_corpus import topic_rows

from podium.app.views.map import figure as map_figure
from podium.app.views.map import model as map_model
from podium.app.views.map import selection as map_selection
from podium.errors import InvalidInput, PermissionDenied
from podium.identity import User
from podium.signals.job import SignalsConfig, compute_signals
from podium.store.catalog.catalog import table_exists
from podium.store.read.where import where_select
from podium.store.state.users import use_session_user


def test_points_topics_hover_and_a_selection_as_a_browse_filter(podium_home: Path) -> None:
    write_chat("t.chat", [text for text, _ in topic_rows(80, k=4)])
    assert map_model.mapped_tables() == []
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
    assert map_model.mapped_tables() == ["t.chat"]
    data = map_model.load_map("t.chat")
    points = data.points
    assert len(points) == 80 and data.total == 80
    assert set(points["cluster"]) == {0, 1, 2, 3} and len(data.titles) == 4
    row = points.set_index("id").loc["r0005"].to_dict()
    assert row["title"] == data.titles[int(row["cluster"])]
    drawn = map_figure.figure(data)
    figure = drawn.figure
    assert [t.type for t in figure.data] == ["scattergl"] * 4
    assert figure.layout.dragmode == "lasso" and figure.layout.showlegend
    assert len({t.marker.color for t in figure.data}) == 4  # one color per topic
    # what reaches the browser: x and y as float32 typed arrays, no string per point
    spec = json.loads(figure.to_json())
    [first, *_] = spec["data"]
    assert first["x"]["dtype"] == "f4" and first["y"]["dtype"] == "f4" and first["x"]["bdata"]
    assert not {"customdata", "hovertext", "text", "ids"} & set(first)
    assert isinstance(first["marker"]["color"], str)
    assert first["name"] == f"0: {data.titles[0]}"
    assert first["hovertemplate"] == "%{fullData.name}<extra></extra>"
    # a click: the row found by its trace and index, its text read by id
    curve = next(n for n, t in enumerate(drawn.traces) if "r0005" in t.ids)
    index = list(drawn.traces[curve].ids).index("r0005")
    click = {"selection": {"points": [{"curve_number": curve, "point_index": index}]}}
    assert map_selection.selected_by_table(click, drawn) == {"t.chat": ["r0005"]}
    [clicked] = map_selection.selected_rows(click, drawn)
    assert clicked["id"] == "r0005" and "(5) " in clicked["text"]
    assert clicked["topic"] == drawn.traces[curve].name
    beyond = {"selection": {"points": [{"curve_number": 9, "point_index": 0}, {"x": 1}]}}
    assert map_selection.selected_by_table(beyond, drawn) == {}
    data.titles[0] = "<img src=x onerror=alert(1)>"  # a model's title is text, not markup
    assert map_figure.figure(data).figure.data[0].name == "0: &lt;img src=x onerror=alert(1)&gt;"
    assert map_figure.escape_hover("<b>x</b> & y\nz") == "&lt;b&gt;x&lt;/b&gt; &amp; y<br>z"
    sampled = map_model.load_map("t.chat", max_points=30)
    assert len(sampled.points) <= 30 and sampled.total == 80
    by_category = map_figure.figure(sampled, "category").figure
    assert {t.name for t in by_category.data} <= {"category 0", "category 1"}

    like = map_model.similar_rows("t.chat", text="the striker scored a late goal", k=3)
    assert len(like) == 3 and all(int(str(r["id"])[1:]) % 4 == 1 for r in like)  # football
    assert like[0]["score"] >= like[-1]["score"] and like[0]["text"]
    assert "r0002" not in [r["id"] for r in map_model.similar_rows("t.chat", row="r0002")]
    with pytest.raises(InvalidInput, match="either a text or a row"):
        map_model.similar_rows("t.chat")

    ids = ["r0001", "o'brien"]
    where = map_selection.browse_filter(ids)
    assert where == "id IN ('r0001', 'o''brien')"
    where_select(where)  # Browse's parser takes it as one condition
    assert map_selection.browse_link("t.chat", ["r0001"]).startswith("browse?table=t.chat&where=")
    with pytest.raises(InvalidInput, match="at most"):
        map_selection.browse_filter([f"r{i}" for i in range(map_selection.MAX_LINKED + 1)])
    with pytest.raises(InvalidInput, match="Select some points"):
        map_selection.browse_filter([])


def test_coverage_on_the_map_page_writes_the_prompts_for_a_generation_job(
    podium_home: Path,
) -> None:
    write_chat("t.train", [text for text, _ in topic_rows(40, k=4)])
    write_chat("t.vibes", ["What do vaccines do to a virus?", "Who scored the goal?"], "v")
    for table in ("t.train", "t.vibes"):
        compute_signals(
            SignalsConfig.model_validate(
                {"table": {"name": table}, "signals": ["embedding"], "roles": ["assistant"]}
            )
        )
    assert map_model.embedded_tables() == ["t.train", "t.vibes"]
    far = map_model.coverage_rows("t.vibes", "t.train", 0.5)
    assert [f["id"] for f in far] == ["v0000"] and "vaccines" in far[0]["text"]
    out = map_model.prompts_name("t.vibes")
    assert out == "t.vibes_uncovered"
    use_session_user(lambda: User(name="vera", role="viewer", source="config"))
    try:  # a viewer may look at coverage but not queue its generation
        assert map_model.coverage_rows("t.vibes", "t.train", 0.5)
        with pytest.raises(PermissionDenied):
            map_model.prompt_table("t.vibes", "t.train", 0.5, out)
    finally:
        use_session_user(None)
    assert not table_exists(out)
    ref = map_model.prompt_table("t.vibes", "t.train", 0.5, out)
    assert ref["name"] == out and isinstance(ref["snapshot_id"], int)
    assert map_model.prompts_name("t.vibes") == "t.vibes_uncovered_2"  # never an existing one
    from generators.generate import GenerateConfig

    GenerateConfig(table=ref, out="t.answers")  # a generation job's table reference
    assert "model" not in map_model.generate_advanced()


def test_several_tables_on_one_map_colored_by_table(podium_home: Path) -> None:
    texts = [text for text, _ in topic_rows(40, k=4)]
    write_chat("t.train", texts)
    write_chat("t.gen", texts[:6] + ["A generated answer about the orchestra."], "g")
    write_chat("t.vibes", ["What do vaccines do to a virus?", "Who scored the goal?"], "v")
    for table, dims in (("t.train", 256), ("t.gen", 256), ("t.vibes", 64)):
        compute_signals(
            SignalsConfig.model_validate(
                {"table": {"name": table}, "signals": ["embedding"], "embedding": {"dims": dims}}
            )
        )
    with pytest.raises(InvalidInput, match="different models .*t.vibes: wordllama \\(64\\)"):
        map_model.load_tables_map(["t.train", "t.vibes"])
    with pytest.raises(InvalidInput, match="two or more tables"):
        map_model.load_tables_map(["t.train", "t.train"])
    compute_signals(
        SignalsConfig.model_validate({"table": {"name": "t.vibes"}, "signals": ["embedding"]})
    )

    data = map_model.load_tables_map(["t.train", "t.gen", "t.vibes"])
    points = data.points
    assert data.tables == ("t.train", "t.gen", "t.vibes") and data.total == 49
    assert points.groupby("table").size().to_dict() == {"t.train": 40, "t.gen": 7, "t.vibes": 2}
    # one projection for all: the same text is the same point in either table
    at = points.set_index(["table", "id"])[["x", "y"]]
    assert np.allclose(at.loc[("t.gen", "g0003")], at.loc[("t.train", "r0003")], atol=1e-5)

    drawn = map_figure.figure(data)
    figure = drawn.figure
    assert [t.name for t in figure.data] == ["t.train", "t.gen", "t.vibes"]
    assert figure.layout.showlegend and figure.layout.dragmode == "lasso"
    assert len({t.marker.color for t in figure.data}) == 3  # a color per table
    assert list(drawn.traces[2].ids) == ["v0000", "v0001"]
    lasso = [
        {"curve_number": 0, "point_index": list(drawn.traces[0].ids).index("r0001")},
        {"curve_number": 2, "point_index": 1},
    ]
    assert map_selection.selected_by_table({"selection": {"points": lasso}}, drawn) == {
        "t.train": ["r0001"],
        "t.vibes": ["v0001"],
    }
    sampled = map_model.load_tables_map(["t.train", "t.vibes"], max_points=10)
    assert sampled.points.groupby("table").size().to_dict() == {"t.train": 5, "t.vibes": 2}

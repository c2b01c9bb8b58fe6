"""The Map page (AppTest): the WebGL scatter is drawn lasso first, a table past the
point limit says it draws an even sample, and a lasso's selection becomes the link that
opens Browse filtered to exactly those rows."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from app_pages import open_page

from podium.app.views.map import model as map_model
from podium.signals.job import SignalsConfig, compute_signals

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "signals"))
from signal_tables import write_chat  # noqa: E402
from topic_corpus import topic_rows  # noqa: E402


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

    lasso = {"points": [{"customdata": "r0003"}, {"customdata": "r0007"}], "lasso": [{}]}
    at.session_state["map.chart"] = {"selection": lasso}
    at.run()
    assert not at.exception, at.exception
    [link] = [b for b in at.get("page_link") if "selected rows" in b.proto.label]
    assert link.proto.label == "Open the 2 selected rows in Browse"
    assert link.proto.query_string == "table=t.chat&where=id+IN+%28%27r0003%27%2C+%27r0007%27%29"

"""Browse filters on current signals (with counts) and names stale ones: Streamlit's
AppTest over a real catalog."""

from __future__ import annotations

from html import unescape
from pathlib import Path

from signal_tables import write_chat
from streamlit.testing.v1 import AppTest

from podium.signals.job import SignalsConfig, compute_signals

MAIN = Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py"


def open_browse(**query: str) -> AppTest:
    at = AppTest.from_file(str(MAIN), default_timeout=90)
    at.run()
    at.switch_page("views/browse/view.py")
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    return at


def test_browse_filters_on_a_current_signal_and_names_a_stale_one(podium_home: Path) -> None:
    texts = ["same words again and again " * 5] * 3 + ["call +44 20 7946 0958", "plain row"]
    write_chat("t.sig", texts)
    compute_signals(
        SignalsConfig.model_validate(
            {"table": {"name": "t.sig"}, "signals": ["exact-dup,private-data"]}
        )
    )
    at = open_browse(table="t.sig", size="100")
    chooser = at.sidebar.multiselect(key="browse.signals")
    assert "exact-dup: not canonical (2)" in chooser.options  # drawn with its count
    assert "private data: phone (1)" in chooser.options
    chooser.set_value(["exact-dup=duplicate"]).run()
    assert not at.exception, at.exception
    assert sorted(at.dataframe[0].value["id"]) == ["r0001", "r0002"]

    at.selectbox(key="browse.sample").set_value("r0001").run()
    assert not at.exception, at.exception
    shown = unescape("\n".join(m.value for m in at.markdown))
    assert "duplicate of r0000; cluster of 3: r0000, r0002" in shown

    write_chat("t.sig", ["a new row"], prefix="n", mode="append")
    at = open_browse(table="t.sig", size="100")
    assert not [m for m in at.sidebar.multiselect if m.key == "browse.signals"]
    notes = [unescape(c.value) for c in at.sidebar.caption]
    assert any(n.startswith("exact-dup is stale: computed for snapshot") for n in notes), notes

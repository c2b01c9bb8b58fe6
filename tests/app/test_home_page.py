"""Home (AppTest): where things stand, and the demo button only while the demo is missing."""

from __future__ import annotations

from html import unescape
from pathlib import Path

from app_pages import shown
from streamlit.testing.v1 import AppTest

from podium.app.views.home.model import demo_missing, home_state

MAIN = str(Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py")


def _home() -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=120).run()
    assert not at.exception, at.exception
    return at


def test_home_offers_the_demo_only_until_it_is_loaded_and_shows_state(podium_home: Path) -> None:
    at = _home()
    assert [b.label for b in at.button if b.key == "home.demo"] == ["Load the demo data"]
    assert any(m.value == "**0 tables · 0 models · 0 model servers running · 0 recent jobs**"
               for m in at.markdown)  # fmt: skip
    at.button(key="home.demo").click().run()
    assert any(s.value.startswith("Demo tables:") for s in at.success)
    assert demo_missing() == []
    # The same page, without a reload, counts the tables just written (it said "0 tables").
    tables = len(home_state().tables)
    assert any(m.value.startswith(f"**{tables} tables · ") for m in at.markdown), [
        m.value for m in at.markdown if "tables" in m.value
    ]
    assert not [b for b in at.button if b.key == "home.demo"]
    # A rerun the person did not ask for (a followed job finishing reruns the page) keeps
    # what was loaded on screen: the message was shown once and gone before it was read.
    at.run()
    assert any(s.value.startswith("Demo tables:") for s in at.success)
    at = _home()  # a reload, or coming back later
    assert not [b for b in at.button if b.key == "home.demo"]
    state = home_state()
    assert "demo.chat" in state.tables and "demo.functions" in state.tables
    assert any(m.value.startswith(f"**{len(state.tables)} tables · ") for m in at.markdown)
    links = [unescape(p.proto.label) for p in at.get("page_link")]
    assert "demo.chat" in links


def test_the_build_page_links_the_sft_table_it_made(podium_home: Path) -> None:
    import pyarrow as pa

    from podium.app.views.build.model import sft_table_of
    from podium.store.schema import SFT_ARROW_SCHEMA
    from podium.store.write.write import write_table

    rows = pa.Table.from_pylist(
        [{"id": "a", "messages": [{"role": "user", "content": "q"}]}], schema=SFT_ARROW_SCHEMA
    )
    write_table("cx.functions", rows)
    assert sft_table_of("cx.functions") is None
    write_table("cx.functions_sft", rows, properties={"podium.kind": "sft"})
    assert sft_table_of("cx.functions") == "cx.functions_sft"


def test_home_says_what_it_has_and_what_the_demo_writes(podium_home: Path) -> None:
    """Before: Tables was blank beside Models' "none yet"; the demo promised code datasets
    it does not write; async runs' rollouts tables crowded the table list."""
    import pyarrow as pa

    from podium.store.catalog.kinds import ROLLOUTS
    from podium.store.schema import PROP_KIND, SFT_ARROW_SCHEMA
    from podium.store.write.write import write_table

    at = _home()
    assert sum(c.value == "none yet" for c in at.caption) == 2  # tables and jobs
    said = next(unescape(c.value) for c in at.caption if "demo.chat" in unescape(c.value))
    assert "code datasets" not in said and "demo.functions (Python functions" in said
    rows = pa.Table.from_pylist(
        [{"id": "a", "messages": [{"role": "user", "content": "q"}]}], schema=SFT_ARROW_SCHEMA
    )
    write_table("t.data", rows)
    write_table("rollouts.grpo_1", rows, properties={PROP_KIND: ROLLOUTS})
    at = _home()
    links = [unescape(p.proto.label) for p in at.get("page_link")]
    assert "t.data" in links and "rollouts.grpo_1" not in links
    assert any(m.value.startswith("**2 tables · ") for m in at.markdown)
    left_out = [shown(c.value) for c in at.caption]
    assert "and 1 async run's rollouts table in Browse" in left_out, [c[-90:] for c in left_out]

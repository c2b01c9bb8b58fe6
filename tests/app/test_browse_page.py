"""The Browse page through Streamlit's AppTest, over real Iceberg tables."""

from __future__ import annotations

from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pandas as pd
import pytest
from browse_data import APPENDED, CHAT, CHAT_ROWS, NEEDLE, NEEDLE_ID, SCORES, make_browse_tables
from streamlit import dataframe_util
from streamlit.testing.v1 import AppTest

from podium.app.rows import view_state as vs
from podium.app.views.browse import model as bm
from podium.config import reset_settings
from podium.store.catalog.catalog import load_table
from podium.store.read.snapshots import list_snapshots

MAIN = Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py"
ALL_ROWS = CHAT_ROWS + APPENDED


@pytest.fixture(scope="module")
def browse_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("browse-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PODIUM_HOME", str(home))
        reset_settings()
        make_browse_tables()
        yield home
    reset_settings()


def open_browse(**query: str) -> AppTest:
    at = AppTest.from_file(str(MAIN), default_timeout=60)
    at.run()  # Home is the default page; Browse has its own path
    at.switch_page("views/browse/view.py")
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    return at


def captions(at: AppTest) -> list[str]:
    return [c.value for c in at.caption]


def first_snapshot() -> int:
    return list_snapshots(load_table(CHAT))[0].snapshot_id


def chart_data(chart: Any) -> pd.DataFrame:
    """The data a chart element was drawn from (AppTest has no chart accessor)."""
    return dataframe_util.convert_arrow_bytes_to_pandas_df(chart.proto.datasets[0].data.data)


def chat_markdown(at: AppTest) -> dict[str, str]:
    """Role -> what that chat bubble draws: Markdown, code as a fenced block (st.code
    with its language), marked-up HTML."""

    def text(node: Any) -> str:
        if node.type == "code":
            return f"```{node.language or ''}\n{node.value}\n```"
        if node.type == "html":
            return str(node.proto.body)
        return str(node.value) if node.type == "markdown" else ""

    return {
        m.name: "\n".join(t for n in m.children.values() if (t := text(n))) for m in at.chat_message
    }


def test_empty_catalog_says_how_to_load_data(podium_home: Path) -> None:
    at = open_browse()
    [info] = at.info
    assert "podium demo" in info.value and "podium import" in info.value
    assert not at.dataframe


def test_opens_the_newest_table_and_writes_the_view_into_the_url(browse_home: Path) -> None:
    at = open_browse()
    # The most recently written table, not the alphabetically first (lab.chat).
    assert at.selectbox(key="browse.table").value == SCORES
    at.selectbox(key="browse.table").set_value(CHAT).run()
    assert f"Rows 1–25 of {ALL_ROWS}" in captions(at)
    frame = at.dataframe[0].value
    assert len(set(frame["id"])) == 25
    assert set(frame["id"]) <= {f"c{i:03d}" for i in range(ALL_ROWS)}
    assert at.query_params["table"] == CHAT
    current = list_snapshots(load_table(CHAT))[-1].snapshot_id
    assert at.query_params["snapshot"] == str(current)


def test_deep_link_opens_the_sample_as_a_conversation(browse_home: Path) -> None:
    at = open_browse(table=CHAT, sample=NEEDLE_ID)
    turns = chat_markdown(at)
    assert list(turns) == ["system", "user", "assistant"]
    assert "You answer in JSON." in turns["system"]
    assert "Question 42: describe the zebra in JSON" in turns["user"]
    # The stored compact JSON answer is pretty-printed in a json block.
    assert (
        '```json\n{\n  "animal": "giraffe",\n  "legs": 4,\n  "row": 42\n}\n```'
        in turns["assistant"]
    )
    assert at.query_params["sample"] == NEEDLE_ID


def test_code_keeps_its_fence_and_broken_json_is_flagged(browse_home: Path) -> None:
    code = chat_markdown(open_browse(table=CHAT, sample="c001"))["assistant"]
    assert "```python\nprint('row 1')\n```" in code
    at = open_browse(table=CHAT, sample="c002")
    broken = chat_markdown(at)["assistant"]
    assert broken == '```text\n{"animal": "giraffe", "legs": 4,\n```'
    assert any("does not parse" in c for c in captions(at))


def test_search_finds_the_needle_and_resets_the_page(browse_home: Path) -> None:
    at = open_browse(table=CHAT, page="2")
    assert f"Rows 26–50 of {ALL_ROWS}" in captions(at)
    at.text_input(key="browse.search").input(NEEDLE.upper()).run()
    assert "Rows 1–1 of 1" in captions(at)
    assert list(at.dataframe[0].value["id"]) == [NEEDLE_ID]
    assert at.query_params["search"] == NEEDLE.upper()
    assert "page" not in at.query_params


def test_a_change_here_wins_over_a_url_the_browser_has_not_updated_yet(
    browse_home: Path,
) -> None:
    """The browser applies the URL a run wrote only when that message arrives; a search
    typed before then comes with the previous URL. Before: the page took that stale URL
    for a link from outside and went back to the newest table, dropping the search."""
    at = open_browse()
    stale = dict(at.query_params)
    assert stale["table"] == SCORES
    at.selectbox(key="browse.table").set_value(CHAT).run()
    assert at.query_params["table"] == CHAT
    at.query_params.clear()
    at.query_params.update(stale)  # what the browser still shows
    at.text_input(key="browse.search").input(NEEDLE).run()
    assert at.selectbox(key="browse.table").value == CHAT
    assert "Rows 1–1 of 1" in captions(at)
    assert (at.query_params["table"], at.query_params["search"]) == (CHAT, NEEDLE)


def test_a_page_typed_before_the_first_run_ends_is_kept(
    browse_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 10M rows the first run draws for seconds after the rows show; a page typed then
    stops it before its end wrote the URL. Before: the next run took the link the page
    was opened with for a new one and went back to page 1, dropping the typed page (the
    scale benchmark's browser step waited for it forever)."""
    from podium.app.views.browse import state as bs

    with monkeypatch.context() as first_run_stops_early:
        first_run_stops_early.setattr(bs, "write_url", lambda view: None)
        at = open_browse(table=CHAT)
    assert dict(at.query_params) == {"table": CHAT}  # the link, as the browser still shows it
    at.number_input(key="browse.page").set_value(3).run()
    assert at.number_input(key="browse.page").value == 3
    assert f"Rows 51–{ALL_ROWS} of {ALL_ROWS}" in captions(at)
    assert at.query_params["page"] == "3"


def test_a_new_url_without_a_change_here_is_followed(browse_home: Path) -> None:
    """The back button or a link to Browse from Browse: only the URL changed."""
    at = open_browse(table=CHAT, search=NEEDLE)
    at.query_params.clear()
    at.query_params.update({"table": SCORES})
    at.run()
    assert at.selectbox(key="browse.table").value == SCORES
    assert at.text_input(key="browse.search").value == ""


def test_paging_page_size_and_jump_to_page(browse_home: Path) -> None:
    at = open_browse(table=CHAT)
    seen = list(at.dataframe[0].value["id"])
    for number in (2, 3):
        at.number_input(key="browse.page").set_value(number).run()
        seen += list(at.dataframe[0].value["id"])
    assert f"Rows 51–{ALL_ROWS} of {ALL_ROWS}" in captions(at)
    assert at.query_params["page"] == "3"
    # Three pages hold every row exactly once.
    assert sorted(seen) == [f"c{i:03d}" for i in range(ALL_ROWS)]
    at.selectbox(key="browse.size").set_value(10).run()
    assert f"Rows 1–10 of {ALL_ROWS}" in captions(at)
    assert at.number_input(key="browse.page").value == 1
    assert at.query_params["size"] == "10"


def test_a_page_past_the_end_shows_the_last_page(browse_home: Path) -> None:
    at = open_browse(table=CHAT, page="99")
    assert f"Rows 51–{ALL_ROWS} of {ALL_ROWS}" in captions(at)
    assert at.query_params["page"] == "3"


def test_time_travel_to_the_first_snapshot(browse_home: Path) -> None:
    at = open_browse(table=CHAT)
    at.selectbox(key="browse.snapshot").set_value(first_snapshot()).run()
    assert f"Rows 1–25 of {CHAT_ROWS}" in captions(at)
    assert at.query_params["snapshot"] == str(first_snapshot())
    # A row appended later is not in the old snapshot.
    linked = open_browse(table=CHAT, snapshot=str(first_snapshot()), sample=f"c{CHAT_ROWS:03d}")
    assert any(f"No sample c{CHAT_ROWS:03d}" in w.value for w in linked.warning)


def test_column_filters_offer_counted_values(browse_home: Path) -> None:
    at = open_browse(table=CHAT)
    split = at.multiselect(key="browse.filter.split")
    tests = sum(1 for i in range(ALL_ROWS) if i % 4 == 0)
    assert set(split.options) == {f"train ({ALL_ROWS - tests})", f"test ({tests})"}
    split.select("test").run()
    assert f"Rows 1–{tests} of {tests}" in captions(at)
    assert at.query_params["split"] == "test"
    at.multiselect(key="browse.filter.source").select("human").run()
    both = sum(1 for i in range(ALL_ROWS) if i % 4 == 0 and i % 5 == 0)
    assert f"Rows 1–{both} of {both}" in captions(at)


def test_sql_condition_filters_and_a_bad_one_is_an_error_not_a_crash(browse_home: Path) -> None:
    at = open_browse(table=CHAT)
    at.text_input(key="browse.where").input("id >= 'c060'").run()
    assert f"Rows 1–{APPENDED} of {APPENDED}" in captions(at)
    at.text_input(key="browse.where").input("no_such_column = 1").run()
    assert not at.exception
    [error] = at.error
    assert "no_such_column" in unescape(error.value)  # data on a page is escaped Markdown


def test_unknown_table_and_snapshot_in_a_link_are_reported(browse_home: Path) -> None:
    at = open_browse(table="lab.missing")
    assert any("No table named lab.missing" in unescape(w.value) for w in at.warning)
    assert at.selectbox(key="browse.table").value == CHAT
    at = open_browse(table=CHAT, snapshot="123")
    assert any("no snapshot 123" in unescape(w.value) for w in at.warning)
    assert f"Rows 1–25 of {ALL_ROWS}" in captions(at)


def test_table_without_messages_browses_as_plain_rows(browse_home: Path) -> None:
    at = open_browse(table=SCORES)
    frame = at.dataframe[0].value
    assert list(frame.columns) == ["name", "score", "details"]
    assert len(frame) == 8
    at.selectbox(key="browse.sample").set_value("row-3").run()
    shown = [m.value for m in at.markdown]
    assert "model-3" in shown
    assert '```json\n{\n  "wins": 3,\n  "losses": 5\n}\n```' in shown
    assert at.query_params["sample"] == "row-3"
    at.segmented_control(key="browse.mode").set_value("Statistics").run()
    assert any("no messages column" in i.value for i in at.info)


def test_switching_table_resets_page_sample_and_filters(browse_home: Path) -> None:
    at = open_browse(table=CHAT, page="2", sample="c001", split="train", search="giraffe")
    at.selectbox(key="browse.table").set_value(SCORES).run()
    assert at.query_params.get("table") == SCORES
    assert {"page", "sample", "split"}.isdisjoint(at.query_params)
    assert at.query_params["search"] == "giraffe"


def test_statistics_panel(browse_home: Path) -> None:
    at = open_browse(table=CHAT)
    at.segmented_control(key="browse.mode").set_value("Statistics").run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {"Rows": f"{ALL_ROWS}", "Turns": f"{2 * ALL_ROWS}", "Turns per sample": "2.0"}
    roles = at.dataframe[0].value
    assert dict(zip(roles["role"], roles["turns"], strict=True)) == {
        "user": ALL_ROWS,
        "assistant": ALL_ROWS,
    }
    lengths, turns, sources = (chart_data(c) for c in at.get("vega_lite_chart"))
    assert lengths["samples"].sum() == ALL_ROWS  # the histogram counts every sample once
    assert dict(zip(turns["turns"], turns["rows"], strict=True)) == {2: ALL_ROWS}
    humans = sum(1 for i in range(ALL_ROWS) if i % 5 == 0)
    assert dict(zip(sources["source"], sources["rows"], strict=True)) == {
        "human": humans,
        "synthetic": ALL_ROWS - humans,
    }


def test_view_survives_a_visit_to_another_page(browse_home: Path) -> None:
    at = open_browse(table=CHAT, sample=NEEDLE_ID, search=NEEDLE)
    at.switch_page("views/logbook/view.py").run()
    at.query_params.clear()
    at.switch_page("views/browse/view.py").run()
    assert at.text_input(key="browse.search").value == NEEDLE
    assert "Question 42" in chat_markdown(at)["user"]


def test_malformed_only_needs_a_report_then_shows_just_those_rows(browse_home: Path) -> None:
    from podium.store.read.refs import TableRef
    from podium.validate.job import ValidateConfig, validate_table
    from podium.validate.report import malformed_ids

    at = open_browse(table=CHAT, malformed="1")
    assert not at.toggle, "no report yet, so no switch"
    assert any("No validation report" in w.value for w in at.warning)

    current = list_snapshots(load_table(CHAT))[-1].snapshot_id
    validate_table(ValidateConfig(table=TableRef(name=CHAT, snapshot_id=current), rules=["json"]))
    bad = malformed_ids(CHAT, current)
    assert bad is not None and "c002" in bad and "c000" not in bad  # truncated vs valid JSON

    at = open_browse(table=CHAT, size="100")
    toggle = at.toggle(key="browse.malformed")
    assert toggle.label == f"Malformed only ({len(bad):,} rows)"
    toggle.set_value(True).run()
    assert set(at.dataframe[0].value["id"]) == bad
    assert at.query_params["malformed"] == "1"
    at.selectbox(key="browse.sample").set_value("c002").run()
    shown = "\n".join(m.value for m in at.markdown)
    assert "**Validation failures**" in shown and "`json`" in shown
    # An older snapshot is not covered by the report: the switch goes away, and a
    # banner says the rows are not the current ones.
    at.selectbox(key="browse.snapshot").set_value(first_snapshot()).run()
    assert not at.toggle
    assert f"Rows 1–{CHAT_ROWS} of {CHAT_ROWS}" in captions(at)
    assert any(w.value.startswith("Showing an older snapshot") for w in at.warning)


def test_a_link_s_malformed_filter_shows_above_the_rows_and_clears_there(
    browse_home: Path,
) -> None:
    from podium.store.read.refs import TableRef
    from podium.validate.job import ValidateConfig, validate_table
    from podium.validate.report import malformed_ids

    current = list_snapshots(load_table(CHAT))[-1].snapshot_id
    validate_table(ValidateConfig(table=TableRef(name=CHAT, snapshot_id=current), rules=["json"]))
    bad = malformed_ids(CHAT, current)
    assert bad
    at = open_browse(table=CHAT, malformed="1", size="100")  # Validate's link
    assert not any(w.value.startswith("Showing an older") for w in at.warning)
    assert set(at.dataframe[0].value["id"]) == bad
    chip = at.button(key="browse.clear.malformed")
    assert chip.label == "Malformed only"
    chip.click().run()
    assert "malformed" not in at.query_params
    assert len(at.dataframe[0].value) == ALL_ROWS > len(bad)  # every row again
    assert not [b for b in at.button if b.key == "browse.clear.malformed"]


def test_a_picker_s_label_never_becomes_the_sample_or_a_filter() -> None:
    assert bm.sample_of("chat-00000 — How do I reverse a list in Python?") == "chat-00000"
    assert bm.sample_of("chat-00000") == "chat-00000" and bm.sample_of("") is None
    assert bm.filter_values(["train (1,200)", "test"]) == ("train", "test")
    assert bm.filter_values(["odd (3)"], known={"odd (3)"}) == ("odd (3)",)


def test_the_grid_ticks_the_open_sample_and_forgets_ticks_of_other_rows() -> None:
    before, ticked = bm.grid_state(["c000", "c001"], "c000")
    assert ticked == [0]
    after, ticked = bm.grid_state(["c001", "c000"], "c000")  # a search reordered the rows
    assert after != before and ticked == [1]
    assert bm.grid_state(["c001"], "c000")[1] == []


def test_a_table_without_snapshots_shows_no_rows(podium_home: Path) -> None:
    from podium.store.catalog.catalog import ensure_namespace, open_catalog
    from podium.store.schema import SFT_SCHEMA

    ensure_namespace("lab")
    open_catalog().create_table(("lab", "empty"), schema=SFT_SCHEMA)
    at = open_browse(table="lab.empty")
    assert "No rows of 0" in captions(at)
    [snapshot] = [s for s in at.sidebar.selectbox if s.label == "Snapshot"]
    assert snapshot.value == "no snapshots (empty table)"
    assert any("has no rows" in i.value for i in at.info)
    at.segmented_control(key="browse.mode").set_value("Statistics").run()
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["Rows"] == "0"


def test_browse_link_carries_the_view_in_its_query_string() -> None:
    def script() -> None:
        import streamlit as st

        from podium.app import widgets

        def links() -> None:
            widgets.browse_link("demo.chat", snapshot=5, sample="x 1")
            widgets.browse_link("demo.chat", label="Open it")

        browse = st.Page(widgets.BROWSE_PAGE, url_path="browse")
        pages = [st.Page(links, title="links", default=True), browse]
        st.navigation(pages).run()

    at = AppTest.from_function(script).run()
    first, second = (p.proto for p in at.get("page_link"))
    assert first.page == "browse" and unescape(first.label) == "demo.chat · x 1"
    assert vs.parse_query(parse_qs(first.query_string)) == (
        vs.ViewState(table="demo.chat", snapshot=5, sample="x 1"),
        [],
    )
    assert (second.label, second.query_string) == ("Open it", "table=demo.chat")

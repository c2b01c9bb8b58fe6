"""Browse filters on current signals (with counts) and names stale ones: Streamlit's
AppTest over a real catalog."""

from __future__ import annotations

from html import unescape
from pathlib import Path

from signal_tables import GSM_PROBLEM, PROSE, write_chat
from streamlit.testing.v1 import AppTest

from podium.app.views.browse.sidebar import signal_facets
from podium.review.history import row_history
from podium.signals.job import SignalsConfig, compute_signals
from podium.store.catalog.catalog import load_table
from podium.store.read.read import read_small

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


def _act(at: AppTest, key: str, why: str = "", tags: str = "") -> str:
    """Choose `key` in Browse's "Act on signals", preview it, confirm it, write it; the
    preview's lines are returned."""
    at.selectbox(key="browse.act.which").set_value(key).run()
    at.button(key="browse.act.preview").click().run()
    assert not at.exception, at.exception
    previewed = unescape("\n".join(m.value for m in [*at.markdown, *at.caption]))
    at.checkbox(key=f"browse.act.sure.{key}").check().run()
    if key.startswith("label."):
        at.text_input(key="browse.act.tags").set_value(tags).run()
        at.button(key="browse.act.do_label").click().run()
    else:
        at.text_input(key="browse.act.why").set_value(why).run()
        at.button(key="browse.act.do").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return previewed


def _history(row_id: str) -> list[dict[str, object]]:
    from podium.review.annotations import annotations_table
    from podium.store.catalog.catalog import load_or_none, load_table

    return row_history(load_table("t.act"), load_or_none(annotations_table("t.act")), row_id)


def test_each_signal_action_from_browse_is_previewed_confirmed_and_one_snapshot(
    podium_home: Path,
) -> None:
    """Label, redact, remove private data, keep one per cluster, remove contaminated: each
    from the page, previewed (count, ids, a sample), one snapshot naming it; a stale
    signal offers no action."""
    texts = [
        PROSE * 2,
        (PROSE * 2).replace("quick", "quack"),
        "Please solve this for me: " + GSM_PROBLEM,
        "Write to ops@example.com if the deploy fails.",
        "A row about something else entirely.",
    ]
    write_chat("t.act", texts)
    write_chat("t.gsm", [GSM_PROBLEM], prefix="g")

    def run(*signals: str) -> None:
        signal_facets.clear()  # the page caches facets by snapshot for 10 s
        compute_signals(
            SignalsConfig.model_validate(
                {
                    "table": {"name": "t.act"},
                    "signals": [",".join(signals)],
                    "contamination": {"evals": ["t.gsm"]},
                }
            )
        )

    def heads() -> int:
        return len(load_table("t.act").snapshots())

    run("near-dup", "contamination", "private-data")
    at = open_browse(table="t.act", size="100")
    at.sidebar.multiselect(key="browse.signals").set_value(["private-data=any"]).run()
    shown = _act(at, "label.private-data=any", tags="has-pii")
    assert "Would annotate 1 row" in shown and "r0003: Answer this. → Write to ops@" in shown
    assert any("tags has-pii" in str(e["detail"]) for e in _history("r0003"))

    before = heads()
    shown = _act(at, "redact", why="no mail addresses")
    assert "Would redact 1 spans in 1 row" in shown
    assert "r0003, turn 1: Write to [EMAIL] if the deploy fails." in shown
    assert heads() == before + 1
    (event,) = [e for e in _history("r0003") if e["detail"] == "no mail addresses"]
    assert (
        read_small("t.act")[0]
        .to_pylist()[3]["messages"][1]["content"]
        .startswith("Write to [EMAIL]")
    )
    # the table moved on: its signals are stale, and nothing is offered to act on
    assert "browse.act.which" not in [s.key for s in at.selectbox]
    assert any("No signal is current" in c.value for c in at.caption)

    write_chat("t.act", ["call me at +44 20 7946 0958"], prefix="n", mode="append")
    run("private-data")
    at = open_browse(table="t.act", size="100")
    shown = _act(at, "private", why="private data")
    assert "Would remove 1 row" in shown and "n0000" in shown
    assert "n0000" not in read_small("t.act")[0].column("id").to_pylist()

    run("near-dup", "contamination")
    at = open_browse(table="t.act", size="100")
    shown = _act(at, "keep.near-dup")
    assert "Would remove 1 row" in shown and "Rows: r0001" in shown
    (event,) = [e for e in _history("r0001") if e["kind"] == "delete"]
    assert "near-dup" in str(event["detail"])

    run("contamination")
    at = open_browse(table="t.act", size="100")
    before = heads()
    _act(at, "contaminated")
    assert heads() == before + 1
    assert sorted(read_small("t.act")[0].column("id").to_pylist()) == ["r0000", "r0003", "r0004"]


def test_browse_sorts_by_a_signal_and_shows_a_copy_beside_its_canonical_row(
    podium_home: Path,
) -> None:
    texts = [
        "short row",
        PROSE * 2,
        "a row of middling length, longer than the first one",
        (PROSE * 2).replace("quick", "quack"),
    ]
    write_chat("t.sort", texts)
    compute_signals(
        SignalsConfig.model_validate({"table": {"name": "t.sort"}, "signals": ["near-dup,length"]})
    )
    at = open_browse(table="t.sort", size="100")
    sort = at.sidebar.selectbox(key="browse.signals.sort")
    assert "near-dup cluster size, high to low" in sort.options, sort.options
    sort.set_value("length:asc").run()
    assert not at.exception, at.exception
    assert list(at.dataframe[0].value["id"]) == ["r0000", "r0002", "r0001", "r0003"]
    at.sidebar.selectbox(key="browse.signals.sort").set_value("length:desc").run()
    assert list(at.dataframe[0].value["id"]) == ["r0001", "r0003", "r0002", "r0000"]
    # by cluster size: only the rows in a cluster, its canonical row first
    at.sidebar.selectbox(key="browse.signals.sort").set_value("near-dup:desc").run()
    assert list(at.dataframe[0].value["id"]) == ["r0001", "r0003"]

    at.selectbox(key="browse.sample").set_value("r0003").run()
    assert not at.exception, at.exception
    shown = [e.proto.body for e in at.get("html")]
    assert len(shown) == 2, shown
    ours, theirs = shown
    assert '<span class="podium-diff"' in ours and "quack" in ours
    assert "quick" in theirs and "quack" not in theirs

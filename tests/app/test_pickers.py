"""Table pickers: grouped by kind, internal tables hidden, the newest relevant table by
default (never the alphabetically first), and output names that follow the inputs."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from streamlit.testing.v1 import AppTest

from podium.app.table_choices import TableChoice, default_of, ordered_names, pick, table_choices
from podium.app.views.generate.model import prompt_tables
from podium.identity import User
from podium.models import register_model
from podium.store.schema import PROP_KIND, SFT_ARROW_SCHEMA
from podium.store.write.write import write_table

MAIN = str(Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py")


def _sft(name: str, kind: str = "sft") -> None:
    rows = [{"id": "a", "messages": [{"role": "user", "content": "hi"}]}]
    write_table(
        name, pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA), properties={PROP_KIND: kind}
    )


def test_pick_groups_hides_internal_and_orders_by_recency() -> None:
    choices = [
        TableChoice("a.old", "sft", 1),
        TableChoice("a.new", "samples", 5),
        TableChoice("a.fns", "functions", 9),
        TableChoice("a.rep", "validation-report", 9),
        TableChoice("cmp.x", "", 9),
        TableChoice("a.t__validation", "", 9),
        TableChoice("compare.votes", "compare-votes", 9),
    ]
    assert [c.name for c in pick(choices)] == ["a.new", "a.old"]
    assert [c.name for c in pick(choices, groups=None)] == ["a.fns", "a.new", "a.old"]
    shown = [c.name for c in pick(choices, groups=None, include_internal=True)]
    assert shown[:2] == ["a.fns", "a.rep"] and len(shown) == 7
    assert TableChoice("x.y", "comparison", 0).label == "x.y · comparisons"
    # An async RL run's rollouts are generated samples, not a dataset to train on.
    assert TableChoice("x.run_rollouts", "rollouts", 0).label == "x.run_rollouts · samples"
    empty_newest = [TableChoice("a.empty", "sft", 99, rows=0), *choices]
    assert pick(empty_newest)[-1].name == "a.empty"  # nothing to read: never the default


def test_an_annotations_table_is_never_offered_as_a_dataset(podium_home: Path) -> None:
    from podium.review.annotations import annotate
    from podium.store.catalog.catalog import load_table
    from podium.store.catalog.kinds import tables_of_kind

    _sft("demo.chat")
    annotate(
        load_table("demo.chat"),
        ["a"],
        User(name="ann", role="reviewer", source="config"),
        note="ok",
    )
    # The newest table, and alphabetically after demo.chat: offered before the fix.
    assert tables_of_kind("annotations") == ["demo.chat__annotations"]
    assert ordered_names() == ["demo.chat"]
    assert [c.name for c in pick(table_choices(), groups=None)] == ["demo.chat"]
    assert prompt_tables() == ["demo.chat"]
    assert default_of(["demo.chat", "demo.chat__annotations"]) == "demo.chat"
    # Shown only when internal tables are asked for, under its own group.
    everything = pick(table_choices(), groups=None, include_internal=True)
    assert [c.label for c in everything][0] == "demo.chat__annotations · annotations"
    # One written before its kind was recorded is internal by its name.
    assert TableChoice("a.t__annotations", "", 9).internal


def test_default_is_the_newest_table_that_is_not_internal(podium_home: Path) -> None:
    _sft("demo.chat")
    _sft("cmp.aaa", kind="comparison")  # newer and alphabetically first: still not it
    assert ordered_names() == ["demo.chat"]
    assert default_of(["cmp.aaa", "demo.chat"]) == "demo.chat"
    _sft("demo.later")
    assert default_of(["cmp.aaa", "demo.chat", "demo.later"]) == "demo.later"
    # A functions table written after them (the demo's last) is not a first look.
    _sft("demo.functions", kind="functions")
    assert default_of(["demo.chat", "demo.functions", "demo.later"]) == "demo.later"
    assert default_of(["demo.functions"]) == "demo.functions"


def test_generate_defaults_to_a_usable_table_and_its_output_follows(
    podium_home: Path, tmp_path: Path
) -> None:
    """Before: the picker started on `cmp.aaa` (alphabetically first), so the default
    Generate failed, and the output name stayed on the first table when another was
    chosen, so a resume could mix two datasets' rows."""
    register_model("m1", kind="base", path=str(tmp_path), is_default=True)
    _sft("demo.chat")
    _sft("demo.json_sft")
    _sft("cmp.aaa", kind="comparison")
    at = AppTest.from_file(MAIN, default_timeout=60)
    at.run()
    at.switch_page("views/generate/view.py")
    at.run()
    assert not at.exception, at.exception
    table = at.selectbox(key="generate.table")
    assert table.value == "demo.json_sft" and "cmp.aaa" not in table.options
    assert at.text_input(key="generate.job.out").value == "gen.json_sft_m1"
    table.set_value("demo.chat").run()
    assert at.text_input(key="generate.job.out").value == "gen.chat_m1"
    at.checkbox(key="generate.table.internal").check().run()
    assert "cmp.aaa · comparisons" in at.selectbox(key="generate.table").options

"""The Validate page with AppTest on the real demo table: run, chart, list, caret, link."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from app_pages import shown
from queue_runner import run_queued
from streamlit.testing.v1 import AppTest

from podium.jobs.queue import list_jobs
from podium.store.catalog.catalog import table_exists
from podium.store.schema import SFT_ARROW_SCHEMA
from podium.store.write.demo import DEMO_JSON_SCHEMA, DEMO_TABLES, json_sft_rows
from podium.store.write.write import write_table
from podium.validate.report import malformed_ids

MAIN = str(Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py")


@pytest.fixture
def demo(podium_home: Path) -> dict[str, dict]:
    DEMO_TABLES["demo.json_sft"]()
    return json_sft_rows()[1]


def _open() -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.run()
    at.switch_page("views/validate/view.py")
    at.run()
    assert not at.exception, at.exception
    return at


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_run_shows_kinds_samples_and_the_marked_error(demo: dict[str, dict]) -> None:
    at = _open()
    assert at.selectbox(key="validate.table").value == "demo.json_sft"
    # The table stores a schema, so json-schema is proposed with json.
    assert at.multiselect(key="validate.rules").value == ["json", "json-schema"]
    assert any("No validation report" in i.value for i in at.info)
    # A fenced block when there is one: "Here is the record:" before it is no failure.
    assert at.selectbox(key="validate.job.extract").value == "auto"
    at.selectbox(key="validate.job.extract").set_value("fenced")
    at.button(key="FormSubmitter:validate.job-Queue job").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    (queued,) = list_jobs()
    assert queued["status"] == "queued"  # the page ran nothing itself
    run_queued()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]

    assert _metric(at, "Failing turns") == f"{len(demo):,}"
    assert _metric(at, "Rows") == "3,000"
    (job,) = [j for j in list_jobs() if j["kind"] == "validate"]
    assert job["status"] == "succeeded"
    assert malformed_ids("demo.json_sft") == set(demo)
    assert at.get("vega_lite_chart"), "bar chart of error kinds"

    at.selectbox(key="validate.kind_filter").set_value("json-schema · additional-properties").run()
    sample = at.selectbox(key="validate.sample")
    chosen_id = sample.format_func(sample.value).split(" · ")[0]
    assert demo[chosen_id]["kind"] == "extra-field"
    marked = at.code[0].value.split("\n")
    caret_at = next(i for i, line in enumerate(marked) if "^ additional-properties" in line)
    above = marked[caret_at - 1]
    assert above[marked[caret_at].index("^") :].startswith('"phone"')
    # The chosen sample shows above the chart and the listing (it opened below the fold).
    kinds = [type(e).__name__ for e in at.main]
    assert kinds.index("Code") < min(kinds.index("Dataframe"), kinds.index("UnknownElement"))
    (link,) = [p for p in at.get("page_link") if p.proto.label == "Open in Browse"]
    assert f"sample={chosen_id}" in link.proto.query_string
    assert "table=demo.json_sft" in link.proto.query_string

    # A reload (a new session) shows the settings the report on screen used.
    again = _open()
    assert again.selectbox(key="validate.job.extract").value == "fenced"
    assert again.multiselect(key="validate.rules").value == ["json", "json-schema"]
    assert any("extract fenced" in c.value for c in again.caption)


def test_json_schema_shows_and_names_the_stored_schema_it_checks(demo: dict[str, dict]) -> None:
    """Before: json-schema was proposed with an empty box, and ran against a stored schema
    the page never showed or named."""
    at = _open()
    assert at.multiselect(key="validate.rules").value == ["json", "json-schema"]
    box = at.text_area(key="validate.schema").value
    assert json.loads(box) == DEMO_JSON_SCHEMA
    named = [shown(c.value) for c in at.caption if "stored JSON Schema" in shown(c.value)]
    assert named and "requires name, age, email" in named[0], [c.value for c in at.caption]
    at.button(key="FormSubmitter:validate.job-Queue job").click().run()
    (queued,) = list_jobs()
    assert json.loads(queued["config"])["rules"] == ["json", "json-schema"]  # stored, no copy
    run_queued()
    at.run()
    assert any("json-schema (the table's stored JSON Schema" in shown(c.value) for c in at.caption)


def test_invalid_pasted_schema_is_an_error_and_runs_nothing(demo: dict[str, dict]) -> None:
    at = _open()
    at.multiselect(key="validate.rules").set_value(["json-schema"]).run()
    at.text_area(key="validate.schema").set_value('{"type": 5}').run()
    at.button(key="FormSubmitter:validate.job-Queue job").click().run()
    assert any("is invalid" in e.value for e in at.error), [e.value for e in at.error]
    assert list_jobs() == []
    assert not table_exists("demo.json_sft__validation")


def test_a_table_change_resets_rules_and_the_sample(demo: dict[str, dict]) -> None:
    """Before: the rules and the sample position chosen for one table stayed when
    another table was picked (stale json-schema rule, a failure of the old table)."""
    rows = [
        {"id": f"p{i}", "messages": [{"role": "assistant", "content": "{" if i else "{}"}]}
        for i in range(3)
    ]
    write_table("t.plain", pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA))
    at = _open()
    at.selectbox(key="validate.table").set_value("demo.json_sft").run()
    assert at.multiselect(key="validate.rules").value == ["json", "json-schema"]
    at.button(key="FormSubmitter:validate.job-Queue job").click().run()
    run_queued()
    at.run()
    at.selectbox(key="validate.sample").set_value(5).run()
    at.selectbox(key="validate.table").set_value("t.plain").run()
    assert not at.exception, at.exception
    # t.plain stores no schema: json alone, not the rules chosen for demo.json_sft.
    assert at.multiselect(key="validate.rules").value == ["json"]
    at.button(key="FormSubmitter:validate.job-Queue job").click().run()
    run_queued()
    at.run()
    sample = at.selectbox(key="validate.sample")
    assert sample.format_func(sample.value).startswith("p1 · "), "the new table's first failure"


def test_auto_takes_the_fenced_block_when_there_is_one() -> None:
    from podium.validate.batch import check_texts
    from podium.validate.extract import extract
    from podium.validate.rules import parse_rules

    fenced = 'Here is the record:\n```json\n{"a": 1}\n```'
    assert extract(fenced, "auto") == ('{"a": 1}', fenced.index("{"))
    assert extract('{"a": 1}', "auto") == ('{"a": 1}', 0)
    rules = parse_rules(["json"])
    assert check_texts(rules, [fenced, '{"a": 1}'], mode="auto") == []
    assert len(check_texts(rules, [fenced], mode="whole")) == 1


def test_the_snapshot_picker_names_a_tag(demo: dict[str, dict]) -> None:
    """Before: a tag was never shown in the snapshot pickers, only ids and times."""
    from podium.identity import User
    from podium.review.refs import create_tag

    create_tag("demo.json_sft", "reviewed", User(name="t", role="admin", source="config"))
    at = _open()
    options = at.selectbox(key="validate.snapshot").options
    assert options[0].startswith("reviewed (tag) · ") and options[0].endswith("(current)")

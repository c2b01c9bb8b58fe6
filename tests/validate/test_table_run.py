"""Whole-table runs on the real demo table in a real Iceberg catalog."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from validate_planted import check_against_planted, demo_rows

from podium.errors import Cancelled, InvalidInput
from podium.reporting import Reporter
from podium.store.catalog.catalog import load_table, table_exists
from podium.store.read.refs import TableRef
from podium.store.schema import PROP_MAPPING
from podium.store.write.write import write_table
from podium.validate.job import ValidateConfig, run_validate, validate_table
from podium.validate.report import malformed_ids, read_report

DEMO = "demo.json_sft"


def _config(**kw: object) -> ValidateConfig:
    base: dict[str, object] = {
        "table": TableRef(name=DEMO),
        "rules": ["json", "json-schema"],
        "extract": "fenced",
    }
    return ValidateConfig.model_validate({**base, **kw})


class Recording(Reporter):
    def __init__(self, cancel_after: int | None = None) -> None:
        super().__init__({"podium.lineage.job_id": "job-under-test"})
        self.progress_calls: list[tuple[int, int | None]] = []
        self.cancel_after = cancel_after

    def progress(self, done: int, total: int | None = None, message: str = "") -> None:
        self.progress_calls.append((done, total))

    def is_cancelled(self) -> bool:
        return self.cancel_after is not None and len(self.progress_calls) > self.cancel_after


def test_demo_run_finds_exactly_the_planted_rows(demo_home: Path) -> None:
    reporter = Recording()
    summary = validate_table(_config(batch_rows=700), reporter)
    failures = read_report(summary.report).to_pylist()
    check_against_planted(failures)
    rows, planted = demo_rows()
    assert (summary.rows, summary.failures, summary.failing_rows) == (
        3000,
        len(planted),
        len(planted),
    )
    assert summary.turns == sum(
        1 for r in rows.values() for m in r["messages"] if m["role"] == "assistant"
    )
    by_rule = {
        rule: sum(1 for p in planted.values() if p["rule"] == rule)
        for rule in ("json", "json-schema")
    }
    assert summary.by_rule == by_rule
    assert reporter.progress_calls[-1] == (3000, 3000)
    assert len(reporter.progress_calls) >= 5  # one per batch of 700 rows


def test_report_table_rows_and_lineage(demo_home: Path) -> None:
    summary = validate_table(_config(report="demo.checked"), Recording())
    table = load_table("demo.checked")
    props = table.properties
    snapshot = load_table(DEMO).current_snapshot().snapshot_id
    assert props["podium.kind"] == "validation-report"
    assert props["podium.lineage.validated_table"] == DEMO
    assert props["podium.lineage.validated_snapshot"] == str(snapshot)
    assert props["podium.lineage.job_id"] == "job-under-test"
    assert json.loads(props["podium.validate.rules"]) == ["json", "json-schema"]
    assert json.loads(props["podium.validate.summary"])["failures"] == summary.failures
    report = read_report("demo.checked")
    assert report.column_names == [
        "id",
        "turn",
        "role",
        "rule",
        "kind",
        "message",
        "line",
        "column",
        "offset",
        "message_offset",
        "excerpt",
    ]
    row = next(r for r in report.to_pylist() if r["kind"] == "trailing-comma")
    assert row["message"] == "trailing comma is not allowed"
    assert row["line"] >= 1 and row["column"] >= 1 and row["offset"] <= row["message_offset"]
    assert "," in row["excerpt"]


def test_malformed_ids_only_for_the_validated_snapshot(demo_home: Path) -> None:
    validate_table(_config(), Recording())
    _, planted = demo_rows()
    snapshot = load_table(DEMO).current_snapshot().snapshot_id
    assert malformed_ids(DEMO) == set(planted)
    assert malformed_ids(DEMO, snapshot) == set(planted)
    assert malformed_ids(DEMO, report="demo.nothing_here") is None


def test_parallel_run_writes_the_same_report(demo_home: Path) -> None:
    serial = read_report(validate_table(_config(report="demo.serial", workers=1)).report)
    parallel = read_report(
        validate_table(_config(report="demo.parallel", workers=2, batch_rows=400)).report
    )
    assert parallel.equals(serial)


def test_cancel_stops_before_anything_is_written(demo_home: Path) -> None:
    with pytest.raises(Cancelled):
        validate_table(_config(report="demo.cancelled", batch_rows=300), Recording(cancel_after=2))
    assert not table_exists("demo.cancelled")


def test_never_overwrites_a_table_that_is_not_a_report(demo_home: Path) -> None:
    before = load_table(DEMO).current_snapshot().snapshot_id
    with pytest.raises(InvalidInput, match="is not a validation report"):
        validate_table(_config(report=DEMO))
    assert load_table(DEMO).current_snapshot().snapshot_id == before


def test_job_kind_returns_the_pinned_report(demo_home: Path) -> None:
    outputs = run_validate(_config(report="demo.as_job"), Recording())
    snap = load_table("demo.as_job").current_snapshot().snapshot_id
    assert outputs.tables == [f"demo.as_job@{snap}"]
    assert outputs.summary["failures"] == len(demo_rows()[1])


def test_mapped_columns_null_content_and_other_roles(podium_home: Path) -> None:
    turn = pa.struct([("from", pa.string()), ("value", pa.string())])
    data = pa.table(
        {
            "uid": ["a", "b", "c"],
            "conversations": [
                [{"from": "human", "value": "hi"}, {"from": "gpt", "value": '{"ok": true}'}],
                [{"from": "human", "value": "hi"}, {"from": "gpt", "value": None}],
                [{"from": "gpt", "value": "[1, 2"}, {"from": "human", "value": "not json"}],
            ],
        },
        schema=pa.schema([("uid", pa.string()), ("conversations", pa.list_(turn))]),
    )
    mapping = {"id": "uid", "messages": "conversations", "role": "from", "content": "value"}
    write_table("ns.share", data, properties={PROP_MAPPING: json.dumps(mapping)})
    summary = validate_table(
        ValidateConfig(table=TableRef(name="ns.share"), rules=["json"], roles=["gpt"])
    )
    rows = read_report(summary.report).to_pylist()
    assert [(r["id"], r["turn"], r["role"], r["kind"]) for r in rows] == [
        ("b", 1, "gpt", "not-text"),
        ("c", 0, "gpt", "unexpected-eof"),
    ]
    assert summary.turns == 3
    # Every role: the human turns are checked too.
    every = validate_table(
        ValidateConfig(table=TableRef(name="ns.share"), rules=["json"], roles=[])
    )
    assert every.turns == 6 and every.failures == 5


def test_bad_input_fails_before_any_work(podium_home: Path) -> None:
    write_table("ns.plain", pa.table({"text": ["x"]}))
    with pytest.raises(InvalidInput, match="has no 'messages' column"):
        validate_table(ValidateConfig(table=TableRef(name="ns.plain"), rules=["json"]))
    with pytest.raises(InvalidInput, match="Unknown rule"):
        ValidateConfig(table=TableRef(name="ns.plain"), rules=["yaml"])
    assert not table_exists("ns.plain__validation")


def test_a_new_snapshot_has_no_report_until_validated(podium_home: Path) -> None:
    rows = [{"id": "x", "messages": [{"role": "assistant", "content": "{,}"}]}]
    write_table("ns.grow", pa.Table.from_pylist(rows))
    first = load_table("ns.grow").current_snapshot().snapshot_id
    validate_table(ValidateConfig(table=TableRef(name="ns.grow"), rules=["json"]))
    assert malformed_ids("ns.grow") == {"x"}
    more = [{"id": "y", "messages": [{"role": "assistant", "content": "{}"}]}]
    write_table("ns.grow", pa.Table.from_pylist(more), mode="append")
    assert malformed_ids("ns.grow") is None  # the current snapshot was never validated
    assert malformed_ids("ns.grow", first) == {"x"}


def test_clean_table_gets_an_empty_report(podium_home: Path) -> None:
    rows = [{"id": "ok", "messages": [{"role": "assistant", "content": '{"a": 1}'}]}]
    write_table("ns.clean", pa.Table.from_pylist(rows))
    summary = validate_table(ValidateConfig(table=TableRef(name="ns.clean"), rules=["json"]))
    assert summary.failures == 0
    assert malformed_ids("ns.clean") == set()  # a report exists: nothing is malformed
    assert read_report(summary.report).num_rows == 0


def test_tool_calls_use_each_rows_tools(podium_home: Path) -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "add",
                "parameters": {
                    "type": "object",
                    "properties": {"a": {"type": "integer"}},
                    "required": ["a"],
                },
            },
        }
    ]
    calls = {
        "good": '{"tool_calls": [{"type": "function", "function": {"name": "add", '
        '"arguments": "{\\"a\\": 1}"}}]}',
        "bad": '[{"type": "function", "function": {"name": "add", '
        '"arguments": "{\\"a\\": \\"x\\"}"}}]',
        "notools": '[{"type": "function", "function": {"name": "add", "arguments": "{}"}}]',
    }
    rows = [
        {
            "id": rid,
            "messages": [{"role": "user", "content": "1+1"}, {"role": "assistant", "content": c}],
            "metadata": None if rid == "notools" else json.dumps({"tools": tools}),
        }
        for rid, c in calls.items()
    ]
    write_table("ns.calls", pa.Table.from_pylist(rows))
    summary = validate_table(ValidateConfig(table=TableRef(name="ns.calls"), rules=["tool-call"]))
    found = {r["id"]: r for r in read_report(summary.report).to_pylist()}
    assert set(found) == {"bad", "notools"}
    assert (found["bad"]["kind"], found["bad"]["turn"]) == ("type", 1)
    assert calls["bad"][found["bad"]["offset"] :].startswith('\\"x\\"')
    assert found["notools"]["kind"] == "no-tools"

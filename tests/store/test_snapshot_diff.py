"""Comparing a job's output with its re-run's, on real Iceberg tables, without vLLM."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from podium.errors import InvalidInput
from podium.store.read.snapshot_diff import choose_columns, diff_tables
from podium.store.write.write import write_table

MESSAGE = pa.struct([pa.field("role", pa.string()), pa.field("content", pa.string())])


def _samples(name: str, completions: dict[str, str], created: str = "a") -> None:
    rows = [
        {
            "id": f"{name}-{pid}",  # ids embed the table name, as generated samples do
            "prompt_id": pid,
            "sample_index": 0,
            "messages": [{"role": "user", "content": pid}, {"role": "assistant", "content": c}],
            "completion": c,
            "latency_s": 0.1 if created == "a" else 0.7,
        }
        for pid, c in completions.items()
    ]
    schema = pa.schema(
        [
            ("id", pa.string()),
            ("prompt_id", pa.string()),
            ("sample_index", pa.int32()),
            ("messages", pa.list_(pa.field("element", MESSAGE))),
            ("completion", pa.string()),
            ("latency_s", pa.float64()),
        ]
    )
    write_table(name, pa.Table.from_pylist(rows, schema=schema))


ANSWERS = {f"p{i}": f"answer {i}" for i in range(8)}


def test_identical_outputs(podium_home: Path) -> None:
    _samples("ns.orig", ANSWERS)
    _samples("ns.orig__rerun_1", dict(reversed(ANSWERS.items())), created="b")
    diff = diff_tables("ns.orig", "ns.orig__rerun_1")
    assert (diff.key, diff.compared) == (["prompt_id", "sample_index"], ["completion"])
    assert (diff.identical, diff.differing, diff.only_original, diff.only_rerun) == (8, 0, 0, 0)
    assert diff.all_identical and diff.examples == []
    assert diff.to_dict()["all_identical"] is True


def test_one_differing_row_and_missing_rows(podium_home: Path) -> None:
    _samples("ns.orig", ANSWERS)
    changed = {**ANSWERS, "p3": "something else"}
    del changed["p7"]
    changed["p9"] = "new"
    _samples("ns.rerun", changed)
    diff = diff_tables("ns.orig", "ns.rerun")
    assert (diff.identical, diff.differing, diff.only_original, diff.only_rerun) == (6, 1, 1, 1)
    assert not diff.all_identical
    assert diff.examples[0] == {
        "status": "differing",
        "key": "p3 / 0",
        "original": "answer 3",
        "rerun": "something else",
    }
    assert [e["status"] for e in diff.examples] == ["differing", "only_original", "only_rerun"]
    first = diff_tables("ns.orig", "ns.rerun", examples=1)
    assert len(first.examples) == 1 and first.differing == 1


def test_sft_tables_compare_messages_by_id(podium_home: Path) -> None:
    schema = pa.schema([("id", pa.string()), ("messages", pa.list_(pa.field("element", MESSAGE)))])

    def table(name: str, last: str) -> None:
        rows = [{"id": "r1", "messages": [{"role": "user", "content": "q"}]}]
        rows.append({"id": "r2", "messages": [{"role": "assistant", "content": last}]})
        write_table(name, pa.Table.from_pylist(rows, schema=schema))

    table("ns.a", "x")
    table("ns.b", "y")
    diff = diff_tables("ns.a", "ns.b")
    assert (diff.key, diff.compared, diff.identical, diff.differing) == (["id"], ["messages"], 1, 1)


def test_tables_without_a_key_are_refused() -> None:
    with pytest.raises(InvalidInput, match="share no key column"):
        choose_columns(["step"], ["step"])
    assert choose_columns(["id", "score", "created_at"], ["id", "score"]) == (["id"], ["score"])

"""A small code-exec build end to end: the real base model on the real vLLM server
proposes inputs under a JSON-Schema constraint, the real local sandbox runs them, and
both output tables land in the real catalog with lineage; a re-run resumes."""

from __future__ import annotations

import ast

import pytest

from generators.code_exec import tables
from generators.code_exec.config import PROP_ROWS_TABLE, CodeExecConfig
from generators.code_exec.demo_functions import load_demo_functions
from podium.jobs.cards import Card
from podium.jobs.launch import run_foreground
from podium.store.catalog.catalog import load_table
from podium.store.read.read import read_arrow
from podium.store.read.refs import TableRef

pytestmark = [pytest.mark.vllm, pytest.mark.sandbox]
STATUSES = {"ok", "error", "timeout", "oom", "output_limit", "killed", tables.REJECTED}


def host_repr(code: str, entry: str, input_text: str) -> str:
    namespace: dict[str, object] = {}
    exec(compile(code, "function.py", "exec"), namespace)  # our own demo code, not model text
    args = ast.literal_eval(f"({input_text},)")
    return repr(namespace[entry](*args))  # type: ignore[operator]


def test_build_over_demo_functions_writes_rows_and_sft(vllm_model: str, unique_table: str) -> None:
    load_demo_functions()
    cfg = CodeExecConfig(
        functions=TableRef(name="demo.functions"),
        out=unique_table,
        model=vllm_model,
        inputs_per_function=4,
        limit=6,
        backend="local",
        temperature=0.7,
        max_tokens=160,
        seed=0,
        batch_size=3,
    )
    job = run_foreground(Card("code-exec-build", cfg), quiet=True)
    assert job["status"] == "succeeded", job["error"]

    rows = read_arrow(unique_table)[0].to_pylist()
    functions = read_arrow("demo.functions")[0].to_pylist()[:6]
    assert {r["function_id"] for r in rows} == {f["id"] for f in functions}
    assert {r["status"] for r in rows} <= STATUSES
    executed = [r for r in rows if r["status"] != tables.REJECTED]
    assert executed, f"the model proposed no parseable input: {[r['raw_input'] for r in rows]}"
    for row in executed:
        ast.literal_eval(f"({row['input']},)")  # only literal inputs were run
        assert row["wall_s"] > 0
    ok = [r for r in rows if r["status"] == "ok"]
    for row in ok:  # the sandbox's answer is what host Python computes
        assert row["output"] == host_repr(row["code"], row["entry_point"], row["input"])
    for row in rows:
        if row["status"] == tables.REJECTED:
            assert row["error"] and row["output"] is None

    props = load_table(unique_table).properties
    assert props["podium.kind"] == tables.ROWS_KIND
    assert props["podium.lineage.checkpoint"] == vllm_model
    assert props["podium.lineage.input"].startswith("demo.functions@")
    sft_name = f"{unique_table}_sft"
    sft = read_arrow(sft_name)[0].to_pylist()
    assert len(sft) == len(ok)
    for sample in sft:
        user, assistant = sample["messages"]
        assert user["role"] == "user" and "What does `f(" in user["content"]
        assert assistant["content"] == next(r["output"] for r in ok if r["id"] == sample["id"])
    assert load_table(sft_name).properties[PROP_ROWS_TABLE] == unique_table

    # The same card again: every function is done, so no new rows are written.
    snapshots = len(load_table(unique_table).snapshots())
    again = run_foreground(Card("code-exec-build", cfg), quiet=True)
    assert again["status"] == "succeeded"
    assert len(load_table(unique_table).snapshots()) == snapshots

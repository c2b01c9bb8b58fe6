"""The generate job end to end: a real prompts table, a real vLLM server, real commits."""

from __future__ import annotations

import json
import os
import signal

import pyarrow as pa
import pytest

from generators.generate import GenerateConfig, run_generate
from generators.prompts import load_prompts, prompt_messages
from podium.errors import InvalidInput, PodiumError
from podium.models.serving import _row
from podium.reporting import Reporter
from podium.store.catalog.catalog import load_table
from podium.store.read.read import read_arrow
from podium.store.read.refs import TableRef
from podium.store.schema import SFT_ARROW_SCHEMA
from podium.store.write.write import write_table


def _prompts_table(name: str, count: int) -> str:
    rows = [
        {
            "id": f"p{i}",
            "messages": [
                {"role": "user", "content": f"Name fruit number {i}."},
                {"role": "assistant", "content": "apple"},
                {"role": "user", "content": "Another one, in one word."},
                {"role": "assistant", "content": "pear"},
            ],
            "system": "Answer briefly.",
        }
        for i in range(count)
    ]
    rows.append({"id": "only-assistant", "messages": [{"role": "assistant", "content": "x"}]})
    write_table(name, pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA))
    return name


def test_prompt_is_conversation_before_last_assistant_turn():
    msgs = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "c"},
        {"role": "assistant", "content": "d"},
    ]
    assert prompt_messages(msgs) == msgs[:3]
    assert prompt_messages(msgs[:1], "sys") == [{"role": "system", "content": "sys"}, msgs[0]]


def test_prompt_column_and_skipped_rows(podium_home):
    write_table("t.plain", pa.table({"id": ["a", "b", "a"], "question": ["Q1", "", "Q3"]}))
    prompts, snapshot, skipped = load_prompts(TableRef(name="t.plain"), "question")
    assert [(p.prompt_id, p.messages) for p in prompts] == [
        ("a", [{"role": "user", "content": "Q1"}])
    ]
    assert skipped == 2 and snapshot is not None
    with pytest.raises(InvalidInput, match="no column 'nope'"):
        load_prompts(TableRef(name="t.plain"), "nope")
    with pytest.raises(InvalidInput, match="no messages column"):
        load_prompts(TableRef(name="t.plain"))


class Recorder(Reporter):
    def __init__(self, lineage=None, on_first_batch=None):
        super().__init__(lineage)
        self.progress_calls, self.metrics, self.on_first_batch = [], [], on_first_batch

    def progress(self, done, total=None, message=""):
        self.progress_calls.append((done, total))

    def metric(self, step, values):
        self.metrics.append(values)
        if self.on_first_batch and len(self.metrics) == 1:
            self.on_first_batch()


@pytest.mark.vllm
def test_generate_writes_samples_with_lineage_and_token_counts(vllm_model, unique_table):
    src = _prompts_table(unique_table, 5)
    out = unique_table + "_out"
    cfg = GenerateConfig(
        input=TableRef(name=src),
        out=out,
        model="base",
        n=2,
        max_tokens=16,
        temperature=0.8,
        seed=7,
        batch_size=2,
    )
    reporter = Recorder({"podium.lineage.job_id": "job-test"})
    result = run_generate(cfg, reporter)
    data, _ = read_arrow(out)
    rows = data.to_pylist()
    assert len(rows) == 10 and result.summary["samples_written"] == 10
    assert result.summary["skipped_rows"] == 1
    assert {(r["prompt_id"], r["sample_index"]) for r in rows} == {
        (f"p{i}", s) for i in range(5) for s in (0, 1)
    }
    for r in rows:
        assert r["checkpoint"] == vllm_model
        assert r["messages"][0] == {"role": "system", "content": "Answer briefly."}
        assert r["messages"][-2]["content"] == "Another one, in one word."
        assert r["messages"][-1] == {"role": "assistant", "content": r["completion"]}
        assert 0 < r["completion_tokens"] <= 16 and r["prompt_tokens"] > 10
        assert r["finish_reason"] in ("stop", "length") and r["error"] is None
        assert json.loads(r["sampling"])["seed"] == 7
    assert result.summary["completion_tokens"] == sum(r["completion_tokens"] for r in rows)
    props = load_table(out).properties
    assert props["podium.kind"] == "samples"
    assert props["podium.lineage.job_id"] == "job-test"
    assert props["podium.lineage.checkpoint"] == vllm_model
    assert props["podium.lineage.input"].startswith(src + "@")
    assert len(load_table(out).snapshots()) == 3  # one commit per batch of 2 prompts
    assert reporter.progress_calls[-1] == (5, 5)
    assert all(m["tokens_per_s"] > 0 for m in reporter.metrics)


@pytest.mark.vllm
def test_json_schema_samples_validate(vllm_model, unique_table):
    import jsonschema

    schema = {
        "type": "object",
        "properties": {"fruit": {"type": "string", "maxLength": 15}},
        "required": ["fruit"],
        "additionalProperties": False,
    }
    src = _prompts_table(unique_table, 3)
    out = unique_table + "_json"
    run_generate(
        GenerateConfig(input=TableRef(name=src), out=out, json_schema=schema, max_tokens=32),
        Reporter(),
    )
    for row in read_arrow(out)[0].to_pylist():
        jsonschema.validate(json.loads(row["completion"]), schema)


@pytest.mark.vllm
def test_rerun_skips_done_prompts_and_refuses_foreign_table(vllm_model, unique_table):
    src = _prompts_table(unique_table, 4)
    out = unique_table + "_out"
    base = dict(input=TableRef(name=src), out=out, max_tokens=8, batch_size=2)
    run_generate(GenerateConfig(**base, limit=2), Reporter())
    second = run_generate(GenerateConfig(**base), Reporter())
    assert second.summary["resumed_from"] == 2 and second.summary["samples_written"] == 2
    ids = read_arrow(out)[0].column("prompt_id").to_pylist()
    assert sorted(ids) == ["p0", "p1", "p2", "p3"]
    other = _prompts_table(unique_table + "_other", 1)
    with pytest.raises(InvalidInput, match="not written by this generation"):
        run_generate(GenerateConfig(**{**base, "input": TableRef(name=other)}), Reporter())


@pytest.mark.vllm
def test_killed_server_fails_clearly_keeps_rows_and_resume_has_no_duplicates(
    vllm_model, unique_table
):
    src = _prompts_table(unique_table, 6)
    out = unique_table + "_out"
    cfg = GenerateConfig(
        input=TableRef(name=src), out=out, max_tokens=8, batch_size=2, server_restarts=0
    )

    def kill_server() -> None:
        os.killpg(_row(vllm_model).pid, signal.SIGKILL)

    with pytest.raises(PodiumError, match=r"did not answer.*2 of 6 prompts are saved") as err:
        run_generate(cfg, Recorder(on_first_batch=kill_server))
    assert "run the same card again to resume" in str(err.value)
    kept = read_arrow(out)[0].column("prompt_id").to_pylist()
    assert sorted(kept) == ["p0", "p1"]  # the committed batch survived the crash
    # A re-run of the same config restarts the server and finishes the rest once.
    result = run_generate(cfg.model_copy(update={"server_restarts": 1}), Reporter())
    assert result.summary["resumed_from"] == 2
    ids = read_arrow(out)[0].column("id").to_pylist()
    prompt_ids = read_arrow(out)[0].column("prompt_id").to_pylist()
    assert len(ids) == len(set(ids)) == 6
    assert sorted(prompt_ids) == [f"p{i}" for i in range(6)]


@pytest.mark.vllm
def test_cancel_mid_batch_stops_and_keeps_committed_batches(vllm_model, unique_table):
    from podium.errors import Cancelled

    src = _prompts_table(unique_table, 4)
    out = unique_table + "_out"
    cfg = GenerateConfig(
        input=TableRef(name=src), out=out, max_tokens=8, batch_size=2, concurrency=1
    )

    class CancelMidSecondBatch(Recorder):
        asked_after_first_batch = 0

        def is_cancelled(self) -> bool:
            # Asked before batch 2 starts (no), then after its first request (yes).
            if self.metrics:
                self.asked_after_first_batch += 1
            return self.asked_after_first_batch >= 2

    with pytest.raises(Cancelled):
        run_generate(cfg, CancelMidSecondBatch())
    # The interrupted batch wrote nothing; the first one is intact.
    assert sorted(read_arrow(out)[0].column("prompt_id").to_pylist()) == ["p0", "p1"]

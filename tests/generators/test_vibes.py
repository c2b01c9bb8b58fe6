"""Vibe-check submissions in a real Iceberg table: concurrency, listing, eval sets."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from generators.generate import GenerateConfig, run_generate
from generators.vibes import (
    VIBES_TABLE,
    all_tags,
    answer_stream,
    build_eval_set,
    list_vibes,
    submit_vibe,
)
from podium.errors import InvalidInput, NotFound
from podium.reporting import Reporter
from podium.store.catalog.catalog import load_table
from podium.store.read.read import read_arrow
from podium.store.read.refs import TableRef


def test_concurrent_submitters_lose_nothing(podium_home):
    def submit(i: int) -> str:
        return submit_vibe(f"prompt {i}", "ideal", ["even" if i % 2 == 0 else "odd"], "m", "a")

    with ThreadPoolExecutor(max_workers=6) as pool:
        ids = list(pool.map(submit, range(18)))
    stored = list_vibes()
    assert sorted(r["id"] for r in stored) == sorted(ids)
    assert sorted(r["prompt"] for r in stored) == sorted(f"prompt {i}" for i in range(18))
    assert len(read_arrow(VIBES_TABLE)[0]) == 18  # no duplicates either


def test_list_filters_by_tag_and_search(podium_home):
    submit_vibe("Write JSON for a cat", "valid JSON", "json, Animals", "m", "{cat")
    submit_vibe("What is 7*8?", "56", ["math"], "m", "54")
    assert all_tags() == ["animals", "json", "math"]
    assert [r["prompt"] for r in list_vibes(tags=["math"])] == ["What is 7*8?"]
    assert [r["ideal"] for r in list_vibes(search="cat")] == ["valid JSON"]
    with pytest.raises(InvalidInput, match="cannot be empty"):
        submit_vibe("   ")


def test_eval_set_is_a_prompts_table_with_lineage(podium_home):
    with pytest.raises(NotFound):
        build_eval_set("evals.none", tags=["x"])
    a = submit_vibe("Prompt A", "good A", ["json"], "m", "bad A")
    submit_vibe("Prompt B", "good B", ["math"], "m", "bad B")
    c = submit_vibe("Prompt C", "good C", ["json"], "m", "bad C")
    assert build_eval_set("evals.json", tags=["json"]) == 2
    rows = read_arrow("evals.json")[0].to_pylist()
    assert sorted(r["id"] for r in rows) == sorted([a, c])
    row = next(r for r in rows if r["id"] == a)
    assert row["messages"] == [{"role": "user", "content": "Prompt A"}]
    assert json.loads(row["metadata"])["ideal"] == "good A"
    props = load_table("evals.json").properties
    assert props["podium.kind"] == "eval-set"
    assert props["podium.lineage.input"].startswith(VIBES_TABLE + "@")
    assert build_eval_set("evals.picked", ids=[c]) == 1
    with pytest.raises(InvalidInput, match="give tags"):
        build_eval_set("evals.bad")
    with pytest.raises(InvalidInput, match="No submissions match"):
        build_eval_set("evals.bad", tags=["nope"])


@pytest.mark.vllm
def test_answer_streams_and_eval_set_runs_through_generate(vllm_model, unique_table):
    pieces = list(answer_stream(vllm_model, "Say hello in French.", max_tokens=12))
    assert len(pieces) > 1 and "".join(pieces).strip()
    tag = unique_table.split(".")[1]
    submit_vibe("Say hello in French.", "Bonjour", [tag], vllm_model, "".join(pieces))
    submit_vibe("Spell 'cat' backwards.", "tac", [tag], vllm_model, "cat")
    evals = unique_table + "_evals"
    assert build_eval_set(evals, tags=[tag]) == 2
    out = unique_table + "_gen"
    run_generate(GenerateConfig(input=TableRef(name=evals), out=out, max_tokens=8), Reporter())
    prompts = sorted(r["messages"][0]["content"] for r in read_arrow(out)[0].to_pylist())
    assert prompts == ["Say hello in French.", "Spell 'cat' backwards."]


def test_eval_set_message_counts_in_words() -> None:
    """Before: "Wrote 1 prompts"."""
    from generators.vibes import eval_set_written

    assert eval_set_written(1, "evals.x") == "Wrote 1 prompt to evals.x."
    assert eval_set_written(1200, "evals.x") == "Wrote 1,200 prompts to evals.x."

"""A new comparison's defaults on the demo data give the base model answers that pass
their checks (issue 45: at 64 max tokens every JSON answer was cut, so every model
passed 0%; measured: the base answers 7 of the first 16 prompts with valid JSON, none of
the first 4). Real vLLM, the real base model, the card the page's defaults make."""

from __future__ import annotations

import pytest

from generators.generate import run_generate
from podium.app.views.compare import model as cm
from podium.compare.checks import check_answers, compile_rules
from podium.compare.job import CompareConfig
from podium.reporting import Reporter
from podium.store.catalog.catalog import load_table
from podium.store.read.read import read_small_table
from podium.store.write.demo import load_demo

pytestmark = pytest.mark.vllm


def test_new_comparison_defaults_pass_checks_for_the_base(vllm_model, unique_table):
    load_demo()
    # The JSON demo set, as when the person last looked at it (in Browse, say).
    table = cm.default_prompt_table(last="demo.json_sft")
    assert table == "demo.json_sft"
    values = cm.new_form_values([vllm_model, "other"], table)
    assert values["checks"] == ["json"] and values["max_tokens"] >= 256
    cfg = CompareConfig(models=[vllm_model, "other"], table={"name": table}, **values)
    run_generate(cfg.generate_config(vllm_model, unique_table), Reporter())
    samples = load_table(unique_table)
    rows = read_small_table(samples, samples.current_snapshot().snapshot_id).to_pylist()
    assert len(rows) == values["limit"] == cm.NEW_LIMIT
    answers = [r["completion"] for r in rows]
    checks = check_answers(
        answers,
        [r["finish_reason"] for r in rows],
        compile_rules(cfg.checks),
        [None] * len(rows),
        cfg.extract,
    )
    passed = [c for c in checks if c.passed]
    assert passed, answers  # at least one answer is whole, parseable JSON
    assert not all(c.truncated for c in checks), answers

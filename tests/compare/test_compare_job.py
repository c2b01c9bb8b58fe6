"""The compare job: reuse of existing samples by key, checks on every answer, lineage."""

from __future__ import annotations

import json

import pytest
from compare_data import GOOD, PROMPTS, register_dead, write_samples
from pydantic import ValidationError

from generators.prompts import load_prompts
from podium.compare.job import CompareConfig, run_compare
from podium.compare.sample_sets import SampleKey, find_samples
from podium.compare.table import list_comparisons, load_comparison
from podium.errors import InvalidInput
from podium.models import get_model
from podium.reporting import Reporter
from podium.store.catalog.catalog import load_table, table_exists
from podium.store.read.refs import TableRef


def _key(cfg: CompareConfig, model: str) -> SampleKey:
    _, snapshot, _ = load_prompts(cfg.table)
    ref = f"{cfg.table.name}@{snapshot}"
    gen = cfg.generate_config(model, cfg.out)  # as the job keys its sample sets
    return SampleKey.of(
        get_model(model),
        ref,
        gen.model_copy(update={"table": TableRef(name=cfg.table.name, snapshot_id=snapshot)}),
    )


def test_existing_samples_are_reused_and_no_request_is_sent(compare_config):
    # Both models live on a closed port: any generation would fail the job.
    before = {t: len(load_table(t).snapshots()) for t in ("gen.alpha", "gen.omega")}
    result = run_compare(compare_config, Reporter({"podium.lineage.job_id": "job-x"}))
    assert result.summary["sample_tables"] == {"alpha": "gen.alpha", "omega": "gen.omega"}
    assert {t: len(load_table(t).snapshots()) for t in before} == before
    assert not any(table_exists(_key(compare_config, m).own_table()) for m in ("alpha", "omega"))
    comparison = load_comparison("cmp.colours")
    assert comparison.models == ["alpha", "omega"]
    assert comparison.sample_tables == {"alpha": "gen.alpha", "omega": "gen.omega"}
    assert [it.prompt_id for it in comparison.items] == [p[0] for p in PROMPTS]
    good = load_table("gen.alpha").scan().to_arrow().to_pylist()
    ids = {r["prompt_id"]: r["id"] for r in good}
    assert all(it.answer_of("alpha").sample_id == ids[it.prompt_id] for it in comparison.items)
    props = load_table("cmp.colours").properties
    assert props["podium.lineage.job_id"] == "job-x"
    assert props["podium.kind"] == "comparison"
    assert "cmp.colours" in [n for n in list_comparisons()]


def test_every_answer_is_checked_by_rules_and_sandboxed_tests(comparison):
    p0, p2, p3 = (comparison.item(p) for p in ("p0", "p2", "p3"))
    assert p0.answer_of("alpha").checks.results["json"]["ok"]
    assert not p0.answer_of("omega").checks.results["json"]["ok"]
    assert p0.answer_of("omega").failed_checks == ["json"]
    # The code prompt carries tests: the fenced add() passes them, the wrong one fails.
    assert p2.answer_of("alpha").checks.results["tests"]["ok"]
    assert not p2.answer_of("omega").checks.results["tests"]["ok"]
    assert "AssertionError" in p2.answer_of("omega").checks.results["tests"]["message"]
    assert p3.answer_of("omega").checks.words == 3
    assert p3.answer_of("alpha").checks.passed and not p3.answer_of("omega").checks.passed
    assert comparison.item("p1").differ() is False and p0.differ()


def test_partial_or_differently_sampled_samples_are_not_reused(compare_config):
    key = _key(compare_config, "alpha")
    all_ids = [p[0] for p in PROMPTS]
    assert find_samples(key, all_ids) == "gen.alpha"
    partial = {k: v for k, v in GOOD.items() if k != "p3"}
    other = compare_config.model_copy(update={"max_tokens": 64})
    write_samples("gen.alpha_64", "alpha", compare_config.table.name, other, partial)
    assert find_samples(_key(other, "alpha"), all_ids) is None  # p3 missing
    assert find_samples(_key(other, "alpha"), all_ids[:3]) == "gen.alpha_64"
    hotter = compare_config.model_copy(update={"temperature": 0.9})
    assert find_samples(_key(hotter, "alpha"), all_ids) is None


def test_rerun_overwrites_its_comparison_but_not_another(compare_config):
    run_compare(compare_config, Reporter())
    run_compare(compare_config, Reporter())
    assert len(load_comparison("cmp.colours").items) == len(PROMPTS)
    register_dead("third")
    other = compare_config.model_copy(update={"models": ["alpha", "third"]})
    with pytest.raises(InvalidInput, match="already exists and is not this comparison"):
        run_compare(other, Reporter())


def test_config_rejects_bad_model_lists_and_rules():
    ref = TableRef(name="a.b")
    with pytest.raises(ValidationError, match="2 to 16 models"):
        CompareConfig(models=["base"], input=ref, out="c.d")
    with pytest.raises(ValidationError, match="named twice"):
        CompareConfig(models=["a", "a"], input=ref, out="c.d")
    with pytest.raises(InvalidInput, match="Unknown rule"):
        CompareConfig(models=["a", "b"], input=ref, out="c.d", checks=["jsn"])
    card = json.loads(CompareConfig(models=["a", "b"], input=ref, out="c.d").model_dump_json())
    assert card["temperature"] == 0.0 and card["seed"] == 0  # greedy and repeatable by default


def test_code_prompts_with_expected_output_run_in_the_sandbox():
    from podium.compare.checks import check_answers, code_task, compile_rules

    task = code_task(json.dumps({"expected_output": "5"}))
    assert code_task('{"tests": "assert f() == 1"}').tests and code_task("{}") is None
    answers = ["```python\nprint(2 + 3)\n```", "print(2 * 3)", "while True: pass"]
    checks = check_answers(
        answers, ["stop", "stop", "length"], compile_rules(["python"]), [task, task, task]
    )
    assert [c.results["output"]["ok"] for c in checks] == [True, False, False]
    assert "printed '6'" in checks[1].results["output"]["message"]
    assert [c.results["python"]["ok"] for c in checks] == [False, True, True]  # fences
    assert checks[2].truncated and not checks[0].truncated
    fenced = check_answers(answers[:1], ["stop"], compile_rules(["python"]), [None], "fenced")
    assert fenced[0].results == {"python": {"ok": True, "message": ""}}


def test_comparison_rows_stream_into_several_files_and_one_snapshot(compare_config, monkeypatch):
    import podium.compare.job as compare_job
    from podium.config import reset_settings

    monkeypatch.setattr(compare_job, "CHUNK_PROMPTS", 1)
    monkeypatch.setenv("PODIUM_TARGET_FILE_BYTES", "1")
    reset_settings()
    result = run_compare(compare_config, Reporter())
    table = load_table("cmp.colours")
    assert len(table.snapshots()) == 1 and len(table.inspect.files()) == 2 * len(PROMPTS)
    comparison = load_comparison("cmp.colours")
    assert [it.prompt_id for it in comparison.items] == [p[0] for p in PROMPTS]
    # Counted while streaming: alpha's fenced code on p2 is not JSON, omega passes only p1.
    assert result.summary["pass_rate"] == {"alpha": 0.75, "omega": 0.25}

"""The base model as a pairwise judge on a real vLLM server (the session's), with guided
decoding: every verdict parses, both orders are asked, the CLI writes the verdicts; a
named judge (`podium judge add`) runs by its name with its own prompt."""

from __future__ import annotations

import json
import sys
import uuid

import cli_fork
import pytest
from compare_data import BAD, GOOD, register_dead, write_prompts, write_samples

from podium.compare.job import CompareConfig, run_compare
from podium.compare.judge import list_verdicts
from podium.compare.judge_prompts import judge_prompt
from podium.compare.judge_scores import list_scores
from podium.store.read.refs import TableRef

pytestmark = [pytest.mark.vllm]


STRICT = """Judge strictly which answer follows the request better.
Request: {question}
Answer A: {answer_a}
Answer B: {answer_b}"""


def test_base_model_judges_every_pair_in_both_orders_and_every_verdict_parses(vllm_model, tmp_path):
    tag = uuid.uuid4().hex[:8]
    prompts = write_prompts(f"t.judge_prompts_{tag}")
    models = [register_dead(f"good-{tag}"), register_dead(f"bad-{tag}")]
    cfg = CompareConfig(
        models=models, input=TableRef(name=prompts), out=f"t.judge_cmp_{tag}", max_tokens=32
    )
    write_samples(f"t.judge_good_{tag}", models[0], prompts, cfg, GOOD)
    write_samples(f"t.judge_bad_{tag}", models[1], prompts, cfg, BAD)
    from podium.reporting import Reporter

    run_compare(cfg, Reporter())
    cmd = [sys.executable, "-m", "podium.cli", "judge", "run", "--comparison", cfg.out]
    cmd += ["--judge", vllm_model]
    done = cli_fork.run(cmd, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = list_verdicts(cfg.out)
    assert len(rows) == 4  # one pair per prompt, each row both orders
    assert all(r["voter"] == f"judge:{vllm_model}" for r in rows)
    assert [r["problem"] for r in rows] == [None] * 4  # guided decoding: all parse
    assert all(r["verdict_ab"] in ("A", "B", "tie") for r in rows)
    assert all(r["verdict_ba"] in ("A", "B", "tie") for r in rows)
    assert all(r["latency_s"] > 0 for r in rows)
    # A second run skips what this judge and prompt version already judged.
    again = cli_fork.run(cmd, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-2000:]
    assert len(list_verdicts(cfg.out)) == 4
    agreement = cli_fork.run(
        [sys.executable, "-m", "podium.cli", "judge", "agreement", cfg.out, "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert agreement.returncode == 0, agreement.stderr[-2000:]
    judge = json.loads(agreement.stdout)["judges"][f"judge:{vllm_model}@pairwise-v1"]
    assert judge["unparsed"] == 0 and judge["position_pairs"] == 4
    # A named judge: the same server with its own prompt, run by its name.
    prompt = tmp_path / "strict.txt"
    prompt.write_text(STRICT)
    name = f"strict-{tag}"
    add = [sys.executable, "-m", "podium.cli", "judge", "add", name, "--model", vllm_model]
    added = cli_fork.run(
        add + ["--prompt-file", str(prompt)], capture_output=True, text=True, timeout=120
    )
    assert added.returncode == 0, added.stderr
    named = cli_fork.run(
        cmd[:-1] + [name], capture_output=True, text=True, timeout=900
    )  # --judge NAME
    assert named.returncode == 0, named.stderr[-2000:]
    rows = list_verdicts(cfg.out, name)
    assert len(rows) == 4 and {r["voter"] for r in rows} == {f"judge:{name}"}
    assert {r["prompt_version"] for r in rows} == {judge_prompt("pairwise", STRICT).version}
    assert [r["problem"] for r in rows] == [None] * 4  # its prompt too: every verdict parses
    # A rubric judge scores each model's answer; the mean per model sits beside the pairs.
    grader = [*add[:5], f"grader-{tag}", "--model", vllm_model, "--mode", "rubric"]
    added = cli_fork.run(grader, capture_output=True, text=True, timeout=120)
    assert added.returncode == 0, added.stderr
    scored = cli_fork.run(cmd[:-1] + [f"grader-{tag}"], capture_output=True, text=True, timeout=900)
    assert scored.returncode == 0, scored.stderr[-2000:]
    scores = list_scores(cfg.out)
    assert len(scores) == 8 and [s["problem"] for s in scores] == [None] * 8  # all parse
    assert all(1 <= s["score"] <= 10 for s in scores)
    report = cli_fork.run(agreement.args, capture_output=True, text=True, timeout=300)
    means = json.loads(report.stdout)["rubric"][f"judge:grader-{tag}@rubric-v1"]
    assert {m: s["scored"] for m, s in means.items()} == {models[0]: 4, models[1]: 4}

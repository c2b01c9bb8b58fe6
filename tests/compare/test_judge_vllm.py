"""The base model as a pairwise judge on a real vLLM server (the session's), with guided
decoding: every verdict parses, both orders are asked, the CLI writes the verdicts."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest
from compare_data import BAD, GOOD, register_dead, write_prompts, write_samples

from podium.compare.job import CompareConfig, run_compare
from podium.compare.judge import list_verdicts
from podium.store.read.refs import TableRef

pytestmark = [pytest.mark.vllm]


def test_base_model_judges_every_pair_in_both_orders_and_every_verdict_parses(vllm_model):
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
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = list_verdicts(cfg.out)
    assert len(rows) == 4  # one pair per prompt, each row both orders
    assert all(r["voter"] == f"judge:{vllm_model}" for r in rows)
    assert [r["problem"] for r in rows] == [None] * 4  # guided decoding: all parse
    assert all(r["verdict_ab"] in ("A", "B", "tie") for r in rows)
    assert all(r["verdict_ba"] in ("A", "B", "tie") for r in rows)
    assert all(r["latency_s"] > 0 for r in rows)
    # A second run skips what this judge and prompt version already judged.
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-2000:]
    assert len(list_verdicts(cfg.out)) == 4
    agreement = subprocess.run(
        [sys.executable, "-m", "podium.cli", "judge", "agreement", cfg.out, "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert agreement.returncode == 0, agreement.stderr[-2000:]
    judge = json.loads(agreement.stdout)["judges"][f"judge:{vllm_model}@pairwise-v1"]
    assert judge["unparsed"] == 0 and judge["position_pairs"] == 4

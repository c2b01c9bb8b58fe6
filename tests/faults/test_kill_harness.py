"""Seeded SIGKILLs of the worker (its process group and the job's) across every job kind.

CI runs a short version (8 kills: one a kind, and one of the two training kinds); `make
soak-kill` runs the same tests with PODIUM_FAULT_SCALE=8 (over 100 kills) and writes
test-artifacts/soak-kill-*.json.
Each trial's checks are in tests/faults/harness.py.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from cases import cpu_cases, vllm_cases
from harness import Case, KillHarness, Trial, write_summary

from podium.models.registry import add_endpoint
from podium.models.serving import ensure_server

pytestmark = pytest.mark.faults

SEED = int(os.environ.get("PODIUM_FAULT_SEED", "20261126"))
SCALE = int(os.environ.get("PODIUM_FAULT_SCALE", "1"))
ONLY = set(filter(None, os.environ.get("PODIUM_FAULT_KINDS", "").split(",")))
SLOW = {"sft", "grpo", "generate", "compare"}  # a kill of these costs tens of seconds
# The training kinds share one worker path (a trainer process under the job's group); CI
# kills one of them, chosen by the seed, and `make soak-kill` both.
TRAINING = ("sft", "grpo")
SKIPPED_IN_CI = {random.Random(SEED).choice(TRAINING)} if SCALE == 1 else set()


def kills_for(kind: str) -> int:
    """CI (scale 1): one kill a kind, 8 in all; `make soak-kill` (scale 8): 112.

    CI killed import, export and review-edit twice each: an import or export trial took
    8-9 s in CI (a worker restarted, the job's end awaited, a re-run), not the few
    seconds that made them look cheap, and more seeded moments of one kind are what the
    soak's 16 a kind are for."""
    if kind in SLOW or SCALE == 1:
        return SCALE
    return 2 * SCALE


def run_cases(harness: KillHarness, cases: list[Case]) -> list[Trial]:
    trials: list[Trial] = []
    try:
        for case in cases:
            if (ONLY and case.kind not in ONLY) or (not ONLY and case.kind in SKIPPED_IN_CI):
                continue
            harness.calibrate(case)
            trials += [harness.trial(case) for _ in range(kills_for(case.kind))]
    finally:
        harness.close()
    return trials


def check(trials: list[Trial], artifacts: Path, name: str) -> None:
    report = write_summary(artifacts / f"soak-kill-{name}.json", trials)
    print(json.dumps({k: v for k, v in report.items() if k != "trial_log"}, indent=1))
    assert report["problems"] == []
    # The seeds put most signals while the job still ran; a few finishing first is fine.
    assert report["kills"] >= len(trials) // 2


@pytest.mark.sandbox
@pytest.mark.train
def test_kills_across_cpu_kinds(faults_home: Path, tiny_base: str, artifacts_dir: Path) -> None:
    harness = KillHarness(faults_home, random.Random(SEED))
    trials = run_cases(harness, cpu_cases(faults_home, tiny_base))
    check(trials, artifacts_dir, "cpu")


@pytest.mark.vllm
def test_kills_of_generate_and_compare(
    vllm_model: str, fast_heartbeats: None, unique_table: str, artifacts_dir: Path, tmp_path: Path
) -> None:
    from cases import chat_rows

    from podium.store.schema import SFT_SCHEMA
    from podium.store.write.write import write_table

    url, _ = ensure_server(vllm_model)
    twin = f"{vllm_model}-twin"
    add_endpoint(url, twin, remote_model=vllm_model)
    write_table(unique_table, chat_rows(6, prefix="p"), schema=SFT_SCHEMA)
    harness = KillHarness(tmp_path, random.Random(SEED + 1))
    trials = run_cases(harness, vllm_cases(vllm_model, unique_table))
    check(trials, artifacts_dir, "vllm")

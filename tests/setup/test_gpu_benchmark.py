"""benchmarks/gpu.py on CPU (`--device cpu`), as two separate commands sharing one
PODIUM_HOME: the second once failed on the first's `bench-tiny`, registered into a temp
dir that no longer existed. Each run now has a fresh home; both sides do the same work
(GRPO rewards that vary, the same on both sides) with step 1 as untimed warm-up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.train


def bench(what: str, home: Path) -> dict:
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "gpu.py"), what, "--model", "tiny"]
        + ["--device", "cpu", "--steps", "3", "--repeats", "1", "--json"],
        env={**os.environ, "PODIUM_HOME": str(home)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)[what]


def test_sft_then_grpo_as_two_commands_compare_the_same_work(tmp_path: Path):
    sft = bench("sft", tmp_path)
    grpo = bench("grpo", tmp_path)
    for report in (sft, grpo):
        assert report["ratio"] > 0 and report["ratio_cpu"] > 0
        assert [r["timed_steps"] for side in report["runs"].values() for r in side] == [2, 2]
    assert sft["median"]["plain"] > 0 and sft["median"]["podium"] > 0
    stds = grpo["reward_std"]
    # One reward function, one seed, the same rows: completions score alike and vary.
    assert stds["plain"] > 0 and stds["podium"] == pytest.approx(stds["plain"], rel=0.05)

"""The GPU tests' bodies on CPU (PODIUM_GPU_REHEARSAL=1, tests/gpu/conftest.py), so the
code `make test-gpu` runs is checked on every CI run, not only when a GPU is lent. The
GPU bundle's rehearsal (tests/setup/test_gpu_bundle.py) runs the others on CPU; this one
runs the two it skips for want of a vLLM server: the generation job, and colocated async
GRPO (on CPU its learner is not on the replica's GPU, so its pushes take gloo, checked by
the same log-prob probe; the CUDA IPC path itself needs a GPU). The colocated-vLLM
GRPO test stays skipped in both (no vLLM in the project venv); its path runs on CPU in
tests/trainers/test_colocated_vllm.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.train, pytest.mark.vllm, pytest.mark.sandbox]


def test_the_gpu_tests_run_on_cpu_in_a_rehearsal(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs"]
        + ["-m", "gpu", "-k", "generation_job or colocated_async", "tests/gpu"],
        cwd=REPO,
        env={**os.environ, "PODIUM_GPU_REHEARSAL": "1", "PODIUM_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
    )
    tail = done.stdout[-5000:] + done.stderr[-2000:]
    assert done.returncode == 0, tail
    assert "2 passed, 5 deselected" in done.stdout, tail

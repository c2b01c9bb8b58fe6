"""GRPO with vLLM colocated in the trainer, on CPU: the path the `gpu` preset takes on
CUDA, run here with vLLM's CPU build. The project venv has no vLLM (it lives in
.venv-vllm), so this builds the training venv a CUDA image gets (`PODIUM_TORCH=system`
on .venv-vllm's interpreter: its torch and vLLM, Podium's other packages added) and runs
colocated_vllm_checks.py inside it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.vllm, pytest.mark.train]


def test_colocated_grpo_in_a_venv_holding_vllm(tmp_path: Path):
    from podium.models.vllm_launch import vllm_python

    layer = tmp_path / "venv"
    env = {
        **os.environ,
        "PODIUM_TORCH": "system",
        "PODIUM_ACCEL": "cpu",
        "PYTHON": vllm_python(),
        "PODIUM_EXTRAS": "train",
        "PODIUM_BASE_WEIGHTS": "skip",
    }
    subprocess.run(["bash", "scripts/setup_python.sh", str(layer)], cwd=REPO, env=env, check=True)
    python = str(layer / "bin" / "python")
    pins = ["-c", str(REPO / "requirements.lock"), "pytest", "pytest-timeout"]
    subprocess.run([python, "-m", "pip", "install", "-q", *pins], check=True)
    done = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA"]
        + [str(REPO / "tests" / "trainers" / "colocated_vllm_checks.py")],
        cwd=REPO,
        env={**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "PODIUM_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
    )
    sys.stdout.write(done.stdout[-6000:])
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert "2 passed" in done.stdout

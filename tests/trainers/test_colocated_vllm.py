"""GRPO with vLLM colocated in the trainer, on CPU: the path the `gpu` preset takes on
CUDA, run here with vLLM's CPU build. The project venv has no vLLM (it lives in
.venv-vllm), so this sets up the training venv a CUDA image without a registry gets, as
README "GPUs" tells it: the host's `pip freeze` (.venv-vllm's: its torch and vLLM), a
wheelhouse of what it lacks (scripts/wheelhouse.py), then `PODIUM_TORCH=system` set-up
with no index at all. colocated_vllm_checks.py then runs inside that venv."""

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

    host = vllm_python()
    freeze = subprocess.run(
        [host, "-m", "pip", "freeze"], capture_output=True, text=True, check=True
    ).stdout
    (tmp_path / "host.txt").write_text(freeze)
    wheels = tmp_path / "wheelhouse"
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "wheelhouse.py"), str(tmp_path / "host.txt")]
        + [str(wheels), "--accel", "cpu", "--python", "3.11", "--part-mib", "60"],
        check=True,
    )
    parts = sorted(str(part) for part in wheels.iterdir())
    assert len(parts) >= 2  # pyarrow (52 MiB), DuckDB, Streamlit... do not fit in one
    layer = tmp_path / "venv"
    env = {
        **os.environ,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": " ".join(parts),
        "PODIUM_TORCH": "system",
        "PODIUM_ACCEL": "cpu",
        "PYTHON": host,
        "PODIUM_EXTRAS": "train",
        "PODIUM_BASE_WEIGHTS": "skip",
    }
    subprocess.run(["bash", "scripts/setup_python.sh", str(layer)], cwd=REPO, env=env, check=True)
    python = str(layer / "bin" / "python")
    # The test runner is this test's scaffolding, not part of the set-up under test.
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

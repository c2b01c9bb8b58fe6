"""Weights and curves of a run and its re-run (podium/jobs/checkpoint_diff.py), and the
verdict a GPU run gets: a tolerance, since its kernels are not bitwise reproducible."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from podium.errors import InvalidInput
from podium.jobs.checkpoint_diff import WEIGHT_TOLERANCE, compare_weights, weights_digest
from podium.jobs.environment import capture
from podium.jobs.rerun import RerunReport, _tolerant


def _checkpoint(root: Path, nudge: float = 0.0, extra_file: str = "") -> Path:
    root.mkdir(parents=True)
    weights = {
        "embed.weight": np.arange(12, dtype=np.float32).reshape(3, 4) / 7,
        "head.bias": np.ones(4, dtype=np.float32),
    }
    weights["head.bias"][2] += nudge
    save_file(weights, str(root / "model.safetensors"))
    if extra_file:
        (root / "README.md").write_text(extra_file)
    return root


def test_same_tensors_same_digest_whatever_else_the_folder_holds(tmp_path: Path) -> None:
    a = _checkpoint(tmp_path / "a")
    b = _checkpoint(tmp_path / "b", extra_file="notes")
    assert weights_digest(a) == weights_digest(b)
    diff = compare_weights(a, b)
    assert diff.identical and diff.tensors == 2 and diff.max_abs_diff == 0


def test_a_moved_parameter_is_named_with_how_far(tmp_path: Path) -> None:
    diff = compare_weights(_checkpoint(tmp_path / "a"), _checkpoint(tmp_path / "b", 1e-4))
    assert not diff.identical
    assert diff.differing == ["head.bias"] and diff.differing_count == 1
    assert diff.max_diff_tensor == "head.bias"
    assert diff.max_abs_diff == pytest.approx(1e-4, rel=1e-2)
    assert diff.within(WEIGHT_TOLERANCE) and not diff.within(1e-5)


def test_a_folder_without_safetensors_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    with pytest.raises(InvalidInput, match="holds no \\*.safetensors file"):
        weights_digest(tmp_path / "x")


def test_a_gpu_run_is_judged_within_a_tolerance(tmp_path: Path, podium_home: Path) -> None:
    from trainers.config import SftConfig

    gpu = capture(SftConfig(model="m", table={"name": "ns.t", "snapshot_id": 1}, out="o",
                            preset="gpu"))  # fmt: skip
    cpu = capture(SftConfig(model="m", table={"name": "ns.t", "snapshot_id": 1}, out="o"))
    assert gpu["device"] == "cuda" and gpu["determinism"].startswith("tolerance")
    assert cpu["device"] == "cpu" and cpu["determinism"] == "exact"
    assert _tolerant(cpu, gpu) and not _tolerant(cpu, cpu)
    weights = compare_weights(_checkpoint(tmp_path / "a"), _checkpoint(tmp_path / "b", 1e-4))
    report = RerunReport("j1", "j2", [], [weights], [], [], tolerance=True, no_seed=False)
    assert report.verdict == "within tolerance"
    exact = RerunReport("j1", "j2", [], [weights], [], [], tolerance=False, no_seed=False)
    assert exact.verdict == "differs"
    assert exact.differences() == [
        f"weights of {tmp_path.name}: largest difference {weights.max_abs_diff:.3g} (head.bias)"
    ]

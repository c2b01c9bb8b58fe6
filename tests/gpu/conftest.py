"""GPU tests (`make test-gpu`, marker `gpu`): each is skipped with its reason where it
cannot run (no CUDA device, no vLLM), never silently, so a CPU run of the whole suite
lists them as skipped and costs nothing but collection.

`PODIUM_GPU_REHEARSAL=1` runs their bodies on CPU instead (the cards' device set to cpu,
the CUDA-only checks left out), to check this code where no GPU is lent;
tests/setup/test_gpu_rehearsal.py does that in the default suite."""

from __future__ import annotations

import functools
import os
import subprocess

import pytest
from train_fixtures import (  # noqa: F401  (fixtures are found by name)
    make_table,
    memo_pairs,
    recorder,
    tiny_base,
    tiny_checkpoint,
)

REHEARSAL = os.environ.get("PODIUM_GPU_REHEARSAL") == "1"


@functools.cache
def cuda_missing() -> str | None:
    """Why CUDA cannot be used here, or None."""
    try:
        import torch
    except ImportError:
        return "needs a CUDA device: torch is not installed"
    if not torch.cuda.is_available():
        return "needs a CUDA device: torch.cuda.is_available() is False"
    return None


@functools.cache
def vllm_server_missing() -> str | None:
    """Why no vLLM server can be started (podium.models.serving's interpreter lacks vLLM)."""
    from podium.models.vllm_launch import vllm_python

    try:
        python = vllm_python()
    except Exception as exc:  # no interpreter found at all
        return f"no vLLM server environment: {exc}"
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('vllm') is None)"
    if subprocess.run([python, "-c", probe], capture_output=True, timeout=60).returncode:
        return f"no vLLM server environment: {python} cannot import vllm (run `make vllm`)"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if gpu_items and not REHEARSAL and (reason := cuda_missing()):
        for item in gpu_items:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def vllm_server_env() -> None:
    if reason := vllm_server_missing():
        pytest.skip(reason)


@pytest.fixture
def gpu_device() -> str:
    """Where the cards train: cuda, or cpu in a rehearsal."""
    return "cpu" if REHEARSAL else "cuda"

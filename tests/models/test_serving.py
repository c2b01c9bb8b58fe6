"""The vLLM server manager against real vLLM processes."""

from __future__ import annotations

import json

import pytest

from podium.errors import PodiumError
from podium.models import ensure_server, list_servers, register_checkpoint
from podium.models.serving import _pid_is_vllm, _row
from podium.models.vllm_launch import server_command, server_env


def test_cpu_and_gpu_flags():
    cpu = server_command("py", "/ckpt", "m", 8000, gpu=False)
    assert cpu[:3] == ["py", "-m", "vllm.entrypoints.openai.api_server"]
    assert {"--enforce-eager", "float32"} <= set(cpu)
    assert cpu[cpu.index("--served-model-name") + 1] == "m"
    assert cpu[cpu.index("--host") + 1] == "127.0.0.1"
    gpu = server_command("py", "/ckpt", "m", 8000, gpu=True)
    assert "--enforce-eager" not in gpu and "--gpu-memory-utilization" in gpu
    env = server_env(gpu=False)
    assert env["VLLM_CPU_KVCACHE_SPACE"] == "1" and env["HF_HUB_OFFLINE"] == "1"
    assert env["VLLM_CACHE_ROOT"].startswith(str(server_env.__globals__["get_settings"]().home))


@pytest.mark.vllm
def test_one_server_per_checkpoint_is_reused(vllm_model):
    first = ensure_server(vllm_model)
    row = _row(vllm_model)
    second = ensure_server(vllm_model)
    assert first == second
    assert _row(vllm_model).pid == row.pid  # no second process
    assert _pid_is_vllm(row.pid)
    (server,) = [s for s in list_servers() if s.model == vllm_model]
    assert server.alive and server.url == first[0]


@pytest.mark.vllm
def test_failed_start_raises_with_log_tail(podium_home, tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"model_type": "no-such-architecture"}))
    (broken / "model.safetensors").write_bytes(b"not weights")
    register_checkpoint("broken", broken, parent=None, job_id=None, lineage={})
    with pytest.raises(PodiumError) as err:
        ensure_server("broken", timeout_s=300)
    message = str(err.value)
    assert "exited with code" in message and "Log " in message
    assert "no-such-architecture" in message or "Error" in message  # vLLM's own words
    assert _row("broken") is None  # nothing recorded for a server that never came up

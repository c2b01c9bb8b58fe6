"""How a vLLM OpenAI-compatible server is launched: which Python, flags and environment.

vLLM lives in its own virtual environment (`.venv-vllm`, or its own container in
docker-compose) so its pins never fight the app's. On CPU the `vllm-cpu` build needs
float32, eager mode and an explicit KV-cache size; with a GPU the defaults are right.
The `vllm serve` entry point fails under the `vllm-cpu` package name, so the module
`vllm.entrypoints.openai.api_server` is run instead.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from podium.config import get_settings
from podium.errors import PodiumError
from podium.processes import python_module

MAX_MODEL_LEN = 2048
CPU_KV_CACHE_GIB = 1
GPU_MEMORY_UTILIZATION = 0.85
SERVER_MODULE = "vllm.entrypoints.openai.api_server"
CPU_MAIN = Path(__file__).with_name("vllm_cpu_main.py")
_HAS_VLLM = "import importlib.util, sys; sys.exit(importlib.util.find_spec('vllm') is None)"


def _can_import_vllm(python: str) -> bool:
    try:
        return subprocess.run([python, "-c", _HAS_VLLM], timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@functools.cache
def _find_vllm_python(configured: str) -> str:
    if configured:
        if not _can_import_vllm(configured):
            raise PodiumError(
                f"PODIUM_VLLM_PYTHON={configured} cannot import vllm; point it at the Python "
                "of the environment where vLLM is installed (`make vllm` creates .venv-vllm)."
            )
        return configured
    repo = Path(__file__).resolve().parents[2]
    candidates = [
        repo / ".venv-vllm" / "bin" / "python",
        Path.cwd() / ".venv-vllm" / "bin" / "python",
    ]
    found = [str(c) for c in candidates if c.is_file()]
    found += [p for p in (sys.executable, shutil.which("python3"), shutil.which("python")) if p]
    for python in dict.fromkeys(found):
        if _can_import_vllm(python):
            return python
    raise PodiumError(
        "vLLM is not installed: run `make vllm` (creates .venv-vllm) or set "
        "PODIUM_VLLM_PYTHON to a Python that can import vllm."
    )


def vllm_python() -> str:
    """The Python interpreter that runs vLLM (setting, then .venv-vllm, then PATH)."""
    return _find_vllm_python(get_settings().vllm_python)


@functools.cache
def has_gpu() -> bool:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    try:
        return subprocess.run([smi, "-L"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


# Where checkpoints' config.json files state their context length (Llama/Qwen/Mistral,
# GPT-2, MPT, older remote-code models); multimodal configs nest it in text_config.
_CONTEXT_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length")


def max_model_len(checkpoint: str) -> int:
    """MAX_MODEL_LEN, or the checkpoint's own context where that is shorter: vLLM refuses
    to start when asked for more positions than the model has (a 1024-position model
    failed with 'User-specified max_model_len (2048) is greater than the derived')."""
    try:
        config = json.loads(Path(checkpoint, "config.json").read_text())
    except (OSError, ValueError):
        return MAX_MODEL_LEN  # not a local checkpoint with a readable config: vLLM decides
    for section in (config, config.get("text_config") or {}):
        for key in _CONTEXT_KEYS:
            value = section.get(key)
            if isinstance(value, int | float) and value > 0:
                return min(MAX_MODEL_LEN, int(value))
    return MAX_MODEL_LEN


def server_command(
    python: str, checkpoint: str, served_name: str, port: int, *, gpu: bool, host: str = "127.0.0.1"
) -> list[str]:
    # On CPU through a launcher that forks vLLM's engine core (vllm_cpu_main.py: ~33 s
    # less a start); the module's name stays on the command line for VLLM_MARKER.
    run = [python, "-P", str(CPU_MAIN), SERVER_MODULE]
    cmd = [
        *(python_module(SERVER_MODULE, python=python) if gpu else run),
        "--model",
        checkpoint,
        "--served-model-name",
        served_name,
        "--max-model-len",
        str(max_model_len(checkpoint)),
        "--host",
        host,
        "--port",
        str(port),
        "--disable-uvicorn-access-log",
    ]
    if gpu:
        cmd += ["--dtype", "auto", "--gpu-memory-utilization", str(GPU_MEMORY_UTILIZATION)]
    else:
        # bfloat16 is several times slower on AVX2 CPUs; eager mode skips slow compiles.
        # The model runs inside the engine-core process (no separate worker: one Python
        # start and ~0.6 GB fewer): ready in ~26 s instead of ~37 (FACTS.md). Its threads:
        # `cpu_threads`.
        cmd += ["--dtype", "float32", "--enforce-eager", "--distributed-executor-backend", "uni"]
    return cmd


def cpu_threads() -> int:
    """The OpenMP threads of a CPU server. Its decode steps end at a barrier of every
    thread, so one thread on a busy core stalls them all: with the other core busy, a
    2-thread server on 2 cores ran a generation test file 2.3x slower than a 1-thread one."""
    configured = get_settings().vllm_cpu_threads
    if configured:
        return configured
    # The cores this process may use (a container's or taskset's), where the OS says.
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, (cores or 1) - 1)


def server_env(*, gpu: bool) -> dict[str, str]:
    settings = get_settings()
    home = settings.ensure_home()
    env = dict(os.environ)
    env.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        VLLM_NO_USAGE_STATS="1",
        DO_NOT_TRACK="1",
        VLLM_HOST_IP="127.0.0.1",
        VLLM_CACHE_ROOT=settings.vllm_cache_dir or str(home / "cache" / "vllm"),
    )
    # The app's venv must not leak into vLLM's interpreter.
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    # A training setting (see trainers.runtime) that slows plain decoding (FACTS.md).
    env.pop("OMP_WAIT_POLICY", None)
    if not gpu:
        env["VLLM_CPU_KVCACHE_SPACE"] = str(CPU_KV_CACHE_GIB)
        # vLLM's CPU platform swaps "uni" back to its multiprocess executor unless this is 0.
        env["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
        env["OMP_NUM_THREADS"] = str(cpu_threads())
        env.setdefault("VLLM_TARGET_DEVICE", "cpu")
    return env

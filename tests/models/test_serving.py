"""The vLLM server manager against real vLLM processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from podium import processes
from podium.config import reset_settings
from podium.errors import PodiumError
from podium.models import ensure_server, list_servers, register_checkpoint
from podium.models.bootstrap import bootstrap
from podium.models.serving import VLLM_MARKER, _row
from podium.models.vllm_launch import (
    CPU_MAIN,
    MAX_MODEL_LEN,
    max_model_len,
    server_command,
    server_env,
)


def test_cpu_and_gpu_flags():
    cpu = server_command("py", "/ckpt", "m", 8000, gpu=False)
    # -P: the folder the server is started from is never on its sys.path; on CPU the
    # launcher that forks the engine core runs the server's module (named, for VLLM_MARKER)
    assert cpu[:4] == ["py", "-P", str(CPU_MAIN), "vllm.entrypoints.openai.api_server"]
    assert CPU_MAIN.is_file() and VLLM_MARKER in " ".join(cpu)
    assert {"--enforce-eager", "float32"} <= set(cpu)
    assert cpu[cpu.index("--distributed-executor-backend") + 1] == "uni"
    assert cpu[cpu.index("--served-model-name") + 1] == "m"
    assert cpu[cpu.index("--host") + 1] == "127.0.0.1"
    gpu = server_command("py", "/ckpt", "m", 8000, gpu=True)
    assert gpu[:4] == ["py", "-P", "-m", "vllm.entrypoints.openai.api_server"]
    assert "--enforce-eager" not in gpu and "--gpu-memory-utilization" in gpu
    env = server_env(gpu=False)
    assert env["VLLM_CPU_KVCACHE_SPACE"] == "1" and env["HF_HUB_OFFLINE"] == "1"
    assert env["VLLM_ENABLE_V1_MULTIPROCESSING"] == "0"  # else the CPU platform drops "uni"
    assert "VLLM_ENABLE_V1_MULTIPROCESSING" not in server_env(gpu=True)


def test_the_vllm_cache_is_the_homes_unless_one_is_configured(monkeypatch, tmp_path):
    monkeypatch.delenv("PODIUM_VLLM_CACHE_DIR", raising=False)
    reset_settings()
    try:
        home = server_env.__globals__["get_settings"]().home
        assert server_env(gpu=False)["VLLM_CACHE_ROOT"] == str(home / "cache" / "vllm")
        monkeypatch.setenv("PODIUM_VLLM_CACHE_DIR", str(tmp_path / "shared"))
        reset_settings()
        assert server_env(gpu=True)["VLLM_CACHE_ROOT"] == str(tmp_path / "shared")
    finally:
        reset_settings()


def test_a_cpu_server_leaves_a_core_to_its_http_server(monkeypatch):
    cores = len(os.sched_getaffinity(0))
    assert server_env(gpu=False)["OMP_NUM_THREADS"] == str(max(1, cores - 1))
    monkeypatch.setenv("PODIUM_VLLM_CPU_THREADS", "3")
    reset_settings()
    try:
        assert server_env(gpu=False)["OMP_NUM_THREADS"] == "3"
    finally:
        monkeypatch.delenv("PODIUM_VLLM_CPU_THREADS")
        reset_settings()


def test_context_length_is_capped_by_the_checkpoints_own(tmp_path):
    """A 1024-position model was served with --max-model-len 2048, which vLLM refuses."""
    short = tmp_path / "short"
    short.mkdir()
    (short / "config.json").write_text(json.dumps({"max_position_embeddings": 1024}))
    cmd = server_command("py", str(short), "m", 8000, gpu=True)
    assert cmd[cmd.index("--max-model-len") + 1] == "1024"
    gpt2 = tmp_path / "gpt2"
    gpt2.mkdir()
    (gpt2 / "config.json").write_text(json.dumps({"n_positions": 512}))
    assert max_model_len(str(gpt2)) == 512
    nested = tmp_path / "vl"
    nested.mkdir()
    (nested / "config.json").write_text(json.dumps({"text_config": {"seq_length": 768}}))
    assert max_model_len(str(nested)) == 768
    long = tmp_path / "long"
    long.mkdir()
    (long / "config.json").write_text(json.dumps({"max_position_embeddings": 131072}))
    assert max_model_len(str(long)) == MAX_MODEL_LEN  # the KV cache budget still caps it
    assert max_model_len(str(tmp_path / "absent")) == MAX_MODEL_LEN


def test_server_env_drops_the_training_only_omp_policy(monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")
    assert "OMP_WAIT_POLICY" not in server_env(gpu=False)


@pytest.mark.vllm
def test_one_server_per_checkpoint_is_reused(vllm_model):
    first = ensure_server(vllm_model)
    row = _row(vllm_model)
    second = ensure_server(vllm_model)
    assert first == second
    assert _row(vllm_model).pid == row.pid  # no second process
    assert processes.find(row.pid, VLLM_MARKER) is not None
    (server,) = [s for s in list_servers() if s.model == vllm_model]
    assert server.alive and server.url == first[0]


@pytest.mark.vllm
def test_a_cpu_servers_engine_core_is_forked_not_spawned(vllm_model):
    """A spawned engine core imported torch and vLLM again in a fresh Python: 24-33 s of
    each CPU start (podium/models/vllm_cpu_main.py). A forked child keeps its parent's
    exec image, auxiliary vector included (its random bytes' and file name's addresses);
    a new exec gets its own, placed anew (ASLR)."""
    server = _row(vllm_model).pid
    [core] = [c for c in psutil.Process(server).children() if "EngineCore" in " ".join(c.cmdline())]
    assert Path(f"/proc/{core.pid}/auxv").read_bytes() == Path(f"/proc/{server}/auxv").read_bytes()


# Stands in for vLLM's server module under the CPU launcher: imports vLLM, then builds the
# engine config as the server does before it forks its engine core.
_CONFIG_PROBE = """
import gc, os, sys
imports_collected = gc.isenabled()
from vllm.engine.arg_utils import EngineArgs
EngineArgs(model=sys.argv[1], dtype="float32", enforce_eager=True, max_model_len=256,
           distributed_executor_backend="uni").create_engine_config()
print(imports_collected, gc.isenabled(), gc.get_freeze_count(),
      os.environ["VLLM_WORKER_MULTIPROC_METHOD"])
"""


@pytest.mark.vllm
def test_the_cpu_launcher_freezes_its_imports_before_the_engine_core_forks(
    tmp_path, base_checkpoint
):
    """Every full collection walked torch's, transformers' and vLLM's objects: two while
    the model loads, one in each process's freeze_gc_heap, many while importing. Frozen
    when the engine config is built (just before the fork), later ones skip them."""
    from podium.models.vllm_launch import vllm_python

    (tmp_path / "config_probe.py").write_text(_CONFIG_PROBE)
    env = {**server_env(gpu=False), "PYTHONPATH": str(tmp_path)}
    run = [vllm_python(), "-P", str(CPU_MAIN), "config_probe", str(base_checkpoint)]
    done = subprocess.run(run, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    collected, enabled, frozen, method = done.stdout.split()[-4:]
    assert (collected, enabled, method) == ("False", "True", "fork")
    assert int(frozen) > 100_000  # torch and vLLM alone are several hundred thousand objects


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


def test_idle_verdicts():
    from datetime import UTC, datetime, timedelta

    from podium.models.idle_watch import verdict

    now = datetime.now(UTC)
    old, recent = now - timedelta(seconds=100), (now - timedelta(seconds=5)).replace(tzinfo=None)
    assert verdict(False, False, False, now, 60, now) == "gone"
    assert verdict(True, False, False, now, 60, now) == "dead"
    assert verdict(True, True, True, old, 60, now) == "busy"  # in use: never stopped
    assert verdict(True, True, False, old, 60, now) == "idle"
    assert verdict(True, True, False, recent, 60, now) == "wait"  # naive times are UTC


def test_dead_servers_are_forgotten(podium_home):
    import socket
    import subprocess
    from datetime import UTC, datetime

    from sqlalchemy import insert

    from podium.models.serving import cleanup_dead, servers_table
    from podium.store.state.state import engine

    proc = subprocess.Popen(["sleep", "60"])  # a live pid that is not a vLLM server
    try:
        now = datetime.now(UTC)
        with engine().begin() as conn:
            conn.execute(
                insert(servers_table).values(
                    model="ghost",
                    host=socket.gethostname(),
                    pid=proc.pid,
                    port=1,
                    url="http://127.0.0.1:1/v1",
                    checkpoint="/x",
                    log_path="/x.log",
                    started_at=now,
                    last_used=now,
                )
            )
        assert [s.alive for s in list_servers()] == [False]
        assert cleanup_dead() == ["ghost"]
        assert list_servers() == []
        assert proc.poll() is None  # a stranger's process is never signalled
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.vllm
def test_busy_while_a_request_is_in_flight(vllm_model):
    import threading

    from generators.client import ChatRequest, endpoint_for, generate_batch
    from podium.models.idle_watch import busy

    url = ensure_server(vllm_model)[0]
    assert not busy(url)
    # vLLM sets its running/waiting gauges on every engine step, so a few seconds of
    # generation is many polls; 200 tokens (the old size) were 21 s of a loaded machine.
    req = ChatRequest(
        messages=[{"role": "user", "content": "Tell a long story."}], max_tokens=64, temperature=0
    )
    worker = threading.Thread(target=generate_batch, args=(endpoint_for(vllm_model), [req]))
    worker.start()
    seen_busy = False
    while worker.is_alive() and not seen_busy:
        seen_busy = busy(url)
    worker.join()
    assert seen_busy
    assert not busy(url)


# A job process that starts a server for itself (a replica) and then just runs.
_OWNER = """
import sys, time
from podium.models import get_model
from podium.models.serving import launch_server
from podium.reporting import Reporter
launch_server(get_model(sys.argv[1]), 600, Reporter())
open(sys.argv[2], "w").close()  # ready: it generates
time.sleep(600)
"""


def _within(seconds: float, holds: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + seconds
    while not holds():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def _group(pgid: int) -> list[str]:
    """The live members of process group `pgid`, by name."""
    names = []
    for proc in psutil.process_iter(["status", "name"]):
        try:
            if proc.info["status"] != psutil.STATUS_ZOMBIE and os.getpgid(proc.pid) == pgid:
                names.append(proc.info["name"])
        except (ProcessLookupError, psutil.Error):
            continue
    return names


def _server_of(owner: subprocess.Popen[bytes]) -> int | None:
    try:
        children = psutil.Process(owner.pid).children()
        return next((c.pid for c in children if VLLM_MARKER in " ".join(c.cmdline())), None)
    except psutil.Error:
        return None


@pytest.mark.vllm
def test_a_server_dies_with_the_process_that_started_it(base_checkpoint, tmp_path):
    """A job SIGKILLed (the out-of-memory killer) left its vLLM servers (API server,
    engine core, worker: ~1.5 GB) running forever; its owner watcher stops their group.

    The owner here dies as a Ray actor does when its job is SIGKILLed: Ray kills the
    actor's children with it, the API server (the group's leader) among them, and a
    ready vLLM's engine core and worker live on (seen with a real async GRPO job)."""
    model = bootstrap().name
    ready = tmp_path / "ready"
    owner = subprocess.Popen(
        [sys.executable, "-c", _OWNER, model, str(ready)], stdout=subprocess.DEVNULL
    )
    server = None
    try:
        assert _within(300, ready.exists), "the owner's server never became ready"
        server = _server_of(owner)
        assert server is not None and len(_group(server)) >= 2, "no engine core"
        children = psutil.Process(owner.pid).children()
        owner.kill()
        for child in children:
            child.kill()
        owner.wait()
        assert _within(60, lambda: not processes.group_alive(server)), (
            f"the server's group outlived its owner: {_group(server)}"
        )
    finally:
        owner.kill()
        owner.wait()
        if server is not None:
            processes.kill_orphaned_group(server, "vllm")

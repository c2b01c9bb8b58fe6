"""Runs vLLM's OpenAI server on CPU with its engine core forked, not spawned.

Run by vLLM's own interpreter as a script (`python -P THIS_FILE MODULE ARGS...`, MODULE
being `vllm.entrypoints.openai.api_server`), so it imports nothing of Podium, and the
server's command line still names the module the server records look for.

vLLM's CPU platform sets `VLLM_WORKER_MULTIPROC_METHOD=spawn` while it checks the config,
and the API server then starts its engine core in a fresh Python that imports torch and
vLLM again (30-40 s alone on 2 busy cores). Forked, the engine core starts from the API
server's imports. Measured 2026-12-02 on 2 cores: the tiny test model's first answer in
20.6 s forked against 53.9 s spawned (load 7.8), the same greedy text; the base model's
server as the tests' session fixture in 29.9 s against 53.9 s (load 10-12). The model
runs in the engine core itself (`--distributed-executor-backend uni`: no worker
processes of its own to fork). On GPU vLLM spawns (CUDA); this file is not used there.
"""

from __future__ import annotations

import gc
import os
import runpy
import sys


def _fork_the_engine_core() -> None:
    from vllm.platforms import cpu  # type: ignore[import-not-found,unused-ignore]

    checked = cpu.CpuPlatform.check_and_update_config.__func__

    def check_and_fork(cls: type, vllm_config: object) -> None:
        checked(cls, vllm_config)
        os.environ["VLLM_WORKER_MULTIPROC_METHOD"] = "fork"
        _freeze_the_imports()

    cpu.CpuPlatform.check_and_update_config = classmethod(check_and_fork)


def _freeze_the_imports() -> None:
    """Everything imported so far (torch, transformers, vLLM: ~0.9 M objects) lives as long
    as the server, yet each full collection walked all of it: Python's own while the imports
    grew the heap, vLLM's two while the model loads and one in each process's
    `freeze_gc_heap`. One collection (the imports' garbage, ~15 MB a process) and a freeze
    here, just before the engine core forks, and the later ones skip them in both processes."""
    gc.collect()
    gc.freeze()
    gc.enable()


if __name__ == "__main__":
    gc.disable()  # the imports are kept: collected once, in _freeze_the_imports
    module = sys.argv.pop(1)
    _fork_the_engine_core()
    runpy.run_module(module, run_name="__main__", alter_sys=True)

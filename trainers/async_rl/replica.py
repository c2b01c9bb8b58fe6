"""One generation replica of the async RL loop: a vLLM server that takes weight pushes.

    replica = PolicyReplica("tiny-llama", index=0)   # or ray.remote(...)(PolicyReplica)
    info = replica.start()          # the server, with Podium's serving code, plus:
    rows = replica.generate(["Hi"], n=2, max_tokens=8, temperature=1.0, seed=0)
    replica.stop()

The server is Podium's (podium.models.serving.launch_server: same command, environment
and warm-up) with three additions: the worker extension that receives weights
(`--worker-extension-cls`, PYTHONPATH = the weight_sync directory only, since vLLM's
interpreter cannot import Podium), dev mode (`VLLM_SERVER_DEV_MODE=1`: /collective_rpc,
/pause, /resume) and `--logprobs-mode processed_logprobs`, so the log-probs it returns
are after temperature: the behaviour log-probs the learner's importance ratio needs.
`--generation-config vllm` and the pinned fields of every request (PLAIN_SAMPLING) keep
a checkpoint's generation_config.json (top_k, top_p, ...) out of that distribution.

Every completion carries the weight version that produced it. A swap happens only while
the server is paused with mode=wait (trainers/weight_sync/replica_calls.py), so no request spans
two versions; `generate` reads the version before and after its requests, and when a
swap landed in between it cannot tell which side a request fell on, so it generates
again (versions only grow, so equal readings pin the version).

As a Ray actor it follows generators/replicas.py's VllmReplica: one CPU, fate-shared with
the job, its server stopped from an exit handler and, if the actor was killed outright,
reaped by pid (`reap_servers`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx

from generators.replicas import VllmReplica, _reap_servers
from podium.errors import PodiumError
from podium.reporting import Reporter
from trainers.weight_sync import ReplicaEndpoint
from trainers.weight_sync.ipc import WEIGHT_TRANSFER_CONFIG
from trainers.weight_sync.replica_calls import EXTENSION_CLASS, weight_version

WEIGHT_SYNC_DIR = Path(__file__).resolve().parents[1] / "weight_sync"
GENERATE_TIMEOUT_S = 900.0
VERSION_RETRIES = 3

reap_servers = _reap_servers  # (ray, [start() info], reporter): servers of killed actors


# Sampling the learner models: the plain softmax at the request's temperature. vLLM's
# server otherwise fills what a request leaves out from the checkpoint's
# generation_config.json (top_k, top_p, repetition_penalty, min_p), and its processed
# log-probs follow them: the importance weights would compare two distributions.
# Pinned twice: the server ignores that file, and every request says "off" outright.
PLAIN_SAMPLING: dict[str, float | int] = {
    "top_k": 0,  # vLLM: 0 (or -1) = every token
    "top_p": 1.0,
    "min_p": 0.0,
    "repetition_penalty": 1.0,
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
}


# A replica colocated with its learner on one GPU leaves it the rest of the memory (a
# job's card sets its share: vllm_gpu_memory_utilization, placement.py).
COLOCATED_GPU_MEMORY = 0.4


def server_args(colocated: bool = False, gpu_memory: float = COLOCATED_GPU_MEMORY) -> list[str]:
    """The replica's server flags; `colocated` (its learner on the same GPU): vLLM's CUDA
    IPC weight-transfer engine (trainers/weight_sync/ipc.py) and `gpu_memory` of the GPU."""
    args = [
        "--worker-extension-cls",
        EXTENSION_CLASS,
        "--logprobs-mode",
        "processed_logprobs",
        # vLLM's own defaults, not the checkpoint's generation_config.json
        "--generation-config",
        "vllm",
    ]
    if colocated:
        args += ["--weight-transfer-config", WEIGHT_TRANSFER_CONFIG]
        args += ["--gpu-memory-utilization", str(gpu_memory)]
    return args


def completion_body(
    model: str,
    prompts: list[str] | list[list[int]],
    *,
    n: int,
    max_tokens: int,
    temperature: float,
    seed: int | None,
) -> dict[str, Any]:
    """The /v1/completions request of a rollout: temperature and nothing else shapes
    the distribution (PLAIN_SAMPLING), with the sampled token's processed log-prob."""
    body: dict[str, Any] = {
        "model": model,
        "prompt": prompts,
        "n": n,
        "max_tokens": max_tokens,
        "temperature": temperature,
        **PLAIN_SAMPLING,
        "logprobs": 0,  # the sampled token's own log-prob only
        "return_token_ids": True,
    }
    if seed is not None:
        body["seed"] = seed
    return body


def server_env(colocated: bool = False) -> dict[str, str]:
    env = {"VLLM_SERVER_DEV_MODE": "1", "PYTHONPATH": str(WEIGHT_SYNC_DIR)}
    if colocated:  # the IPC handles arrive pickled (ipc.py: a loopback server only)
        env["VLLM_ALLOW_INSECURE_SERIALIZATION"] = "1"
    return env


class PolicyReplica(VllmReplica):
    """One vLLM server with the weight receiver; a Ray actor or a local object."""

    def __init__(
        self,
        model: str,
        index: int = 0,
        on_ray: bool = False,
        colocated: bool = False,
        gpu_memory: float = COLOCATED_GPU_MEMORY,
    ) -> None:
        """`colocated`: the learner shares this replica's GPU (the replica takes
        `gpu_memory` of it) and pushes through CUDA IPC (the server then listens on
        loopback only)."""
        super().__init__(model)
        self.index, self.on_ray, self.colocated = index, on_ray, colocated
        self.gpu_memory = gpu_memory
        self.url = ""  # the server's OpenAI base URL (…/v1) once started

    def start(self) -> dict[str, Any]:
        from podium import processes
        from podium.cluster import routable_address
        from podium.config import reset_settings
        from podium.models import get_model
        from podium.models.serving import START_TIMEOUT_S, launch_server

        node_id = None
        if self.on_ray:
            from podium.ray_join import ray_module

            reset_settings()  # this worker process may have served another job before
            node_id = ray_module().get_runtime_context().get_node_id()
        # The node's IP on Ray: the learner reaches it there (a colocated one: loopback).
        host = "127.0.0.1" if self.colocated else routable_address()
        self.proc, self.url, log = launch_server(
            get_model(self.model),
            START_TIMEOUT_S,
            Reporter(),
            host=host,
            extra_args=server_args(self.colocated, self.gpu_memory),
            extra_env=server_env(self.colocated),
        )
        return {
            "index": self.index,
            "url": self.url,
            "pid": self.proc.pid,
            "started": processes.started_at(self.proc.pid),
            "log": str(log),
            # The node's address for the job's record, also where the server listens on
            # loopback (colocated): the record says which node, the URL how to reach it.
            "node": routable_address(),
            "node_id": node_id,
            # The GPUs Ray gave this actor (vLLM starts on them): the job's record.
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        }

    @property
    def endpoint(self) -> ReplicaEndpoint:
        return ReplicaEndpoint(self.index, self.url)

    def get_endpoint(self) -> ReplicaEndpoint:
        """`endpoint`, callable through a Ray actor handle."""
        return self.endpoint

    def version(self) -> int:
        return weight_version(self.endpoint)

    def pause(self) -> None:
        """Stop scheduling (requests in flight finish first) until `resume`."""
        httpx.post(
            self.endpoint.root + "/pause?mode=wait", timeout=GENERATE_TIMEOUT_S
        ).raise_for_status()

    def resume(self) -> None:
        httpx.post(self.endpoint.root + "/resume", timeout=60).raise_for_status()

    def generate(
        self,
        prompts: list[str] | list[list[int]],
        n: int = 1,
        max_tokens: int = 64,
        temperature: float = 1.0,
        seed: int | None = None,
    ) -> list[dict[str, Any]]:
        """n completions per prompt, prompt-major: {prompt_index, text, completion_ids,
        behaviour_logprobs (processed, one per completion token), finish_reason,
        policy_version, replica}."""
        if not prompts:
            return []
        for _ in range(VERSION_RETRIES):
            before = self.version()
            choices = self._complete(prompts, n, max_tokens, temperature, seed)
            after = self.version()
            if before == after:
                return [self._row(c, n, before) for c in choices]
        raise PodiumError(
            f"replica {self.index}: the weights changed during each of {VERSION_RETRIES} "
            "generations, so no completion could be tied to one policy version"
        )

    def _complete(
        self,
        prompts: list[str] | list[list[int]],
        n: int,
        max_tokens: int,
        temperature: float,
        seed: int | None,
    ) -> list[dict[str, Any]]:
        body = completion_body(
            self.model, prompts, n=n, max_tokens=max_tokens, temperature=temperature, seed=seed
        )
        resp = httpx.post(self.url + "/completions", json=body, timeout=GENERATE_TIMEOUT_S)
        if resp.status_code != 200:
            raise PodiumError(
                f"replica {self.index} ({self.url}) answered {resp.status_code}: {resp.text[:500]}"
            )
        choices: list[dict[str, Any]] = resp.json()["choices"]
        return sorted(choices, key=lambda c: int(c["index"]))

    def _row(self, choice: dict[str, Any], n: int, version: int) -> dict[str, Any]:
        logprobs = (choice.get("logprobs") or {}).get("token_logprobs") or []
        return {
            "prompt_index": int(choice["index"]) // n,
            "text": choice["text"],
            "completion_ids": list(choice.get("token_ids") or []),
            "behaviour_logprobs": [float(x) for x in logprobs],
            "finish_reason": choice.get("finish_reason"),
            "policy_version": version,
            "replica": self.index,
        }

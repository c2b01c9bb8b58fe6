"""Seconds per weight sync, per backend, for the benchmark (benchmarks/async_rl.py).

    from weight_sync_timing import measure    # with benchmarks/ on sys.path
    measure(["gloo", "disk"], repeats=3, replicas=1)   # starts its own servers
    # {"gloo": {"median_s": ..., ...}, "disk": {...}, "model": "smollm2-135m-random", ...}

The model has SmolLM2-135M's architecture with random weights (`random_smollm2`: no
download, the same tensors and bytes as the real one). Every timed push carries
different weights (each repeat adds seeded noise), so every load really moves them.
A push is timed end to end as the learner sees it: snapshot, transfer or file
write+read, the engine's in-place reload, verification (both checksums and vLLM's own
fingerprint), pause/clear-cache/resume. Each backend's `phases_median_s` splits it
(diagnostic): the learner's snapshot copy (outside the timed push), digests, file write,
the replica calls, and inside the replica arrival, hashing, reload, fingerprints.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import torch

from trainers.weight_sync import ReplicaEndpoint, make_weight_sync

MODEL_NAME = "smollm2-135m-random"

# SmolLM2-135M(-Instruct)'s config.json, the fields that shape its tensors.
SMOLLM2_135M: dict[str, Any] = {
    "hidden_size": 576,
    "intermediate_size": 1536,
    "num_hidden_layers": 30,
    "num_attention_heads": 9,
    "num_key_value_heads": 3,
    "head_dim": 64,
    "vocab_size": 49152,
    "max_position_embeddings": 8192,
    "rms_norm_eps": 1e-5,
    "rope_theta": 100000.0,
    "tie_word_embeddings": True,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "pad_token_id": 2,
}


def random_smollm2(directory: Path) -> Path:
    """A randomly initialised model of SmolLM2-135M's architecture, with its tokenizer."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from podium.models.bootstrap import tokenizer_dir

    if not (directory / "config.json").is_file():
        torch.manual_seed(0)
        LlamaForCausalLM(LlamaConfig(**SMOLLM2_135M)).save_pretrained(str(directory))
        from transformers import AutoTokenizer

        AutoTokenizer.from_pretrained(str(tokenizer_dir())).save_pretrained(str(directory))
    return directory


def time_syncs(
    backend: str, model_dir: Path, replicas: Sequence[ReplicaEndpoint], repeats: int
) -> dict[str, Any]:
    """Push the model at `model_dir` into `replicas` (already serving that architecture)
    `repeats` times with `backend`; seconds per sync (the first, with the warm-up
    connect excluded, included in the list)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(model_dir)).eval()
    params = [p for _, p in sorted(model.named_parameters())]
    with tempfile.TemporaryDirectory(prefix="weight-sync-timing-") as work:
        sync = make_weight_sync(backend, work_dir=Path(work))
        try:
            sync.connect(replicas)
            seconds, nbytes, phases = [], 0, []
            for repeat in range(repeats):
                generator = torch.Generator().manual_seed(1000 + repeat)
                with torch.no_grad():
                    for param in params:
                        param.add_(torch.randn(param.shape, generator=generator) * 1e-3)
                tick = time.perf_counter()
                snap = sync.snapshot(model.named_parameters())  # copied, as push_async does
                snapshot_s = time.perf_counter() - tick
                record = sync.push_snapshot(snap, version=1000 + repeat)
                seconds.append(record.seconds)
                nbytes = record.bytes
                phases.append(_phases(record, snapshot_s))
        finally:
            sync.close()
    return {
        "backend": backend,
        "replicas": len(replicas),
        "repeats": repeats,
        "bytes": nbytes,
        "seconds": seconds,
        "median_s": statistics.median(seconds),
        "mean_s": statistics.fmean(seconds),
        "mb_per_s": nbytes / 1e6 / statistics.median(seconds),
        "phases_median_s": {
            name: statistics.median(p.get(name, 0.0) for p in phases)
            for name in sorted({n for p in phases for n in p})
        },
    }


def _phases(record: Any, snapshot_s: float) -> dict[str, float]:
    """One push's seconds per phase: the learner's, then the first replica's (prefixed
    `replica.`). `snapshot_s` (the learner's copy) is outside the push's seconds."""
    out = {"snapshot_s": snapshot_s, **record.phases}
    for name, value in (record.replicas[0].get("phases") or {}).items():
        out[f"replica.{name}"] = value
    return out


def measure(
    backends: Sequence[str] = ("gloo", "disk"),
    repeats: int = 3,
    replicas: int = 1,
    model: tuple[str, Path] | None = None,
) -> dict[str, Any]:
    """Start `replicas` servers of the random SmolLM2-135M (or `model`: a name and a
    checkpoint folder, the tiny test model's size) in the current Podium home, time each
    backend against them, stop them."""
    from podium.models.registry import get_model_or_none, register_model
    from trainers.async_rl.replica import PolicyReplica

    name, model_dir = model or (
        MODEL_NAME,
        random_smollm2(Path(tempfile.gettempdir()) / "podium-smollm2-135m-random"),
    )
    known = get_model_or_none(name)
    if known is None or known.path != str(model_dir):
        if known is not None:
            raise ValueError(f"{name!r} is registered at {known.path}, not {model_dir}")
        register_model(name, kind="base", path=str(model_dir))
    servers = [PolicyReplica(name, index=i) for i in range(replicas)]
    try:
        with ThreadPoolExecutor(max_workers=replicas) as pool:
            list(pool.map(lambda r: r.start(), servers))
        endpoints = [s.endpoint for s in servers]
        out: dict[str, Any] = {
            "model": name,
            "architecture": "SmolLM2-135M" if model is None else str(model_dir),
        }
        for backend in backends:
            out[backend] = time_syncs(backend, model_dir, endpoints, repeats)
        if "gloo" in out and "disk" in out:
            out["gloo_over_disk"] = out["gloo"]["median_s"] / out["disk"]["median_s"]
        return out
    finally:
        for server in servers:
            server.stop()

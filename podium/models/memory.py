"""How much memory a model costs on this machine, before anything is started.

A vLLM engine holds the checkpoint's weights (float32 on CPU, where bfloat16 is slow; the
checkpoint's own dtype on a GPU), its KV cache (`VLLM_CPU_KVCACHE_SPACE` on CPU, which
`vllm_launch.server_env` sets; on a GPU it lives in GPU memory) and a runtime (torch,
the engine core and API server processes). The parameter count comes from the
checkpoint's safetensors headers, so nothing is loaded to measure it.

    params = checkpoint_params(path)           # 134_515_008, or None if unknown
    engine_bytes(path, gpu=False)              # weights + KV cache + runtime
    fits(need, available_bytes())              # leaves Ray's out-of-memory margin
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

from podium.models.vllm_launch import CPU_KV_CACHE_GIB

GIB = 1024**3
# A vLLM CPU process beyond its weights and KV cache: SmolLM2-135M (0.5 GB of fp32
# weights) with a 1-2 GiB KV cache measured 4-5 GB RSS (docs: FACTS, vLLM on CPU).
ENGINE_RUNTIME_BYTES = 2 * GIB
# Ray's memory monitor kills workers above 95% of the node's memory: keep clear of it.
HEADROOM_SHARE = 0.05
_DTYPE_BYTES = {
    "F64": 8,
    "F32": 4,
    "F16": 2,
    "BF16": 2,
    "I64": 8,
    "I32": 4,
    "I16": 2,
    "I8": 1,
    "U8": 1,
    "BOOL": 1,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
}


def _safetensors_header(path: Path) -> dict[str, object]:
    with path.open("rb") as fh:
        (size,) = struct.unpack("<Q", fh.read(8))
        header: dict[str, object] = json.loads(fh.read(size))
    return header


def checkpoint_params(path: str | Path) -> int | None:
    """Parameters in a Hugging Face checkpoint directory (from its safetensors headers;
    from the size of `*.bin` files at 4 bytes each where there are none); None when the
    directory holds neither."""
    folder = Path(path)
    files = sorted(folder.glob("*.safetensors"))
    if files:
        total = 0
        for file in files:
            for name, entry in _safetensors_header(file).items():
                if name == "__metadata__" or not isinstance(entry, dict):
                    continue
                count = 1
                for dim in entry.get("shape", []):
                    count *= int(dim)
                total += count
        return total
    bins = list(folder.glob("*.bin"))
    return sum(f.stat().st_size for f in bins) // 4 if bins else None


def checkpoint_dtype_bytes(path: str | Path) -> int:
    """Bytes per parameter as the checkpoint stores them (4 when unknown)."""
    for file in sorted(Path(path).glob("*.safetensors"))[:1]:
        for name, entry in _safetensors_header(file).items():
            if name != "__metadata__" and isinstance(entry, dict):
                return _DTYPE_BYTES.get(str(entry.get("dtype")), 4)
    return 4


def engine_bytes(path: str | Path, *, gpu: bool) -> int | None:
    """Host memory one vLLM engine serving the checkpoint takes; None when the
    checkpoint's size is unknown (an endpoint, a directory without weights)."""
    params = checkpoint_params(path)
    if params is None:
        return None
    if gpu:  # the KV cache and the served weights sit in GPU memory; the host loads once
        return params * checkpoint_dtype_bytes(path) + ENGINE_RUNTIME_BYTES
    return params * 4 + CPU_KV_CACHE_GIB * GIB + ENGINE_RUNTIME_BYTES


def available_bytes() -> int:
    """Memory available to new processes now (psutil: free plus reclaimable cache)."""
    import psutil

    return int(psutil.virtual_memory().available)


def total_bytes() -> int:
    import psutil

    return int(psutil.virtual_memory().total)


def usable_bytes(available: int | None = None, total: int | None = None) -> int:
    """What may be planned for: `available` less Ray's kill margin."""
    available = available_bytes() if available is None else available
    total = total_bytes() if total is None else total
    return max(0, available - int(total * HEADROOM_SHARE))


def gb(n: int) -> str:
    """ "3.1 GB" (decimal, as `free -h` and Ray's messages read)."""
    return f"{n / 1e9:.1f} GB"

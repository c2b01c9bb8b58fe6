"""The weights checksum a push is verified by, and the rows each learner rank sends:
computed identically by the learner and inside each vLLM server.

vLLM's interpreter cannot import Podium: this module imports nothing but the standard
library and torch, and the replica's extension (`vllm_extension.py`) imports it as the
top-level `checksum` from this directory (its PYTHONPATH).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import torch

# Elements cast per step of `slice_digest`: torch's grain size (at::internal::GRAIN_SIZE),
# below which it casts on the calling thread alone.
DIGEST_CHUNK = 32768


def slice_digest(rows: torch.Tensor) -> str:
    """sha256 of rows cast to bfloat16 (the learner's dtype may differ from the engine's).

    Cast and hashed a chunk at a time into one small buffer: the same bytes in the same
    order as casting the whole tensor, but on one thread, in cache, and without a copy of
    the tensor. A whole-tensor cast forks torch's intra-op threads, which on a host
    whose cores are busy with the other side of the transfer (the engine reloading, the
    learner sending) ran 2-4x slower than this loop (measured on the 2-core CI host)."""
    flat = rows.detach().reshape(-1)
    if flat.device.type != "cpu":
        flat = flat.to("cpu", torch.bfloat16)
    digest = hashlib.sha256()
    buffer = torch.empty(min(DIGEST_CHUNK, flat.numel()), dtype=torch.bfloat16)
    for start in range(0, flat.numel(), DIGEST_CHUNK):
        part = flat[start : start + DIGEST_CHUNK]
        cast = buffer[: part.numel()]
        cast.copy_(part)
        digest.update(cast.view(torch.int16).numpy().data)
    return digest.hexdigest()


class ChecksumStream:
    """`weights_checksum` one tensor at a time, for tensors that arrive in name order
    (a replica hashes each tensor as it streams into the engine).

    The checksum is sha256 over, per tensor: its name, its shape, and the digest of each
    learner rank's rows (`row_slices`). So R learner ranks that each hold only their rows
    (sharded parameters) compute their digests alone, and rank 0 combines them
    (`update_digests`) into the value a replica computes from the whole tensor."""

    def __init__(self, ranks: int = 1) -> None:
        self._digest = hashlib.sha256()
        self._last: str | None = None
        self.ranks = ranks

    def update_digests(self, name: str, shape: tuple[int, ...], digests: list[str]) -> None:
        if self._last is not None and name <= self._last:
            raise ValueError(f"tensors out of name order: {name!r} after {self._last!r}")
        if len(digests) != self.ranks:
            raise ValueError(f"{name}: {len(digests)} slice digests for {self.ranks} ranks")
        self._last = name
        self._digest.update(name.encode())
        self._digest.update(str(tuple(shape)).encode())
        for digest in digests:
            self._digest.update(digest.encode())

    def update(self, name: str, tensor: torch.Tensor) -> None:
        shape = tuple(tensor.shape)
        rows = tensor.reshape(1) if tensor.dim() == 0 else tensor
        digests = [slice_digest(rows[a:b]) for a, b in row_slices(shape, self.ranks)]
        self.update_digests(name, shape, digests)

    def hexdigest(self) -> str:
        return self._digest.hexdigest()


def weights_checksum(named_tensors: Iterable[tuple[str, torch.Tensor]], ranks: int = 1) -> str:
    """The checksum of whole tensors as `ranks` learner ranks would send them (see
    ChecksumStream): the same value on the learner (any dtype) and in the engine."""
    stream = ChecksumStream(ranks)
    for name, tensor in sorted(named_tensors, key=lambda item: item[0]):
        stream.update(name, tensor)
    return stream.hexdigest()


def row_slices(shape: list[int] | tuple[int, ...], ranks: int) -> list[tuple[int, int]]:
    """Which dim-0 rows each of `ranks` learner ranks sends: contiguous chunks of
    ceil(rows / ranks), as torch.chunk and FSDP2's dim-0 sharding cut them, so a rank
    that holds a sharded parameter sends exactly its shard (trailing ranks may get no
    rows); a 0-dim tensor goes whole from rank 0."""
    rows = shape[0] if len(shape) else 1
    size = -(-rows // ranks)
    return [(min(r * size, rows), min((r + 1) * size, rows)) for r in range(ranks)]

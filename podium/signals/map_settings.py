"""Settings of the map's signals (embedding, topics, projection): pydantic only, so the
CLI builds its options without loading an embedding model or scikit-learn."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from podium.errors import InvalidInput
from podium.signals.settings import SignalSettings

# The offline default: wordllama's l2_supercat, whose 256-dimension weights ship inside
# its wheel (smaller dimensions are its matryoshka truncations).
DEFAULT_EMBEDDER = "wordllama"
WORDLLAMA_DIMS = (64, 128, 256)


class EmbeddingSettings(SignalSettings):
    model: str = Field(
        DEFAULT_EMBEDDER,
        description="The embedding model: wordllama (offline on CPU, weights inside its "
        "package), or a registered checkpoint (served by vLLM in its pooling mode) or "
        "endpoint that makes embeddings.",
    )
    dims: int | None = Field(
        None,
        description="Vector dimensions: 64, 128 or 256 for wordllama (default 256); a "
        "served model's own (blank), which a run refuses to change.",
    )
    max_chars: int = Field(
        4000,
        ge=16,
        le=1_000_000,
        description="Characters of each row embedded (first turns first).",
    )

    @field_validator("model")
    @classmethod
    def _named_model(cls, model: str) -> str:
        model = model.strip()
        if not model:
            raise InvalidInput(
                f"embedding.model is blank; use {DEFAULT_EMBEDDER!r} (offline, on CPU) or a "
                "registered model that makes embeddings."
            )
        return model

    @model_validator(mode="after")
    def _known_dims(self) -> EmbeddingSettings:
        if self.model == DEFAULT_EMBEDDER:
            if self.dims is None:
                self.dims = WORDLLAMA_DIMS[-1]
            if self.dims not in WORDLLAMA_DIMS:
                raise InvalidInput(
                    f"embedding.dims={self.dims} is not one wordllama makes; use one of "
                    f"{', '.join(map(str, WORDLLAMA_DIMS))}."
                )
        elif self.dims is not None and self.dims < 1:
            raise InvalidInput(f"embedding.dims={self.dims} must be positive (or blank).")
        return self


class TopicsSettings(SignalSettings):
    categories: int = Field(8, ge=1, le=1000, description="Top-level topics (categories).")
    clusters: int = Field(
        32, ge=1, le=100_000, description="Topics (clusters); each belongs to one category."
    )
    fit_rows: int = Field(
        200_000, ge=100, description="Rows k-means is fitted on (a sample; all rows get a topic)."
    )
    seed: int = Field(0, description="Seed of the sample and of k-means.")


class ProjectionSettings(SignalSettings):
    method: Literal["pca"] = Field("pca", description="How vectors become 2-D points.")
    fit_rows: int = Field(200_000, ge=100, description="Rows the projection is fitted on.")
    seed: int = Field(0, description="Seed of the sample.")


class SemanticDupSettings(SignalSettings):
    threshold: float = Field(
        0.95,
        gt=0,
        le=1,
        description="Cosine of two rows' embeddings that makes them duplicates.",
    )
    neighbours: int = Field(
        16, ge=1, le=1000, description="Nearest rows (by the vector index) checked per row."
    )

"""The signal kinds Podium knows: name -> class (by import path, so that listing them
costs no import of lingua or a MinHash library) and the settings field that configures
it in a `signals` job."""

from __future__ import annotations

from dataclasses import dataclass

from podium.errors import InvalidInput
from podium.jobs.plugins import load_attr
from podium.signals.signal import Signal


@dataclass(frozen=True)
class SignalKind:
    name: str  # as typed: near-dup
    class_path: str  # "podium.signals.near_dup:NearDup"
    settings_field: str  # SignalsConfig field holding its settings: near_dup
    description: str

    def load(self) -> type[Signal]:  # type: ignore[type-arg]
        cls = load_attr(self.class_path)
        assert isinstance(cls, type) and issubclass(cls, Signal), self.class_path
        return cls


SIGNAL_KINDS: dict[str, SignalKind] = {
    kind.name: kind
    for kind in (
        SignalKind(
            "length",
            "podium.signals.length:Length",
            "length",
            "Characters and words per turn and per row.",
        ),
        SignalKind(
            "language",
            "podium.signals.language:Language",
            "language",
            "The language of each row (fastText or lingua, offline).",
        ),
        SignalKind(
            "private-data",
            "podium.signals.private_data:PrivateData",
            "private_data",
            "E-mail addresses, phone numbers, IP addresses, card numbers, IBANs and "
            "secrets (keys, tokens, private keys), each with its turn and span.",
        ),
        SignalKind(
            "exact-dup",
            "podium.signals.exact_dup:ExactDup",
            "exact_dup",
            "Rows whose text is equal after normalising case and white space.",
        ),
        SignalKind(
            "near-dup",
            "podium.signals.near_dup:NearDup",
            "near_dup",
            "Near-duplicate clusters: MinHash + LSH, verified by exact Jaccard.",
        ),
        SignalKind(
            "contamination",
            "podium.signals.contamination:Contamination",
            "contamination",
            "Word n-gram overlap with eval tables: eval table, eval row and span.",
        ),
        SignalKind(
            "embedding",
            "podium.signals.embedding:Embedding",
            "embedding",
            "A vector per row (wordllama, offline on CPU) and a vector index beside it.",
        ),
        SignalKind(
            "topics",
            "podium.signals.topics:Topics",
            "topics",
            "Two levels of topics (categories and clusters) over the rows' embeddings.",
        ),
        SignalKind(
            "semantic-dup",
            "podium.signals.semantic_dup:SemanticDup",
            "semantic_dup",
            "Semantic duplicates: rows whose embeddings are within a cosine threshold "
            "(the vector index's neighbours), clustered as near-dup.",
        ),
        SignalKind(
            "rubric",
            "podium.signals.rubric:Rubric",
            "rubric",
            "A judge model's quality score 1-10 of each row's answer, with a reason.",
        ),
        SignalKind(
            "projection",
            "podium.signals.projection:Projection",
            "projection",
            "A 2-D point per row for the map, from its embedding.",
        ),
    )
}


def signal_kind(name: str) -> SignalKind:
    try:
        return SIGNAL_KINDS[name.strip().replace("_", "-")]
    except KeyError:
        raise InvalidInput(
            f"Unknown signal {name!r}; known signals: {', '.join(SIGNAL_KINDS)}."
        ) from None

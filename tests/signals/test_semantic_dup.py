"""Semantic duplicates over a real catalog: planted paraphrases (the same request
reworded) are found through the embedding signal's vector index and clustered with the
smallest id as canonical, unrelated rows of the same topics are not, and "keep one per
cluster" removes exactly the paraphrases; without embeddings it is one line, nothing
written."""

from __future__ import annotations

from pathlib import Path

import pytest
from signal_tables import write_chat

from podium.errors import InvalidInput
from podium.signals.actions import remove_by_signal
from podium.signals.job import SignalsConfig, compute_signals
from podium.signals.store import signal_table_name
from podium.store.catalog.catalog import table_exists
from podium.store.read.read import read_small

DISTINCT = [
    "How do I bake sourdough bread at home with a starter?",
    "How long should I knead pizza dough before it rests?",
    "The striker scored a late goal and the team won the final.",
    "The goalkeeper saved a penalty in the semi final.",
    "Explain how Python dictionaries map keys to values.",
    "Explain how Python lists differ from tuples.",
    "What causes the tides in the ocean?",
    "Which planets in the solar system have rings?",
]
# (row index of the original, its rewording): planted after the distinct rows
PARAPHRASES = [
    (0, "At home, how can I bake sourdough bread using a starter?"),
    (2, "The team won the final after the striker scored a late goal."),
    (4, "Explain how keys map to values in Python dictionaries."),
]


def config(*signals: str, **settings: object) -> SignalsConfig:
    return SignalsConfig.model_validate(
        {"table": {"name": "t.chat"}, "signals": list(signals), "roles": ["assistant"], **settings}
    )


def test_planted_paraphrases_are_clusters_and_keep_one_removes_them(
    podium_home: Path,
) -> None:
    write_chat("t.chat", DISTINCT + [text for _, text in PARAPHRASES])
    with pytest.raises(InvalidInput, match="no embeddings; run `podium signals run"):
        compute_signals(config("semantic-dup"))
    assert not table_exists(signal_table_name("t.chat", "semantic-dup"))

    compute_signals(config("embedding"))
    [result] = compute_signals(config("semantic-dup", semantic_dup={"threshold": 0.9}))
    assert result["clusters"] == 3 and result["duplicates"] == 3
    rows = read_small(signal_table_name("t.chat", "semantic-dup"))[0].to_pylist()
    clusters = {(r["id"], r["cluster"], r["is_canonical"], r["size"]) for r in rows}
    canonical = {(f"r{o:04d}", f"r{o:04d}", True, 2) for o, _ in PARAPHRASES}
    copies = {
        (f"r{len(DISTINCT) + k:04d}", f"r{o:04d}", False, 2) for k, (o, _) in enumerate(PARAPHRASES)
    }
    planted = canonical | copies
    assert clusters == planted
    assert all(r["cosine"] >= 0.9 for r in rows)

    preview = remove_by_signal("t.chat", "semantic-dup", preview=True)
    assert preview["rows"] == 3
    assert preview["ids"] == [f"r{len(DISTINCT) + k:04d}" for k in range(len(PARAPHRASES))]

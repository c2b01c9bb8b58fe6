"""Topics, the projection and coverage over real embeddings: clusters found on a corpus
with known topics (adjusted Rand index), their keywords, a 2-D point per row, and the
eval prompts with no training row near them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from signal_tables import write_chat
from sklearn.metrics import adjusted_rand_score
from topic_corpus import topic_rows

from podium.errors import InvalidInput
from podium.signals import coverage
from podium.signals.coverage import PROP_COVERAGE, nearest_training, uncovered, write_uncovered
from podium.signals.job import SignalsConfig, compute_signals
from podium.signals.store import signal_table_name
from podium.signals.topics import PROP_TOPICS
from podium.store.catalog.catalog import load_table
from podium.store.read.read import read_small


def config(table: str, *signals: str, **settings: Any) -> SignalsConfig:
    return SignalsConfig.model_validate(
        {"table": {"name": table}, "signals": list(signals), "roles": ["assistant"], **settings}
    )


def test_topics_find_the_known_topics_with_their_keywords(podium_home: Path) -> None:
    corpus = topic_rows(400, k=8)
    write_chat("t.topics", [text for text, _ in corpus])
    compute_signals(
        config("t.topics", "embedding,topics,projection", topics={"clusters": 8, "categories": 3})
    )
    rows = read_small(signal_table_name("t.topics", "topics"))[0].to_pylist()
    truth = [topic for _, topic in corpus]
    found = {r["id"]: r["cluster"] for r in rows}
    ari = adjusted_rand_score(truth, [found[f"r{i:04d}"] for i in range(len(corpus))])
    assert ari >= 0.8, ari
    assert len({r["category"] for r in rows}) == 3
    topics = json.loads(load_table(signal_table_name("t.topics", "topics")).properties[PROP_TOPICS])
    assert sum(t["rows"] for t in topics) == 400 and len(topics) == 8
    titles = " ".join(t["title"] for t in topics)
    assert "striker" in titles or "goal" in titles or "match" in titles, titles
    points = read_small(signal_table_name("t.topics", "projection"))[0]
    assert points.num_rows == 400 and set(points.column_names) == {"id", "x", "y"}


def test_coverage_lists_the_eval_prompts_far_from_every_training_row(
    podium_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = topic_rows(60, k=4)  # baking, football, python, astronomy
    write_chat("t.train", [text for text, _ in corpus])
    write_chat(
        "t.evals",
        [
            "How long should the sourdough loaf bake in the oven?",
            "Which striker scored the late goal in the match?",
            "What are the side effects of this antibiotic for an infection?",
            "Should the central bank raise interest rates against inflation?",
        ],
        prefix="e",
    )
    compute_signals(config("t.train", "embedding"))
    with pytest.raises(InvalidInput, match="has no embeddings"):
        uncovered("t.evals", "t.train", 0.5)
    compute_signals(config("t.evals", "embedding", embedding={"dims": 128}))
    with pytest.raises(InvalidInput, match="same model and dimensions"):
        uncovered("t.evals", "t.train", 0.5)
    compute_signals(config("t.evals", "embedding"))
    far = uncovered("t.evals", "t.train", 0.5)
    assert {f.id for f in far} == {"e0002", "e0003"}, [f.to_dict() for f in far]
    exact = nearest_training("t.evals", "t.train")
    monkeypatch.setattr(coverage, "EXACT_MAX_ROWS", 0)  # a big training table: its index
    by_index = nearest_training("t.evals", "t.train")
    assert [(n.id, n.nearest) for n in by_index] == [(n.id, n.nearest) for n in exact]
    assert np.allclose([n.distance for n in by_index], [n.distance for n in exact], atol=2e-3)
    monkeypatch.undo()

    written = write_uncovered("t.evals", "t.train", 0.5, "t.uncovered")
    assert written["rows"] == 2
    prompts = read_small("t.uncovered")[0].to_pylist()
    assert {r["id"] for r in prompts} == {"e0002", "e0003"}
    assert prompts[0]["messages"][1]["content"].startswith(("What are", "Should"))
    out = load_table("t.uncovered")
    assert out.properties["podium.kind"] == "sft" and "t.evals@" in out.properties[PROP_COVERAGE]
    snapshot = out.current_snapshot()
    assert snapshot is not None and snapshot.summary is not None
    assert snapshot.summary.additional_properties.get("podium.author")
    with pytest.raises(InvalidInput):  # the table exists: refused, nothing lost
        write_uncovered("t.evals", "t.train", 0.5, "t.uncovered")
    assert read_small("t.uncovered")[0].num_rows == 2
    with pytest.raises(InvalidInput, match="nothing to write"):
        write_uncovered("t.evals", "t.train", 1.9, "t.none")
    with pytest.raises(InvalidInput, match="name Podium keeps"):  # it broke Browse of t.evals
        write_uncovered("t.evals", "t.train", 0.5, "t.evals__annotations")


def test_a_sample_read_batch_by_batch_is_the_sample_of_the_whole_matrix() -> None:
    """Topics and the projection fit on `VectorBatches.sample` and never hold every
    vector: the sample drawn across uneven batches is exactly the rows (and the order)
    indexing the whole matrix with the same draw gives."""
    import numpy as np
    import pyarrow as pa

    from podium.signals.vectors import VectorBatches

    matrix = np.random.default_rng(3).normal(size=(1000, 8)).astype(np.float32)
    cuts = [0, 7, 300, 301, 640, 1000]

    def batches() -> Any:
        for a, b in zip(cuts, cuts[1:], strict=False):
            yield pa.array([f"r{i}" for i in range(a, b)]), matrix[a:b]

    found = VectorBatches(1000, 8, "m", batches)
    picks = np.random.default_rng(5).choice(1000, 120, False)
    assert np.array_equal(found.sample(120, 5), matrix[picks])
    assert np.array_equal(found.sample(5000, 5), matrix)  # fewer rows than asked: all

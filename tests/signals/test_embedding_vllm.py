"""The embedding signal from a registered checkpoint served by a real vLLM in its pooling
mode (the session's base model: its pooling server is the test process's own, started
once), and the bad input around it: a generation server is not an embedding model, and
other dimensions than the model's are refused, nothing written either time. Then topics
over those vectors, titled by the same model on the session's generation server (the
`topic-titles` job's work)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest
from signal_tables import write_chat
from vllm_fixtures import VllmServer

from generators.embeddings import stop_servers
from generators.topic_titles import TopicTitlesConfig, title_topics
from podium.errors import InvalidInput
from podium.models.registry import add_endpoint, checkpoint_pin
from podium.signals.job import SignalsConfig, compute_signals
from podium.signals.similar import similar
from podium.signals.store import signal_table_name
from podium.signals.topics import PROP_TITLED, stored_topics
from podium.store.catalog.catalog import load_table, table_exists
from podium.store.read.read import read_small
from podium.store.state.users import acting_user

TEXTS = [
    "To bake sourdough bread, feed the starter, knead the dough and bake it in a hot oven.",
    "The football match ended two to one after a late goal from the striker.",
    "Python lists are mutable sequences; use a tuple when the values must not change.",
]


def embed(table: str, signal: str = "embedding", **embedding: object) -> list[dict[str, object]]:
    return compute_signals(
        SignalsConfig.model_validate(
            {
                "table": {"name": table},
                "signals": [signal],
                "embedding": embedding,
                "topics": {"clusters": 2},
            }
        )
    )


@pytest.fixture
def pooling() -> Iterator[None]:
    yield
    stop_servers()


def test_a_served_checkpoint_makes_the_vectors_and_bad_models_write_nothing(
    vllm_server: VllmServer, vllm_model: str, unique_table: str, pooling: None
) -> None:
    write_chat(unique_table, TEXTS)
    name = signal_table_name(unique_table, "embedding")

    # the session's generation server, registered as an endpoint, makes no embeddings
    add_endpoint(vllm_server.base_url, f"gen-{unique_table[2:]}", remote_model=vllm_model)
    with pytest.raises(InvalidInput, match="is not an embedding model: its server answered"):
        embed(unique_table, model=f"gen-{unique_table[2:]}")
    assert not table_exists(name)

    [result] = embed(unique_table, model=vllm_model)
    stored = load_table(name)
    settings = json.loads(stored.properties["podium.signal.settings"])
    assert settings["model"] == vllm_model and settings["dims"] == result["dims"] == 576
    assert settings["model_pin"] == checkpoint_pin(vllm_model)
    vectors = np.array(read_small(name)[0].column("vector").to_pylist(), np.float32)
    assert vectors.shape == (3, 576)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-4)
    assert similar(unique_table, row="r0000", k=2, exact=True)[0].id in {"r0001", "r0002"}

    snapshot = stored.current_snapshot()
    with pytest.raises(InvalidInput, match="vectors of 576 dimensions, not the 64"):
        embed(unique_table, model=vllm_model, dims=64)
    after = load_table(name).current_snapshot()
    assert snapshot is not None and after is not None
    assert after.snapshot_id == snapshot.snapshot_id  # the earlier vectors stand

    # topics over the served model's vectors, titled by the model from their rows
    embed(unique_table, "topics")
    before = {t["cluster"]: t for t in stored_topics(unique_table)}
    done = title_topics(TopicTitlesConfig(table=unique_table, model=vllm_model))
    assert done == {"topics": 2, "titled": 2, "unparsed": 0}
    for topic in stored_topics(unique_table):
        assert topic["titled_by"] == vllm_model and topic["title"].strip()
        assert topic["keywords"] == before[topic["cluster"]]["keywords"]
        assert topic["rows"] == before[topic["cluster"]]["rows"]
    titled = json.loads(
        load_table(signal_table_name(unique_table, "topics")).properties[PROP_TITLED]
    )
    assert titled == {"model": vllm_model, "author": acting_user().name}

"""The embedding signal over a real catalog: vectors stored as an Iceberg column with
the model and turns recorded, a vector index beside the signal table that maintenance
keeps, search by meaning (text and row, exact and approximate), and bad input refused
with nothing written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
import pytest
from signal_tables import write_chat

from podium.errors import InvalidInput, NotFound
from podium.signals.job import SignalsConfig, compute_signals
from podium.signals.similar import similar
from podium.signals.store import signal_table_name
from podium.signals.vector_index import PROP_INDEX
from podium.store.catalog.catalog import load_table, table_exists
from podium.store.maintenance.orphans import remove_orphans
from podium.store.maintenance.table_files import referenced_files
from podium.store.read.read import read_small

TEXTS = [
    "To bake sourdough bread, feed the starter, knead the dough and bake it in a hot oven.",
    "The football match ended two to one after a late goal from the striker.",
    "Python lists are mutable sequences; use a tuple when the values must not change.",
    "Roast the vegetables with olive oil, garlic and rosemary until they are golden.",
    "The goalkeeper saved a penalty and the team won the championship final.",
    "A Python dictionary maps keys to values; iterate over its items with a for loop.",
    "",  # no text: no vector
]


def config(*signals: str, table: str = "t.chat", **settings: Any) -> SignalsConfig:
    return SignalsConfig.model_validate(
        {"table": {"name": table}, "signals": list(signals), "roles": ["assistant"], **settings}
    )


@pytest.fixture
def chat(podium_home: Path) -> None:
    write_chat("t.chat", TEXTS)


def test_vectors_are_a_column_with_model_and_turns_recorded(chat: None) -> None:
    [result] = compute_signals(config("embedding"))
    name = signal_table_name("t.chat", "embedding")
    assert result["rows"] == 6 and result["no_text"] == 1 and result["dims"] == 256
    rows = read_small(name)[0].to_pylist()
    assert [r["id"] for r in rows] == [f"r{i:04d}" for i in range(6)]
    vectors = np.array([r["vector"] for r in rows], np.float32)
    assert vectors.shape == (6, 256)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-4)
    settings = json.loads(load_table(name).properties["podium.signal.settings"])
    assert settings["model"] == "wordllama" and settings["dims"] == 256
    assert settings["roles"] == ["assistant"]


def test_the_index_is_beside_the_signal_table_and_kept_by_maintenance(chat: None) -> None:
    compute_signals(config("embedding"))
    stored = load_table(signal_table_name("t.chat", "embedding"))
    files = json.loads(stored.properties[PROP_INDEX])
    snapshot = stored.current_snapshot()
    assert snapshot is not None
    assert files["rows"] == 6 and files["snapshot"] == snapshot.snapshot_id
    for path in (files["graph"], files["ids"]):
        assert path.startswith(stored.metadata.location)
        assert Path(urlparse(path).path).is_file()
        assert path in referenced_files(stored)
    compute_signals(config("embedding"))  # a new run: new index; the old one is named by none
    new = json.loads(load_table(signal_table_name("t.chat", "embedding")).properties[PROP_INDEX])
    remove_orphans(signal_table_name("t.chat", "embedding"), grace_s=0)
    for path in (new["graph"], new["ids"]):
        assert Path(urlparse(path).path).is_file()
    assert not Path(urlparse(files["graph"]).path).exists()


def test_search_by_text_and_by_row_exact_and_approximate(chat: None) -> None:
    compute_signals(config("embedding"))
    for exact in (True, False):
        hits = similar("t.chat", text="a recipe for baking bread in the oven", k=2, exact=exact)
        assert hits[0].id == "r0000" and hits[0].score > hits[1].score
        like_goal = similar("t.chat", row="r0001", k=1, exact=exact)
        assert [h.id for h in like_goal] == ["r0004"]  # the other football row, not itself
        assert [h.id for h in similar("t.chat", row="r0002", k=5, exact=exact)][0] == "r0005"


def test_bad_input_is_refused_with_nothing_written(chat: None) -> None:
    name = signal_table_name("t.chat", "embedding")
    with pytest.raises(NotFound, match="No model named 'Qwen/Qwen3-0.6B'"):
        compute_signals(config("embedding", embedding={"model": "Qwen/Qwen3-0.6B"}))
    with pytest.raises(InvalidInput, match="dims=100"):
        compute_signals(config("embedding", embedding={"dims": 100}))
    assert not table_exists(name)
    with pytest.raises(InvalidInput, match="has no embeddings"):
        similar("t.chat", text="bread")
    compute_signals(config("embedding"))
    with pytest.raises(NotFound, match="r0006"):  # the row without text has no vector
        similar("t.chat", row="r0006")
    with pytest.raises(InvalidInput, match="either a text or a row"):
        similar("t.chat", text="bread", row="r0001")


def test_a_missing_index_or_a_dimension_change_is_a_clear_error(chat: None) -> None:
    compute_signals(config("embedding"))
    stored = load_table(signal_table_name("t.chat", "embedding"))
    graph = Path(urlparse(json.loads(stored.properties[PROP_INDEX])["graph"]).path)
    graph.unlink()
    with pytest.raises(InvalidInput, match="is missing; run the embedding signal again"):
        similar("t.chat", text="bread", exact=False)
    # a run with other dimensions replaces vectors and index together
    compute_signals(config("embedding", embedding={"dims": 64}))
    vectors = read_small(signal_table_name("t.chat", "embedding"))[0].column("vector")
    assert len(vectors[0].as_py()) == 64
    assert similar("t.chat", text="bread in the oven", k=1, exact=False)[0].id == "r0000"


def test_new_rows_make_the_embeddings_stale(chat: None) -> None:
    compute_signals(config("embedding"))
    write_chat("t.chat", ["Another row about bread."], prefix="n", mode="append")
    with pytest.raises(InvalidInput, match="stale"):
        similar("t.chat", text="bread")


@pytest.mark.parametrize("dims", [64, 256])
def test_pooled_tokens_are_wordllamas_own_vectors(dims: int) -> None:
    """The embedder tokenizes whitespace pieces once each (podium.signals.pooled_tokens);
    its vectors are wordllama's own embed() of the whole texts, runs of spaces, code,
    a literal '▁', non-Latin text and a piece cache that overflows mid-batch included."""
    from podium.signals import pooled_tokens
    from podium.signals.embedders import Embedder, _wordllama, unit

    texts = [
        *TEXTS,
        "def f(x):\n    return  x  +  1\n\n\tdone",
        "  leading and trailing  ",
        "a   b    c",
        "日本語のテキスト and emoji 😀 x",
        "▁already▁marked ▁pieces",
        "numbers 12345 67.89",
    ] * 3
    expected = unit(np.asarray(_wordllama(dims).embed(texts, norm=False), np.float32))
    assert np.abs(Embedder("wordllama", dims, 4000).embed(texts) - expected).max() < 1e-5
    small = pooled_tokens.PooledTokens(_wordllama(dims).tokenizer, _wordllama(dims).embedding)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pooled_tokens, "CACHE_PIECES", 8)
        assert np.abs(unit(small.mean(texts)) - expected).max() < 1e-5


def test_preflight_checks_a_served_model_without_asking_it(chat: None) -> None:
    """Queuing a job from the app or CLI runs preflight in that process: a served
    embedding model is looked up there, but its server is the run's (starting one at
    preflight left a vLLM beside the app)."""
    from podium.errors import PodiumError
    from podium.models.registry import add_endpoint
    from podium.signals.job import preflight

    add_endpoint("http://127.0.0.1:9/v1", "nowhere", remote_model="m")
    preflight(config("embedding", embedding={"model": "nowhere"}))  # nothing asked
    with pytest.raises(NotFound, match="No model named 'elsewhere'"):
        preflight(config("embedding", embedding={"model": "elsewhere"}))
    with pytest.raises(PodiumError, match="'nowhere' failed to embed a batch"):
        compute_signals(config("embedding", embedding={"model": "nowhere"}))
    assert not table_exists(signal_table_name("t.chat", "embedding"))

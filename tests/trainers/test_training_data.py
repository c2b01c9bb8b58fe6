"""From a table snapshot to conversations: system column, eval splits, caps."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from podium.store.read.refs import TableRef
from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.write.write import write_batches, write_table
from trainers.data import grpo_dataset, load_training_data, sft_dataset


def _rows(n: int, split_every: int | None = None) -> pa.Table:
    rows = [
        {
            "id": f"r{i}",
            "messages": [
                {"role": "user", "content": f"q{i}"},
                {"role": "assistant", "content": f"a{i}"},
            ],
            "system": "Answer in JSON." if i == 0 else None,
            "split": "eval" if split_every and i % split_every == 0 else "train",
        }
        for i in range(n)
    ]
    return pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA)


def test_table_eval_split_is_used_capped_and_never_trained_on(podium_home):
    write_table("t.split", _rows(40, split_every=4), schema=SFT_SCHEMA)
    data = load_training_data(TableRef(name="t.split"), eval_fraction=0.1, max_eval_rows=3)
    assert len(data.eval) == 3 and all(int(c.id[1:]) % 4 == 0 for c in data.eval)
    assert len(data.train) == 30 and all(int(c.id[1:]) % 4 for c in data.train)
    # Fraction 0 = no evaluation, and eval rows still stay out of training.
    none = load_training_data(TableRef(name="t.split"), eval_fraction=0.0)
    assert len(none.eval) == 0 and len(none.train) == 30


def test_random_share_and_system_column(podium_home):
    write_table("t.plain", _rows(20), schema=SFT_SCHEMA)
    data = load_training_data(TableRef(name="t.plain"), eval_fraction=0.2, seed=1)
    assert len(data.eval) == 4 and len(data.train) == 16
    assert {c.id for c in data.eval}.isdisjoint(c.id for c in data.train)
    first = next(c for c in [*data.train, *data.eval] if c.id == "r0")
    assert first.messages[0] == {"role": "system", "content": "Answer in JSON."}
    prompts = grpo_dataset(data.train)
    assert prompts[0]["prompt"][-1]["role"] == "user" and prompts[0]["answer"].startswith("a")


def test_a_big_snapshot_streams_into_a_dataset_on_disk(podium_home):
    """Rows go from the data files straight into a memory-mapped Arrow file under the
    home; the train and eval sets are index views of it, not Python copies."""
    rows = _rows(3000, split_every=10)
    write_batches("t.big", rows.to_batches(max_chunksize=500), schema=SFT_SCHEMA)
    data = load_training_data(TableRef(name="t.big"), eval_fraction=0.1, max_eval_rows=50)
    assert (len(data.train), len(data.eval)) == (2700, 50)
    train = sft_dataset(data.train)
    assert len(train) == 2700 and train.column_names == ["messages"]
    files = [Path(f["filename"]) for f in train.cache_files]
    assert files and all(podium_home in f.parents for f in files)
    ids = {c.id for c in data.train}
    assert len(ids) == 2700 and not ids & {c.id for c in data.eval}
    prompts = grpo_dataset(data.train)
    assert len(prompts) == 2700 and prompts.cache_files
    assert prompts[0]["prompt"][-1]["role"] == "user" and prompts[0]["answer"].startswith("a")

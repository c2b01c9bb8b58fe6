"""From a table snapshot to conversations: system column, eval splits, caps."""

from __future__ import annotations

import pyarrow as pa

from podium.store.refs import TableRef
from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.write import write_table
from trainers.data import grpo_dataset, load_training_data


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
    assert none.eval == [] and len(none.train) == 30


def test_random_share_and_system_column(podium_home):
    write_table("t.plain", _rows(20), schema=SFT_SCHEMA)
    data = load_training_data(TableRef(name="t.plain"), eval_fraction=0.2, seed=1)
    assert len(data.eval) == 4 and len(data.train) == 16
    assert {c.id for c in data.eval}.isdisjoint(c.id for c in data.train)
    first = next(c for c in data.train + data.eval if c.id == "r0")
    assert first.messages[0] == {"role": "system", "content": "Answer in JSON."}
    prompts = grpo_dataset(data.train)
    assert prompts[0]["prompt"][-1]["role"] == "user" and prompts[0]["answer"].startswith("a")

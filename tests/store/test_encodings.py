"""Data files dictionary-encode the columns that repeat and write distinct texts plain,
and read back the same rows either way."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from podium.store.catalog.catalog import load_table
from podium.store.read.file_plan import local_path
from podium.store.read.read import read_small
from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.write.encodings import dictionary_columns
from podium.store.write.write import write_batches


def _chats(n: int) -> pa.RecordBatch:
    turns = [
        [{"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": f"a{i}"}]
        for i in range(n)
    ]
    return pa.RecordBatch.from_pydict(
        {
            "id": [f"row-{i}" for i in range(n)],
            "messages": turns,
            "system": [None] * n,
            "source": ["web" if i % 2 else "book" for i in range(n)],
            "split": ["train"] * n,
            "tags": [["a"]] * n,
            "metadata": [f'{{"n": {i}}}' for i in range(n)],
            "created_at": [None] * n,
        },
        schema=SFT_ARROW_SCHEMA,
    )


def _encodings(table: str) -> dict[str, set[str]]:
    (task,) = load_table(table).scan().plan_files()
    meta = pq.ParquetFile(local_path(task.file.file_path)).metadata
    columns = meta.row_group(0)
    return {
        columns.column(i).path_in_schema: set(columns.column(i).encodings)
        for i in range(columns.num_columns)
    }


def test_distinct_texts_are_written_plain_and_repeated_ones_with_a_dictionary(
    podium_home: Path,
) -> None:
    batch = _chats(400)
    write_batches("ns.chats", [batch], schema=SFT_SCHEMA)
    encodings = _encodings("ns.chats")
    dictionary = {"RLE_DICTIONARY", "PLAIN_DICTIONARY"}
    for plain in ("id", "messages.list.element.content", "metadata"):
        assert not encodings[plain] & dictionary, plain
    for repeated in ("messages.list.element.role", "source", "split", "tags.list.element"):
        assert encodings[repeated] & dictionary, repeated
    assert read_small("ns.chats")[0].to_pylist() == pa.Table.from_batches([batch]).to_pylist()


def test_columns_are_named_as_the_file_names_them_maps_included() -> None:
    kind = pa.map_(pa.string(), pa.int64())
    batch = pa.record_batch(
        {
            "m": pa.array([[("k", i)] for i in range(50)], kind),
            "s": pa.array([{"a": f"t{i}", "b": "same"} for i in range(50)]),
            "n": pa.array(range(50)),
        }
    )
    assert dictionary_columns(batch) == ["m.key_value.key", "m.key_value.value", "s.b", "n"]


def test_a_table_of_repeated_values_keeps_every_dictionary() -> None:
    batch = pa.record_batch({"split": ["train", "test"] * 20, "n": list(range(40))})
    assert dictionary_columns(batch) is True

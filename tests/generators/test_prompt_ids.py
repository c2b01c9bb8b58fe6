"""A prompt without an id gets the same content id that `podium import` gives a row without
one: the same messages, the same id, whichever path reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from generators.prompts import load_prompts
from podium.store.read.read import read_small
from podium.store.read.refs import TableRef
from podium.store.write.generated_ids import content_id
from podium.store.write.ingest import import_file
from podium.store.write.write import write_table


def test_the_same_messages_get_the_same_id_on_import_and_as_a_prompt(
    podium_home: Path, tmp_path: Path
) -> None:
    question = "Name a fruit, café-style."
    path = tmp_path / "no-ids.jsonl"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": question}]}) + "\n")
    import_file(path, "ns.imported")
    imported = read_small("ns.imported", columns=["id"])[0].column("id").to_pylist()

    write_table("ns.plain", pa.table({"question": [question]}))
    prompts, _, _ = load_prompts(TableRef(name="ns.plain"), "question")

    expected = content_id([{"role": "user", "content": question}])
    assert imported == [expected]
    assert [p.prompt_id for p in prompts] == [expected]

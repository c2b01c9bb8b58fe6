"""Import: shapes, file kinds, modes, and bad input that must leave the catalog as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from podium.errors import InvalidInput
from podium.store.catalog import list_tables, load_table, table_exists
from podium.store.ingest import import_file
from podium.store.read import read_arrow


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


OPENAI = [
    {
        "id": f"r{i}",
        "messages": [
            {"role": "user", "content": f"q{i}"},
            {"role": "assistant", "content": f"a{i}"},
        ],
        "tags": ["t"],
    }
    for i in range(10)
]


def test_openai_jsonl_creates_table_with_all_rows(podium_home: Path, tmp_path: Path) -> None:
    out = import_file(write_jsonl(tmp_path / "d.jsonl", OPENAI), "ns.chat")
    assert out.tables == ["ns.chat"] and out.summary["rows"] == 10
    data, _ = read_arrow("ns.chat")
    rows = data.to_pylist()
    assert [r["id"] for r in rows] == [f"r{i}" for i in range(10)]
    assert rows[3]["messages"] == [
        {"role": "user", "content": "q3"},
        {"role": "assistant", "content": "a3"},
    ]
    assert rows[0]["source"] == "d.jsonl" and rows[0]["tags"] == ["t"]
    assert load_table("ns.chat").properties["podium.kind"] == "sft"


def test_sharegpt_maps_speakers_to_roles(podium_home: Path, tmp_path: Path) -> None:
    rec = {
        "conversations": [
            {"from": "system", "value": "be brief"},
            {"from": "human", "value": "hi"},
            {"from": "gpt", "value": "hello"},
        ]
    }
    import_file(write_jsonl(tmp_path / "s.jsonl", [rec]), "ns.sg")
    (row,) = read_arrow("ns.sg")[0].to_pylist()
    assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
    assert row["id"]  # a content hash when the file has none


def test_prompt_response_detected_and_named(podium_home: Path, tmp_path: Path) -> None:
    alpaca = [{"instruction": "Add", "input": "2+2", "output": "4", "lang": "en"}]
    import_file(write_jsonl(tmp_path / "a.jsonl", alpaca), "ns.alpaca")
    (row,) = read_arrow("ns.alpaca")[0].to_pylist()
    assert row["messages"] == [
        {"role": "user", "content": "Add\n\n2+2"},
        {"role": "assistant", "content": "4"},
    ]
    assert json.loads(row["metadata"]) == {"lang": "en"}

    custom = [{"q": "why?", "a": "because"}]
    with pytest.raises(InvalidInput, match="no chat columns"):
        import_file(write_jsonl(tmp_path / "c.jsonl", custom), "ns.custom")
    import_file(
        tmp_path / "c.jsonl",
        "ns.custom",
        format="prompt-response",
        prompt_column="q",
        response_column="a",
    )
    assert read_arrow("ns.custom")[0].to_pylist()[0]["messages"][1]["content"] == "because"


def test_bad_line_in_the_middle_names_the_line_and_creates_nothing(
    podium_home: Path, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", OPENAI)
    lines = path.read_text().splitlines()
    lines[6] = '{"messages": [{"role": "user", "content": "oops"}'  # line 7 is cut short
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InvalidInput, match=r"bad\.jsonl line 7"):
        import_file(path, "ns.bad")
    assert not table_exists("ns.bad")


def test_bad_line_on_append_leaves_existing_rows_and_snapshots(
    podium_home: Path, tmp_path: Path
) -> None:
    import_file(write_jsonl(tmp_path / "good.jsonl", OPENAI[:3]), "ns.keep")
    before = load_table("ns.keep").current_snapshot().snapshot_id
    bad = write_jsonl(tmp_path / "more.jsonl", OPENAI[3:6] + [{"messages": "not a list"}])
    with pytest.raises(InvalidInput, match="more.jsonl line 4"):
        import_file(bad, "ns.keep", mode="append")
    table = load_table("ns.keep")
    assert table.current_snapshot().snapshot_id == before
    assert read_arrow("ns.keep")[0].num_rows == 3


def test_file_without_chat_columns_is_rejected(podium_home: Path, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"line 1: no chat columns found \(keys: a, b\)"):
        import_file(write_jsonl(tmp_path / "x.jsonl", [{"a": 1, "b": 2}]), "ns.x")
    assert list_tables() == []


def test_modes(podium_home: Path, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", OPENAI[:2])
    import_file(path, "ns.m")
    with pytest.raises(InvalidInput, match="already exists"):
        import_file(path, "ns.m")
    import_file(path, "ns.m", mode="append")
    assert read_arrow("ns.m")[0].num_rows == 4
    import_file(path, "ns.m", mode="overwrite")
    assert read_arrow("ns.m")[0].num_rows == 2
    with pytest.raises(InvalidInput, match="does not exist"):
        import_file(path, "ns.other", mode="append")


def test_parquet_and_saved_hf_dataset(podium_home: Path, tmp_path: Path) -> None:
    pq.write_table(pa.Table.from_pylist(OPENAI[:4]), tmp_path / "d.parquet")
    import_file(tmp_path / "d.parquet", "ns.pq")
    assert read_arrow("ns.pq")[0].column("id").to_pylist() == ["r0", "r1", "r2", "r3"]

    import datasets

    dd = datasets.DatasetDict(
        {
            "train": datasets.Dataset.from_list([{"prompt": "p1", "response": "r1"}]),
            "test": datasets.Dataset.from_list([{"prompt": "p2", "response": "r2"}]),
        }
    )
    dd.save_to_disk(str(tmp_path / "hf"))
    import_file(tmp_path / "hf", "ns.hf")
    rows = read_arrow("ns.hf")[0].to_pylist()
    assert sorted((r["split"], r["messages"][1]["content"]) for r in rows) == [
        ("test", "r2"),
        ("train", "r1"),
    ]


def test_missing_file_and_bad_table_name(podium_home: Path, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="does not exist"):
        import_file(tmp_path / "nope.jsonl", "ns.t")
    with pytest.raises(InvalidInput, match="NAMESPACE.TABLE"):
        import_file(write_jsonl(tmp_path / "d.jsonl", OPENAI[:1]), "a.b.c")

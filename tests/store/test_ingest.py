"""Import: shapes, file kinds, modes, and bad input that must leave the catalog as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from store_helpers import Recorder

from podium.config import reset_settings
from podium.errors import InvalidInput
from podium.store.catalog.catalog import list_tables, load_table, table_exists
from podium.store.read.read import read_small
from podium.store.write.ingest import import_file


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
    data, _ = read_small("ns.chat")
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
    (row,) = read_small("ns.sg")[0].to_pylist()
    assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
    assert row["id"]  # a content hash when the file has none


def test_prompt_response_detected_and_named(podium_home: Path, tmp_path: Path) -> None:
    alpaca = [{"instruction": "Add", "input": "2+2", "output": "4", "lang": "en"}]
    import_file(write_jsonl(tmp_path / "a.jsonl", alpaca), "ns.alpaca")
    (row,) = read_small("ns.alpaca")[0].to_pylist()
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
    assert read_small("ns.custom")[0].to_pylist()[0]["messages"][1]["content"] == "because"


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
    assert read_small("ns.keep")[0].num_rows == 3


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
    assert read_small("ns.m")[0].num_rows == 4
    import_file(path, "ns.m", mode="overwrite")
    assert read_small("ns.m")[0].num_rows == 2
    with pytest.raises(InvalidInput, match="does not exist"):
        import_file(path, "ns.other", mode="append")


def test_parquet_and_saved_hf_dataset(podium_home: Path, tmp_path: Path) -> None:
    pq.write_table(pa.Table.from_pylist(OPENAI[:4]), tmp_path / "d.parquet")
    import_file(tmp_path / "d.parquet", "ns.pq")
    assert read_small("ns.pq")[0].column("id").to_pylist() == ["r0", "r1", "r2", "r3"]

    import datasets

    dd = datasets.DatasetDict(
        {
            "train": datasets.Dataset.from_list([{"prompt": "p1", "response": "r1"}]),
            "test": datasets.Dataset.from_list([{"prompt": "p2", "response": "r2"}]),
        }
    )
    dd.save_to_disk(str(tmp_path / "hf"))
    import_file(tmp_path / "hf", "ns.hf")
    rows = read_small("ns.hf")[0].to_pylist()
    assert sorted((r["split"], r["messages"][1]["content"]) for r in rows) == [
        ("test", "r2"),
        ("train", "r1"),
    ]


def test_missing_file_and_bad_table_name(podium_home: Path, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="does not exist"):
        import_file(tmp_path / "nope.jsonl", "ns.t")
    with pytest.raises(InvalidInput, match="NAMESPACE.TABLE"):
        import_file(write_jsonl(tmp_path / "d.jsonl", OPENAI[:1]), "a.b.c")


# Real-size behaviour (issue 12), shown at a tiny target file size so a few hundred rows
# make several data files: the same code path a 10 GB import takes.

LONG = [
    {
        "id": f"L{i:04d}",
        "messages": [
            {"role": "user", "content": f"question {i} " + "x" * 300},
            {"role": "assistant", "content": f"answer {i} " + "y" * 300},
        ],
    }
    for i in range(400)
]


@pytest.fixture
def tiny_files(podium_home: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    target = 16 * 1024
    monkeypatch.setenv("PODIUM_TARGET_FILE_BYTES", str(target))
    reset_settings()
    return target


def data_files(name: str) -> list[dict]:
    table = load_table(name)
    return table.inspect.files().select(["file_path", "record_count"]).to_pylist()


def parquet_files_on_disk(home: Path) -> list[Path]:
    return sorted(home.rglob("*.parquet"))


def test_import_writes_several_files_in_one_snapshot_in_order(
    tiny_files: int, tmp_path: Path
) -> None:
    import_file(write_jsonl(tmp_path / "long.jsonl", LONG), "ns.long")
    table = load_table("ns.long")
    assert len(table.snapshots()) == 1
    files = data_files("ns.long")
    assert len(files) >= 4
    assert sum(f["record_count"] for f in files) == 400
    assert all(f["record_count"] < 400 for f in files)
    rows = read_small("ns.long")[0].to_pylist()
    assert [r["id"] for r in rows] == [r["id"] for r in LONG]
    assert [r["messages"] for r in rows] == [r["messages"] for r in LONG]


def test_parquet_input_streams_into_several_files(tiny_files: int, tmp_path: Path) -> None:
    pq.write_table(pa.Table.from_pylist(LONG), tmp_path / "long.parquet", row_group_size=50)
    reporter = Recorder()
    import_file(tmp_path / "long.parquet", "ns.pq", reporter=reporter)
    assert len(data_files("ns.pq")) >= 4
    assert read_small("ns.pq")[0].column("id").to_pylist() == [r["id"] for r in LONG]
    totals = {total for _, total, _ in reporter.calls}
    assert 400 in totals  # a Parquet input knows its row count: a real bar


def test_bad_line_at_90_percent_leaves_nothing_behind(
    tiny_files: int, podium_home: Path, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "late.jsonl", LONG)
    lines = path.read_text().splitlines()
    lines[360] = "{not json"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InvalidInput, match=r"late\.jsonl line 361: invalid JSON"):
        import_file(path, "fresh.late")
    assert not table_exists("fresh.late")
    assert parquet_files_on_disk(podium_home) == []


def test_failed_append_and_overwrite_keep_the_table_as_it_was(
    tiny_files: int, podium_home: Path, tmp_path: Path
) -> None:
    import_file(write_jsonl(tmp_path / "first.jsonl", LONG[:100]), "ns.keep")
    before = load_table("ns.keep").current_snapshot().snapshot_id
    files_before = parquet_files_on_disk(podium_home)
    bad = write_jsonl(tmp_path / "more.jsonl", LONG[100:] + [{"messages": []}])
    for mode in ("append", "overwrite"):
        with pytest.raises(InvalidInput, match="more.jsonl line 301"):
            import_file(bad, "ns.keep", mode=mode)
        table = load_table("ns.keep")
        assert table.current_snapshot().snapshot_id == before
        assert len(table.snapshots()) == 1
        assert read_small("ns.keep")[0].column("id").to_pylist() == [r["id"] for r in LONG[:100]]
        assert parquet_files_on_disk(podium_home) == files_before


def test_overwrite_replaces_every_file_in_one_snapshot(tiny_files: int, tmp_path: Path) -> None:
    import_file(write_jsonl(tmp_path / "a.jsonl", LONG[:200]), "ns.ow")
    import_file(write_jsonl(tmp_path / "b.jsonl", LONG[200:]), "ns.ow", mode="overwrite")
    table = load_table("ns.ow")
    assert len(table.snapshots()) == 2
    assert table.current_snapshot().summary.operation.value == "overwrite"
    assert read_small("ns.ow")[0].column("id").to_pylist() == [r["id"] for r in LONG[200:]]


def test_import_reports_progress_in_bytes_read(tiny_files: int, tmp_path: Path) -> None:
    big = [dict(r, id=f"P{i}") for i, r in enumerate(LONG * 8)]  # ~2 MB: several MiB steps
    for r in big:
        r["messages"] = [{"role": "user", "content": "z" * 2000}, *r["messages"]]
    path = write_jsonl(tmp_path / "p.jsonl", big)
    reporter = Recorder()
    import_file(path, "ns.p", reporter=reporter)
    mib = path.stat().st_size // 2**20
    reading = [c for c in reporter.calls if "MiB read" in c[2]]
    assert len(reading) > 10 and {total for _, total, _ in reading} == {mib}
    dones = [done for done, _, _ in reading]
    assert dones == sorted(dones) and dones[-1] == mib
    assert reporter.calls[-1][0] == reporter.calls[-1][1] == 3200
    assert "3,200 rows" in reporter.calls[-1][2]


def test_ids_generated_for_duplicates_stay_unique_across_batches(
    tiny_files: int, tmp_path: Path
) -> None:
    same = [{"messages": LONG[0]["messages"]} for _ in range(60)]
    import_file(write_jsonl(tmp_path / "dup.jsonl", same), "ns.dup")
    ids = read_small("ns.dup")[0].column("id").to_pylist()
    assert len(set(ids)) == 60
    paths = [f["file_path"].removeprefix("file://") for f in data_files("ns.dup")]
    assert sum(pq.ParquetFile(p).num_row_groups for p in paths) > 1  # several batches
    assert ids[1] == f"{ids[0]}-2"


def test_metadata_is_stored_as_the_json_module_writes_it() -> None:
    """orjson writes a row's metadata (the json module cost a fifth of an import); the
    text stays what it was, and what orjson refuses still goes through json."""
    from podium.store.write.chat_rows import canonical_json, metadata_json

    for value in (
        {"difficulty": 5, "b": [1, 2.5, None, True], "a": {"z": "é ✓ \u2028", "y": "\x1f"}},
        {"nested": {"k": [{"x": -3}, 'text with "quotes" and \\ slashes']}},
    ):
        assert metadata_json(value) == canonical_json(value)
    for refused in ({1: "int key", 2: "x"}, {"big": 2**70}):
        assert metadata_json(refused) == canonical_json(refused)

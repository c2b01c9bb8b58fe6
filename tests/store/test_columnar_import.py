"""The columnar import (Arrow types and normalises JSONL a block at a time) gives the same
rows as the row path, for every chat shape and the edge cases, and the same errors."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pytest

from podium.config import reset_settings
from podium.errors import InvalidInput
from podium.store.read.read import read_small
from podium.store.write import columnar_import
from podium.store.write.arrow_json import encode
from podium.store.write.ingest import ImportConfig, import_file, sft_batches

NOW = datetime(2026, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)
BLOCK = 700  # bytes: every file below spans several blocks


def both_paths(path: Path, block: int = BLOCK, **options: Any) -> tuple[pa.Table, pa.Table, int]:
    """(columnar rows, row-path rows, how many rows Arrow typed)."""
    cfg = ImportConfig(path=str(path), out="ns.t", **options)
    counts: dict[str, int] = {}
    fast = pa.Table.from_batches(list(sft_batches(cfg, None, block, counts, now=NOW)))
    rows = pa.Table.from_batches(list(sft_batches(cfg, None, block, columnar=False, now=NOW)))
    return fast, rows, counts["columnar_rows"]


def same_rows(path: Path, block: int = BLOCK, **options: Any) -> int:
    fast, rows, typed = both_paths(path, block, **options)
    assert fast.schema == rows.schema
    for name in rows.column_names:
        assert fast.column(name).to_pylist() == rows.column(name).to_pylist(), name
    assert fast.equals(rows)
    return typed


def jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return path


UNICODE = 'héllo wörld — 你好 🎉 עברית \u2028 tab\there "quoted" back\\slash \x1f'

OPENAI = [
    {
        "id": f"o{i}",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": f"{UNICODE} {i}"},
            {"role": "assistant", "content": "" if i % 3 == 0 else f"answer {i}"},
        ],
        "source": "" if i % 4 == 0 else f"src{i % 2}",
        "split": "train",
        "tags": [] if i % 5 == 0 else ["a", "b"],
        "metadata": {"difficulty": i, "ok": i % 2 == 0, "note": f"n{i}", "deep": {"k": [1, 2]}},
        "created_at": "2025-01-02T03:04:05+02:00",
        "system": "sys",
        "extra_key": f"x{i}",
        "tools": [{"name": "search", "args": ["q"]}],
    }
    for i in range(40)
]


def test_openai_rows_are_the_same_both_ways(podium_home: Path, tmp_path: Path) -> None:
    typed = same_rows(jsonl(tmp_path / "o.jsonl", OPENAI))
    assert typed == len(OPENAI)  # the columns were really typed by Arrow


def test_blocks_parsed_in_several_chunks_give_the_same_rows(
    podium_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(columnar_import, "PARSE_CHUNK_BYTES", 1500)  # ~2 lines a chunk
    assert same_rows(jsonl(tmp_path / "o.jsonl", OPENAI), block=10_000) == len(OPENAI)


def test_minimal_rows_generated_ids_and_naive_times(podium_home: Path, tmp_path: Path) -> None:
    chat = [{"role": "user", "content": "same"}, {"role": "assistant", "content": None}]
    records: list[dict[str, Any]] = [{"messages": chat} for _ in range(30)]
    records += [{"messages": chat, "id": "0123456789abcdef"}]  # a generated-shaped id given
    records += [{"messages": chat, "created_at": "2025-05-05T10:00:00"} for _ in range(30)]
    typed = same_rows(jsonl(tmp_path / "m.jsonl", records))
    assert typed == len(records)
    fast, _, _ = both_paths(tmp_path / "m.jsonl")
    ids = fast.column("id").to_pylist()
    assert len(set(ids)) == len(ids) and ids[1] == f"{ids[0]}-2"
    assert fast.column("created_at")[0].as_py() == NOW


@pytest.mark.parametrize(
    "stamps",
    [
        ["2025-01-02T03:04:05Z", "2025-01-02 03:04:05.123456+05:30", "2025-01-02T03:04:05-0100"],
        ["2025-01-02", "2025-01-02T03:04", "2025-01-02T03:04:05.5"],
        ["2025-01-02T03:04:05+00:00", "2025-01-02T03:04:05"],
        ["2025-W01-1", "20250102T030405"],
    ],
)
def test_times_are_read_the_same_both_ways(
    podium_home: Path, tmp_path: Path, stamps: list[str]
) -> None:
    chat = OPENAI[0]["messages"]
    records = [{"messages": chat, "created_at": stamps[i % len(stamps)]} for i in range(20)]
    same_rows(jsonl(tmp_path / "t.jsonl", records))


def test_source_is_named_after_the_path_given_not_a_link_target(
    podium_home: Path, tmp_path: Path
) -> None:
    target = jsonl(tmp_path / "target.jsonl", [{"messages": OPENAI[0]["messages"]}] * 3)
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    assert same_rows(link) == 3
    fast, _, _ = both_paths(link)
    assert set(fast.column("source").to_pylist()) == {"link.jsonl"}


def test_integer_ids_and_allowed_duplicates(podium_home: Path, tmp_path: Path) -> None:
    records = [{"id": i % 25, "messages": OPENAI[0]["messages"]} for i in range(50)]
    path = jsonl(tmp_path / "d.jsonl", records)
    assert same_rows(path, allow_duplicate_ids=True) == 50


def test_sharegpt_rows_are_the_same_both_ways(podium_home: Path, tmp_path: Path) -> None:
    speakers = ["human", "gpt", "system", "function", "observation", "bing", "model"]
    records = [
        {
            "id": f"s{i}",
            "conversations": [
                {"from": speakers[i % 7], "value": f"{UNICODE} {i}", "weight": 1},
                {"from": "gpt", "value": "" if i % 2 else None},
            ],
            "category": "chat",
        }
        for i in range(40)
    ]
    assert same_rows(jsonl(tmp_path / "s.jsonl", records)) == 40


def test_prompt_response_shapes_are_the_same_both_ways(podium_home: Path, tmp_path: Path) -> None:
    alpaca = [
        {"instruction": f"do {i}", "input": ["", "  ", "\x1c", "ctx"][i % 4], "output": f"o{i}"}
        for i in range(40)
    ]
    assert same_rows(jsonl(tmp_path / "a.jsonl", alpaca)) == 40
    qa = [{"question": f"q{i} {UNICODE}", "answer": f"a{i}", "lang": "en"} for i in range(40)]
    assert same_rows(jsonl(tmp_path / "q.jsonl", qa)) == 40
    named = [{"ask": f"q{i}", "reply": f"r{i}", "prompt_id": i} for i in range(40)]
    typed = same_rows(
        jsonl(tmp_path / "n.jsonl", named), prompt_column="ask", response_column="reply"
    )
    assert typed == 40


SOME_KEYS = [
    # A key some rows lack: Arrow reads it as null in those rows, as it would `null`.
    [{"messages": OPENAI[0]["messages"], **({"extra": 1} if i % 2 else {})} for i in range(20)],
    [
        {"messages": OPENAI[0]["messages"], "metadata": {"a": 1} if i % 2 else {"b": None}}
        for i in range(20)
    ],
    # Floats (Arrow and orjson print some differently) and JSON text as metadata.
    [
        {"messages": OPENAI[0]["messages"], "metadata": {"score": 0.1 * i, "n": [1e-7, 2.0]}}
        for i in range(20)
    ],
    [
        {"messages": OPENAI[0]["messages"], "metadata": json.dumps({"z": 1, "a": [i]})}
        for i in range(20)
    ],
]


@pytest.mark.parametrize("records", SOME_KEYS)
def test_rows_arrow_cannot_write_surely_get_their_metadata_from_their_line(
    podium_home: Path, tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    """The block is still typed by Arrow; only those rows' metadata is read again."""
    assert same_rows(jsonl(tmp_path / "x.jsonl", records)) == len(records)


AMBIGUOUS = [
    # Tool calls, content parts, prompt keys that change from row to row, a float
    # outside metadata (where NaN would pass unseen).
    [
        {
            "messages": [
                {"role": "user", "content": "weather?"},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "x": i}]},
            ]
        }
        for i in range(20)
    ],
    [
        {"messages": [{"role": "user", "content": [{"type": "text", "text": f"p{i}"}]}]}
        for i in range(20)
    ],
    [{"prompt" if i % 2 else "question": f"q{i}", "response": "r"} for i in range(20)],
    [
        {"messages": [{"role": "user", "content": "x", "weight": 0.5 * i}], "id": f"w{i}"}
        for i in range(20)
    ],
]


@pytest.mark.parametrize("records", AMBIGUOUS)
def test_blocks_arrow_cannot_type_surely_give_the_same_rows(
    podium_home: Path, tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    same_rows(jsonl(tmp_path / "x.jsonl", records))


def test_blank_lines_and_mixed_blocks_keep_order_and_lines(
    podium_home: Path, tmp_path: Path
) -> None:
    path = jsonl(tmp_path / "b.jsonl", OPENAI)
    lines = path.read_text().split("\n")[:-1]
    lines[20:20] = ["", "   "]
    path.write_text("\n".join(lines) + "\n")
    typed = same_rows(path)
    assert 0 < typed < len(OPENAI)  # some blocks by Arrow, the blank lines' by rows


def test_deep_nesting_gives_the_same_rows(podium_home: Path, tmp_path: Path) -> None:
    """Past orjson's 254 levels a row's metadata is written by the json module."""
    lines = [
        b'{"messages": [{"role": "user", "content": "x"}], "m": ' + b"[" * n + b"]" * n + b"}"
        for n in (3, 300, 600)
    ]
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    same_rows(path)


DEEP = b"[" * 5000 + b"]" * 5000


def test_crlf_lines_and_no_last_newline_are_typed_the_same(
    podium_home: Path, tmp_path: Path
) -> None:
    text = jsonl(tmp_path / "o.jsonl", OPENAI).read_bytes()
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes(text.replace(b"\n", b"\r\n"))
    assert same_rows(crlf) == len(OPENAI)
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(text.rstrip(b"\n"))
    assert same_rows(cut) == len(OPENAI)


def refusal(path: Path, columnar: bool) -> str:
    cfg = ImportConfig(path=str(path), out="ns.t")
    with pytest.raises(InvalidInput) as caught:
        list(sft_batches(cfg, None, BLOCK, columnar=columnar))
    return str(caught.value)


@pytest.mark.parametrize(
    "bad",
    [
        b'{"messages": [{"role": "user", "content": "x\\ud800"}]}',
        b'{"messages": [{"role": "user", "content": "x"}], "metadata": {"n": 1e400}}',
        b'{"messages": [{"role": "user", "content": "x"}], "metadata": {"n": NaN}}',
        b'{"messages": [{"role": "user", "content": "x"}], "metadata": "{\\"a\\": 1, \\"a\\": 2}"}',
        b'{"messages": [{"role": "user", "content": "x"}], "metadata": "not json"}',
        b'{"messages": [{"role": "user", "content": "x", "w": NaN}]}',
        b'{"messages": [{"role": "user", "content": "x"}], "id": "a", "id": "b"}',
        b'{"messages": [{"role": "user", "content": "x"}], "id": "a\\u0000b"}',
        b'{"messages": [{"role": "user", "content": "x"}]} {"messages": []}',
        b'{"messages": []}',
        b'{"messages": [{"role": "user", "content": "x"}], "tags": [1]}',
        b'{"conversations": [{"from": "human", "value": "x"}]}',
        b'{"messages": [{"role": "user", "content": "x"}], "created_at": "yesterday"}',
        b"[1, 2]",
        b'{"messages": [{"role": "user", "content": "caf\xe9"}]}',
        b'{"messages": [{"role": "user", "content": "x"}], "m": '
        + b"[" * 5000
        + b"]" * 5000
        + b"}",
    ],
)
@pytest.mark.parametrize("base", ["full", "plain"])
def test_a_bad_line_late_in_the_file_is_refused_the_same_way(
    podium_home: Path, tmp_path: Path, bad: bytes, base: str
) -> None:
    """Among full rows, or among rows of the bad line's own shape (no id, no other key),
    so that only what is wrong with it sets its block apart."""
    plain = {"messages": [{"role": "user", "content": "x"}]}
    good = [json.dumps(r).encode() for r in (OPENAI if base == "full" else [plain] * 40)]
    path = tmp_path / "late.jsonl"
    path.write_bytes(b"\n".join([*good[:30], bad, *good[30:]]) + b"\n")
    message = refusal(path, columnar=True)
    assert message.startswith("late.jsonl line 31: ")
    assert message == refusal(path, columnar=False)


def test_a_long_first_line_is_refused_for_its_length_first(
    podium_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PODIUM_IMPORT_MAX_LINE_BYTES", "100")
    reset_settings()
    path = tmp_path / "long.jsonl"
    path.write_bytes(b'{"messages": [{"role": "user", "content": "' + b"x" * 200 + b"\n")
    try:
        message = refusal(path, columnar=True)
    finally:
        monkeypatch.delenv("PODIUM_IMPORT_MAX_LINE_BYTES")
        reset_settings()
    assert message.startswith("long.jsonl line 1: the line is longer than 100 bytes")


def test_duplicate_ids_across_typed_blocks_name_both_lines(
    podium_home: Path, tmp_path: Path
) -> None:
    path = jsonl(tmp_path / "dup.jsonl", [*OPENAI, OPENAI[3]])
    message = refusal(path, columnar=True)
    assert message.startswith("dup.jsonl line 41: duplicate id 'o3' (first at dup.jsonl line 4)")
    assert message == refusal(path, columnar=False)


def test_imported_table_holds_the_row_path_rows(podium_home: Path, tmp_path: Path) -> None:
    path = jsonl(tmp_path / "o.jsonl", OPENAI)
    import_file(path, "ns.fast")
    stored = read_small("ns.fast")[0].drop_columns(["created_at"])
    cfg = ImportConfig(path=str(path), out="ns.t")
    rows = pa.Table.from_batches(list(sft_batches(cfg, columnar=False))).drop_columns(
        ["created_at"]
    )
    assert stored.to_pylist() == rows.to_pylist()


ESCAPES = '"q" \\ \n\r\t\x08\x0c\x7f \u2028 é 🎉 /'


@pytest.mark.parametrize(
    "value",
    [
        {"a": 1, "B": -2, "é": "ü", "z": [True, False, None], "m": {"x": [], "y": {}}},
        {"s": ESCAPES, "n": 2**62, "l": [["a"], [], ["b", "c"]], "o": [{"k": "v"}]},
    ],
)
def test_arrow_values_are_written_as_orjson_writes_them(value: dict[str, Any]) -> None:
    text, certain = encode(pa.array([value, value]))
    expected = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    assert text.to_pylist() == [expected, expected]
    assert certain.all()


def test_values_arrow_cannot_write_surely_are_marked() -> None:
    """A null field (missing or null?), a float, a control character orjson writes as
    \\u00XX: those rows are left to the row path."""
    cases = [
        (pa.array([{"a": 1, "b": 2}, {"a": 1}]), [True, False]),
        (pa.array([{"a": 0.5}, {"a": None}]), [False, False]),
        (pa.array([{"s": "ok"}, {"s": "nul\x00"}]), [True, False]),
        (pa.array([["ok"], ["\x1f"]]), [True, False]),
    ]
    for column, certain in cases:
        assert encode(column)[1].tolist() == certain


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.choice(["int", "str", "bool", "null", "float", "list", "dict"][: 7 - depth])
    if kind == "int":
        return rng.choice([0, -1, 7, 2**40, -(2**62)])
    if kind == "str":
        return rng.choice(["", "a", UNICODE, ESCAPES, "ü\x00x", "2025-01-02"])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "float":
        return rng.choice([0.5, 1e-7, 1e16, 2.0, -3.25, 1e300])
    if kind == "list":
        return [random_value(rng, depth + 2) for _ in range(rng.randint(0, 3))]
    if kind == "null":
        return None
    return {f"k{rng.randint(0, 4)}": random_value(rng, depth + 2) for _ in range(rng.randint(0, 3))}


def random_record(rng: random.Random, i: int) -> dict[str, Any]:
    record: dict[str, Any] = {
        "messages": [
            {
                "role": rng.choice(["user", "assistant", "tool"]),
                "content": rng.choice(["x", "", None, UNICODE]),
            }
            for _ in range(rng.randint(1, 3))
        ]
    }
    optional = {
        "id": rng.choice([f"r{i}", i, None]),
        "source": rng.choice(["", "s", None]),
        "split": rng.choice(["train", None]),
        "tags": rng.choice([[], ["a"], None]),
        "system": rng.choice(["sys", "", None]),
        "metadata": rng.choice([{}, {"a": random_value(rng)}, None, '{"t": 1}']),
        "tools": rng.choice([None, [{"name": "f"}]]),
        "created_at": rng.choice(["2025-01-02T03:04:05Z", None]),
        f"extra{rng.randint(0, 2)}": random_value(rng),
    }
    record.update({k: v for k, v in optional.items() if rng.random() < 0.6})
    return record


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_rows_are_the_same_both_ways(podium_home: Path, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    records = [random_record(rng, i) for i in range(120)]
    path = jsonl(tmp_path / "r.jsonl", records)
    # Blocks of a line or two: most random rows are typed by Arrow, one block at a time.
    assert same_rows(path, block=300, allow_duplicate_ids=True) > 60
    # Blocks of many: random rows rarely agree on types; a uniform run in the middle does.
    records[40:80] = [dict(OPENAI[i % 40], id=f"u{i}") for i in range(40)]
    path = jsonl(tmp_path / "r.jsonl", records)
    assert same_rows(path, block=4000, allow_duplicate_ids=True) > 0

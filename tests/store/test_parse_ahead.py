"""An import's parse begun ahead (`store.write.parse_ahead`, what a one-shot `podium import`
calls once its options are known): run ahead of the writer, taken over by the import of
the same input, and the same rows and refusals as an import that parsed by itself."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from podium.config import reset_settings
from podium.errors import InvalidInput
from podium.reporting import Reporter
from podium.store.read.read import read_small
from podium.store.write import parse_ahead as parse_module
from podium.store.write.ingest import ImportConfig, run_import
from podium.store.write.parse_ahead import parse_ahead

ROWS = [
    {
        "id": f"r{i}",
        "messages": [
            {"role": "user", "content": f"question {i} " + "x" * 200},
            {"role": "assistant", "content": f"answer {i} " + "y" * 200},
        ],
        "metadata": {"n": i},
    }
    for i in range(400)
]


@pytest.fixture
def small_blocks(podium_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # 4 KiB blocks of input: a part each, so 400 rows make ~50 parts to run ahead with.
    monkeypatch.setenv("PODIUM_TARGET_FILE_BYTES", str(16 * 1024))
    reset_settings()
    yield
    parse_module.stop_parse_ahead()


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def config(path: Path, out: str, **more: str) -> ImportConfig:
    return ImportConfig(path=str(path), out=out, **more)


def queued_parts(min_parts: int) -> int:
    """How many parsed parts wait in the parse begun ahead, once it has parsed
    `min_parts` or gave up (a deadline for a slow machine, not a measurement)."""
    parts = parse_module._ahead[0].parts
    deadline = time.monotonic() + 30
    while parts._ready.qsize() < min_parts and time.monotonic() < deadline:
        time.sleep(0.01)
    return parts._ready.qsize()


def rows_of(name: str) -> list[dict]:
    """The table's rows but their `created_at`: the time each import began."""
    return read_small(name)[0].drop_columns(["created_at"]).to_pylist()


def test_the_parse_runs_ahead_and_the_import_takes_it_over(
    small_blocks: None, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "chat.jsonl", ROWS)
    parse_ahead(config(path, "ns.ahead"))
    # Before any import asked for a row, the parser ran further ahead than the two
    # parts the writer's queue held before.
    assert queued_parts(8) >= 8
    begun = parse_module._ahead[0]
    out = run_import(config(path, "ns.ahead"), Reporter())
    assert out.summary["rows"] == 400 and parse_module._ahead == []
    assert begun.parts._ready.empty() and not begun.parts._thread.is_alive()  # taken over
    run_import(config(path, "ns.plain"), Reporter())  # parsed by itself
    ahead, plain = rows_of("ns.ahead"), rows_of("ns.plain")
    assert [r["id"] for r in ahead] == [r["id"] for r in ROWS]
    assert ahead == plain


def test_a_parse_begun_for_other_options_is_stopped_not_used(
    small_blocks: None, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "chat.jsonl", ROWS)
    parse_ahead(config(path, "ns.other", source="ahead"))
    begun = parse_module._ahead[0]
    run_import(config(path, "ns.other", source="mine"), Reporter())
    assert not begun.parts._thread.is_alive() and parse_module._ahead == []
    assert {r["source"] for r in rows_of("ns.other")} == {"mine"}


def test_a_bad_line_is_refused_in_the_same_words(small_blocks: None, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "late.jsonl", ROWS)
    lines = path.read_text().splitlines()
    lines[360] = "{not json"
    path.write_text("\n".join(lines) + "\n")
    words = []
    for ahead in (True, False):
        if ahead:
            parse_ahead(config(path, "fresh.late"))
        with pytest.raises(InvalidInput, match=r"late\.jsonl line 361: invalid JSON") as refused:
            run_import(config(path, "fresh.late"), Reporter())
        words.append(str(refused.value))
    assert words[0] == words[1]


def test_nothing_is_begun_for_what_is_not_a_jsonl_file_under_the_roots(
    small_blocks: None, tmp_path: Path
) -> None:
    (tmp_path / "rows.parquet").write_bytes(b"")  # read row by row, not in blocks
    parse_ahead(config(tmp_path / "missing.jsonl", "ns.x"))
    parse_ahead(config(tmp_path / "rows.parquet", "ns.x"))
    assert parse_module._ahead == []


def test_a_parse_no_import_took_over_is_stopped(small_blocks: None, tmp_path: Path) -> None:
    parse_ahead(config(write_jsonl(tmp_path / "chat.jsonl", ROWS), "ns.never"))
    begun = parse_module._ahead[0]
    parse_module.stop_parse_ahead()  # the command's end, after a failure before the import
    assert not begun.parts._thread.is_alive() and parse_module._ahead == []

"""I5: hostile import files get a clear refusal naming the line and the field, and
leave the catalog as it was; duplicate ids are refused or, when allowed, counted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile_helpers import chat_line, podium, refused, tables

from podium.errors import InvalidInput
from podium.reporting import Reporter
from podium.store.read.query import page
from podium.store.write.ingest import ImportConfig, import_file, run_import


def write_lines(path: Path, *lines: bytes) -> Path:
    path.write_bytes(b"".join(lines))
    return path


def good(i: int) -> bytes:
    return chat_line(i).encode()


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (b'{"messages": [{"role": "user", "content": "caf\xe9"}]}\n', "line 3: not UTF-8 text"),
        (good(2).replace(b'"r2"', b'"r2", "metadata": 7'), "line 3: `metadata` must be a JSON"),
        (
            good(2).replace(b'"r2"', b'"r2", "metadata": [1]'),
            "line 3: `metadata` must be a JSON object",
        ),
        (good(2).replace(b'"r2"', b'"r2", "source": 5'), "line 3: `source` must be a string"),
        (good(2).replace(b'"r2"', b'"r2", "split": true'), "line 3: `split` must be a string"),
        (good(2).replace(b'"r2"', b'{"a": 1}'), "line 3: `id` must be a string or an integer"),
        (
            b'{"messages": [{"role": "user", "content": "x"}], "metadata": '
            + b"[" * 5000
            + b"]" * 5000
            + b"}\n",
            "line 3: the JSON is nested too deeply",
        ),
        (
            b'{"messages": [{"role": "user", "content": "x\\ud800y"}]}\n',
            "line 3: invalid JSON (no low surrogate in string at column 45); each \\ud800",
        ),
        (
            b'{"messages": [{"role": "user", "content": "\\udc00"}]}\n',
            "line 3: invalid JSON (invalid high surrogate in string",
        ),
        (
            good(2).replace(b'"r2"', b'"r2", "metadata": {"n": 1e400}'),
            "line 3: invalid JSON (number is infinity when parsed as double at column",
        ),
        (
            good(2).replace(b'"r2"', b'"r2", "metadata": {"n": NaN}'),
            "line 3: invalid JSON (unexpected character, expected a JSON value at column",
        ),
        (good(2).replace(b'"r2"', b'"r2", "id": "r9"'), "line 3: the key 'id' appears twice"),
        (
            b'{"messages": [{"role": "user", "role": "assistant", "content": "x"}]}\n',
            "line 3: the key 'role' appears twice in one object",
        ),
        (
            good(2).replace(b'"r2"', b'"r2", "metadata": "{\\"a\\": 1, \\"a\\": 2}"'),
            "line 3: `metadata`: the key 'a' appears twice",
        ),
        (good(2).replace(b'"r2"', b'"r\\u00002"'), "line 3: `id` 'r\\x002' holds a NUL"),
    ],
)
def test_bad_line_is_refused_naming_line_and_field(
    podium_home: Path, tmp_path: Path, bad: bytes, message: str
) -> None:
    path = write_lines(tmp_path / "in.jsonl", good(0), good(1), bad, good(3))
    with pytest.raises(InvalidInput) as caught:
        import_file(path, "ns.bad")
    assert f"in.jsonl {message}" in str(caught.value)
    assert tables() == []


def test_cli_import_of_latin1_names_line_and_byte(podium_home: Path, tmp_path: Path) -> None:
    bad = b'{"messages": [{"role": "user", "content": "caf\xe9"}]}\n'
    path = write_lines(tmp_path / "in.jsonl", good(0), bad)
    refused(
        podium("import", str(path), "--table", "ns.bad"),
        "in.jsonl line 2: not UTF-8 text (byte 47 of the line is 0xe9)",
        code=1,
    )
    assert tables() == []


def test_giant_line_is_refused_at_the_limit(
    podium_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = json.dumps({"messages": [{"role": "user", "content": "x" * (20 * 2**20)}]}).encode()
    path = write_lines(tmp_path / "big.jsonl", good(0), big + b"\n")
    refused(
        podium("import", str(path), "--table", "ns.big"),
        "big.jsonl line 2: the line is longer than 8,388,608 bytes",
        "import_max_line_bytes",
        code=1,
    )
    assert tables() == []
    monkeypatch.setenv("PODIUM_IMPORT_MAX_LINE_BYTES", str(32 * 2**20))
    assert podium("import", str(path), "--table", "ns.big").returncode == 0


def test_line_exactly_at_the_limit_is_accepted(podium_home: Path, tmp_path: Path) -> None:
    from podium.config import reset_settings

    line = good(0)
    path = write_lines(tmp_path / "edge.jsonl", line, good(1))
    import os

    os.environ["PODIUM_IMPORT_MAX_LINE_BYTES"] = str(len(line) - 1)  # the newline is extra
    reset_settings()
    try:
        import_file(path, "ns.edge")
        assert page("ns.edge").total == 2
        os.environ["PODIUM_IMPORT_MAX_LINE_BYTES"] = str(len(line) - 2)
        reset_settings()
        with pytest.raises(InvalidInput, match="edge.jsonl line 1: the line is longer"):
            import_file(path, "ns.edge2")
    finally:
        del os.environ["PODIUM_IMPORT_MAX_LINE_BYTES"]
        reset_settings()


def test_duplicate_ids_are_refused_naming_both_lines(podium_home: Path, tmp_path: Path) -> None:
    lines = [good(i) for i in range(6)] + [good(1), good(4), good(1)]
    path = write_lines(tmp_path / "dup.jsonl", *lines)
    refused(
        podium("import", str(path), "--table", "ns.dup"),
        "dup.jsonl line 7: duplicate id 'r1' (first at dup.jsonl line 2)",
        "3 rows repeat an earlier row's id (also 'r4')",
        "--allow-duplicate-ids",
        code=1,
    )
    assert tables() == []


def test_duplicate_ids_in_a_later_batch_delete_the_files_written(
    podium_home: Path, tmp_path: Path
) -> None:
    lines = [good(i) for i in range(200)] + [good(0)]
    path = write_lines(tmp_path / "late.jsonl", *lines)
    cfg = ImportConfig(path=str(path), out="ns.late")
    with pytest.raises(InvalidInput, match="late.jsonl line 201: duplicate id 'r0'"):
        from podium.store.write.ingest import sft_batches

        list(sft_batches(cfg, batch_bytes=500))  # many batches before the check
    warehouse = podium_home / "warehouse"
    assert (
        not any(p.suffix == ".parquet" for p in warehouse.rglob("*"))
        if warehouse.exists()
        else True
    )


def test_duplicate_ids_allowed_are_imported_and_counted(podium_home: Path, tmp_path: Path) -> None:
    path = write_lines(tmp_path / "dup.jsonl", good(0), good(1), good(0))
    proc = podium("import", str(path), "--table", "ns.dup", "--allow-duplicate-ids")
    assert proc.returncode == 0, proc.stderr
    assert page("ns.dup").total == 3
    cfg = ImportConfig(path=str(path), out="ns.dup2", allow_duplicate_ids=True)
    outputs = run_import(cfg, Reporter())
    assert outputs.summary == {"rows": 3, "duplicate_ids": 1}


def test_duplicate_id_card_field_runs_through_podium_run(podium_home: Path, tmp_path: Path) -> None:
    path = write_lines(tmp_path / "dup.jsonl", good(0), good(0))
    card = tmp_path / "card.md"
    card.write_text(
        f"---\nkind: import\npath: {path}\ntable: ns.c\nallow_duplicate_ids: true\n---\n"
    )
    assert podium("run", str(card)).returncode == 0
    assert page("ns.c").total == 2

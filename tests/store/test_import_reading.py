"""The import's reading parts: JSONL blocks read in one piece end where the row path's
lines end, and the duplicate-id ledger finds repeats across its gathered inserts."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pyarrow as pa
import pytest

from podium.store.write.columnar_import import Block, blocks
from podium.store.write.duplicate_ids import IdLedger, Lines


class _Stream(io.BytesIO):
    """A pipe-like input: no seeking, so blocks are read the plain way."""

    def seekable(self) -> bool:
        return False


def _lines(seed: int, n: int, limit: int) -> bytes:
    rng = random.Random(seed)
    rows = [b"x" * rng.choice([0, 1, 5, 30, 90, limit - 1, limit, limit + 5]) for _ in range(n)]
    return b"\n".join(rows) + rng.choice([b"\n", b"", b"\r\n"])


def _read_all(fh: io.BytesIO, size: int, limit: int) -> list[Block]:
    return list(blocks(fh, size, limit))


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("size", [1, 7, 64, 200])
def test_blocks_end_at_line_ends_whether_or_not_the_file_can_seek(seed: int, size: int) -> None:
    limit = 120
    data = _lines(seed, 60, limit)
    seeking, plain = _read_all(io.BytesIO(data), size, limit), _read_all(_Stream(data), size, limit)
    assert [(b.first, b.data, b.ends.tolist()) for b in seeking] == [
        (b.first, b.data, b.ends.tolist()) for b in plain
    ]
    joined = b"".join(b.data for b in seeking)
    assert data.startswith(joined)
    line = 1
    for block in seeking:
        assert block.first == line
        assert block.ends.tolist() == [i for i, c in enumerate(block.data) if c == ord("\n")]
        line += len(block.ends)
    if joined != data:  # stopped at a line past the limit, which the last block holds
        last = seeking[-1].data
        assert len(last) - (int(seeking[-1].ends[-1]) + 1 if len(seeking[-1].ends) else 0) > limit
    else:
        assert all(b.data.endswith(b"\n") for b in seeking[:-1])


def test_a_line_past_the_limit_ends_the_blocks_inside_it() -> None:
    data = b'{"a": 1}\n' + b"y" * 500 + b"\n" + b'{"b": 2}\n'
    for fh in (io.BytesIO(data), _Stream(data)):
        joined = b"".join(b.data for b in _read_all(fh, 4, 100))
        assert joined.startswith(b'{"a": 1}\n' + b"y" * 100)
        assert b'{"b"' not in joined


def test_the_ledger_finds_repeats_across_its_inserts(tmp_path: Path) -> None:
    with IdLedger(flush_rows=2) as ledger:  # an INSERT every other batch
        ledger.add(pa.array(["a", "b"]), Lines("f.jsonl line ", pa.array([1, 2], pa.int64())))
        ledger.add(["c", "a"], ["f.parquet row 0", "f.parquet row 1"])
        ledger.add(pa.array(["d", "b", "b"]), Lines("f.jsonl line ", pa.array([7, 8, 9])))
        repeated, shown = ledger.duplicates()
    assert repeated == 3  # a once, b twice
    assert [(d.id, d.count, d.first, d.again) for d in shown] == [
        ("a", 2, "f.jsonl line 1", "f.parquet row 1"),
        ("b", 3, "f.jsonl line 2", "f.jsonl line 8"),
    ]


def test_the_ledger_without_repeats_says_none(tmp_path: Path) -> None:
    with IdLedger() as ledger:  # everything still gathered when asked
        ledger.add(pa.array([f"r{i}" for i in range(1000)]), [f"x row {i}" for i in range(1000)])
        assert ledger.duplicates() == (0, [])

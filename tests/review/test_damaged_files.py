"""A table whose own files are damaged (metadata, manifest list, manifest, data file cut
short or overwritten): commands end in one `error:` line naming the kind of file, never a
traceback or "aborted" (issue 44, point 8)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import cli_fork
import pytest
from review_data import make_table, row_id

from podium.config import get_settings, reset_settings

T = "t.damaged"
PODIUM = [sys.executable, "-m", "podium.cli"]


def _damage(kind: str) -> str:
    """Cut or overwrite every file of `kind` of the table; the words the error names."""
    folder = get_settings().home / "warehouse" / "t" / "damaged"
    if kind == "metadata":
        newest = max((folder / "metadata").glob("*.metadata.json"), key=os.path.getmtime)
        newest.write_text("garbage{")
        return "metadata file"
    if kind == "manifest-list":
        for path in (folder / "metadata").glob("snap-*.avro"):
            path.write_bytes(b"junk")
        return "manifest"
    pattern = "*-m0.avro" if kind == "manifest" else "*.parquet"
    for path in (folder / ("metadata" if kind == "manifest" else "data")).glob(pattern):
        path.write_bytes(path.read_bytes()[:100])
    return "manifest" if kind == "manifest" else "data or delete file"


@pytest.mark.parametrize("kind", ["metadata", "manifest-list", "manifest", "data"])
def test_a_damaged_table_file_is_one_line(podium_home: Path, kind: str) -> None:
    make_table(T, 10)
    words = _damage(kind)

    args = ["edit", T, row_id(3), "--turn", "1", "--content", "x", "-m", "m"]
    proc = cli_fork.run([*PODIUM, *args], capture_output=True, text=True, timeout=300)
    reset_settings()

    assert proc.returncode == 65, proc.stderr
    assert "Traceback" not in proc.stderr and "aborted" not in proc.stderr, proc.stderr
    first = proc.stderr.strip().splitlines()[0]
    assert first.startswith("error:") and "cannot be read" in first, proc.stderr
    assert words in first, proc.stderr

"""I8 and path tricks on export: an export is an ordinary file that honours the umask,
and a failed export leaves nothing behind."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile_helpers import podium

from podium.store.read.export import export_table
from podium.store.write.ingest import import_file


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
@pytest.mark.parametrize("suffix", ["jsonl", "parquet"])
def test_export_honours_the_umask(
    podium_home: Path,
    chat_jsonl: Path,
    tmp_path: Path,
    umask: None,
    mask: int,
    mode: int,
    suffix: str,
) -> None:
    import_file(chat_jsonl, "ns.chat")
    os.umask(mask)
    out = podium_home / "exports" / f"out.{suffix}"
    export_table("ns.chat", out)
    assert stat.S_IMODE(out.stat().st_mode) == mode
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(".out")] == []


def test_export_to_a_directory_path_is_refused_and_leaves_no_temp_file(
    podium_home: Path, chat_jsonl: Path, tmp_path: Path
) -> None:
    assert podium("import", str(chat_jsonl), "--table", "ns.chat").returncode == 0
    target = podium_home / "exports" / "adir.jsonl"
    target.mkdir(parents=True)
    proc = podium("export", "ns.chat", str(target))
    assert "Traceback" not in proc.stderr and proc.returncode != 0
    assert "adir.jsonl is a directory; name the file to write" in " ".join(proc.stderr.split())
    assert list(target.parent.glob(".adir.jsonl.*")) == []
    assert target.is_dir() and not any(target.iterdir())

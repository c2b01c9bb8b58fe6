"""A full disk under Podium's home: an edit says so in one line, changes nothing, and
works once space is freed (issue 44, point 8: a raw traceback, or "the catalog and state
database is unreachable" for SQLite's "database or disk is full").

The home is a real, small tmpfs filled up to its last bytes; a machine where this test
may not mount one skips it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import cli_fork
import pytest
from review_data import make_table, row_id

from podium.config import reset_settings
from podium.store.read.query import page

PODIUM = [sys.executable, "-m", "podium.cli"]
T = "t.full"


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount)], capture_output=True
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {made.stderr.decode().strip()}")
    try:
        monkeypatch.setenv("PODIUM_HOME", str(mount / "home"))
        reset_settings()
        yield mount
    finally:
        reset_settings()
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _fill(mount: Path) -> Path:
    """Take every free byte of the disk; returns the file to delete to free them."""
    ballast = mount / f"ballast-{uuid.uuid4().hex}"
    fd = os.open(ballast, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        chunk = 1 << 20
        while chunk:
            try:
                os.write(fd, b"\0" * chunk)
            except OSError:
                chunk //= 2  # down to the last bytes
    finally:
        os.close(fd)
    assert shutil.disk_usage(mount).free < 4096
    return ballast


def _answer(i: int) -> str:
    rows = page(T, limit=100).rows
    return str(next(r for r in rows if r["id"] == row_id(i))["messages"][1]["content"])


def test_an_edit_on_a_full_disk_is_one_line_and_changes_nothing(small_disk: Path) -> None:
    make_table(T, 50)
    before = _answer(3)
    ballast = _fill(small_disk)

    args = ["edit", T, row_id(3), "--turn", "1", "--content", "fixed", "-m", "fix"]
    env = {**os.environ}
    proc = cli_fork.run([*PODIUM, *args], capture_output=True, text=True, timeout=300, env=env)

    assert proc.returncode not in (0, 75), proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "unreachable" not in proc.stderr, proc.stderr
    assert "disk is full" in proc.stderr, proc.stderr
    ballast.unlink()
    reset_settings()
    assert _answer(3) == before  # nothing changed
    again = cli_fork.run([*PODIUM, *args], capture_output=True, text=True, timeout=300, env=env)
    assert again.returncode == 0, again.stderr
    reset_settings()
    assert _answer(3) == "fixed"

"""A fresh home is private to its user: the folder 0700 and the catalog 0600, whatever
the umask (it holds the catalog, secrets, logs and data)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path


def test_a_fresh_home_via_the_cli_is_private(tmp_path: Path) -> None:
    home = tmp_path / "fresh" / "home"
    proc = subprocess.run(
        [sys.executable, "-c", "import os; os.umask(0o022); from podium.cli import main; main()",
         "tables"],
        env={**os.environ, "PODIUM_HOME": str(home)},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "catalog.db").stat().st_mode) == 0o600

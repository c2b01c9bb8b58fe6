"""`make test`'s workers (the Makefile's PYTEST_WORKERS): a worker that dies ends the run
with the test it was running named. In a CI rehearsal a crashed worker was replaced, the
replacement waited for tests the scheduler never sent it, and the run hung until killed."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def makefile_workers() -> list[str]:
    text = (REPO / "Makefile").read_text()
    match = re.search(r"^PYTEST_WORKERS \?= (.+)$", text, re.MULTILINE)
    assert match, "the Makefile sets no PYTEST_WORKERS"
    return shlex.split(match.group(1))


def test_a_worker_that_dies_ends_the_run_naming_its_test(tmp_path: Path) -> None:
    (tmp_path / "test_dies.py").write_text(
        "import os\n\ndef test_the_process_ends():\n    os._exit(3)\n"
    )
    (tmp_path / "test_fine.py").write_text(
        "".join(f"def test_fine_{i}():\n    assert True\n\n" for i in range(6))
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *makefile_workers(), "-p", "no:cacheprovider", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert "test_dies.py::test_the_process_ends" in out, out
    assert "crashed and worker restarting disabled" in out, out
    assert "replacing crashed worker" not in out, out

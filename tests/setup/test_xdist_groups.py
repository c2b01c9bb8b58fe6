"""`make test` runs two xdist workers with `--dist loadgroup`; tests/conftest.py names
each test's group. A file's tests stay on one worker (its module fixtures are set up
once), as the heavy group's do (so two heavy tests never run at once)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SMALL = "tests/store/test_failpoints.py"


def test_a_files_tests_run_on_one_worker_under_its_group() -> None:
    done = subprocess.run(
        [sys.executable, "-P", "-m", "pytest", "-p", "no:cacheprovider", "-v"]
        + ["-n", "2", "--dist", "loadgroup", SMALL],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    ran = re.findall(r"\[(gw\d)\] \[ *\d+%\] PASSED (\S+)", done.stdout)
    assert len(ran) >= 4, done.stdout[-3000:]
    assert all(nodeid.endswith(f"@{SMALL}") for _, nodeid in ran), ran
    assert len({worker for worker, _ in ran}) == 1, ran

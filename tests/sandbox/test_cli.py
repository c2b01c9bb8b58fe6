"""`podium sandbox run` prints the result and exits non-zero when the code failed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cli_fork
import pytest

pytestmark = pytest.mark.sandbox


def podium(*args: str) -> subprocess.CompletedProcess[str]:
    return cli_fork.run(
        [sys.executable, "-m", "podium.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_run_prints_json_result(tmp_path: Path) -> None:
    script = tmp_path / "hello.py"
    script.write_text("import sys\nprint('hi', sys.argv[1:], input())\n")
    done = podium(
        "sandbox",
        "run",
        str(script),
        "--backend",
        "local",
        "--stdin",
        "typed\n",
        "--arg",
        "a b",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "ok" and result["backend"] == "local"
    assert result["stdout"] == "hi ['a b'] typed\n"
    assert result["wall_s"] > 0


def test_run_reports_failure_and_timeout(tmp_path: Path) -> None:
    script = tmp_path / "slow.py"
    script.write_text("import time\nprint('start', flush=True)\ntime.sleep(30)\n")
    done = podium("sandbox", "run", str(script), "--backend", "local", "--timeout", "1")
    assert done.returncode == 1
    assert done.stdout.startswith("status: timeout")
    assert "start" in done.stdout


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    done = podium("sandbox", "run", str(tmp_path / "nope.py"))
    assert done.returncode == 2
    assert "Cannot read" in done.stderr and "nope.py" in done.stderr


def test_untrusted_output_is_shown_escaped(tmp_path: Path) -> None:
    """Issue 38: the code's output cleared the screen (ESC[2J) and reordered text (U+202E)."""
    script = tmp_path / "loud.py"
    script.write_text(
        "import sys\nprint('a\\x1b[2Jb\\u202ec')\nprint('e\\x1b]0;title\\x07', file=sys.stderr)\n"
    )
    done = podium("sandbox", "run", str(script), "--backend", "local")
    assert done.returncode == 0, done.stderr
    assert "a\\x1b[2Jb\\u202ec" in done.stdout and "e\\x1b]0;title\\x07" in done.stdout
    assert "\x1b" not in done.stdout and "\u202e" not in done.stdout and "\x07" not in done.stdout

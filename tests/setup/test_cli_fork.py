"""The forked CLI (tests/cli_fork.py) is the CLI as a subprocess would run it: the same
output, exit status, environment, working directory, stdin and time-out behaviour."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cli_fork
import pytest

PODIUM = [sys.executable, "-m", "podium.cli"]


def _both(args: list[str], **kwargs: object) -> tuple[object, object]:
    forked = cli_fork.run([*PODIUM, *args], capture_output=True, text=True, **kwargs)
    real = subprocess.run([*PODIUM, *args], capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    return forked, real


def test_output_and_exit_status_match_a_real_subprocess(tmp_path: Path) -> None:
    env = dict(os.environ, PODIUM_HOME=str(tmp_path / "home"), COLUMNS="70")
    codes: dict[str, int] = {}
    for args in (["validate", "--help"], ["no-such-command"], ["tables", "--json"]):
        forked, real = _both(args, env=env)
        assert isinstance(forked, subprocess.CompletedProcess)
        assert isinstance(real, subprocess.CompletedProcess)
        assert (forked.returncode, forked.stdout) == (real.returncode, real.stdout), args
        # the usage line names the program as `python -m` does in both
        assert forked.stderr == real.stderr, args
        codes[args[0]] = forked.returncode
    assert codes["no-such-command"] == 2  # read above: each pair costs two CLI start-ups


def test_the_callers_environment_cwd_path_and_stdin_reach_the_command(tmp_path: Path) -> None:
    plugin = "import sys\nraise SystemExit('imported from cwd, read ' + sys.stdin.read())\n"
    (tmp_path / "probe_plugin.py").write_text(plugin)
    env = dict(os.environ, PODIUM_HOME=str(tmp_path / "home"), PODIUM_JOB_PLUGINS="probe_plugin")
    env.pop("PYTHONSAFEPATH", None)
    # The plugin is found only on the caller's working directory (as `python -m` puts it on
    # sys.path), only if the caller's PODIUM_JOB_PLUGINS was used, and says what it read.
    forked, real = _both(["jobs", "kinds", "--json"], env=env, cwd=tmp_path, input="hello")
    assert isinstance(forked, subprocess.CompletedProcess)
    assert isinstance(real, subprocess.CompletedProcess)
    assert forked.returncode == real.returncode != 0
    assert "imported from cwd, read hello" in real.stderr
    assert forked.stderr == real.stderr


def test_a_time_out_kills_the_command_and_raises_as_subprocess_does(tmp_path: Path) -> None:
    env = dict(os.environ, PODIUM_HOME=str(tmp_path / "home"))
    with pytest.raises(subprocess.TimeoutExpired):
        cli_fork.run([*PODIUM, "worker", "--poll", "0.2"], capture_output=True, env=env, timeout=3)
    # what is not the CLI, or asks for what the fork does not do, is a plain subprocess
    done = cli_fork.run([sys.executable, "-c", "print(7)"], capture_output=True, text=True)
    assert done.stdout == "7\n"

"""Settings as a person gives them: a relative PODIUM_HOME is taken from where the
command starts, and a bad value is named by its variable (both ended in a pydantic
traceback)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import cli_fork


def test_a_relative_home_works_and_is_kept_absolute(tmp_path: Path) -> None:
    env = {**os.environ, "PODIUM_HOME": "rel/home"}
    done = cli_fork.run(
        [sys.executable, "-m", "podium.cli", "tables"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    from podium.config import Settings

    settings = Settings(home=Path("rel/home"))
    assert settings.home.is_absolute()
    assert settings.catalog_uri == f"sqlite:///{Path.cwd() / 'rel/home' / 'catalog.db'}"


def test_a_bad_setting_is_named_with_its_variable_not_a_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "PODIUM_HOME": str(tmp_path), "PODIUM_TARGET_FILE_BYTES": "lots"}
    done = cli_fork.run(
        [sys.executable, "-m", "podium.cli", "tables"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    message = " ".join(done.stderr.split())
    assert "PODIUM_TARGET_FILE_BYTES" in message and "'lots'" in message

"""Settings that podium.toml can set: the sandbox image and rootfs and the model cache were
read from the environment alone, so a podium.toml could not set them."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import cli_fork
import pytest

from generators.sandbox.docker_backend import default_image, default_rootfs
from podium.config import SettingsError, get_settings, reset_settings
from podium.models.bootstrap import model_cache_dir


def test_podium_toml_sets_the_sandbox_image_rootfs_and_model_cache(
    podium_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    toml = tmp_path / "podium.toml"
    toml.write_text(
        'sandbox_image = "my-sandbox:1"\n'
        f'sandbox_rootfs = "{tmp_path / "rootfs.tar"}"\n'
        f'model_cache = "{tmp_path / "models"}"\n'
    )
    monkeypatch.setenv("PODIUM_CONFIG", str(toml))
    for name in ("PODIUM_SANDBOX_IMAGE", "PODIUM_SANDBOX_ROOTFS", "PODIUM_MODEL_CACHE"):
        monkeypatch.delenv(name, raising=False)
    reset_settings()
    assert default_image() == "my-sandbox:1"
    assert default_rootfs() == tmp_path / "rootfs.tar"
    assert model_cache_dir() == tmp_path / "models"


def test_the_environment_still_wins_over_podium_toml(
    podium_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    toml = tmp_path / "podium.toml"
    toml.write_text('sandbox_image = "from-toml:1"\n')
    monkeypatch.setenv("PODIUM_CONFIG", str(toml))
    monkeypatch.setenv("PODIUM_SANDBOX_IMAGE", "from-env:2")
    monkeypatch.setenv("PODIUM_MODEL_CACHE", str(tmp_path / "env-models"))
    reset_settings()
    assert default_image() == "from-env:2"
    assert model_cache_dir() == tmp_path / "env-models"


def test_a_podium_toml_in_the_working_directory_is_not_read(
    podium_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 44, point 17: whoever could drop a `podium.toml` into the folder a command runs
    in chose the Python that starts model servers and made `/` a file root."""
    (tmp_path / "podium.toml").write_text(
        f'vllm_python = "{tmp_path / "evil-python"}"\nfile_roots = ["/"]\n'
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PODIUM_CONFIG", raising=False)
    reset_settings()
    settings = get_settings()
    assert settings.vllm_python == "" and settings.file_roots == []


def test_the_homes_podium_toml_and_podium_config_are_read(
    podium_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    podium_home.mkdir(parents=True)
    (podium_home / "podium.toml").write_text('sandbox_image = "from-home:1"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PODIUM_CONFIG", raising=False)
    reset_settings()
    assert get_settings().sandbox_image == "from-home:1"
    named = tmp_path / "elsewhere.toml"
    named.write_text('sandbox_image = "named:2"\n')
    monkeypatch.setenv("PODIUM_CONFIG", str(named))
    reset_settings()
    assert get_settings().sandbox_image == "named:2"


@pytest.mark.parametrize("mark", ["#", "?"])
def test_a_home_whose_path_has_a_hash_or_question_mark_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mark: str
) -> None:
    """Issue 44, point 9: a file:// location ends its path at `#` or `?`, so the catalog
    and table files landed beside the home (`/x/h` for a home `/x/h#1`)."""
    parent = tmp_path / "homes"
    parent.mkdir()
    home = parent / f"h{mark}1"
    monkeypatch.setenv("PODIUM_HOME", str(home))
    reset_settings()
    home_refused = rf"home \(PODIUM_HOME or podium.toml\).*{re.escape(mark)}"
    with pytest.raises(SettingsError, match=home_refused):
        get_settings()
    proc = cli_fork.run(
        [sys.executable, "-m", "podium.cli", "demo"],
        capture_output=True,
        text=True,
        env={**os.environ, "PODIUM_HOME": str(home)},
        timeout=300,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert f"'{mark}'" in proc.stderr
    assert list(parent.iterdir()) == []  # nothing written, inside the home or beside it


@pytest.mark.parametrize("warehouse", ["/w#1", "file:///w%3F1"])
def test_a_local_warehouse_with_a_hash_or_question_mark_is_refused(
    podium_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warehouse: str
) -> None:
    given = warehouse.replace("/w", str(tmp_path / "w"), 1)
    monkeypatch.setenv("PODIUM_WAREHOUSE", given)
    reset_settings()
    with pytest.raises(SettingsError, match=r"warehouse \(PODIUM_WAREHOUSE or podium.toml\)"):
        get_settings()

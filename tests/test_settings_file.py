"""Settings that podium.toml can set: the sandbox image and rootfs and the model cache were
read from the environment alone, so a podium.toml could not set them."""

from __future__ import annotations

from pathlib import Path

import pytest

from generators.sandbox.docker_backend import default_image, default_rootfs
from podium.config import reset_settings
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

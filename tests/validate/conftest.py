"""A home holding the demo JSON table, shared by a test module (building it takes seconds)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from podium.config import reset_settings
from podium.store.write.demo import DEMO_TABLES


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("validate-home")
    old = os.environ.get("PODIUM_HOME")
    os.environ["PODIUM_HOME"] = str(home)
    reset_settings()
    DEMO_TABLES["demo.json_sft"]()
    yield home
    if old is None:
        os.environ.pop("PODIUM_HOME", None)
    else:
        os.environ["PODIUM_HOME"] = old
    reset_settings()

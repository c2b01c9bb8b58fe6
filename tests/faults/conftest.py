"""Fault-test fixtures: a home with fast heartbeats, and the tiny model for training."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from train_fixtures import tiny_base, tiny_checkpoint  # noqa: F401

from podium.config import reset_settings


@pytest.fixture
def fast_heartbeats(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Workers beat every half second and call a job dead after 4 s without a beat, so a
    killed worker's job is recovered within seconds (the same code path as 30 s)."""
    monkeypatch.setenv("PODIUM_HEARTBEAT_SECONDS", "0.5")
    monkeypatch.setenv("PODIUM_STALE_AFTER_SECONDS", "4")
    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    reset_settings()
    yield
    reset_settings()


@pytest.fixture
def faults_home(podium_home: Path, fast_heartbeats: None) -> Path:
    podium_home.mkdir(parents=True, exist_ok=True)
    return podium_home

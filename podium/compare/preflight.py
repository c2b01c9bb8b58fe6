"""Checks before a compare job exists (see podium/jobs/preflight.py): every model is
registered, and the card names checkpoints, not aliases that can move."""

from __future__ import annotations

from podium.compare.job import CompareConfig
from podium.models import get_model


def compare(config: CompareConfig) -> CompareConfig:
    return config.model_copy(update={"models": [get_model(m).name for m in config.models]})

"""Two real vLLM CPU replicas of the tiny model, with the weight receiver, for the whole
session (started side by side), and the learner's copy of the same model.

The tests share the servers and each pushes its own weights first, so none depends on
what an earlier one left loaded.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from train_fixtures import TINY_NAME, tiny_checkpoint  # noqa: F401  (fixture found by name)

from trainers.async_rl.replica import PolicyReplica


@pytest.fixture(scope="session")
def replicas(_session_home: Path, tiny_checkpoint: Path) -> Iterator[list[PolicyReplica]]:  # noqa: F811
    from podium.models.registry import register_model

    register_model(TINY_NAME, kind="base", path=str(tiny_checkpoint))
    started = [PolicyReplica(TINY_NAME, index=i) for i in range(2)]
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(lambda r: r.start(), started))
        yield started
    finally:
        for replica in started:
            replica.stop()


@pytest.fixture
def learner(tiny_checkpoint: Path):  # type: ignore[no-untyped-def]  # noqa: F811
    """The learner's model: the tiny checkpoint, in float32, fresh for each test."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(tiny_checkpoint)).eval()

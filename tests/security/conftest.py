"""Fixtures of the security tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from recording_server import Recorder


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    """A model endpoint that records what reaches it (`recorder.seen`)."""
    with Recorder() as rec:
        yield rec

"""Hostile input: every test here is an attack or a careless mistake, tried through a
real entry point (a `podium` process, a run card, an app form), asserting the exact
outcome: a clear refusal naming the problem, exit code 2, no traceback, nothing stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_helpers import chat_line


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/hostile/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.hostile)


@pytest.fixture
def chat_jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(chat_line(i, source="a" if i % 2 else "b") for i in range(10)))
    return path

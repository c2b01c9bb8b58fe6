"""A process that moves from one home to another (a test session, a Ray worker serving
jobs of several homes) keeps no connection to the homes it left. Before: the state
engine and the SQL catalog were cached per URI with their pooled connections, three
descriptors a SQLite home in WAL mode, never given back; one xdist worker of the full
suite passed 1,024 open descriptors and a pty test's select() failed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from podium.config import reset_settings
from podium.store.catalog.catalog import open_catalog
from podium.store.state.state import engine


@pytest.fixture
def settings_restored() -> Iterator[None]:
    yield
    reset_settings()  # after monkeypatch restores PODIUM_HOME (fixtures end in reverse)


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_home_left_behind_holds_no_descriptors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings_restored: None
) -> None:
    def use_home(n: int) -> None:
        monkeypatch.setenv("PODIUM_HOME", str(tmp_path / f"home-{n}"))
        reset_settings()
        with engine().connect() as conn:  # the state database, as the job queue reads it
            conn.execute(text("SELECT 1"))
        catalog = open_catalog()  # the catalog, as a page lists tables
        catalog.create_namespace_if_not_exists("demo")
        assert catalog.list_namespaces() == [("demo",)]

    use_home(0)
    use_home(1)
    held = _open_descriptors()
    for n in range(2, 12):
        use_home(n)
    assert _open_descriptors() <= held

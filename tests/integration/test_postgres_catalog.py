"""The same store code on a PostgreSQL catalog: only the URI changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from postgres import postgres_server  # type: ignore[import-not-found]

from podium.config import reset_settings
from podium.store.catalog.catalog import list_tables, open_catalog
from podium.store.read.query import page
from podium.store.state.state import engine
from podium.store.write.demo import load_demo


@pytest.fixture
def postgres_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with postgres_server() as url:
        monkeypatch.setenv("PODIUM_HOME", str(tmp_path / "home"))
        monkeypatch.setenv("PODIUM_CATALOG_URI", url)
        reset_settings()
        yield url
        reset_settings()


def test_demo_tables_on_postgres_catalog(postgres_home: str) -> None:
    assert open_catalog().properties["uri"] == postgres_home
    load_demo()
    assert list_tables() == ["demo.chat", "demo.json_sft"]
    assert page("demo.json_sft", search="osaka").total > 0
    # app state shares the catalog's database
    assert engine().url.get_backend_name() == "postgresql"


def test_cold_reads_find_cached_plans_through_the_postgres_catalog(
    postgres_home: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from podium.store.catalog import catalog, names
    from podium.store.read.plan import clear_plans
    from podium.store.read.query import open_view

    load_demo()
    expected = page("demo.chat", offset=2, limit=3).to_dict()
    location = catalog.load_table("demo.chat").metadata_location
    assert names.metadata_location("demo", "chat") == location  # read with SQLAlchemy
    clear_plans()
    monkeypatch.setattr(catalog, "load_table", None)  # a cache miss would fail loudly
    assert open_view("demo.chat").table is None
    assert page("demo.chat", offset=2, limit=3).to_dict() == expected

"""The state database's migrations: an old home upgrades in place; head matches METADATA."""

from __future__ import annotations

import importlib.util
import sqlite3
import sys
import threading
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect, select

import podium.compare.judge_registry
import podium.jobs.tables
import podium.models.digest
import podium.models.registry
import podium.models.server_records
import podium.review.queues
import podium.store.state.sessions
import podium.store.state.users_table  # noqa: F401  (every module that declares state tables)
from podium.config import get_settings, reset_settings
from podium.jobs.tables import jobs
from podium.models.registry import models_table
from podium.store.state import migrations
from podium.store.state.state import METADATA, engine

OLD_SCHEMA = Path(__file__).parent / "fixtures" / "state_before_migrations.sql"

_spec = importlib.util.spec_from_file_location(
    "podium_test_postgres", Path(__file__).resolve().parents[1] / "integration" / "postgres.py"
)
assert _spec and _spec.loader
postgres = importlib.util.module_from_spec(_spec)
# A dataclass in the module looks its module up in sys.modules while it is being made.
sys.modules[_spec.name] = postgres
_spec.loader.exec_module(postgres)


def _podium_diff(connection) -> list[object]:  # type: ignore[no-untyped-def]
    """What head lacks against METADATA, ignoring pyiceberg's own catalog tables."""
    context = MigrationContext.configure(
        connection, opts={"include_name": lambda name, kind, _p: _ours(name, kind)}
    )
    return list(compare_metadata(context, METADATA))


def _ours(name: str | None, kind: str) -> bool:
    return kind != "table" or bool(name and name.startswith("podium_"))


def test_a_home_from_before_migrations_upgrades_in_place(podium_home: Path) -> None:
    podium_home.mkdir(parents=True)
    with sqlite3.connect(podium_home / "catalog.db") as conn:
        conn.executescript(OLD_SCHEMA.read_text())

    eng = engine()

    assert migrations.current(eng) == migrations.head()
    columns = {c["name"] for c in inspect(eng).get_columns("podium_jobs")}
    assert "submitted_by" in columns
    assert "podium_users" in inspect(eng).get_table_names()
    with eng.connect() as conn:
        old_job = conn.execute(select(jobs)).one()
        model = conn.execute(select(models_table.c.name, models_table.c.path)).one()
        assert conn.execute(select(podium.jobs.tables.job_metrics.c.value)).scalar() == 0.5
    assert (old_job.id, old_job.status, old_job.submitted_by) == (
        "20261101-120000-generate-ab12",
        "succeeded",
        None,
    )
    assert tuple(model) == ("old-checkpoint", "/old/ckpt")
    # pyiceberg's catalog tables in the same file are left alone.
    with sqlite3.connect(podium_home / "catalog.db") as conn:
        assert conn.execute("SELECT namespace FROM iceberg_namespace_properties").fetchall() == [
            ("default",)
        ]


def test_a_new_home_starts_at_head_and_head_matches_the_declared_tables(
    podium_home: Path,
) -> None:
    eng = engine()
    assert migrations.current(eng) == migrations.head()
    with eng.connect() as conn:
        assert _podium_diff(conn) == []


def test_a_declared_table_without_a_migration_is_named(podium_home: Path) -> None:
    from sqlalchemy import Column, Integer, Table

    stray = Table("podium_stray_for_test", METADATA, Column("id", Integer, primary_key=True))
    try:
        with pytest.raises(RuntimeError, match="podium_stray_for_test.*add one under"):
            engine()
    finally:
        METADATA.remove(stray)


def test_processes_opening_one_new_home_at_once_all_succeed(podium_home: Path) -> None:
    podium_home.mkdir(parents=True)
    url = get_settings().catalog_uri
    errors: list[BaseException] = []

    def open_fresh() -> None:
        try:  # separate engines, as separate processes would have
            migrations.upgrade(create_engine(url, connect_args={"timeout": 30}))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_fresh) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert migrations.current(create_engine(url)) == migrations.head()


def test_postgres_upgrades_from_the_first_revision_keeping_rows(
    podium_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with postgres.postgres_server() as url:
        monkeypatch.setenv("PODIUM_CATALOG_URI", url)
        reset_settings()
        _upgrade_postgres_from_0001(url)


def _upgrade_postgres_from_0001(url: str) -> None:
    eng = create_engine(url)
    migrations.upgrade(eng, "0001")
    with eng.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO podium_jobs (id, kind, status, card, config, inputs, created_at,"
            " attempt, log_path) VALUES ('old', 'generate', 'queued', 'c', '{}', '[]',"
            " now(), 0, '/x')"
        )
    eng.dispose()

    upgraded = engine()

    assert upgraded.dialect.name == "postgresql"
    assert migrations.current(upgraded) == migrations.head()
    with upgraded.connect() as conn:
        assert conn.execute(select(jobs.c.id, jobs.c.submitted_by)).all() == [("old", None)]
        assert _podium_diff(conn) == []


def test_the_quick_head_read_without_alembic_is_alembics_head() -> None:
    from podium.store.state.state import newest_revision

    assert newest_revision() == migrations.head()


def test_opening_a_database_at_head_imports_no_alembic(podium_home: Path) -> None:
    import subprocess
    import sys

    engine()  # the first open migrates (Alembic)
    probe = (
        "import sys; from podium.store.state.state import engine; engine(); "
        "print('alembic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

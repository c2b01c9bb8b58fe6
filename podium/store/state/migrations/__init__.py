"""The state database's schema, versioned with Alembic and upgraded when Podium opens it.

`podium.store.state.state.engine()` runs `upgrade()` once per database and process, so an
existing home (SQLite or PostgreSQL) upgrades in place and a new one starts at head.

Adding or changing a state table (annotations, review queues, ...):

1. Declare the table or column on `podium.store.state.state.METADATA` in your module, as before.
2. Add `versions/NNNN_what_it_does.py` (copy the newest one): `revision = "NNNN"`,
   `down_revision` = the previous newest revision, and an `upgrade()` written with
   `alembic.op` (`op.create_table(...)`, `op.add_column(...)`, `op.create_index(...)`).
   Spell the columns out in the migration instead of importing your Table: a migration
   is the schema as it was at that revision, and must not change when the module does.
   New columns on existing tables must be nullable or have a `server_default`; SQLite
   cannot alter columns, so wrap such changes in `op.batch_alter_table`.
3. Run `tests/store/test_migrations.py`: it compares head with everything declared on
   METADATA and fails, naming the difference, if a migration is missing or wrong.

Never edit a migration that has shipped (homes have already run it); add another.
Opening a database whose declared tables are not all created by migrations raises,
naming this docstring.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, text

from podium.locks import file_lock

HERE = Path(__file__).resolve().parent
# Any fixed 64-bit number: PostgreSQL serialises concurrent upgrades on it.
_PG_LOCK_KEY = 0x706F6469756D  # "podium"


def config(connection: Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(HERE))
    cfg.attributes["connection"] = connection
    return cfg


def head() -> str:
    revision = ScriptDirectory.from_config(config()).get_current_head()
    assert revision is not None
    return revision


def current(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the database to `revision`; concurrent callers wait for one another."""
    with _exclusive(engine), engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
        command.upgrade(config(conn), revision)


@contextmanager
def _exclusive(engine: Engine) -> Iterator[None]:
    """A file lock beside a SQLite database (its DDL commits statement by statement)."""
    path = engine.url.database if engine.dialect.name == "sqlite" else None
    if not path or path == ":memory:":
        yield
        return
    with file_lock(Path(f"{path}.migrate-lock")):
        yield

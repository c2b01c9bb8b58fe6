"""The tables Podium created before migrations existed.

Homes made then already have them (created by `METADATA.create_all`), so each table is
created only where it is missing; the schema is the one those homes have.
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None


def _create(name: str, *columns: sa.Column[Any], indexed: tuple[str, ...] = ()) -> None:
    if sa.inspect(op.get_bind()).has_table(name):
        return
    op.create_table(name, *columns)
    for column in indexed:
        op.create_index(f"ix_{name}_{column}", name, [column])


def upgrade() -> None:
    tz = sa.DateTime(timezone=True)
    _create(
        "podium_jobs",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("card", sa.Text, nullable=False),
        sa.Column("config", sa.Text, nullable=False),
        sa.Column("inputs", sa.Text, nullable=False),
        sa.Column("created_at", tz, nullable=False),
        sa.Column("started_at", tz),
        sa.Column("finished_at", tz),
        sa.Column("heartbeat_at", tz),
        sa.Column("launcher", sa.String(16)),
        sa.Column("host", sa.String(255)),
        sa.Column("worker_pid", sa.Integer),
        sa.Column("pgid", sa.Integer),
        sa.Column("attempt", sa.Integer, nullable=False),
        sa.Column("progress_done", sa.Integer),
        sa.Column("progress_total", sa.Integer),
        sa.Column("progress_message", sa.Text),
        sa.Column("error", sa.Text),
        sa.Column("outputs", sa.Text),
        sa.Column("log_path", sa.Text, nullable=False),
        indexed=("status",),
    )
    reported: dict[str, list[sa.Column[Any]]] = {
        "podium_job_events": [
            sa.Column("status", sa.String(16), nullable=False),
            sa.Column("message", sa.Text),
        ],
        "podium_job_metrics": [
            sa.Column("step", sa.Integer, nullable=False),
            sa.Column("name", sa.String(255), nullable=False),
            sa.Column("value", sa.Float, nullable=False),
        ],
        "podium_job_samples": [
            sa.Column("step", sa.Integer, nullable=False),
            sa.Column("values", sa.Text, nullable=False),
        ],
    }
    for name, columns in reported.items():
        # What a running job reports: one row per event, metric or sample, by job.
        _create(
            name,
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("job_id", sa.String(64), nullable=False),
            *columns,
            sa.Column("at", tz, nullable=False),
            indexed=("job_id",),
        )
    _create(
        "podium_models",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(128), unique=True, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("path", sa.Text),
        sa.Column("url", sa.Text),
        sa.Column("api_key_env", sa.String(128)),
        sa.Column("remote_model", sa.String(256)),
        sa.Column("parent", sa.String(128)),
        sa.Column("job_id", sa.String(64)),
        sa.Column("lineage", sa.Text, nullable=False),
        sa.Column("step", sa.Integer),
        sa.Column("created_at", tz, nullable=False),
        sa.Column("is_default", sa.Boolean, nullable=False),
    )
    _create(
        "podium_checkpoint_digests",
        sa.Column("path", sa.Text, primary_key=True),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("digest", sa.String(80), nullable=False),
        sa.Column("computed_at", tz, nullable=False),
    )
    _create(
        "podium_servers",
        sa.Column("model", sa.String(128), primary_key=True),
        sa.Column("host", sa.String(255), primary_key=True),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("watcher_pid", sa.Integer),
        sa.Column("port", sa.Integer, nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("checkpoint", sa.Text, nullable=False),
        sa.Column("log_path", sa.Text, nullable=False),
        sa.Column("started_at", tz, nullable=False),
        sa.Column("last_used", tz, nullable=False),
    )

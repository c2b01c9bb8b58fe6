"""What people ask of a running job besides a cancel (podium_job_requests): `podium jobs
scale` stores a replica count there, and the job writes its answer beside it."""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"


def upgrade() -> None:
    op.create_table(
        "podium_job_requests",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("job_id", sa.String(64), nullable=False),
        sa.Column("what", sa.String(32), nullable=False),
        sa.Column("value", sa.Integer, nullable=False),
        sa.Column("requested_by", sa.String(255), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("outcome", sa.String(16)),
        sa.Column("note", sa.Text),
        sa.Column("answered_at", sa.DateTime(timezone=True)),
    )
    op.create_index("ix_podium_job_requests_job_id", "podium_job_requests", ["job_id"])

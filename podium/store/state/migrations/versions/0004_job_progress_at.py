"""When a job's count last moved (podium_jobs.progress_at): time left is estimated from
the rate at that moment and counts down, instead of growing while a step runs."""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    op.add_column("podium_jobs", sa.Column("progress_at", sa.DateTime(timezone=True)))

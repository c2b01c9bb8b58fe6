"""When each person last pressed "Log out" (podium_sessions_ended): a login cookie issued
before that no longer counts, wherever it was copied to."""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"


def upgrade() -> None:
    op.create_table(
        "podium_sessions_ended",
        sa.Column("name", sa.String(255), primary_key=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=False),
    )

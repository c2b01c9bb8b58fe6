"""Who is who: the users table (roles) and the submitter of every job."""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    op.create_table(
        "podium_users",
        sa.Column("name", sa.String(255), primary_key=True),  # e-mail, or a login name
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("display_name", sa.String(255), nullable=False, server_default=""),
        sa.Column("added_by", sa.String(255), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    # Jobs queued before identities existed keep an empty submitter.
    op.add_column("podium_jobs", sa.Column("submitted_by", sa.String(255)))
    op.create_index("ix_podium_jobs_submitted_by", "podium_jobs", ["submitted_by"])

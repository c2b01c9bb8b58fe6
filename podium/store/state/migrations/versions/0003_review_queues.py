"""Review queues (podium.review.queues): queues of rows, and per-row claims and progress."""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    op.create_table(
        "podium_review_queues",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("table_name", sa.String(400), nullable=False),
        sa.Column("snapshot_id", sa.BigInteger, nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("created_by", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("table_name", "name"),
    )
    op.create_index("ix_podium_review_queues_table_name", "podium_review_queues", ["table_name"])
    op.create_table(
        "podium_review_items",
        sa.Column("queue_id", sa.Integer, primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("row_pos", sa.BigInteger, nullable=False),
        sa.Column("row_id", sa.String(400), nullable=False),
        sa.Column("claimed_by", sa.String(255)),
        sa.Column("claim_expires", sa.Float),
        sa.Column("done_by", sa.String(255)),
        sa.Column("done_at", sa.DateTime(timezone=True)),
    )
    op.create_index("ix_podium_review_items_row_id", "podium_review_items", ["row_id"])

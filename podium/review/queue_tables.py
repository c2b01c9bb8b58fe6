"""The state tables of review queues, and marking rows reviewed in them.

Apart from `review.queues` (which makes queues and hands rows out) because annotating a
row marks it reviewed: `review.annotations` needs this, and `queues` reads annotations.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    Float,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    select,
    update,
)

from podium.identity import User, require
from podium.store.catalog.catalog import full_name
from podium.store.state.state import METADATA, engine

queues = Table(
    "podium_review_queues",
    METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(200), nullable=False),
    Column("table_name", String(400), nullable=False, index=True),
    Column("snapshot_id", BigInteger, nullable=False),
    Column("description", Text, nullable=False, default=""),
    Column("size", Integer, nullable=False),
    Column("created_by", String(255), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("table_name", "name"),
)

items = Table(
    "podium_review_items",
    METADATA,
    Column("queue_id", Integer, primary_key=True),
    Column("position", Integer, primary_key=True),  # order within the queue
    Column("row_pos", BigInteger, nullable=False),  # the row's position in the snapshot
    Column("row_id", String(400), nullable=False, index=True),
    Column("claimed_by", String(255)),
    Column("claim_expires", Float),
    Column("done_by", String(255)),
    Column("done_at", DateTime(timezone=True)),
)


def mark_reviewed(table_name: str, ids: list[str], user: User) -> int:
    """Mark `ids` done in every queue of the table; returns how many items changed."""
    require(user, "annotate")
    table_name = full_name(table_name)
    changed = 0
    with engine().begin() as con:
        qids = select(queues.c.id).where(queues.c.table_name == table_name)
        for lo in range(0, len(ids), 500):  # SQL engines cap bound parameters
            changed += con.execute(
                update(items)
                .where(
                    items.c.queue_id.in_(qids),
                    items.c.row_id.in_(ids[lo : lo + 500]),
                    items.c.done_by.is_(None),
                )
                .values(done_by=user.name, done_at=datetime.now(UTC), claimed_by=None)
            ).rowcount
    return changed

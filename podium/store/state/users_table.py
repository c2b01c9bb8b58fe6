"""The users table (name, role, who added them), declared on the state database.

Apart from `store.state.users` so that deciding who acts in local mode (`acting_user`, on
every CLI write) imports no SQLAlchemy: only a look-up in the table needs it.
"""

from __future__ import annotations

from sqlalchemy import Column, DateTime, String, Table

from podium.store.state.state import METADATA

users_table = Table(
    "podium_users",
    METADATA,
    Column("name", String(255), primary_key=True),  # e-mail, or a login name
    Column("role", String(16), nullable=False),
    Column("display_name", String(255), nullable=False, server_default=""),
    Column("added_by", String(255), nullable=False),
    Column("added_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

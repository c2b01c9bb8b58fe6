"""Which logins still count: a login cookie holds the provider's ID-token claims, signed,
and Streamlit keeps honouring it for 30 days wherever it is copied. So a login counts
only while its token's `exp` has not passed, and only if it was issued (`iat`) after the
person last pressed "Log out": "Log out" ends every login of that person, on every
browser, including a cookie copied before it (podium_sessions_ended, one row a person).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Column, DateTime, String, Table

from podium.errors import PermissionDenied
from podium.store.state.state import METADATA

LEEWAY_S = 60  # clocks of the provider and this host may differ this much

sessions_ended_table = Table(
    "podium_sessions_ended",
    METADATA,
    Column("name", String(255), primary_key=True),  # the user name a login resolved to
    Column("ended_at", DateTime(timezone=True), nullable=False),
)


class LoginEnded(PermissionDenied):
    """The login expired or was ended by "Log out": logging in again helps."""


def end_sessions(name: str, at: datetime | None = None, issued: object = None) -> None:
    """Every login of `name` issued before now stops counting (the "Log out" button), and
    so does the login pressing it (its ID token's `iat`, `issued`) and every copy of it.

    `iat` has whole seconds, so "before now" alone let a cookie copied from a login made
    in the second of its Log out, or from a provider whose clock runs ahead of this host's,
    go on counting (CI's copied-cookie browser test, twice)."""
    from sqlalchemy import delete, insert

    from podium.store.state.state import engine

    at = at or datetime.now(UTC)
    pressed = _seconds(issued)
    if pressed is not None:
        at = max(at, datetime.fromtimestamp(math.floor(pressed) + 1, UTC))
    with engine().begin() as conn:
        table = sessions_ended_table
        conn.execute(delete(table).where(table.c.name == name))
        conn.execute(insert(table).values(name=name, ended_at=at))


def sessions_ended_at(name: str) -> datetime | None:
    from sqlalchemy import select

    from podium.store.state.state import engine

    table = sessions_ended_table
    with engine().connect() as conn:
        at = conn.execute(select(table.c.ended_at).where(table.c.name == name)).scalar()
    if at is not None and at.tzinfo is None:  # SQLite keeps no zone; we wrote UTC
        at = at.replace(tzinfo=UTC)
    return at


def login_refusal(claims: Mapping[str, Any], name: str, now: datetime | None = None) -> str | None:
    """Why the login with these ID-token claims no longer counts for `name`, or None."""
    now = now or datetime.now(UTC)
    issued, expires = _seconds(claims.get("iat")), _seconds(claims.get("exp"))
    if issued is None or expires is None:
        return "This login carries no issue or expiry time; log in again."
    if now.timestamp() > expires + LEEWAY_S:
        return "This login has expired; log in again."
    ended = sessions_ended_at(name)
    # `iat` has whole seconds: a login in the second of a "Log out" is the new one.
    if ended is not None and issued < math.floor(ended.timestamp()):
        return "This login was ended by Log out; log in again."
    return None


def _seconds(value: Any) -> float | None:
    try:
        return float(value) if value is not None and not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None

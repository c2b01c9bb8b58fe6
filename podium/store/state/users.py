"""Who is acting: the users table (roles) and the resolution of every identity to a User.

Local single-user mode (no OIDC login configured, no `PODIUM_USER`): the OS user acts,
with every role. A shared deployment identifies people instead:

- the app: the e-mail OpenID Connect vouched for and verified (`st.user`), via
  `user_from_claims`;
- CLI commands and the worker: `PODIUM_USER` (else the OS login name), via `acting_user`.

Either name is then looked up here: a name in `settings.admins` is admin; a name in the
table has its granted role; anyone else allowed in (`allowed_domains`,
`allowed_emails`, or any name when both are empty) gets `default_role`, and the rest are
refused. `podium.identity.require` then compares the role with the action.
"""

from __future__ import annotations

import getpass
import string
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from podium.config import Settings, get_settings
from podium.errors import InvalidInput, NotFound, PermissionDenied
from podium.identity import ROLES, IdentitySource, Role, User, local_user, require

# SQLAlchemy and the table (`store.state.users_table`) are imported by the functions that read
# or write it: a local CLI write only asks `acting_user`, and pays nothing for them.


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def normalise(name: str) -> str:
    """A name as it is compared and stored: its ASCII letters in lower case (e-mail
    addresses compare so), nothing else changed. Unicode case folding or stripping made
    other addresses one: a provider's verified `\u212aate@x` (KELVIN SIGN, which
    `str.lower` makes a `k`) or ` kate@x` logged in as the admin `kate@x`. A blank name,
    or one holding white space or control characters, is no one."""
    if not name or len(name) > 255 or any(ch.isspace() or not ch.isprintable() for ch in name):
        raise InvalidInput(
            f"{name!r} is not a user name: give an e-mail or login name without spaces."
        )
    return name.translate(_ASCII_LOWER)


def as_role(role: str) -> Role:
    if role not in ROLES:
        raise InvalidInput(f"Unknown role {role!r}; roles are {', '.join(ROLES)}.")
    return role


def list_users() -> list[dict[str, Any]]:
    from sqlalchemy import select

    from podium.store.state.state import engine
    from podium.store.state.users_table import users_table

    with engine().connect() as conn:
        rows = conn.execute(select(users_table).order_by(users_table.c.name)).all()
    return [_as_json(row._mapping) for row in rows]


def get_user_record(name: str) -> dict[str, Any] | None:
    from sqlalchemy import select

    from podium.store.state.state import engine
    from podium.store.state.users_table import users_table

    with engine().connect() as conn:
        row = conn.execute(select(users_table).where(users_table.c.name == normalise(name))).first()
    return _as_json(row._mapping) if row else None


def grant(by: User, name: str, role: str, display_name: str = "") -> dict[str, Any]:
    """Give `name` a role (adding them if new); only admins may."""
    from sqlalchemy import insert, select, update

    from podium.store.state.state import engine
    from podium.store.state.users_table import users_table

    require(by, "manage_users")
    name, new_role = normalise(name), as_role(role)
    at = datetime.now(UTC)
    with engine().begin() as conn:
        old = conn.execute(select(users_table.c.role).where(users_table.c.name == name)).scalar()
        if old == "admin" and new_role != "admin":
            _keep_an_admin(conn, name)
        if old is None:
            conn.execute(
                insert(users_table).values(
                    name=name,
                    role=new_role,
                    display_name=display_name,
                    added_by=by.name,
                    added_at=at,
                    updated_at=at,
                )
            )
        else:
            changes: dict[str, Any] = {"role": new_role, "updated_at": at, "added_by": by.name}
            if display_name:
                changes["display_name"] = display_name
            conn.execute(update(users_table).where(users_table.c.name == name).values(**changes))
    record = get_user_record(name)
    assert record is not None
    return record


def revoke(by: User, name: str) -> None:
    """Remove `name` from the table (they fall back to the default role, if allowed in)."""
    from sqlalchemy import delete, select

    from podium.store.state.state import engine
    from podium.store.state.users_table import users_table

    require(by, "manage_users")
    name = normalise(name)
    with engine().begin() as conn:
        old = conn.execute(select(users_table.c.role).where(users_table.c.name == name)).scalar()
        if old is None:
            raise NotFound(f"No user {name!r} in the users table. See `podium users list`.")
        if old == "admin":
            _keep_an_admin(conn, name)
        conn.execute(delete(users_table).where(users_table.c.name == name))


def _keep_an_admin(conn: Any, leaving: str) -> None:
    from sqlalchemy import select

    from podium.store.state.users_table import users_table

    others = conn.execute(
        select(users_table.c.name).where(
            users_table.c.role == "admin", users_table.c.name != leaving
        )
    ).first()
    if others is None:
        raise InvalidInput(
            f"{leaving} is the last admin in the users table; grant admin to someone else first."
        )


def resolve(
    name: str,
    source: IdentitySource,
    display_name: str = "",
    settings: Settings | None = None,
) -> User:
    """The User for an identified name, with the role the table and settings give it."""
    settings = settings or get_settings()
    name = normalise(name)
    if name in {normalise(admin.strip()) for admin in settings.admins}:
        return User(name=name, role="admin", source=source, display_name=display_name)
    record = get_user_record(name)
    if record is not None:
        return User(
            name=name,
            role=as_role(record["role"]),
            source=source,
            display_name=display_name or record["display_name"],
        )
    if not _allowed_in(name, settings) or settings.default_role == "none":
        raise PermissionDenied(
            f"{name} is not allowed to use this Podium. An admin can add you with "
            f"`podium users grant {name} viewer`."
        )
    return User(name=name, role=settings.default_role, source=source, display_name=display_name)


def _allowed_in(name: str, settings: Settings) -> bool:
    domains = {normalise(d.strip()).lstrip("@") for d in settings.allowed_domains}
    emails = {normalise(e.strip()) for e in settings.allowed_emails}
    if not domains and not emails:
        return True
    return name in emails or name.rpartition("@")[2] in domains


def oidc_user(email: str | None, display_name: str = "", settings: Settings | None = None) -> User:
    """The app's user after an OpenID Connect login (`st.user`)."""
    if not email:
        raise PermissionDenied(
            "The identity provider did not share an e-mail address; Podium needs one "
            "(ask for the `email` scope)."
        )
    try:
        return resolve(email, "oidc", display_name, settings)
    except InvalidInput:  # the login screen shows refusals, not errors
        raise PermissionDenied(
            f"The identity provider gave the address {email!r}, which is no user name "
            "(it holds white space or control characters); log in with another account."
        ) from None


def user_from_claims(claims: Mapping[str, Any], settings: Settings | None = None) -> User:
    """The app's user from an OpenID Connect login's claims (`st.user`): the e-mail counts
    only once the provider says it verified it (`email_verified: true`), unless the
    deployment turned that off; else anyone could register the admin's address with a
    provider that does not check it, and log in as admin."""
    settings = settings or get_settings()
    email, name = claims.get("email"), claims.get("name")
    verified = claims.get("email_verified")
    if (
        settings.oidc_require_verified_email
        and email
        and not (verified is True or verified == "true")
    ):
        raise PermissionDenied(
            f"The identity provider has not verified {email}, so Podium cannot tell it is "
            "yours. Verify the address with the provider and log in again (an operator can "
            "turn this check off with oidc_require_verified_email = false, for a provider "
            "that vouches for every address it issues)."
        )
    return oidc_user(str(email) if email else None, str(name or ""), settings)


# The app registers how to find the logged-in user of the current browser session, so
# every write path below the pages (job submission, votes, vibes) finds it unaided.
_session_user: Callable[[], User] | None = None


def use_session_user(provider: Callable[[], User] | None) -> None:
    """Make `acting_user()` ask `provider` (the app's login), or stop asking (None)."""
    global _session_user
    _session_user = provider


def acting_user(settings: Settings | None = None) -> User:
    """Who is acting: the app's logged-in user; for CLI and worker the OS user locally,
    else PODIUM_USER."""
    if _session_user is not None:
        return _session_user()
    settings = settings or get_settings()
    if not settings.shared:
        return local_user()
    return resolve(settings.user or getpass.getuser(), "config", settings=settings)


AUTHOR = "podium.author"  # snapshot summary property naming who committed it


def author_name(settings: Settings | None = None) -> str:
    """Who a write is by, without a role check (a job writes as its submitter)."""
    if _session_user is not None:
        return _session_user().name
    settings = settings or get_settings()
    return settings.user or getpass.getuser()


def submitter(name: str | None, settings: Settings | None = None) -> User:
    """The user who queued a job, with their role as of now (the worker re-checks it)."""
    settings = settings or get_settings()
    if not settings.shared:
        return local_user() if not name else User(name=name, role="admin", source="os")
    if not name:
        raise PermissionDenied(
            "This job was queued before Podium recorded submitters; submit it again."
        )
    return resolve(name, "config", settings=settings)


def _as_json(mapping: Any) -> dict[str, Any]:
    out = dict(mapping)
    for key in ("added_at", "updated_at"):
        value = out[key]
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)  # SQLite hands datetimes back naive
        out[key] = value.isoformat() if value is not None else None
    return out

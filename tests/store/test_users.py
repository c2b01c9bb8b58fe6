"""Roles in the state database and the resolution of every identity to a role."""

from __future__ import annotations

import getpass
from pathlib import Path

import pytest

from podium.config import Settings
from podium.errors import InvalidInput, NotFound, PermissionDenied
from podium.identity import User, local_user
from podium.store.state.users import (
    acting_user,
    get_user_record,
    grant,
    list_users,
    oidc_user,
    resolve,
    revoke,
    submitter,
)

ADMIN = User(name="root@example.org", role="admin", source="oidc")


def shared(**values: object) -> Settings:
    return Settings(oidc_issuer="http://127.0.0.1:1", oidc_client_id="podium", **values)  # type: ignore[arg-type]


def test_grant_records_who_and_when_and_the_role_then_applies(podium_home: Path) -> None:
    record = grant(ADMIN, "Ann@Example.org", "reviewer", "Ann")
    assert (record["name"], record["role"], record["added_by"]) == (
        "ann@example.org",
        "reviewer",
        "root@example.org",
    )
    assert record["added_at"] and record["display_name"] == "Ann"
    user = oidc_user("ANN@example.org", settings=shared())
    assert (user.name, user.role, user.source) == ("ann@example.org", "reviewer", "oidc")
    grant(ADMIN, "ann@example.org", "operator")
    assert oidc_user("ann@example.org", settings=shared()).role == "operator"
    assert [u["name"] for u in list_users()] == ["ann@example.org"]


def test_only_admins_manage_users(podium_home: Path) -> None:
    operator = User(name="op@example.org", role="operator", source="oidc")
    with pytest.raises(PermissionDenied, match="manage users needs 'admin'"):
        grant(operator, "x@example.org", "admin")
    with pytest.raises(PermissionDenied):
        revoke(operator, "x@example.org")
    assert list_users() == []


def test_bad_role_name_and_unknown_user_are_clear(podium_home: Path) -> None:
    with pytest.raises(InvalidInput, match="Unknown role 'god'; roles are viewer"):
        grant(ADMIN, "x@example.org", "god")
    with pytest.raises(InvalidInput, match="not a user name"):
        grant(ADMIN, "two words", "viewer")
    with pytest.raises(NotFound, match="No user 'x@example.org'"):
        revoke(ADMIN, "x@example.org")


def test_the_last_admin_cannot_be_removed_or_demoted(podium_home: Path) -> None:
    grant(ADMIN, "a@example.org", "admin")
    with pytest.raises(InvalidInput, match="last admin"):
        revoke(ADMIN, "a@example.org")
    with pytest.raises(InvalidInput, match="last admin"):
        grant(ADMIN, "a@example.org", "viewer")
    grant(ADMIN, "b@example.org", "admin")
    revoke(ADMIN, "a@example.org")
    assert get_user_record("a@example.org") is None


def test_unknown_users_get_the_default_role_or_are_refused_outside_allowed_domains(
    podium_home: Path,
) -> None:
    assert oidc_user("new@example.org", settings=shared()).role == "viewer"
    assert oidc_user("new@example.org", settings=shared(default_role="reviewer")).role == (
        "reviewer"
    )
    limited = shared(allowed_domains=["corp.example"], allowed_emails=["guest@else.org"])
    assert oidc_user("Bob@corp.example", settings=limited).role == "viewer"
    assert oidc_user("guest@else.org", settings=limited).role == "viewer"
    with pytest.raises(PermissionDenied, match="mallory@evil.org is not allowed"):
        oidc_user("mallory@evil.org", settings=limited)
    with pytest.raises(PermissionDenied, match="not allowed"):
        oidc_user("new@example.org", settings=shared(default_role="none"))
    # Someone granted a role by an admin gets in even outside the domains.
    grant(ADMIN, "mallory@evil.org", "viewer")
    assert oidc_user("mallory@evil.org", settings=limited).role == "viewer"
    with pytest.raises(PermissionDenied, match="e-mail"):
        oidc_user(None, settings=shared())


def test_configured_admins_bootstrap(podium_home: Path) -> None:
    user = resolve("Boss@Example.org", "oidc", settings=shared(admins=["boss@example.org"]))
    assert user.role == "admin"


def test_cli_acts_as_the_os_user_locally_and_as_podium_user_when_shared(
    podium_home: Path,
) -> None:
    assert acting_user(Settings()) == local_user()
    grant(ADMIN, "ops@example.org", "operator")
    user = acting_user(Settings(user="ops@example.org"))
    assert (user.name, user.role, user.source) == ("ops@example.org", "operator", "config")
    # Shared without PODIUM_USER: the OS login name, looked up like anyone else.
    assert acting_user(shared()).name == getpass.getuser().lower()


def test_the_worker_rechecks_the_submitters_current_role(podium_home: Path) -> None:
    grant(ADMIN, "ops@example.org", "operator")
    assert submitter("ops@example.org", shared()).role == "operator"
    grant(ADMIN, "ops@example.org", "viewer")
    assert submitter("ops@example.org", shared()).role == "viewer"
    with pytest.raises(PermissionDenied, match="queued before Podium recorded submitters"):
        submitter(None, shared())
    assert submitter(None, Settings()) == local_user()

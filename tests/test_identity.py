"""The one role check: roles are ordered, each action needs a least role."""

from __future__ import annotations

import getpass

import pytest

from podium.errors import PermissionDenied
from podium.identity import REQUIRED_ROLE, ROLES, User, local_user, require


def test_local_user_is_the_os_user_with_every_role() -> None:
    user = local_user()
    assert user.name == getpass.getuser()
    assert user.source == "os" and user.label.endswith("(local user)")
    for action in REQUIRED_ROLE:
        require(user, action)


@pytest.mark.parametrize("role", ROLES)
def test_each_role_gets_exactly_the_actions_at_or_below_it(role: str) -> None:
    user = User(name="ann@example.org", role=role, source="oidc")  # type: ignore[arg-type]
    for action, needed in REQUIRED_ROLE.items():
        allowed = ROLES.index(role) >= ROLES.index(needed)  # type: ignore[arg-type]
        assert user.can(action) is allowed
        if not allowed:
            with pytest.raises(PermissionDenied, match=f"needs '{needed}'"):
                require(user, action)


def test_viewer_cannot_vote_and_is_told_how_to_get_the_role() -> None:
    viewer = User(name="vic@example.org", role="viewer", source="oidc")
    with pytest.raises(PermissionDenied) as err:
        require(viewer, "vote")
    assert "podium users grant vic@example.org reviewer" in str(err.value)

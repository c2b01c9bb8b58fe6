"""An OpenID Connect login counts only an e-mail its provider verified: a provider that
lets anyone claim the admin's address (`email_verified: false`) must not make them admin."""

from __future__ import annotations

from pathlib import Path

import pytest

from podium.config import Settings
from podium.errors import PermissionDenied
from podium.store.state.users import user_from_claims

ADMIN = "boss@example.org"


def shared(**values: object) -> Settings:
    return Settings(
        oidc_issuer="http://127.0.0.1:1",
        oidc_client_id="podium",
        admins=[ADMIN],
        **values,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("verified", [False, "false", None, "yes", 1])
def test_an_unverified_email_is_refused(podium_home: Path, verified: object) -> None:
    claims = {"email": ADMIN, "name": "Mallory", "email_verified": verified}
    if verified is None:
        del claims["email_verified"]  # a provider that does not say
    with pytest.raises(PermissionDenied, match="has not verified boss@example.org"):
        user_from_claims(claims, shared())


def test_a_verified_email_logs_in_with_its_role(podium_home: Path) -> None:
    user = user_from_claims({"email": ADMIN, "email_verified": True, "name": "B"}, shared())
    assert (user.name, user.role, user.source, user.display_name) == (ADMIN, "admin", "oidc", "B")
    viewer = user_from_claims({"email": "v@example.org", "email_verified": "true"}, shared())
    assert viewer.role == "viewer"


def test_the_deployment_may_trust_its_provider_instead(podium_home: Path) -> None:
    trusting = shared(oidc_require_verified_email=False)
    assert user_from_claims({"email": ADMIN, "email_verified": False}, trusting).role == "admin"
    with pytest.raises(PermissionDenied, match="did not share an e-mail"):
        user_from_claims({"email_verified": True}, shared())

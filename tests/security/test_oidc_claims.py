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
    values.setdefault("admins", [ADMIN])
    return Settings(
        oidc_issuer="http://127.0.0.1:1",
        oidc_client_id="podium",
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


@pytest.mark.parametrize(
    "lookalike",
    [
        "\u212aate@example.org",  # KELVIN SIGN, which str.lower() turns into 'k'
        " kate@example.org",
        "kate@example.org ",
        "\tkate@example.org",
    ],
)
def test_an_address_that_only_folds_or_strips_into_the_admins_is_not_the_admin(
    podium_home: Path, lookalike: str
) -> None:
    """Issue 44, point 12: a provider's verified `\\u212aate@...` (or ` kate@...`) was
    folded (`str.lower`, `strip`) into the admin's `kate@...` and logged in as admin."""
    settings = shared(admins=["kate@example.org"])
    claims = {"email": lookalike, "email_verified": True}
    try:
        user = user_from_claims(claims, settings)
    except PermissionDenied as refused:
        assert "which is no user name" in str(refused)
        return
    assert user.role == "viewer" and user.name != "kate@example.org"


def test_ascii_letters_still_compare_without_case(podium_home: Path) -> None:
    claims = {"email": "Kate@Example.ORG", "email_verified": True}
    user = user_from_claims(claims, shared(admins=["kate@example.org"]))
    assert (user.name, user.role) == ("kate@example.org", "admin")

"""Login, roles and the no-login banner in the app (AppTest seeds `st.user`)."""

from __future__ import annotations

import getpass
from pathlib import Path

import compare_data
import pytest
from app_pages import shown, token_times
from streamlit.testing.v1 import AppTest

from podium.compare.votes import list_votes
from podium.config import reset_settings
from podium.identity import User
from podium.jobs.cards import parse_card
from podium.jobs.launch import submit
from podium.store.state.users import grant, use_session_user

compare_config = compare_data.compare_config  # fixtures
comparison = compare_data.comparison
MAIN = str(Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py")
TEST_KINDS = Path(__file__).resolve().parents[1] / "jobs"
ADMIN = User(name="boss@example.org", role="admin", source="oidc")


@pytest.fixture(autouse=True)
def _forget_the_apps_login():  # type: ignore[no-untyped-def]
    yield
    use_session_user(None)  # AppTest runs the app in this process


@pytest.fixture
def login(podium_home: Path, monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Login configured (the provider itself is never reached: AppTest seeds st.user)."""
    monkeypatch.setenv("PODIUM_OIDC_ISSUER", "http://127.0.0.1:9")
    monkeypatch.setenv("PODIUM_OIDC_CLIENT_ID", "podium")
    monkeypatch.setenv("PODIUM_ADMINS", ADMIN.name)
    monkeypatch.syspath_prepend(str(TEST_KINDS))
    monkeypatch.setenv("PODIUM_JOB_PLUGINS", "kinds_for_tests")
    reset_settings()
    return monkeypatch


def _app(user: dict[str, object] | None = None, page: str | None = None) -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=60)
    if user is not None:
        at.user = token_times(user)
    at.run()
    if page:
        at.switch_page(page)
        at.run()
    assert not at.exception, at.exception
    return at


def _texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [m.value for m in at.caption]
    parts += (
        [m.value for m in at.warning] + [m.value for m in at.info] + [m.value for m in at.error]
    )
    return "\n".join(shown(str(p)) for p in parts)


def test_local_mode_is_the_os_user_as_admin_without_a_banner(podium_home: Path) -> None:
    at = _app()
    assert f"Signed in as **{getpass.getuser()} (local user)** · admin" in _texts(at)
    assert not at.warning
    at = _app(page="views/users/view.py")
    assert not at.error and "Users" in [t.value for t in at.title]


def test_insecure_no_auth_warns_on_every_page(
    podium_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PODIUM_INSECURE_NO_AUTH", "1")
    reset_settings()
    for page in (None, "views/logbook/view.py", "views/browse/view.py"):
        at = _app(page=page)
        assert "served without login" in _texts(at), page


def test_login_screen_until_the_provider_vouches(login: pytest.MonkeyPatch) -> None:
    at = _app({"is_logged_in": False})
    assert [b.label for b in at.button] == ["Log in"]
    assert "Signed in" not in _texts(at)


def test_outside_allowed_domains_is_refused(login: pytest.MonkeyPatch) -> None:
    login.setenv("PODIUM_ALLOWED_DOMAINS", "example.org")
    reset_settings()
    at = _app({"is_logged_in": True, "email_verified": True, "email": "eve@evil.test"})
    assert "eve@evil.test is not allowed to use this Podium" in _texts(at)
    assert [b.label for b in at.button] == ["Log out"]


def test_an_expired_login_asks_to_log_in_again(login: pytest.MonkeyPatch) -> None:
    """Issue 44, point 21: a login's `exp` was never checked (a copied cookie worked for
    the 30 days Streamlit keeps it)."""
    user = {"is_logged_in": True, "email_verified": True, "email": ADMIN.name}
    at = _app({**user, "iat": 1_700_000_000, "exp": 1_700_003_600})
    assert "This login has expired; log in again." in _texts(at)
    assert [b.label for b in at.button] == ["Log out", "Log in again"]
    assert "Signed in as" not in _texts(at)


def test_a_viewer_sees_no_job_controls_and_no_users_page(login: pytest.MonkeyPatch) -> None:
    login.setenv("PODIUM_USER", ADMIN.name)
    reset_settings()
    job_id = submit(parse_card("---\nkind: test-steps\n---\n"))
    login.delenv("PODIUM_USER")
    reset_settings()
    viewer = {
        "is_logged_in": True,
        "email_verified": True,
        "email": "vic@example.org",
        "name": "Vic",
    }
    at = _app(viewer, "views/logbook/view.py")
    texts = _texts(at)
    assert "Signed in as **Vic** · viewer" in texts
    assert f"submitted by {ADMIN.name}" in texts
    assert not [b for b in at.button if b.label in ("Cancel", "Re-run", "Re-run with changes")]
    assert job_id
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        _app(viewer, "views/users/view.py")  # not in the viewer's navigation at all


def test_the_reviewer_votes_as_themselves(login: pytest.MonkeyPatch, comparison) -> None:  # type: ignore[no-untyped-def]
    grant(ADMIN, "rita@example.org", "reviewer")
    rita = {
        "is_logged_in": True,
        "email_verified": True,
        "email": "Rita@example.org",
        "name": "Rita",
    }
    at = _app(rita, "views/compare/view.py")
    at.query_params["name"] = "cmp.colours"
    at.run()
    at.radio(key="compare.mode").set_value("Blind vote").run()
    at.button(key="compare.vote.A").click().run()
    assert not at.exception, at.exception
    (vote,) = list_votes("cmp.colours")
    assert vote["voter"] == "rita@example.org"
    viewer = _app(
        {"is_logged_in": True, "email_verified": True, "email": "vic@example.org"},
        "views/compare/view.py",
    )
    viewer.query_params["name"] = "cmp.colours"
    viewer.run()
    viewer.radio(key="compare.mode").set_value("Blind vote").run()
    assert "voting needs reviewer" in _texts(viewer)
    assert not [b for b in viewer.button if b.key and b.key.startswith("compare.vote.")]

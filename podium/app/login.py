"""Who is using the app: OpenID Connect through Streamlit's `st.login`, or the OS user.

`gate()` runs first on every page run. With login configured it shows a login screen
until the provider vouches for the person, resolves them to a role through the users
table, and registers `app_user` so every write path below the pages (job submission,
votes, vibe prompts, cancels) acts as them and checks their role itself; a request a
page never offered is refused there too. Without login (local mode) the OS user acts.
A login counts until its ID token expires or its person presses "Log out", which ends
every login of theirs, a copied cookie included (`store/state/sessions.py`).
"""

from __future__ import annotations

import streamlit as st

from podium.app.safe_markdown import escape_markdown
from podium.config import get_settings
from podium.errors import PermissionDenied
from podium.identity import User, local_user
from podium.store.state.sessions import LoginEnded, end_sessions, login_refusal
from podium.store.state.users import use_session_user, user_from_claims

NO_AUTH_BANNER = (
    "This Podium is served without login (`--insecure-no-auth`): anyone who can reach "
    "it reads, edits and runs jobs as its owner. Configure OpenID Connect to share it."
)


def app_user() -> User:
    """The person behind the current browser session, with their role as of now."""
    settings = get_settings()
    if not settings.login_configured:
        return local_user()
    if not st.user.is_logged_in:
        raise PermissionDenied("Log in first: this Podium needs a login.")
    claims = {key: st.user.get(key) for key in ("email", "email_verified", "name", "iat", "exp")}
    user = user_from_claims(claims, settings)
    why = login_refusal(claims, user.name)
    if why is not None:
        raise LoginEnded(why)
    return user


def log_out() -> None:
    """End every login of this person (copies of the cookie too), then this browser's."""
    try:
        end_sessions(app_user().name, issued=st.user.get("iat"))
    except PermissionDenied:
        pass  # a login that no longer counts has nothing left to end
    st.logout()


def gate() -> User:
    """Login screen, refusal, no-login banner, and the identity in the sidebar."""
    use_session_user(app_user)
    settings = get_settings()
    if settings.insecure_no_auth and not settings.login_configured:
        st.warning(NO_AUTH_BANNER, icon=":material/warning:")
    if settings.login_configured and not st.user.is_logged_in:
        st.title("Podium")
        st.write("Log in to browse, review and run jobs.")
        st.button("Log in", type="primary", on_click=st.login, key="login.login")
        st.stop()
    try:
        user = app_user()
    except PermissionDenied as exc:
        st.error(escape_markdown(str(exc)))
        st.button("Log out", on_click=st.logout, key="login.logout")
        if isinstance(exc, LoginEnded):
            st.button("Log in again", on_click=st.login, key="login.again")
        st.stop()
    with st.sidebar:
        # A caption: one line, so the page's own pickers below stay in sight at 900 px.
        st.caption(f"Signed in as **{escape_markdown(user.label)}** · {escape_markdown(user.role)}")
        if settings.login_configured:
            st.button("Log out", on_click=log_out, key="login.logout")
    return user

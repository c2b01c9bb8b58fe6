"""Who uses a page and what it offers them: controls for writes their role allows, and
for the rest a caption naming the role that would (the write path refuses them anyway,
through `podium.identity.require`; this only keeps the page from offering them)."""

from __future__ import annotations

import streamlit as st

from podium.identity import REQUIRED_ROLE, Action, User
from podium.store.state.users import acting_user


def current_user() -> User:
    """Who acts in the app: the one resolution every page uses (the OS user in local
    mode)."""
    return acting_user()


def missing_role(user: User, action: Action, doing: str, reading: str = "this") -> str | None:
    """None when `user` may do `action`; else 'Your role (viewer) can read this;
    labelling needs reviewer.'"""
    if user.can(action):
        return None
    return f"Your role ({user.role}) can read {reading}; {doing} needs {REQUIRED_ROLE[action]}."


def allowed(user: User, action: Action, doing: str, reading: str = "this") -> bool:
    """Whether to draw the controls for `action`; when not, a caption says why."""
    note = missing_role(user, action, doing, reading)
    if note:
        st.caption(f":material/lock: {note}")
    return note is None

"""Users page (admins): who has which role; grant and revoke."""

from __future__ import annotations

import streamlit as st

from podium.app.feedback import PodiumError, show_error
from podium.app.roles import current_user
from podium.app.safe_markdown import escape_markdown
from podium.app.views.users.model import ROLES, grant, list_users, revoke

st.title("Users")
me = current_user()
if not me.can("manage_users"):
    show_error(f"Managing users needs the admin role; you are {me.role}.")
    st.stop()

st.dataframe(list_users(), hide_index=True)
with st.form("users.grant"):
    left, middle, right = st.columns(3)
    name = left.text_input("E-mail or login name", key="users.name")
    role = middle.selectbox("Role", ROLES, key="users.role")
    display = right.text_input("Display name (optional)", key="users.display")
    if st.form_submit_button("Grant", type="primary"):
        try:
            record = grant(current_user(), name, role, display)
            st.success(escape_markdown(f"{record['name']} is now {record['role']}."))
        except PodiumError as exc:
            show_error(exc)
names = [u["name"] for u in list_users()]
if names:
    gone = st.selectbox("Remove a user", names, key="users.revoke_name")
    if st.button("Revoke", key="users.revoke"):
        try:
            revoke(current_user(), gone)
            st.rerun()
        except PodiumError as exc:
            show_error(exc)

"""What the Users page shows and does, without Streamlit: who has which role, and the
grants and revokes an admin makes (`podium.store.state.users` checks the role)."""

from __future__ import annotations

from podium.identity import ROLES as ROLES
from podium.store.state.users import grant as grant
from podium.store.state.users import list_users as list_users
from podium.store.state.users import revoke as revoke

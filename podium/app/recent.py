"""What this browser session last looked at (a table, a model), so a page that needs one
starts on it instead of on the newest of its kind: Compare's new comparison preselects
the checkpoint last chatted with or trained and the table last opened.

Pages call `saw` where a person picks or opens something; kept in the session state,
so it lasts while the person moves between pages and ends with the tab.
"""

from __future__ import annotations

from typing import Literal

import streamlit as st

Kind = Literal["table", "model"]
_KEY = "podium.recent."


def saw(kind: Kind, name: str | None) -> None:
    if name:
        st.session_state[_KEY + kind] = name


def last_seen(kind: Kind) -> str | None:
    value = st.session_state.get(_KEY + kind)
    return value if isinstance(value, str) else None

"""Open one page of the app in Streamlit's AppTest, as a signed-in user or locally."""

from __future__ import annotations

import time
from html import unescape
from pathlib import Path

from streamlit.testing.v1 import AppTest

from podium.app.safe_markdown import WORD_JOINER

MAIN = str(Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py")


def shown(text: str) -> str:
    """`text` (Markdown a page drew) as a person reads it: data on a page is escaped
    (`podium.app.safe_markdown`), so character references are decoded and the invisible
    word joiners that keep URLs and addresses from linking are dropped."""
    return unescape(text).replace(WORD_JOINER, "")


def token_times(user: dict[str, object]) -> dict[str, object]:
    """`user` as the provider's ID token has it: issued now, valid an hour (a login
    without them does not count: podium.store.state.sessions)."""
    now = int(time.time())
    return {"iat": now, "exp": now + 3600, **user}


def open_page(view: str, *, user: dict[str, object] | None = None, **query: str) -> AppTest:
    """`views/<view>/view.py` after Home's first run (its own path), with `query` in the URL;
    `user` seeds `st.user` when login is configured."""
    at = AppTest.from_file(MAIN, default_timeout=90)
    if user is not None:
        at.user = token_times(user)
    at.run()
    at.switch_page(f"views/{view}/view.py")
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    return at

"""The app's web server: `podium app` runs `streamlit run` on this file.

Streamlit finds `app` below and serves it (uvicorn, Starlette); the pages are still the
script `main.py`. This module only puts Podium's own layer around Streamlit:
`HttpGuard` (Content-Security-Policy, the Host/Origin check of local mode) and
`report_script_error` (users see an error id, the server log the traceback).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

from podium.app.http_guard import HttpGuard, allowed_hosts
from podium.app.script_errors import report_script_error

MAIN_SCRIPT = Path(__file__).resolve().parent / "main.py"


def configured_hosts() -> frozenset[str] | None:
    """Allowed Host names from the bind address (`--server.address`) and settings."""
    from streamlit import config

    from podium.config import get_settings

    bind = str(config.get_option("server.address") or "127.0.0.1")
    return allowed_hosts(bind, get_settings().allowed_hosts)


app = st.App(
    MAIN_SCRIPT,
    middleware=[Middleware(HttpGuard, hosts=configured_hosts)],
    on_script_error=report_script_error,
)

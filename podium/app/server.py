"""The app's web server: `podium app` runs `streamlit run` on this file.

Streamlit finds `app` below and serves it (uvicorn, Starlette); the pages are still the
script `main.py`. This module only puts Podium's own layer around Streamlit:
`HttpGuard` (Content-Security-Policy, the Host/Origin check of local mode) and
`report_script_error` (users see an error id, the server log the traceback).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

from podium.app.http_guard import HttpGuard, allowed_hosts
from podium.app.script_errors import report_script_error

# Every session's script runs on its own thread of this one process, and each message it
# hands to the event loop (one per element drawn) drops the interpreter's lock for a
# socket write; taking it back waited for the thread holding it to be made to switch,
# 5 ms by default. With ten protocol sessions (a reviewer's 2 s pause, load 7-17)
# 0.5 ms took a page change's p50 from 0.58-0.78 s to 0.38 s and p95 from 2.4-2.5 s to
# 1.3-1.5 s, runs alternated (docs/faults.md); one session alone is unchanged.
SWITCH_INTERVAL_S = 0.0005
sys.setswitchinterval(SWITCH_INTERVAL_S)

MAIN_SCRIPT = Path(__file__).resolve().parent / "main.py"


def configured_hosts() -> frozenset[str] | None:
    """Allowed Host names from the served address and settings. Behind `podium up
    --app-processes N`'s proxy this process listens on loopback, but browsers reach the
    address `podium up` was given, so that is the one whose rules apply."""
    from streamlit import config

    from podium.config import SERVED_ADDRESS_ENV, get_settings

    served = os.environ.get(SERVED_ADDRESS_ENV)
    bind = served or str(config.get_option("server.address") or "127.0.0.1")
    return allowed_hosts(bind, get_settings().allowed_hosts)


app = st.App(
    MAIN_SCRIPT,
    middleware=[Middleware(HttpGuard, hosts=configured_hosts)],
    on_script_error=report_script_error,
)

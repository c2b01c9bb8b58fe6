"""What a person sees when a page fails: a one-line message and an error id; the
traceback goes to the server's log under the same id, for the operator.

Streamlit calls `report_script_error` (registered in `server.py`) for every exception
a page or widget callback does not handle; returning True keeps Streamlit's own
display (the traceback) off the page.
"""

from __future__ import annotations

import logging
import secrets
import sys

from podium.app.safe_markdown import escape_markdown
from podium.errors import PodiumError

log = logging.getLogger("podium.app")


def new_error_id() -> str:
    return secrets.token_hex(4)


def _ensure_handler() -> None:
    # Streamlit configures only its own loggers; without this the traceback would go
    # through logging's last-resort handler, or nowhere once someone sets a level.
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False


def user_message(exc: BaseException, error_id: str) -> str:
    """One line: what went wrong when the person can act on it, and the id to quote."""
    if isinstance(exc, PodiumError):
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"{first} (error id {error_id})"
    return (
        f"Something went wrong on this page (error id {error_id}). "
        "The operator finds the details in the server log under this id."
    )


def log_script_error(exc: BaseException) -> str:
    """Log `exc` with its traceback under a new id; returns the id."""
    _ensure_handler()
    error_id = new_error_id()
    log.error("error id %s: %s", error_id, type(exc).__name__, exc_info=exc)
    return error_id


def report_script_error(exc: Exception) -> bool:
    """Streamlit's on_script_error hook: log, show the id, suppress the traceback."""
    error_id = log_script_error(exc)
    try:
        import streamlit as st

        st.error(escape_markdown(user_message(exc, error_id)), icon=":material/error:")
    except Exception:  # no page to draw on (e.g. the session ended): the log has it
        log.warning("error id %s: could not be shown on the page", error_id)
    return True

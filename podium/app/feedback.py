"""How every page says things: one error format, one "queued" message, empty states.

An error reads as its first paragraph (what went wrong and what to do, including a
list of the fields at fault), with anything after a blank line (a traceback, a log
tail) folded under "Details": the page then says what the CLI and the Logbook say. A
page catches `PodiumError` (the errors a person can cause) from here, beside the
function that shows it.
"""

from __future__ import annotations

import streamlit as st

from podium.app.pages import page_file
from podium.app.safe_markdown import code_span, escape_markdown
from podium.errors import PodiumError as PodiumError


def error_parts(text: str) -> tuple[str, str]:
    """(headline, details): the first paragraph, and the rest to fold away."""
    text = text.strip()
    head, _, rest = text.partition("\n\n")
    return head.strip(), rest.strip()


def show_error(exc: BaseException | str) -> None:
    head, details = error_parts(str(exc))
    st.error(escape_markdown(head), icon=":material/error:")
    if details:
        with st.expander("Details"):
            st.code(details, language=None)


def job_queued(job_id: str) -> None:
    """The message after a submit: the job's id and a link to follow it."""
    st.session_state["podium.last_job"] = job_id
    st.success(
        f"Queued job {code_span(job_id)}; the worker runs it (see the job tray).",
        icon=":material/send:",
    )
    st.page_link(
        page_file("logbook"),
        label=f"Follow job {job_id} in the Logbook",
        icon=":material/history:",
        query_params={"job": job_id},
    )


def empty_state(what: str, how: str) -> None:
    """The same sentence shape everywhere: what is missing, then how to get it."""
    st.info(f"{what} {how}", icon=":material/info:")

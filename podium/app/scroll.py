"""Bring one element into view once: a validation error Browse opened a sample at, the
question a destructive button asked.

Streamlit keeps the page where it was after a rerun, so what a click or a link made
appear can land below the fold. A small script (`st.html` with
`unsafe_allow_javascript`, as `podium.app.shortcuts`) waits for the element and scrolls
it to the middle of the window, once per `token`: a later rerun that draws the same
script again does not pull the page back while someone reads elsewhere.
"""

from __future__ import annotations

import json
import uuid

import streamlit as st

ERROR_MARK = 'mark[style*="#ffb3b3"]'  # chat_markdown's mark around a validation error

_SCRIPT = """
<script>
(() => {
  const want = %s;
  const done = (window.__podiumScrolled = window.__podiumScrolled || {});
  if (done[want.token]) return;
  done[want.token] = true;
  const find = () => want.selector
    ? document.querySelector(want.selector)
    : [...document.querySelectorAll("button")].find((b) => b.innerText.trim() === want.button);
  let tries = 0;
  const tick = () => {
    const el = find();
    if (el) el.scrollIntoView({ block: "center" });
    else if (++tries < 60) setTimeout(tick, 100);
  };
  tick();
})();
</script>
"""


def scroll_script(*, token: str, selector: str | None = None, button: str | None = None) -> str:
    """The script that scrolls to the first element matching the CSS `selector`, or to
    the button labelled `button`. Values are JSON-encoded data, with '<' escaped so
    none can close the script element."""
    if (selector is None) == (button is None):
        raise ValueError("give a selector or a button label, not both")
    want = {"token": token, "selector": selector, "button": button}
    return _SCRIPT % json.dumps(want).replace("<", "\\u003c")


def scroll_once(*, selector: str | None = None, button: str | None = None) -> None:
    """Scroll to the element now (a fresh token per call: call it on the run that made
    the element appear, not on every run)."""
    st.html(
        scroll_script(token=uuid.uuid4().hex, selector=selector, button=button),
        unsafe_allow_javascript=True,
    )

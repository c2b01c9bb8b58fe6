"""Keyboard shortcuts for a page: a key clicks the visible button with that label.

Streamlit has no key bindings, so a small script (Streamlit's `st.html` with
`unsafe_allow_javascript`) listens for keys and clicks the page's own buttons; keys
typed into a text field are left alone. Every page that uses it sets its own key map
(the last page drawn wins), and the listener is installed once per browser tab.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import streamlit as st

_SCRIPT = """
<script>
window.__podiumKeys = %s;
if (!window.__podiumKeysInstalled) {
  window.__podiumKeysInstalled = true;
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName))) return;
    const label = (window.__podiumKeys || {})[e.key];
    if (!label) return;
    const button = [...document.querySelectorAll("button")].find(
      (b) => b.innerText.trim() === label && !b.disabled);
    if (button) { e.preventDefault(); button.click(); }
  });
}
</script>
"""


def shortcut_script(keys: Mapping[str, str]) -> str:
    """The script for `keys` ({key: button label}); labels are JSON-encoded data, and
    '<' is escaped so a label cannot close the script element."""
    return _SCRIPT % json.dumps(dict(keys)).replace("<", "\\u003c")


def keyboard_shortcuts(keys: Mapping[str, str]) -> None:
    st.html(shortcut_script(keys), unsafe_allow_javascript=True)

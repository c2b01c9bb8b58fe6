"""Podium's web UI: `podium app` runs `streamlit run` on this file.

Pages live in `podium/app/views/`, one module per page; they only lay out widgets and
call functions that are tested without Streamlit.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

VIEWS = Path(__file__).parent / "views"

st.set_page_config(page_title="Podium", page_icon=":material/stadium:", layout="wide")

PAGES = {
    "Data": [
        st.Page(VIEWS / "browse.py", title="Browse", icon=":material/table_view:", default=True),
        st.Page(VIEWS / "validate.py", title="Validate", icon=":material/rule:"),
    ],
    "Models": [
        st.Page(VIEWS / "generate.py", title="Generate", icon=":material/auto_awesome:"),
        st.Page(VIEWS / "vibes.py", title="Vibe check", icon=":material/sentiment_dissatisfied:"),
        st.Page(VIEWS / "build.py", title="Code-exec build", icon=":material/terminal:"),
        st.Page(VIEWS / "train.py", title="Train", icon=":material/model_training:"),
        st.Page(VIEWS / "compare.py", title="Compare", icon=":material/compare:"),
    ],
    "Runs": [
        st.Page(VIEWS / "logbook.py", title="Logbook", icon=":material/history:"),
    ],
}

st.navigation(PAGES).run()

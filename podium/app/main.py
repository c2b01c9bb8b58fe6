"""Podium's web UI: `podium app` runs `streamlit run` on this file.

Pages live in `podium/app/views/<page>/`, one package per page: `view.py` only lays out widgets and
calls its model (the package's other modules), which is tested without Streamlit.
"""

from __future__ import annotations

import streamlit as st

from podium.app.job_tray import job_tray
from podium.app.login import gate
from podium.app.pages import PAGE_ICON, SECTIONS, page_file
from podium.app.pages import PAGES as PAGE_INFO

st.set_page_config(page_title="Podium", page_icon=PAGE_ICON, layout="wide")
user = gate()  # login screen, identity in the sidebar, the no-login banner

# Every page has its own URL path (Home is the default), so `/browse?table=...` deep
# links open Browse itself rather than behind a "page not found" notice.
PAGES = {
    section: [
        st.Page(page_file(name), title=title, icon=icon, url_path=name, default=name == "home")
        for name in names
        for _, title, icon in [PAGE_INFO[name]]
    ]
    for section, names in SECTIONS.items()
    if section != "Admin" or user.can("manage_users")
}

navigation = st.navigation(PAGES)
try:
    navigation.run()
finally:
    # Every page shows the running and recent jobs, below what the page put in the
    # sidebar (Browse's table and snapshot pickers stay in sight at 900 px).
    with st.sidebar:
        job_tray()

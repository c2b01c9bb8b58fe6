"""One package per page: `<page>/view.py` is the Streamlit script (layout only, it imports
its own package and the shared `podium.app` modules), and the rest of the package is the
page's model, tested without Streamlit.

Not `pages/`: a `pages` folder beside `main.py` switches Streamlit to its first
multipage mode until `st.navigation` runs.
"""

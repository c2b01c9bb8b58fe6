"""Code-exec build page (not built yet)."""

import streamlit as st

st.title("Code-exec build")
st.info("Not built yet. This page will: Build code-execution datasets: a model proposes inputs for functions, a sandbox runs them, outputs are recorded.")

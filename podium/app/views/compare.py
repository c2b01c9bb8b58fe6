"""Compare page (not built yet)."""

import streamlit as st

st.title("Compare")
st.info("Not built yet. This page will: Compare checkpoints side by side on the same prompts, vote blind, and see ratings.")

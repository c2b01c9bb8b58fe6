"""Vibe check page (not built yet)."""

import streamlit as st

st.title("Vibe check")
st.info("Not built yet. This page will: Submit prompts where a model does badly, see its answer at once, and collect them into eval sets.")

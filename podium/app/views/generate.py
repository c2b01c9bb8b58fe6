"""Generate page (not built yet)."""

import streamlit as st

st.title("Generate")
st.info("Not built yet. This page will: Sample any registered checkpoint through a vLLM server as a job with progress, and write the samples as a new table.")

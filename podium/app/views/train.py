"""Train page (not built yet)."""

import streamlit as st

st.title("Train")
st.info("Not built yet. This page will: Launch small SFT and GRPO runs with TRL and watch their metrics live; checkpoints come back registered.")

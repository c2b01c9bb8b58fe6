"""Logbook page (not built yet)."""

import streamlit as st

st.title("Logbook")
st.info("Not built yet. This page will: Every job with its run card, inputs, outputs, progress, logs and metrics.")

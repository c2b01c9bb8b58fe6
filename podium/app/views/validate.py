"""Validate page (not built yet)."""

import streamlit as st

st.title("Validate")
st.info("Not built yet. This page will: Validate structured outputs (JSON, JSON Schema, XML, XSD, Python, regex, tool calls) over a whole table snapshot and point at the exact place each malformed sample breaks.")

"""Home page: the loop Podium serves, one link per step, each opening the page that
does it; where things stand (tables, models, running model servers, recent jobs); and,
while some demo table is missing, a button that loads them (what `podium demo` does).
Logic: `podium.app.views.home.model`."""

from __future__ import annotations

import streamlit as st

from podium.app.base_model_panel import offer_base_model, setup_done
from podium.app.base_model_setup import base_model_missing
from podium.app.job_tray_model import STATUS_ICONS
from podium.app.pages import PAGES, page_file
from podium.app.roles import current_user
from podium.app.safe_markdown import code_span, escape_markdown
from podium.app.views.home.model import demo_missing, demo_text, home_state, load_demo_tables
from podium.app.widgets import browse_link

# {table: created?}: said from the rerun that counts them on, for the session; popped once,
# it was gone before it was read when a followed job ended and reran the page.
DEMO_LOADED = "home.demo_loaded"
STEPS = (
    ("browse", "Review a dataset: search, filter, read conversations, see statistics."),
    ("validate", "Find the malformed samples: JSON, schemas, XML, Python, tool calls."),
    ("generate", "Sample any checkpoint on a prompts table; the samples become a table."),
    ("vibes", "Save prompts a model gets wrong; they become eval sets."),
    ("build", "Build a code-execution dataset in the sandbox."),
    ("train", "Fine-tune (SFT) or reinforce (GRPO) a checkpoint on a table."),
    ("compare", "Compare checkpoints side by side and vote blind."),
    ("logbook", "Every job: status, logs, metrics, outputs; cancel or run again."),
)

st.title("Podium")
st.caption(
    "A workbench for post-training data. Each page hands its result to the next: a table "
    "opens in Validate, its samples in Generate, the output in Train, the checkpoint in "
    "Compare."
)
for name, text in STEPS:
    _, title, icon = PAGES[name]
    st.page_link(page_file(name), label=f"{title}: {text}", icon=icon)

setup_done()  # the base model set up from here: said once it is registered
st.subheader("Where things stand")
state = home_state()
st.markdown(f"**{state.summary}**")
c1, c2, c3 = st.columns([2, 1, 1])  # table names are the longest: room to read them whole
with c1:
    st.markdown("**Tables**")
    for table in state.tables[:8]:
        browse_link(table)  # the label is the table name, as text
        if table in state.partial:  # its job stopped part-way: say so before it is used
            st.caption(escape_markdown(f"partial: {state.partial[table]}"))
    if more := state.tables_left_out(8):
        st.caption(escape_markdown(more))
    elif not state.tables:
        st.caption("none yet")
with c2:
    st.markdown("**Models**")
    st.markdown("\n".join(f"- {code_span(m)}" for m in state.models) or "none yet")
    st.markdown("**Model servers running**")
    st.markdown("\n".join(f"- {escape_markdown(s)}" for s in state.servers) or "none")
with c3:
    st.markdown("**Recent jobs**")
    for job in state.jobs:
        st.page_link(
            page_file("logbook"),
            label=escape_markdown(f"{job['kind']} · {job['status']} · {job['id']}"),
            icon=STATUS_ICONS.get(job["status"], ":material/work:"),
            query_params={"job": job["id"]},
        )
    if not state.jobs:
        st.caption("none yet")

if base_model_missing():  # Generate, Train and Compare need it
    st.subheader("Base model")
    offer_base_model("home.bootstrap", "No base model registered yet.")

missing = demo_missing()
if missing:
    st.subheader("Demo data")
    st.caption(escape_markdown(demo_text(missing)))
if (
    missing
    and current_user().can("run_job")
    and st.button(  # load_demo checks the role again
        "Load the demo data", icon=":material/download:", key="home.demo"
    )
):
    with st.spinner("Writing the demo tables"):
        st.session_state[DEMO_LOADED] = load_demo_tables()
    st.rerun()  # "Where things stand" above was drawn before the tables existed
if created := st.session_state.get(DEMO_LOADED):
    st.success(
        "Demo tables: "
        + ", ".join(f"{t} ({'created' if new else 'already there'})" for t, new in created.items())
    )
    for table in created:
        browse_link(table, label=f"Browse {escape_markdown(table)}")

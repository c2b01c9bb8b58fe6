"""Build page: choose a functions table, a checkpoint, inputs per function and a sandbox
backend (every setting of `code-exec-build` is in the form, the rare ones under
Advanced); queue the job for the worker and watch it; then see the rows with failures
and timeouts highlighted. Verify mode re-runs an earlier build's rows and highlights
outputs that changed.

Everything shown comes from `podium.app.views.build.model`.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from podium.app import widgets
from podium.app.base_model_panel import offer_base_model
from podium.app.feedback import PodiumError, empty_state, show_error
from podium.app.forms import queue_form
from podium.app.job_panel import Job, page_link, table_links, watch_job
from podium.app.safe_markdown import escape_markdown
from podium.app.table_choices import snapshot_names_of, snapshots_of
from podium.app.views.build import model as build_model
from podium.app.views.build.model import sft_table_of

MODE, TABLE, SNAPSHOT = "build.mode", "build.table", "build.snapshot"
MODEL, SHOW, FILTER = "build.model", "build.show", "build.filter"
JOB, JOB_ID = "build.job", "build.job_id"
BASIC = ("out", "inputs_per_function", "backend", "limit")
LISTED = 200


def _settings() -> None:
    mode = st.radio(
        "Mode",
        ["build", "verify"],
        key=MODE,
        horizontal=True,
        help="build: a model proposes inputs; verify: re-run an earlier build's rows.",
    )
    sources = build_model.source_tables(mode)
    if not sources:
        if mode == "build":
            empty_state("No functions table yet.", "Run `podium demo` (it loads demo.functions).")
        else:
            empty_state("No code-exec rows table yet.", "Queue a build first.")
        return
    table = widgets.table_picker(
        sources, key=TABLE, label="Functions" if mode == "build" else "Rows"
    )
    assert table is not None
    snapshot = widgets.snapshot_picker(
        snapshots_of(table), key=SNAPSHOT, names=snapshot_names_of(table)
    )
    fixed: dict[str, object] = {
        "table": {"name": table, "snapshot_id": snapshot},
        "mode": mode,
    }
    if mode == "build":
        names = build_model.model_names()
        if not names:
            offer_base_model("build.bootstrap", "No model registered.")
            return
        fixed["model"] = st.selectbox("Checkpoint", names, key=MODEL)
    suffix = "_verify" if mode == "verify" else ""
    job_id = queue_form(
        build_model.KIND,
        JOB,
        advanced=[f for f in build_model.config_fields() if f not in BASIC],
        values={
            "out": f"cx.{table.split('.')[-1]}{suffix}",
            "limit": build_model.first_limit(mode),
        },
        fixed=fixed,
    )
    if job_id is not None:
        st.session_state[JOB_ID] = job_id
    if st.session_state.get(JOB_ID):
        watch_job(st.session_state[JOB_ID], _next_steps)


def _next_steps(job: Job) -> None:
    outputs = table_links(job)["outputs"]
    if outputs and st.session_state.get(JOB_ID + ".shown") != job["id"]:
        st.session_state[SHOW] = outputs[0][0]  # once: then the picker is the user's again
        st.session_state[JOB_ID + ".shown"] = job["id"]
    for name, _ in outputs:
        if build_model.is_sft_table(name):
            page_link("train", f"Train on {name}", ":material/model_training:", table=name)


def _results() -> None:
    shown = build_model.result_tables()
    if not shown:
        empty_state("No code-exec results yet.", "Queue a build.")
        return
    if st.session_state.get(SHOW) not in shown:
        st.session_state[SHOW] = shown[-1]
    name = st.selectbox("Results table", shown, key=SHOW)
    kind, rows = build_model.load_results(name)
    counts = build_model.status_counts(rows)
    cols = st.columns(4)
    cols[0].metric("Rows", f"{len(rows):,}")
    cols[1].metric("OK", f"{counts.get('ok', 0):,}")
    cols[2].metric("Failures", f"{sum(v for k, v in counts.items() if k != 'ok'):,}")
    cols[3].metric("Timeouts", f"{counts.get('timeout', 0):,}")
    st.markdown(" · ".join(f"{build_model.badge(s)} {n:,}" for s, n in counts.items()))
    if ran := build_model.backends_text(rows):
        st.caption(escape_markdown(ran))
    if build_model.table_exists(name):
        widgets.browse_link(name, label=f"Open {escape_markdown(name)} in Browse")
    sft = sft_table_of(name)
    if sft is not None:  # the SFT table the build made from its successful rows
        widgets.browse_link(sft, label=f"Open {escape_markdown(sft)} in Browse")
        page_link("train", f"Train on {sft}", ":material/model_training:", table=sft)
    problems = build_model.problems(rows)
    st.subheader("Failures and timeouts" if kind != build_model.VERIFY_KIND else "Mismatches")
    if not problems:
        st.success("Every row succeeded.")
    else:
        statuses = sorted({r["status"] for r in problems})
        chosen = st.multiselect("Status", statuses, default=statuses, key=f"{FILTER}.{name}")
        for row in build_model.problems(rows, set(chosen))[:LISTED]:
            st.markdown(build_model.describe(row))
    with st.expander("All rows"):
        columns = [
            c
            for c in (
                "status",
                "function_id",
                "input",
                "output",
                "expected",
                "actual",
                "error",
                "wall_s",
            )
            if rows and c in rows[0]
        ]
        st.dataframe(
            pd.DataFrame(rows[:5000])[columns] if rows else pd.DataFrame(),
            hide_index=True,
            width="stretch",
        )


st.title("Code-exec build")
st.caption(
    "A checkpoint proposes inputs for each function, the sandbox runs every call, and each "
    "row records the output (or the error, timeout, memory limit). Successful rows also "
    "become an SFT table: “What does f(...) return?”."
)
left, right = st.columns([1, 2], gap="large")
try:
    with left:
        _settings()
    with right:
        _results()
except PodiumError as exc:
    show_error(exc)

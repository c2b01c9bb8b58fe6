"""Build page: choose a functions table, a checkpoint, inputs per function and a sandbox
backend; launch a `code-exec-build` job (here with a progress bar, or queued for the
worker); then see the rows with failures and timeouts highlighted. Verify mode re-runs
an earlier build's rows and highlights outputs that changed.

Everything shown comes from `generators.code_exec.results`.
"""

from __future__ import annotations

import os

import pandas as pd
import streamlit as st

from generators.code_exec import results
from generators.code_exec.build import KIND, CodeExecConfig
from podium.app import widgets
from podium.errors import PodiumError
from podium.jobs.cards import Card
from podium.jobs.execute import execute_job
from podium.jobs.launch import submit
from podium.jobs.queue import create_job, set_fields
from podium.jobs.reporter import JobReporter
from podium.models import list_models
from podium.store.catalog import load_table, table_exists
from podium.store.refs import TableRef
from podium.store.snapshots import list_snapshots

MODE, TABLE, SNAPSHOT = "build.mode", "build.table", "build.snapshot"
MODEL, INPUTS, BACKEND, OUT = "build.model", "build.inputs", "build.backend", "build.out"
LIMIT, SHOW, FILTER = "build.limit", "build.show", "build.filter"
LISTED = 200


class _BarReporter(JobReporter):
    """The job's reporter, also moving this page's progress bar."""

    bar: st.delta_generator.DeltaGenerator | None = None

    def progress(self, done: int, total: int | None = None, message: str = "") -> None:
        super().progress(done, total, message)
        if self.bar is not None and total:
            self.bar.progress(min(done / total, 1.0), text=f"{done:,} / {total:,} {message}")


def _run_here(config: CodeExecConfig) -> None:
    job_id = create_job(Card(KIND, config), status="running")
    set_fields(job_id, worker_pid=os.getpid(), pgid=os.getpgrp())
    _BarReporter.bar = st.progress(0.0, text="starting")
    job = execute_job(job_id, _BarReporter)
    if job["status"] == "succeeded":
        st.success(f"Job {job_id} finished: {config.out}")
        st.session_state[SHOW] = config.out
    else:
        st.error(f"Job {job_id} {job['status']}: {(job['error'] or '').splitlines()[0]}")


def _settings() -> None:
    mode = st.radio(
        "Mode",
        ["build", "verify"],
        key=MODE,
        horizontal=True,
        help="build: a model proposes inputs; verify: re-run an earlier build's rows.",
    )
    sources = (
        results.function_tables()
        if mode == "build"
        else results.tables_of_kind(results.tables.ROWS_KIND)
    )
    if not sources:
        st.info(
            "No functions table yet: run `podium demo` (it loads demo.functions)."
            if mode == "build"
            else "No code-exec rows table yet: run a build first."
        )
        return
    table = widgets.table_picker(
        sources, key=TABLE, label="Functions" if mode == "build" else "Rows"
    )
    assert table is not None
    snapshot = widgets.snapshot_picker(list_snapshots(load_table(table)), key=SNAPSHOT)
    model = "base"
    inputs = 4
    if mode == "build":
        names = [m.name for m in list_models()]
        if not names:
            st.warning("No model registered: `podium models bootstrap` adds the base model.")
            return
        model = st.selectbox("Checkpoint", names, key=MODEL)
        inputs = int(st.number_input("Inputs per function", 1, 32, 4, key=INPUTS))
    backend = st.radio(
        "Sandbox",
        ["local", "docker"],
        key=BACKEND,
        horizontal=True,
        help="local: bubblewrap workers; docker: containers via DOCKER_HOST.",
    )
    suffix = "_verify" if mode == "verify" else ""
    default_out = f"cx.{table.split('.')[-1]}{suffix}"
    out = st.text_input("Output table", key=OUT, placeholder=default_out).strip() or default_out
    limit = int(st.number_input("Only the first N (0 = all)", 0, 1_000_000, 0, key=LIMIT))
    run = st.button("Run here", type="primary", key="build.run")
    queue = st.button("Queue for the worker", key="build.queue")
    if not (run or queue):
        return
    try:
        config = CodeExecConfig(
            functions=TableRef(name=table, snapshot_id=snapshot),
            out=out,
            model=model,
            mode=mode,
            inputs_per_function=inputs,
            backend=backend,
            limit=limit or None,
        )
    except ValueError as exc:
        st.error(f"Invalid settings: {exc}")
        return
    if queue:
        st.success(f"Queued job {submit(Card(KIND, config))}; see the Logbook.")
        st.session_state[SHOW] = out
    else:
        _run_here(config)


def _results() -> None:
    shown = results.tables_of_kind(*results.RESULT_KINDS)
    if not shown:
        st.info("No code-exec results yet: launch a build.")
        return
    if st.session_state.get(SHOW) not in shown:
        st.session_state[SHOW] = shown[-1]
    name = st.selectbox("Results table", shown, key=SHOW)
    kind, rows = results.load_results(name)
    counts = results.status_counts(rows)
    cols = st.columns(4)
    cols[0].metric("Rows", f"{len(rows):,}")
    cols[1].metric("OK", f"{counts.get('ok', 0):,}")
    cols[2].metric("Failures", f"{sum(v for k, v in counts.items() if k != 'ok'):,}")
    cols[3].metric("Timeouts", f"{counts.get('timeout', 0):,}")
    st.markdown(" · ".join(f"{results.badge(s)} {n:,}" for s, n in counts.items()))
    if table_exists(name):
        widgets.browse_link(name, label=f"Open {name} in Browse")
    problems = results.problems(rows)
    st.subheader("Failures and timeouts" if kind != results.tables.VERIFY_KIND else "Mismatches")
    if not problems:
        st.success("Every row succeeded.")
    else:
        statuses = sorted({r["status"] for r in problems})
        chosen = st.multiselect("Status", statuses, default=statuses, key=f"{FILTER}.{name}")
        for row in results.problems(rows, set(chosen))[:LISTED]:
            st.markdown(results.describe(row))
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
    st.error(str(exc))

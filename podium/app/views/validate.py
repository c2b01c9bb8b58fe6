"""Validate page: choose a table, snapshot and rules, run a `validate` job, then see
error kinds as a bar chart, the malformed samples, and each one with its error marked
by a caret, with a link to open it in Browse.

Everything shown comes from `podium.validate` (rules, reports, `review` helpers).
"""

from __future__ import annotations

import os

import altair as alt
import pandas as pd
import streamlit as st

from podium.app import widgets
from podium.errors import PodiumError
from podium.jobs.cards import Card
from podium.jobs.execute import execute_job
from podium.jobs.launch import submit
from podium.jobs.queue import create_job, set_fields
from podium.jobs.reporter import JobReporter
from podium.store.catalog import list_tables, load_table
from podium.store.refs import TableRef
from podium.store.schema import ROLES
from podium.store.snapshots import list_snapshots
from podium.validate import review
from podium.validate.job import ValidateConfig
from podium.validate.report import report_name
from podium.validate.rules import PROP_JSON_SCHEMA, RULE_NAMES, parse_rules

TABLE, SNAPSHOT, RULES = "validate.table", "validate.snapshot", "validate.rules"
SCHEMA, XSD, PATTERN, TOOLS = (
    "validate.schema",
    "validate.xsd",
    "validate.pattern",
    "validate.tools",
)
EXTRACT, ROLE_KEY, REPORT = "validate.extract", "validate.roles", "validate.report"
KIND_FILTER, SAMPLE = "validate.kind_filter", "validate.sample"
LISTED = 1000  # failures listed in the table; the report table holds them all


def _file_or_text(label: str, key: str, types: list[str], help_text: str) -> str:
    """Text of an uploaded file, else of the paste box under it."""
    uploaded = st.file_uploader(f"{label} file", type=types, key=key + ".file")
    pasted = st.text_area(f"…or paste the {label}", key=key, height=120, help=help_text)
    return uploaded.getvalue().decode("utf-8") if uploaded is not None else pasted


class _BarReporter(JobReporter):
    """The job's reporter, also moving this page's progress bar."""

    bar: st.delta_generator.DeltaGenerator | None = None

    def progress(self, done: int, total: int | None = None, message: str = "") -> None:
        super().progress(done, total, message)
        if self.bar is not None and total:
            self.bar.progress(min(done / total, 1.0), text=f"{done:,} / {total:,} rows · {message}")


def _run_here(config: ValidateConfig) -> None:
    """Run the job in this process (recorded in the logbook) with a progress bar."""
    job_id = create_job(Card("validate", config), status="running")
    set_fields(job_id, worker_pid=os.getpid(), pgid=os.getpgrp())
    _BarReporter.bar = st.progress(0.0, text="starting")
    job = execute_job(job_id, _BarReporter)
    if job["status"] == "succeeded":
        st.toast(f"Validation job {job_id} finished")
    else:
        st.error(f"Job {job_id} {job['status']}: {(job['error'] or '').splitlines()[0]}")


def _settings(table: str) -> None:
    props = load_table(table).properties
    snapshot = widgets.snapshot_picker(list_snapshots(load_table(table)), key=SNAPSHOT)
    if RULES not in st.session_state:
        st.session_state[RULES] = ["json", "json-schema"] if PROP_JSON_SCHEMA in props else ["json"]
    rules = st.multiselect("Rules", list(RULE_NAMES), key=RULES)
    schema_text = xsd_text = pattern = tools_text = ""
    if "json-schema" in rules:
        stored = "the table's stored schema" if PROP_JSON_SCHEMA in props else "nothing (required)"
        schema_text = _file_or_text(
            "JSON Schema", SCHEMA, ["json"], f"Leave empty to use {stored}."
        )
    if "xsd" in rules:
        xsd_text = _file_or_text("XML Schema", XSD, ["xsd", "xml"], "The XSD to validate against.")
    if "regex" in rules:
        pattern = st.text_input("Pattern (the whole text must match)", key=PATTERN)
    if "tool-call" in rules:
        tools_text = _file_or_text(
            "tools", TOOLS, ["json"], 'OpenAI tools list; empty = each row\'s metadata "tools".'
        )
    extract = st.radio(
        "Check",
        ["whole", "fenced"],
        key=EXTRACT,
        horizontal=True,
        format_func={"whole": "whole message", "fenced": "first ``` block"}.get,
    )
    roles = st.multiselect("Roles", list(ROLES), default=["assistant"], key=ROLE_KEY)
    report = st.text_input("Report table", key=REPORT, placeholder=report_name(table))
    run = st.button("Run validation", type="primary", key="validate.run")
    queue = st.button("Queue for the worker", key="validate.queue")
    if not (run or queue):
        return
    try:
        specs = review.build_specs(
            rules,
            schema_text=schema_text,
            xsd_text=xsd_text,
            pattern=pattern,
            tools_text=tools_text,
        )
        config = ValidateConfig(
            table=TableRef(name=table, snapshot_id=snapshot),
            rules=specs,
            extract=extract,
            roles=roles,
            report=report.strip() or None,
        )
        parse_rules(config.rules, props, table)  # a bad schema stops here, before any job
        if queue:
            st.success(f"Queued job {submit(Card('validate', config))}; see the Logbook.")
        else:
            _run_here(config)
    except PodiumError as exc:
        st.error(str(exc))


def _results(table: str) -> None:
    snapshot = st.session_state.get(SNAPSHOT)
    custom = (st.session_state.get(REPORT) or "").strip() or None
    found = review.latest_report(table, snapshot, custom)
    if found is None:
        st.info("No validation report for this snapshot yet: choose rules and run.")
        return
    summary, failures = found
    cols = st.columns(4)
    cols[0].metric("Rows", f"{summary.get('rows', 0):,}")
    cols[1].metric("Turns checked", f"{summary.get('turns', 0):,}")
    cols[2].metric("Failing turns", f"{len(failures):,}")
    cols[3].metric("Malformed rows", f"{len({f['id'] for f in failures}):,}")
    checked = ", ".join(summary.get("rules", [])) or "?"
    st.caption(
        f"Report table `{summary.get('report')}` · snapshot `{snapshot}` · rules {checked} · "
        f"{summary.get('extract', 'whole')} · roles {', '.join(summary.get('roles', []))}"
    )
    if not failures:
        st.success("Every checked turn passed.")
        return
    counts = pd.DataFrame(review.kind_counts(failures))
    chart = (
        alt.Chart(counts)
        .mark_bar()
        .encode(
            x=alt.X("count:Q", title="failing turns"),
            y=alt.Y("kind:N", sort="-x", title="error kind"),
            color=alt.Color("rule:N"),
            tooltip=["rule", "kind", "count"],
        )
    )
    st.altair_chart(chart, width="stretch")
    kinds = ["all"] + [f"{c['rule']} · {c['kind']}" for c in review.kind_counts(failures)]
    chosen = st.selectbox("Show", kinds, key=KIND_FILTER)
    shown = [f for f in failures if chosen == "all" or f"{f['rule']} · {f['kind']}" == chosen]
    listed = pd.DataFrame(shown[:LISTED])[["id", "turn", "rule", "kind", "excerpt", "message"]]
    st.dataframe(listed, hide_index=True, width="stretch")
    labels = {i: f"{f['id']} · turn {f['turn']} · {f['kind']}" for i, f in enumerate(shown)}
    index = st.selectbox(
        "Sample", list(labels), key=SAMPLE, format_func=lambda i: labels.get(i, str(i))
    )
    if index is None or index >= len(shown):
        return
    failure = shown[index]
    texts = review.message_texts(table, snapshot, [failure["id"]])
    where, marked = review.marked_failure(failure, texts.get(failure["id"], []))
    st.markdown(f"**{failure['id']}** · turn {failure['turn']} · `{failure['rule']}` · {where}")
    st.code(marked, language=None)
    widgets.browse_link(table, snapshot=snapshot, sample=failure["id"], label="Open in Browse")


st.title("Validate")
st.caption(
    "Check structured outputs in every row of a snapshot: JSON, JSON Schema, XML, XSD, "
    "Python, regex or tool calls. Each failing turn is pointed at its exact position."
)
tables = list_tables()
if not tables:
    widgets.no_tables_message()
    st.stop()
linked = st.query_params.get("table")
if linked in tables and st.session_state.get("validate.linked") != linked:
    st.session_state[TABLE] = st.session_state["validate.linked"] = linked  # /validate?table=
settings, results = st.columns([1, 2], gap="large")
with settings:
    chosen_table = widgets.table_picker(tables, key=TABLE)
if chosen_table is None:
    st.stop()
try:
    with settings:
        _settings(chosen_table)
    with results:
        _results(chosen_table)
except PodiumError as exc:
    st.error(str(exc))

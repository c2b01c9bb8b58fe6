"""Validate page: choose a table, snapshot and rules, queue a `validate` job, then see
error kinds as a bar chart, the malformed samples, and each one with its error marked
by a caret, with a link to open it in Browse.

Everything shown comes from `model.py` (over `podium.validate`: rules, reports, a
failure's text).
"""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from podium.app import widgets
from podium.app.feedback import PodiumError, empty_state, show_error
from podium.app.forms import queue_form
from podium.app.job_panel import Job, page_link, table_links, watch_job
from podium.app.safe_markdown import code_span, escape_markdown
from podium.app.table_choices import snapshot_names_of, snapshots_of
from podium.app.views.validate import model as validate_model
from podium.app.views.validate.model import settings_seed

TABLE, SNAPSHOT, RULES = "validate.table", "validate.snapshot", "validate.rules"
SCHEMA, XSD, PATTERN, TOOLS = (
    "validate.schema",
    "validate.xsd",
    "validate.pattern",
    "validate.tools",
)
JOB, JOB_ID, FOR_TABLE = "validate.job", "validate.job_id", "validate.for_table"
REPORT = JOB + ".report"  # the form's report-table field
KIND_FILTER, SAMPLE = "validate.kind_filter", "validate.sample"
LISTED = 1000  # failures listed in the table; the report table holds them all


def _file_or_text(label: str, key: str, types: list[str], help_text: str) -> str:
    """Text of an uploaded file, else of the paste box under it."""
    uploaded = st.file_uploader(f"{label} file", type=types, key=key + ".file")
    pasted = st.text_area(f"…or paste the {label}", key=key, height=120, help=help_text)
    return uploaded.getvalue().decode("utf-8") if uploaded is not None else pasted


def _reset_for(table: str) -> None:
    """A different table: its rules, snapshot, report and sample start fresh (they were
    chosen for the previous table and would show its failures or miss its schema)."""
    if st.session_state.get(FOR_TABLE) == table:
        return
    for key in (RULES, SNAPSHOT, KIND_FILTER, SAMPLE, REPORT, SCHEMA):
        st.session_state.pop(key, None)
    st.session_state[FOR_TABLE] = table


def _settings(table: str) -> None:
    props = validate_model.table_properties(table)
    linked = st.query_params.get("snapshot")
    if linked and linked.isdigit() and st.session_state.get(SNAPSHOT + ".linked") != linked:
        st.session_state[SNAPSHOT] = st.session_state[SNAPSHOT + ".linked"] = int(linked)
    snapshot = widgets.snapshot_picker(
        snapshots_of(table), key=SNAPSHOT, names=snapshot_names_of(table)
    )
    # What the report on screen used (after a reload too), else the defaults.
    custom = (st.session_state.get(REPORT) or "").strip() or None
    seed = settings_seed(table, snapshot, props, custom)
    if RULES not in st.session_state:
        st.session_state[RULES] = seed.rules
    rules = st.multiselect("Rules", list(validate_model.RULE_NAMES), key=RULES)
    schema_text = xsd_text = pattern = tools_text = ""
    stored = validate_model.stored_schema(props)
    if "json-schema" in rules:
        if stored is not None and SCHEMA not in st.session_state:
            st.session_state[SCHEMA] = stored.text  # the schema that runs, in plain view
        schema_text = _file_or_text(
            "JSON Schema",
            SCHEMA,
            ["json"],
            "Starts with the table's stored schema; edit it or paste another."
            if stored
            else "Required: this table stores no schema.",
        )
        if stored is not None and schema_text.strip() == stored.text.strip():
            st.caption(f"Checks against {escape_markdown(stored.name)}.")
    if "xsd" in rules:
        xsd_text = _file_or_text("XML Schema", XSD, ["xsd", "xml"], "The XSD to validate against.")
    if "regex" in rules:
        pattern = st.text_input("Pattern (the whole text must match)", key=PATTERN)
    if "tool-call" in rules:
        tools_text = _file_or_text(
            "tools", TOOLS, ["json"], 'OpenAI tools list; empty = each row\'s metadata "tools".'
        )

    def specs() -> list[str]:  # stores pasted files, so only when the job is queued
        return validate_model.build_specs(
            rules, schema_text=schema_text, xsd_text=xsd_text, pattern=pattern,
            tools_text=tools_text, stored=stored,
        )  # fmt: skip

    job_id = queue_form(
        "validate",
        JOB,
        advanced=("report", "workers", "batch_rows", "replicas", "launcher"),
        values={"report": seed.report, "extract": seed.extract},
        fixed={"table": {"name": table, "snapshot_id": snapshot}, "rules": specs},
    )
    if job_id is not None:
        st.session_state[JOB_ID] = job_id
    if st.session_state.get(JOB_ID):
        watch_job(st.session_state[JOB_ID], _next_steps)


def _next_steps(job: Job) -> None:
    links = table_links(job)
    for name, snapshot in links["inputs"][:1]:
        page_link(
            "browse", "Open the malformed rows in Browse", ":material/table_view:",
            table=name, snapshot=snapshot, malformed=1,
        )  # fmt: skip
        page_link(
            "generate", "Generate from these prompts", ":material/auto_awesome:",
            table=name, snapshot=snapshot,
        )  # fmt: skip


def _results(table: str) -> None:
    snapshot = st.session_state.get(SNAPSHOT)
    custom = (st.session_state.get(REPORT) or "").strip() or None  # the form's report field
    found = validate_model.latest_report(table, snapshot, custom)
    if found is None:
        empty_state("No validation report for this snapshot yet.", "Choose rules and queue a job.")
        return
    summary, failures = found
    cols = st.columns(4)
    cols[0].metric("Rows", f"{summary.get('rows', 0):,}")
    cols[1].metric("Turns checked", f"{summary.get('turns', 0):,}")
    cols[2].metric("Failing turns", f"{len(failures):,}")
    cols[3].metric("Malformed rows", f"{len({f['id'] for f in failures}):,}")
    checked = validate_model.rules_text(
        summary.get("rules", []), validate_model.table_properties(table)
    )
    roles = ", ".join(summary.get("roles", []))
    st.caption(
        f"Report table {code_span(summary.get('report'))} · snapshot {code_span(snapshot)} · "
        f"rules {escape_markdown(checked or '?')} · extract "
        f"{escape_markdown(summary.get('extract', 'whole'))} · roles {escape_markdown(roles)}"
    )
    if not failures:
        st.success("Every checked turn passed.")
        return
    kinds = ["all"] + [f"{c['rule']} · {c['kind']}" for c in validate_model.kind_counts(failures)]
    chosen = st.selectbox("Show", kinds, key=KIND_FILTER)
    shown = [f for f in failures if chosen == "all" or f"{f['rule']} · {f['kind']}" == chosen]
    labels = {i: f"{f['id']} · turn {f['turn']} · {f['kind']}" for i, f in enumerate(shown)}
    if st.session_state.get(SAMPLE) not in labels:
        st.session_state.pop(SAMPLE, None)  # the list changed under an old position
    index = st.selectbox(
        "Sample", list(labels), key=SAMPLE, format_func=lambda i: labels.get(i, str(i))
    )
    if index is not None and index < len(shown):
        _sample(table, snapshot, shown[index])
    # The chart and the listing after the sample: choosing one shows it above the fold.
    counts = pd.DataFrame(validate_model.kind_counts(failures))
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
    listed = pd.DataFrame(shown[:LISTED])[["id", "turn", "rule", "kind", "excerpt", "message"]]
    st.dataframe(listed, hide_index=True, width="stretch")


def _sample(table: str, snapshot: int | None, failure: dict[str, Any]) -> None:
    where, marked = validate_model.failure_in_text(table, snapshot, failure)
    st.markdown(
        f"**{escape_markdown(failure['id'])}** · turn {failure['turn']} · "
        f"{code_span(failure['rule'])} · {escape_markdown(where)}"
    )
    st.code(marked, language=None)
    widgets.browse_link(table, snapshot=snapshot, sample=failure["id"], label="Open in Browse")


st.title("Validate")
st.caption(
    "Check structured outputs in every row of a snapshot: JSON, JSON Schema, XML, XSD, "
    "Python, regex or tool calls. Each failing turn is pointed at its exact position."
)
settings, results = st.columns([1, 2], gap="large")
with settings:
    chosen_table = widgets.table_select(TABLE, linked=st.query_params.get("table"))
if chosen_table is None:
    widgets.no_tables_message()
    st.stop()
_reset_for(chosen_table)
try:
    with settings:
        _settings(chosen_table)
    with results:
        _results(chosen_table)
except PodiumError as exc:
    show_error(exc)

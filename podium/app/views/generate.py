"""Generate page: sample any registered checkpoint on a table or eval set, as a job.

Pick a checkpoint, a prompts table (or an eval set built on the Vibe-check page), the
sampling parameters and optionally a JSON Schema; run it here with a progress bar or
queue it for the worker; then open the samples in Browse. "Try a prompt" streams one
answer. Choices and figures come from `podium.app.generate_model`.
"""

from __future__ import annotations

import os

import streamlit as st

from generators.client import ChatRequest, endpoint_for, stream_chat
from podium.app import generate_model as gm
from podium.app import widgets
from podium.errors import PodiumError
from podium.jobs.cards import Card
from podium.jobs.execute import execute_job
from podium.jobs.launch import submit
from podium.jobs.queue import create_job, set_fields
from podium.jobs.reporter import JobReporter
from podium.store.catalog import load_table
from podium.store.snapshots import list_snapshots

P = "generate."


class _BarReporter(JobReporter):
    """The job's reporter, also moving this page's progress bar."""

    bar: st.delta_generator.DeltaGenerator | None = None

    def progress(self, done: int, total: int | None = None, message: str = "") -> None:
        super().progress(done, total, message)
        if self.bar is not None:
            value = min(done / total, 1.0) if total else 0.0
            self.bar.progress(value, text=f"{done:,} / {total or '?'} · {message}")


def _run_here(config: gm.GenerateConfig) -> None:
    job_id = create_job(Card("generate", config), status="running")
    set_fields(job_id, worker_pid=os.getpid(), pgid=os.getpgrp())
    _BarReporter.bar = st.progress(0.0, text="starting (a model server takes ~1 min to start)")
    job = execute_job(job_id, _BarReporter)
    if job["status"] != "succeeded":
        st.error(f"Job {job_id} {job['status']}: {(job['error'] or '').split(chr(10))[0]}")
        return
    st.session_state[P + "last"] = gm.run_summary(job)


def _last_run() -> None:
    last = st.session_state.get(P + "last")
    if not last:
        return
    cols = st.columns(3)
    cols[0].metric("Samples written", f"{last['samples']:,}")
    cols[1].metric("Completion tokens", f"{last['completion_tokens']:,}")
    cols[2].metric("Tokens/s", f"{last['tokens_per_s']:.1f}")
    st.markdown(
        f"Samples in `{last['table']}` at snapshot `{last['snapshot_id']}`"
        + (f" ({last['resumed_from']} prompts were already done)" if last["resumed_from"] else "")
        + (f" · {last['errors']} requests refused" if last["errors"] else "")
    )
    widgets.browse_link(
        last["table"], snapshot=last["snapshot_id"], label="Open the samples in Browse"
    )


def _form(models: list[str], model_index: int) -> None:
    c1, c2 = st.columns(2)
    model = c1.selectbox("Checkpoint", models, index=model_index, key=P + "model")
    source = c2.radio("Prompts from", ["table", "eval set"], horizontal=True, key=P + "source")
    tables = gm.prompt_tables(eval_sets_only=source == "eval set")
    wanted = st.query_params.get("table")
    if wanted in tables and P + "table" not in st.session_state:
        st.session_state[P + "table"] = wanted
    table = widgets.table_picker(tables, key=P + "table", label="Prompts table")
    if table is None:
        st.info(
            "No eval sets yet: build one on the Vibe-check page."
            if source == "eval set"
            else "No tables yet: run `podium demo` or import one."
        )
        return
    snapshot = widgets.snapshot_picker(list_snapshots(load_table(table)), key=P + "snapshot")
    out = st.text_input(
        "Output table",
        value=gm.default_out_name(table, model),
        key=P + "out",
        help="Re-running into the same table resumes: finished prompts are skipped.",
    )
    c1, c2, c3, c4 = st.columns(4)
    n = c1.number_input("Samples per prompt", 1, 64, 1, key=P + "n")
    max_tokens = c2.number_input("Max tokens", 1, 8192, 256, key=P + "max_tokens")
    temperature = c3.number_input("Temperature", 0.0, 2.0, 0.7, 0.1, key=P + "temperature")
    top_p = c4.number_input("Top p", 0.01, 1.0, 1.0, 0.05, key=P + "top_p")
    with st.expander("More: limit, seed, prompt column, structured output"):
        c1, c2, c3 = st.columns(3)
        limit = c1.number_input("Only the first N prompts (0 = all)", 0, None, 0, key=P + "limit")
        seed = c2.number_input("Seed (-1 = none)", -1, None, -1, key=P + "seed")
        concurrency = c3.number_input("Concurrent requests", 1, 512, 16, key=P + "concurrency")
        prompt_column = st.text_input(
            "Plain-text prompt column (blank = messages)", key=P + "prompt_column"
        )
        uploaded = st.file_uploader("JSON Schema file", type=["json"], key=P + "schema_file")
        schema_text = st.text_area(
            "…or paste a JSON Schema (completions must match it)", key=P + "schema", height=120
        )
        regex = st.text_input("…or a regular expression", key=P + "regex")
    if uploaded is not None:
        schema_text = uploaded.getvalue().decode("utf-8")
    c1, c2, _ = st.columns([1, 2, 5])
    run = c1.button("Generate", type="primary", key=P + "run")
    queue = c2.button("Queue for the worker", key=P + "queue")
    if not (run or queue):
        return
    try:
        config = gm.build_config(
            table=table,
            snapshot_id=snapshot,
            out=out,
            model=model,
            schema_text=schema_text,
            regex=regex,
            prompt_column=prompt_column,
            n=int(n),
            max_tokens=int(max_tokens),
            temperature=float(temperature),
            top_p=float(top_p),
            limit=int(limit) or None,
            seed=None if seed < 0 else int(seed),
            concurrency=int(concurrency),
        )
        if queue:
            st.success(f"Queued job {submit(Card('generate', config))}; see the Logbook.")
        else:
            _run_here(config)
    except PodiumError as exc:
        st.error(str(exc))


def _try_prompt(model: str) -> None:
    with st.expander(f"Try a prompt on {model}"):
        prompt = st.text_area("Prompt", key=P + "try")
        if st.button("Ask", key=P + "ask") and prompt.strip():
            try:
                endpoint = endpoint_for(model)
                request = ChatRequest(
                    messages=[{"role": "user", "content": prompt}], max_tokens=256
                )
                with st.chat_message("assistant"):
                    st.write_stream(stream_chat(endpoint, request))
            except PodiumError as exc:
                st.error(str(exc))


st.title("Generate")
st.caption("Sample a checkpoint on every prompt of a table; the samples become a new table.")
models, model_index = gm.model_choices(st.query_params.get("model"))
if not models:
    st.info(
        "No models registered yet. Run `podium models bootstrap` to add the default base "
        "model (SmolLM2-135M-Instruct), or `podium models add PATH`."
    )
    st.stop()
_form(models, model_index)
_last_run()
_try_prompt(st.session_state.get(P + "model") or models[model_index])

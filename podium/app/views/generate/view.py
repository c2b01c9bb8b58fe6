"""Generate page: sample any registered checkpoint on a table or eval set, as a job.

Pick a checkpoint and a prompts table (or an eval set built on the Vibe-check page);
the form holds every setting of the `generate` kind (sampling up front, the rest under
Advanced) and queues the job for the worker. The output name follows the chosen table
and checkpoint until edited. When the job succeeds, links open the samples in Browse and
train on them. "Try a prompt" streams one answer. Choices come from
`podium.app.views.generate.model`; `?table=`, `?snapshot=` and `?model=` preselect.
"""

from __future__ import annotations

import time

import streamlit as st

from podium.app import widgets
from podium.app.base_model_panel import offer_base_model
from podium.app.feedback import PodiumError, empty_state, show_error
from podium.app.forms import field_label, queue_form
from podium.app.job_panel import Job, page_link, watch_job
from podium.app.model_choices import model_choices
from podium.app.recent import saw
from podium.app.roles import current_user
from podium.app.safe_markdown import code_span, escape_markdown
from podium.app.table_choices import CONVERSATIONS, snapshots_of
from podium.app.views.generate import model as gm

P = "generate."
BASIC = ("out", "temperature")


def _next_steps(job: Job) -> None:
    summary = gm.run_summary(job)
    cols = st.columns(3)
    cols[0].metric("Samples written", f"{summary['samples']:,}")
    cols[1].metric("Completion tokens", f"{summary['completion_tokens']:,}")
    cols[2].metric("Tokens/s", f"{summary['tokens_per_s']:.1f}")
    if summary["table"]:
        st.markdown(
            f"Samples in {code_span(summary['table'])} at snapshot "
            f"{code_span(summary['snapshot_id'])}"
            + (f" ({summary['resumed_from']:,} prompts were already done)"
               if summary["resumed_from"] else "")
            + (f" · {summary['errors']:,} requests refused" if summary["errors"] else "")
        )  # fmt: skip
        widgets.browse_link(
            summary["table"], snapshot=summary["snapshot_id"], label="Open the samples in Browse"
        )
        page_link("train", "Train on these samples", ":material/model_training:",
                  table=summary["table"])  # fmt: skip


def _form(models: list[str], model_index: int) -> None:
    c1, c2 = st.columns(2)
    model = c1.selectbox("Checkpoint", models, index=model_index, key=P + "model")
    saw("model", model)  # what Compare starts a new comparison with
    source = c2.radio("Prompts from", ["table", "eval set"], horizontal=True, key=P + "source")
    if source == "eval set":
        tables = gm.prompt_tables(eval_sets_only=True)
        table = widgets.table_picker(tables, key=P + "evalset", label="Eval set")
    else:
        table = widgets.table_select(
            P + "table", label="Prompts table", groups=CONVERSATIONS,
            linked=st.query_params.get("table"),
        )  # fmt: skip
    if table is None:
        if source == "eval set":
            empty_state("No eval sets yet.", "Build one on the Vibe-check page.")
        else:
            empty_state("No tables yet.", "Run `podium demo` or import one.")
        return
    snapshots = snapshots_of(table)
    snapshot = widgets.snapshot_picker(snapshots, key=P + "snapshot")
    # Size settings sit outside the form so the estimate follows them as they change.
    fields = gm.CONFIG_FIELDS
    c1, c2, c3 = st.columns(3)
    limit = c1.number_input(
        "Limit (prompts; 0 = all)", 0, None, gm.DEFAULT_LIMIT, key=P + "limit",
        help=f"`limit`: {fields['limit'].description}",
    )  # fmt: skip
    max_tokens = c2.number_input(
        field_label("max_tokens"), 1, 8192, gm.DEFAULT_MAX_TOKENS, key=P + "max_tokens",
        help=f"`max_tokens`: {fields['max_tokens'].description}",
    )  # fmt: skip
    n = c3.number_input("Samples per prompt", 1, 64, 1, key=P + "n", help="`n`")
    total = next((s.total_rows for s in snapshots if s.snapshot_id == snapshot), 0)
    rate = gm.recent_rate(model)
    st.info(gm.estimate(total, int(limit) or None, int(max_tokens), int(n), rate).text)
    sizes = {"limit": int(limit) or None, "max_tokens": int(max_tokens), "n": int(n)}
    job_id = queue_form(
        "generate",
        P + "job",
        advanced=[f for f in fields if f not in BASIC and f not in sizes],
        values={"out": gm.unique_out_name(table, model)},
        fixed={"table": {"name": table, "snapshot_id": snapshot}, "model": model, **sizes},
    )
    if job_id is not None:
        st.session_state[P + "job_id"] = job_id
    elif not st.session_state.get(P + "job_id"):  # a return to the page: show the last one
        mine = gm.recent_generation(current_user(), time.time())
        st.session_state[P + "job_id"] = mine
    if st.session_state.get(P + "job_id"):
        watch_job(st.session_state[P + "job_id"], _next_steps)


def _try_prompt(model: str) -> None:
    with st.expander(f"Try a prompt on {escape_markdown(model)}"):
        prompt = st.text_area("Prompt", key=P + "try")
        if st.button("Ask", key=P + "ask") and prompt.strip():
            try:
                answer = gm.answer_stream(model, prompt)  # the role is checked before the model
                with st.chat_message("assistant"):
                    widgets.write_answer(answer)
            except PodiumError as exc:
                show_error(exc)


st.title("Generate")
st.caption("Sample a checkpoint on every prompt of a table; the samples become a new table.")
models, model_index = model_choices(st.query_params.get("model"))
if not models:
    offer_base_model("generate.bootstrap", "No models registered yet.")
    st.stop()
try:
    _form(models, model_index)
except PodiumError as exc:
    show_error(exc)
_try_prompt(st.session_state.get(P + "model") or models[model_index])

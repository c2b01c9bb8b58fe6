"""Vibe-check page: submit a prompt a model does badly on, see its answer streamed,
browse submissions, and turn a selection into an eval set for the Generate page.

Logic: `model.py` (storage and selection are `generators.vibes`'s).
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from podium.app import widgets
from podium.app.base_model_panel import offer_base_model
from podium.app.feedback import PodiumError, empty_state, show_error
from podium.app.model_choices import model_choices
from podium.app.pages import page_file
from podium.app.roles import current_user
from podium.app.safe_markdown import code_span, escape_markdown, neutralize_images
from podium.app.views.vibes import model as vm

P = "vibes."
GENERATE_PAGE = page_file("generate")


def submission_key(session: str, *fields: str) -> str:
    return hashlib.sha256("\x00".join((session, *fields)).encode()).hexdigest()


CLEARED = P + "stored"  # the submission just stored: the form starts empty for the next


@dataclass(frozen=True)
class Pending:
    """A submission sent with the form: stored once its answer is in (or at once)."""

    prompt: str
    ideal: str
    tags: str
    model: str
    ask: bool
    key: str  # the idempotency key: a double click stores it once
    submitter: vm.User
    slot: DeltaGenerator  # under the form, where its answer streams


def _submit(models: list[str], model_index: int) -> Pending | None:
    stored = st.session_state.get(CLEARED)
    if stored and st.session_state.pop(P + "clear", False):
        for key in (P + "prompt", P + "ideal", P + "tags"):
            st.session_state[key] = ""
        st.success(f"Stored submission `{stored}` in `{vm.VIBES_TABLE}`. Write the next one.")
        shown = st.session_state.pop(P + "answer", None)
        if shown:
            with st.chat_message("assistant"):
                st.caption(escape_markdown(shown[0]))
                st.markdown(neutralize_images(shown[1]))  # a model answer: no image loads
    with st.form(P + "form", clear_on_submit=False):
        prompt = st.text_area("Prompt the model gets wrong", key=P + "prompt")
        ideal = st.text_area("What a good answer looks like", key=P + "ideal")
        c1, c2, c3 = st.columns(3)
        tags = c1.text_input("Tags (comma-separated)", key=P + "tags", placeholder="json, math")
        model = c2.selectbox("Checkpoint", models, index=model_index, key=P + "model")
        submitter = current_user()  # the logged-in user (the OS user in local mode)
        c3.text_input("Submitted by", value=submitter.label, disabled=True)
        ask = st.checkbox(
            "Ask the checkpoint now (answer streamed and stored)", True, key=P + "ask"
        )
        sent = st.form_submit_button("Submit", type="primary")
    if not sent:
        return None
    if not prompt.strip():
        if stored:  # the second click of a double click, on the emptied form
            st.info(f"Stored submission `{stored}`; write the next prompt above.")
            return None
        show_error("Write the prompt first: the vibe-check prompt is empty.")
        return None
    # One key per submission: a second click on Submit carries the same text, the same
    # key, and stores nothing more (nor asks the model again).
    key = submission_key(st.session_state.setdefault(P + "session", uuid.uuid4().hex),
                         prompt, ideal, tags, model, submitter.name)  # fmt: skip
    if vm.vibe_stored(vm.vibe_id_for(key)):
        st.info(f"Already stored as `{vm.vibe_id_for(key)}`.")
        return None
    try:
        vm.may_submit(submitter)  # before the model is asked (or its server started)
    except PodiumError as exc:
        show_error(exc)
        return None
    # The answer streams here, after the list below is drawn with this submission
    # counted as on its way (asking first kept "0 submissions" for a minute).
    return Pending(prompt, ideal, tags, model, ask, key, submitter, st.container())


def _answer_and_store(pending: Pending) -> None:
    answer = ""
    try:
        if pending.ask:
            with pending.slot, st.chat_message("assistant"):
                st.caption(escape_markdown(pending.model))
                stream = vm.answer_stream(pending.model, pending.prompt, user=pending.submitter)
                answer = widgets.write_answer(stream)
        tags = vm.clean_tags(pending.tags)
        vid = vm.submit_vibe(pending.prompt, pending.ideal, tags, pending.model, answer,
                             pending.submitter, idempotency_key=pending.key)  # fmt: skip
    except PodiumError as exc:
        with pending.slot:
            show_error(exc)
        return
    # The form starts empty for the next prompt; the answer stays shown above it.
    st.session_state[CLEARED], st.session_state[P + "clear"] = vid, True
    st.session_state[P + "answer"] = (pending.model, answer) if pending.ask else None
    st.rerun()


def _submissions(pending: Pending | None) -> None:
    st.subheader("Submissions")
    c1, c2 = st.columns(2)
    tags = c1.multiselect("Tags", vm.all_tags(), key=P + "filter_tags")
    search = c2.text_input("Search", key=P + "search")
    rows = vm.list_vibes(tags=tags, search=search or None)
    waiting_on = None if pending is None else (pending.model if pending.ask else "")
    st.caption(escape_markdown(vm.submissions_caption(len(rows), waiting_on)))
    if not rows:
        if pending is None:
            empty_state("No submissions match.", "Submit one above, or clear the filters.")
        return
    frame = pd.DataFrame(rows)[
        ["prompt", "ideal", "answer", "tags", "checkpoint", "submitter", "created_at", "id"]
    ]
    picked = st.dataframe(
        frame,
        key=P + "table",
        on_select="rerun",
        selection_mode="multi-row",
        hide_index=True,
        use_container_width=True,
    )
    selected = [rows[i]["id"] for i in picked.selection.rows] if picked else []
    _eval_set(tags, selected)


def _eval_set(tags: list[str], selected: list[str]) -> None:
    st.subheader("Eval set")
    if selected:
        st.caption(f"From the {len(selected)} selected submissions.")
    elif tags:
        st.caption(f"From the submissions tagged {escape_markdown(', '.join(tags))}.")
    else:
        st.caption("Filter by tag or select rows above to choose its prompts.")
    # The name follows the tags chosen until the reviewer types one of their own (a keyed
    # box kept its first value: the name ignored the tag picked after it).
    default, proposed = vm.eval_set_name(tags), st.session_state.get(P + "evalset_default")
    if st.session_state.get(P + "evalset_out") in (None, proposed):
        st.session_state[P + "evalset_out"] = default
    st.session_state[P + "evalset_default"] = default
    out = st.text_input("Eval-set table", key=P + "evalset_out")
    if st.button("Build eval set", key=P + "build", disabled=not (tags or selected)):
        try:
            count = vm.build_eval_set(out, tags=None if selected else tags, ids=selected or None)
        except PodiumError as exc:
            show_error(exc)
            return
        st.success(f"Wrote {vm.count_text(count, 'prompt')} to {code_span(out)}.")
        widgets.browse_link(out, label=f"Open {escape_markdown(out)} in Browse")
        st.page_link(
            GENERATE_PAGE,
            label=f"Generate on {escape_markdown(out)}",
            icon=":material/auto_awesome:",
            query_params={"table": out},
        )


st.title("Vibe check")
st.caption(
    "Found a prompt where a model does badly? Save it with what good looks like; "
    "submissions become eval sets any checkpoint can be run on."
)
models, model_index = model_choices(st.query_params.get("model"))
if not models:
    offer_base_model("vibes.bootstrap", "No models registered yet.")
    st.stop()
pending = _submit(models, model_index)
_submissions(pending)
if pending is not None:
    _answer_and_store(pending)

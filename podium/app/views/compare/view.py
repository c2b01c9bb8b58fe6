"""Compare page: checkpoints side by side, blind votes, ratings and training trends.

Pick a comparison (`?name=NS.TABLE` opens one; `?models=A,B` from the Train page
pre-fills a new one). Side by side shows 2-4 answers per prompt with the words that
differ highlighted and each answer's checks; Blind vote shows two answers as A and B
and reveals their checkpoints only after the vote. Keys: j / → next, k / ← previous,
1 A better, 2 B better, 3 tie, 4 both bad. Logic: `podium.app.views.compare.model`.
"""

from __future__ import annotations

import streamlit as st

from podium.app import widgets
from podium.app.base_model_panel import offer_base_model
from podium.app.feedback import PodiumError, empty_state, show_error
from podium.app.forms import queue_form
from podium.app.job_panel import Job, table_links, watch_job
from podium.app.recent import last_seen
from podium.app.roles import current_user, missing_role
from podium.app.safe_markdown import code_span, escape_markdown
from podium.app.shortcuts import keyboard_shortcuts
from podium.app.views.compare import model as cm
from podium.app.views.compare.judges import judges_section
from podium.app.widgets import render_conversation

MODES = ("Side by side", "Blind vote", "Ratings", "Judges", "New comparison")
NEW_BASIC = ("out", "max_tokens", "limit", "checks")
# j / → next, k / ← previous, 1-4 the verdicts (see podium.app.shortcuts).
SHORTCUTS = {
    "j": "Next",
    "ArrowRight": "Next",
    "k": "Previous",
    "ArrowLeft": "Previous",
    "1": "A is better",
    "2": "B is better",
    "3": "Tie",
    "4": "Both bad",
}

st.title("Compare")
st.caption("Checkpoints side by side on the same prompts; blind votes become ratings.")
keyboard_shortcuts(SHORTCUTS)


def _pager(count: int, key: str) -> int:
    pos = cm.clamp(st.session_state.get(key, 0), count)
    left, mid, right = st.columns([1, 3, 1])
    if left.button("Previous", key=f"{key}.prev", disabled=pos == 0):
        pos -= 1
    if right.button("Next", key=f"{key}.next", disabled=pos >= count - 1):
        pos += 1
    st.session_state[key] = pos
    mid.caption(f"prompt {pos + 1} of {count}")
    return pos


def _side_by_side(comparison: cm.Comparison) -> None:
    c1, c2, c3 = st.columns([2, 1, 1])
    shown = c1.multiselect(
        "Columns",
        comparison.models,
        default=comparison.models[: cm.MAX_COLUMNS],
        max_selections=cm.MAX_COLUMNS,
        key="compare.columns",
    )
    only_differ = c2.checkbox("Only where they differ", key="compare.differ")
    fails = c3.selectbox(
        "Only where this fails a check", [cm.ANY_CHECK, *comparison.models], key="compare.fails"
    )
    items = cm.filter_items(comparison, only_differ, fails)
    if not items or len(shown) < 1:
        st.info("No prompt matches these filters.")
        return
    item = items[_pager(len(items), "compare.pos")]
    st.markdown(f"**Prompt** {code_span(item.prompt_id)}")
    render_conversation(item.prompt)
    for col, (answer, html) in zip(st.columns(len(shown)), cm.columns(item, shown), strict=False):
        col.markdown(f"#### {escape_markdown(answer.model)}")
        col.html(html)
        col.caption(cm.badges(answer))


def _blind(comparison: cm.Comparison) -> None:
    user = current_user()  # the logged-in user (the OS user in local mode)
    locked = missing_role(user, "vote", "voting", "comparisons")
    if locked:
        st.info(locked)
        return
    voter = user.name
    votes = cm.voted_prompts(comparison.name, voter)
    todo_only = st.checkbox("Only prompts I have not voted on", key="compare.todo")
    items = cm.unvoted(comparison.items, votes) if todo_only else comparison.items
    st.caption(f"{len(votes)} of {len(comparison.items)} prompts voted by {escape_markdown(voter)}")
    if not items:
        st.success("You have voted on every prompt. See Ratings.")
        return
    item = items[_pager(len(items), "compare.blind_pos")]
    view = cm.blind_view(comparison, item, voter, votes)
    render_conversation(item.prompt)
    left, right = st.columns(2)
    sides = ((left, "A", view.a, view.html_a), (right, "B", view.b, view.html_b))
    for col, side, answer, html in sides:
        col.markdown(
            f"#### {side}" + (f" · {escape_markdown(answer.model)}" if view.revealed else "")
        )
        col.html(html)
        col.caption(cm.badges(answer))
    if view.revealed:
        st.success(cm.reveal_text(view))
        if (
            view.vote
            and view.vote["verdict"] == "both_bad"
            and st.button("Send to vibe checks", key="compare.vibes")
        ):
            vid = cm.send_to_vibes(comparison, item.prompt_id, user, view.vote.get("note") or "")
            st.toast(f"Stored as vibe check {code_span(vid)}")
        return
    note = st.text_input("Note (optional)", key=f"compare.note.{item.prompt_id}")
    buttons = st.columns(4)
    for col, (verdict, label) in zip(buttons, cm.VERDICT_LABELS.items(), strict=True):
        if col.button(label, key=f"compare.vote.{verdict}"):
            cm.cast_vote(comparison, view.pair, verdict, current_user(), note)
            st.rerun()


def _ratings(comparison: cm.Comparison) -> None:
    judges = cm.mixable_judges(comparison)
    judge = None
    if judges and st.toggle("Add a judge's verdicts", key="compare.ratings.mix"):
        judge = st.selectbox("Judge", judges, key="compare.ratings.judge")
    report = cm.ratings(comparison, with_judge=judge)
    st.markdown(f"**{cm.rated_by_text(report)}** · " + escape_markdown(cm.better_text(report)))
    for line in cm.ratings_lines(report):
        st.markdown(line)
    if not report["votes"] + report["judge_votes"]:
        empty_state("No votes yet.", "Vote under Blind vote; ratings appear with the first vote.")
    else:
        st.altair_chart(cm.ratings_chart(report), width="stretch")
    st.markdown("**Win rate** (row against column, ties count half)")
    st.dataframe(cm.win_frame(report), width="stretch")
    st.markdown("**Automatic checks passed**")
    st.dataframe(cm.pass_frame(report), width="stretch")
    trend = cm.trend_frame(comparison)
    if len(trend) > 1:
        st.markdown("**Trend over the training run** (against the base, step 0)")
        st.altair_chart(cm.trend_chart(trend), width="stretch")


def _new(preset: list[str]) -> None:
    choices = cm.model_choices()
    if not choices:
        offer_base_model("compare.bootstrap", "No models registered yet.")
        return
    if preset and st.session_state.get("compare.new.linked") != preset:
        st.session_state["compare.new.models"] = [m for m in preset if m in choices]
        st.session_state["compare.new.linked"] = preset
    elif "compare.new.models" not in st.session_state:  # what was last looked at
        st.session_state["compare.new.models"] = cm.default_models(last=last_seen("model"))
    models = st.multiselect(
        "Checkpoints",
        list(choices),
        format_func=lambda name: choices.get(name, name),
        key="compare.new.models",
    )
    table = widgets.table_select(
        "compare.new.table",
        label="Prompt set",
        linked=st.query_params.get("table") or cm.default_prompt_table(last=last_seen("table")),
    )
    if table is None:
        empty_state("No prompt tables yet.", "Run `podium demo` or import one.")
        return
    job_id = queue_form(
        "compare",
        "compare.new.job",
        advanced=[f for f in cm.CompareConfig.model_fields if f not in NEW_BASIC],
        values=cm.new_form_values(models, table),
        fixed={"models": models, "table": {"name": table}},
    )
    if job_id is not None:
        st.session_state["compare.new.job_id"] = job_id
    if st.session_state.get("compare.new.job_id"):
        watch_job(st.session_state["compare.new.job_id"], _open_comparison)


def _open_comparison(job: Job) -> None:
    """ "Open NAME" for the comparison the job wrote: the page itself switches to it (a
    link to this same page with ?name= left the mode and picker as they were: nothing
    happened)."""
    for name, _ in table_links(job)["outputs"]:
        if name in cm.list_comparisons() and st.button(
            f"Open {escape_markdown(name)}", icon=":material/compare:", key=f"compare.open.{name}"
        ):
            st.session_state[OPEN] = name
            st.rerun()  # the whole page: the mode radio is drawn above this fragment


OPEN = "compare.open"  # a comparison to show, set by "Open ..." for the next run
names = cm.list_comparisons()
wanted = st.query_params.get("name")
opening = st.session_state.pop(OPEN, None)
if opening in names:  # before the widgets are drawn, so their state may be set
    st.query_params.pop("models", None)  # the new comparison's, now done
    st.query_params["name"] = wanted = opening
    st.session_state["compare.mode"] = MODES[0]
    st.session_state.pop("compare.name", None)  # the picker takes ?name= as it starts
preset = [m for m in (st.query_params.get("models") or "").split(",") if m]
mode = st.radio(
    "Mode",
    MODES,
    horizontal=True,
    key="compare.mode",
    index=MODES.index("New comparison") if preset or not names else 0,
    label_visibility="collapsed",
)
if mode == "New comparison":
    _new(preset)
elif not names:
    empty_state(
        "No comparisons yet.",
        "Start one under New comparison, or run "
        "`podium compare --models A,B --table NS.PROMPTS --out NS.NAME`.",
    )
else:
    index = names.index(wanted) if wanted in names else 0
    name = st.selectbox("Comparison", names, index=index, key="compare.name")
    try:
        comparison = cm.load_comparison(name)
    except PodiumError as exc:
        show_error(exc)
        st.stop()
    # Blind mode must not name the checkpoints before a vote, not even in the header.
    who = "checkpoints hidden" if mode == "Blind vote" else ", ".join(comparison.models)
    st.caption(
        escape_markdown(
            f"{who} on {comparison.input_ref} · {len(comparison.items)} prompts · "
            f"sampling {cm.sampling_text(comparison.sampling)}"
        )
    )
    sections = {"Side by side": _side_by_side, "Blind vote": _blind, "Ratings": _ratings}
    {**sections, "Judges": judges_section}[mode](comparison)

"""The Compare page's Judges section: people beside each judge, the agreement table
and a form that starts a judge job. Layout only; figures: `judges_model`."""

from __future__ import annotations

import streamlit as st

from podium.app.feedback import PodiumError, empty_state
from podium.app.forms import queue_form
from podium.app.job_panel import watch_job
from podium.app.views.compare import judges_model as jm
from podium.app.views.compare import model as cm


def judges_section(comparison: cm.Comparison) -> None:
    try:
        report = jm.agreement(comparison)
    except PodiumError as exc:
        report = None
        empty_state("No votes or judge verdicts yet.", str(exc))
    if report is not None:
        st.markdown("**Agreement with the human majority** (each figure with its count)")
        for line in jm.agreement_lines(report):
            st.markdown(line)
        if report["judges"]:
            st.dataframe(jm.agreement_frame(report), width="stretch")
        st.markdown("**Ratings: people and each judge** (Bradley-Terry, 95% bootstrap)")
        st.dataframe(jm.ratings_side_by_side(report), width="stretch")
        if report["rubric"]:
            st.markdown("**Rubric scores** (mean 1-10 per model, beside the pairwise figures)")
            st.dataframe(jm.rubric_frame(report), width="stretch")
    st.markdown("**Judge this comparison** (every pair in both orders)")
    choices = jm.judge_choices(list(cm.model_choices()))
    judge = st.selectbox(
        "Judge",
        choices,
        format_func=jm.judge_label,
        key="compare.judge.name",
        help="A named judge (`podium judge add`; a rubric judge scores each answer) or a "
        "model judging pairs with the built-in prompt.",
    )
    job_id = queue_form(
        "judge",
        "compare.judge.job",
        advanced=[f for f in jm.JudgeConfig.model_fields if f not in (*jm.JUDGE_BASIC, "judge")],
        values=jm.judge_form_values(comparison),
        fixed={"comparison": comparison.name, "judge": judge},
    )
    if job_id is not None:
        st.session_state["compare.judge.job_id"] = job_id
    if st.session_state.get("compare.judge.job_id"):
        watch_job(st.session_state["compare.judge.job_id"])

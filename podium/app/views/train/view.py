"""Train page: launch an SFT or GRPO run on a table snapshot and watch it live.

Choose a base checkpoint, a table and snapshot (`?table=`, `?snapshot=` (an id, tag or
branch) and `?model=` preselect), SFT
or GRPO, a preset (it fills the form; every value stays editable) and, for GRPO,
weighted rewards and the rollout (sync: TRL in one process; async: vLLM replicas on Ray
and a separate learner, with its replicas, staleness bound, weight sync and rollouts
table); "Queue job" queues the run for the worker.
The run's loss, rewards, learning rate, grad norm and tokens/s update every few
seconds (an async run adds each replica's weight version, the staleness histogram and
every weight sync with its checksum verdict); when it finishes, buttons open the new
checkpoint in Generate (chat) and in Compare against its base. `?job=ID` opens a run
directly. Logic: `podium.app.views.train.model`.
"""

from __future__ import annotations

import streamlit as st

from podium.app import widgets
from podium.app.async_rl_panel import async_panel
from podium.app.base_model_panel import offer_base_model
from podium.app.charts import line_chart
from podium.app.feedback import PodiumError, empty_state, show_error
from podium.app.forms import queue_form
from podium.app.job_panel import ACTIVE, redrawn_while_active
from podium.app.pages import page_file
from podium.app.recent import saw
from podium.app.rows.snapshots import linked_snapshot_labels
from podium.app.safe_markdown import escape_markdown
from podium.app.views.train.model import (
    KINDS,
    PRESET_NAMES,
    REWARD_CHOICES,
    ROLLOUTS,
    RunView,
    base_choices,
    cancel_question,
    cancel_run,
    default_out,
    default_rewards,
    form_fields,
    only_valid_default,
    preset_defaults,
    rollout_fields,
    run_label,
    run_status,
    run_title,
    run_view,
    snapshot_choices,
    training_runs,
)

GENERATE_PAGE = page_file("generate")
COMPARE_PAGE = page_file("compare")
BASIC = ("out", "method", "max_steps", "learning_rate")
LAUNCHED = "train.launched"  # the run queued from this tab, watched under the form

st.title("Train")
st.caption(
    "SFT and GRPO with TRL on any table snapshot; the checkpoint comes back registered "
    "and usable by Generate and Compare at once."
)


def _rewards(preset: str) -> list[dict[str, object]]:
    defaults = default_rewards(preset)
    chosen = st.multiselect(
        "Rewards",
        list(dict.fromkeys([*defaults, *REWARD_CHOICES])),
        default=list(defaults),
        key=f"train.rewards.{preset}",  # another preset starts from its own defaults
        accept_new_options=True,
        help="validate:RULE (any validation rule), sandbox:output, sandbox:tests, "
        "exact_match, length:N — type your own, e.g. validate:regex:^\\{.*",
    )
    out = []
    cols = st.columns(max(len(chosen), 1))
    for col, rule in zip(cols, chosen, strict=False):
        weight = col.number_input(
            f"Weight of {rule}", value=defaults.get(rule, 1.0), step=0.1, key=f"train.w.{rule}"
        )
        out.append({"rule": rule, "weight": float(weight)})
    return out


def _choice(label: str, names: dict[str, str], key: str, help: str | None = None) -> str:
    """One of a few values, side by side, each under its display name."""
    return str(
        st.radio(label, list(names), horizontal=True, key=key, format_func=names.get, help=help)
    )


def _launch_form() -> None:
    bases = base_choices()
    if not bases:
        offer_base_model("train.bootstrap", "No base model registered yet.")
        return
    kind = _choice("Training", dict(zip(KINDS, ("SFT", "GRPO"), strict=True)), "train.kind")
    c1, c2 = st.columns(2)
    linked_model = st.query_params.get("model")
    if linked_model in bases and st.session_state.get("train.model.linked") != linked_model:
        st.session_state["train.model"] = st.session_state["train.model.linked"] = linked_model
    model = c1.selectbox("Base checkpoint", bases, key="train.model")
    saw("model", model)
    with c2:
        table = widgets.table_select(
            "train.table", label="Table", linked=st.query_params.get("table")
        )
    if table is None:
        empty_state("No tables yet.", "Run `podium demo` or `podium import FILE --out NS.NAME`.")
        return
    snaps = snapshot_choices(table)
    # A tag or branch from "Train on this" (`?snapshot=`) is offered first and chosen once.
    linked = st.query_params.get("snapshot") if table == st.query_params.get("table") else None
    snap_labels = linked_snapshot_labels(table, {sid: label for label, sid in snaps}, linked)
    snap_key = f"train.snapshot.{table}"
    if linked and st.session_state.get(snap_key + ".linked") != linked:
        st.session_state[snap_key] = next(iter(snap_labels))
        st.session_state[snap_key + ".linked"] = linked
    snapshot = c2.selectbox(
        "Snapshot",
        list(snap_labels),
        format_func=lambda sid: snap_labels.get(sid, str(sid)),
        key=snap_key,
    )
    preset = c1.selectbox(
        "Preset",
        PRESET_NAMES,
        key="train.preset",
        help="cpu-smoke: seconds; cpu-small: minutes on 2 cores; gpu: a real run. "
        "It fills the settings below; every value stays editable.",
    )
    fixed: dict[str, object] = {
        "model": model,
        "table": {"name": table, "snapshot_id": snapshot},
        "preset": preset,
    }
    rollout = "sync"
    if kind == "grpo":
        fixed["rewards"] = _rewards(preset)
        rollout = _choice(
            "Rollout",
            dict(zip(ROLLOUTS, ("sync (TRL, one process)", "async (Ray)"), strict=True)),
            "train.rollout",
            help="sync: TRL's GRPO trainer generates and learns in one process. async: vLLM "
            "replicas on Ray generate while a separate learner trains; samples may be up to "
            "`max_staleness` policy versions old, weights reach the replicas by `weight_sync`, "
            "and every sample lands in the `rollouts` table.",
        )
    shown, hidden = rollout_fields(kind, rollout)
    fixed.update(hidden)
    model_fields = form_fields(kind)
    basic = (*BASIC, "only_valid", *shown)
    only_valid, only_valid_note = only_valid_default(table, snapshot)
    st.caption(escape_markdown(only_valid_note))
    job_id = queue_form(
        kind,
        f"train.{kind}",
        advanced=[f for f in model_fields if f not in basic and f not in fixed],
        values={
            "out": default_out(model, table, kind),
            **preset_defaults(kind, preset),
            "only_valid": only_valid,
        },
        fixed=fixed,
    )
    if job_id is not None:
        st.query_params["job"] = job_id
        st.session_state[LAUNCHED] = job_id
    launched = st.session_state.get(LAUNCHED)
    if launched:
        # The run just queued, live where it was queued (the Runs tab shows it too).
        st.markdown(f"**{escape_markdown(run_title(launched))}**")
        _live(launched, "train.launch")


def _watch(job_id: str, key: str) -> RunView:
    """Draw the run (widget keys start with `key`: the Launch and Runs tabs may both
    show it)."""
    view = run_view(job_id)
    st.progress(view.progress or 0.0, text=escape_markdown(f"{view.status} · {view.message}"))
    if view.status in ("queued", "running"):
        if st.button("Cancel run", key=f"{key}.cancel"):
            st.session_state[f"{key}.cancel.ask"] = True
        if widgets.ask_first(f"{key}.cancel.ask", cancel_question(view), "Yes, cancel the run"):
            cancel_run(job_id)
            st.rerun()
    if view.error:
        show_error(view.error)
    for warning in view.warnings:  # shown as the run goes, not only in the Logbook
        st.warning(escape_markdown(warning), icon=":material/warning:")
    if not view.groups:
        st.caption("No metrics yet.")
    for left, right in zip(view.groups[::2], view.groups[1::2] + [None], strict=False):
        cols = st.columns(2)
        for col, group in zip(cols, (left, right), strict=False):
            if group is not None:
                col.markdown(f"**{escape_markdown(group[0])}**")
                col.altair_chart(line_chart(group[1]), width="stretch")
    if view.async_rl is not None:
        async_panel(view.async_rl, reward=False)  # the reward is charted above
    if view.samples:
        st.markdown("**Sample completions**")
        for s in view.samples[-4:]:
            scores = ", ".join(f"{k[7:]}={v:g}" for k, v in s.items() if k.startswith("reward/"))
            prompt = escape_markdown(s.get("prompt", ""))
            st.markdown(f"step {s['step']} · {escape_markdown(scores)}\n\n> {prompt}")
            st.code(str(s.get("completion", "")), language=None)
    if view.checkpoint:
        saw("model", view.checkpoint)  # Compare starts a new comparison with it
        st.success(
            f"Checkpoint **{escape_markdown(view.checkpoint)}** registered "
            f"(from {escape_markdown(view.base)})."
        )
        c1, c2 = st.columns(2)
        if c1.button(f"Chat with {escape_markdown(view.checkpoint)}", key=f"{key}.chat"):
            st.switch_page(GENERATE_PAGE, query_params={"model": view.checkpoint})
        if view.base and c2.button(
            f"Compare with {escape_markdown(view.base)}", key=f"{key}.compare"
        ):
            models = f"{view.base},{view.checkpoint}"
            query = {"models": models, **({"table": view.table} if view.table else {})}
            st.switch_page(COMPARE_PAGE, query_params=query)
    return view


def _live(job_id: str, key: str) -> None:
    """The run, redrawn every two seconds while it is queued or running; when its status
    changes the whole page reruns, so every label names the status it has now."""

    def draw() -> None:
        try:
            _watch(job_id, key)
        except PodiumError as exc:
            show_error(exc)

    redrawn_while_active(lambda: run_status(job_id), draw, ACTIVE.__contains__)


def _runs() -> None:
    runs = training_runs()
    ids = [j["id"] for j in runs]
    wanted = st.query_params.get("job")
    if wanted and wanted not in ids:
        ids.insert(0, wanted)
    if not ids:
        empty_state("No training runs yet.", "Queue one under Launch.")
        return
    # A run named by the URL (or just queued) is chosen once; otherwise the newest.
    if wanted and st.session_state.get("train.run.linked") != wanted:
        st.session_state["train.run"] = st.session_state["train.run.linked"] = wanted
    if st.session_state.get("train.run") not in ids:
        st.session_state["train.run"] = ids[0]
    labels = {j["id"]: run_label(j) for j in runs}
    job_id = st.selectbox("Run", ids, format_func=lambda i: labels.get(i, i), key="train.run")
    _live(job_id, "train")


launch_tab, runs_tab = st.tabs(["Launch", "Runs"])
with launch_tab:
    _launch_form()
with runs_tab:
    _runs()

"""Train page: launch an SFT or GRPO run on a table snapshot and watch it live.

Choose a base checkpoint, a table and snapshot, SFT or GRPO, a preset (every value
stays editable) and, for GRPO, weighted rewards; Launch queues the run for the worker.
The run's loss, rewards, learning rate, grad norm and tokens/s update every few
seconds; when it finishes, buttons open the new checkpoint in Generate (chat) and in
Compare against its base. `?job=ID` opens a run directly. Logic: `podium.app.train_model`.
"""

from __future__ import annotations

import streamlit as st

from podium.app.train_model import (
    KINDS,
    REWARD_CHOICES,
    base_choices,
    form_values,
    launch,
    run_label,
    run_view,
    snapshot_choices,
    table_choices,
    training_runs,
)
from podium.errors import PodiumError
from trainers.presets import PRESET_NAMES, preset_defaults

GENERATE_PAGE = "views/generate.py"
COMPARE_PAGE = "views/compare.py"

st.title("Train")
st.caption(
    "SFT and GRPO with TRL on any table snapshot; the checkpoint comes back registered "
    "and usable by Generate and Compare at once."
)


def _settings(kind: str, preset: str) -> dict[str, object]:
    """The editable values, seeded from the preset (keys change with it, so it reseeds)."""
    d = preset_defaults(kind, preset)
    tag = f"{kind}.{preset}"
    c1, c2, c3 = st.columns(3)
    methods = ["full", "lora"]
    method = c1.selectbox(
        "Method", methods, index=methods.index(str(d["method"])), key=f"train.method.{tag}"
    )
    steps = c2.number_input(
        "Steps", min_value=1, value=int(d["max_steps"]), key=f"train.steps.{tag}"
    )
    lr = c3.number_input(
        "Learning rate",
        min_value=0.0,
        value=float(d["learning_rate"]),
        format="%.2e",
        key=f"train.lr.{tag}",
    )
    batch = c1.number_input(
        "Batch size", min_value=1, value=int(d["batch_size"]), key=f"train.batch.{tag}"
    )
    save_every = c2.number_input(
        "Save every N steps (0 = end only)",
        min_value=0,
        value=int(d["save_every"]),
        key=f"train.save.{tag}",
    )
    seed = c3.number_input("Seed", value=0, key=f"train.seed.{tag}")
    values: dict[str, object] = {
        "method": method,
        "max_steps": int(steps),
        "learning_rate": float(lr),
        "batch_size": int(batch),
        "save_every": int(save_every),
        "seed": int(seed),
    }
    if kind == "grpo":
        values["num_generations"] = int(
            c1.number_input(
                "Generations per prompt",
                min_value=2,
                value=int(d["num_generations"]),
                key=f"train.gens.{tag}",
            )
        )
    return values


def _rewards() -> list[dict[str, object]]:
    chosen = st.multiselect(
        "Rewards",
        REWARD_CHOICES,
        default=["exact_match"],
        key="train.rewards",
        accept_new_options=True,
        help="validate:RULE (any validation rule), sandbox:output, sandbox:tests, "
        "exact_match, length:N — type your own, e.g. validate:regex:^\\{.*",
    )
    out = []
    cols = st.columns(max(len(chosen), 1))
    for col, rule in zip(cols, chosen, strict=False):
        weight = col.number_input(f"Weight of {rule}", value=1.0, step=0.1, key=f"train.w.{rule}")
        out.append({"rule": rule, "weight": float(weight)})
    return out


def _launch_form() -> None:
    bases, tables = base_choices(), table_choices()
    if not bases:
        st.warning("No base model registered yet: run `podium models bootstrap`.")
        return
    if not tables:
        st.warning("No tables yet: run `podium demo` or `podium import FILE --table NS.NAME`.")
        return
    kind = st.radio(
        "Training",
        KINDS,
        horizontal=True,
        key="train.kind",
        format_func=lambda k: {"sft": "SFT", "grpo": "GRPO"}[k],
    )
    c1, c2 = st.columns(2)
    model = c1.selectbox("Base checkpoint", bases, key="train.model")
    table = c2.selectbox("Table", tables, key="train.table")
    snaps = snapshot_choices(table) if table else []
    snap_labels = {sid: label for label, sid in snaps}
    snapshot = c2.selectbox(
        "Snapshot",
        list(snap_labels),
        format_func=lambda sid: snap_labels.get(sid, str(sid)),
        key=f"train.snapshot.{table}",
    )
    preset = c1.selectbox(
        "Preset",
        PRESET_NAMES,
        key="train.preset",
        help="cpu-smoke: seconds; cpu-small: minutes on 2 cores; gpu: a real run",
    )
    with st.expander("Settings", expanded=False):
        overrides = _settings(kind, preset)
    rewards = _rewards() if kind == "grpo" else None
    out = st.text_input("New checkpoint name", key="train.out", placeholder="json-sft-1")
    if st.button("Launch", type="primary", key="train.launch"):
        try:
            values = form_values(
                kind,
                model=model,
                table=table,
                snapshot_id=snapshot,
                out=out,
                preset=preset,
                overrides=overrides,
                rewards=rewards,
            )
            job_id = launch(kind, values)
        except PodiumError as exc:
            st.error(str(exc))
            return
        st.query_params["job"] = job_id
        st.success(f"Queued {kind} run {job_id}; a worker picks it up (`podium worker`).")


def _watch(job_id: str) -> bool:
    """Draw the run; returns whether it has finished."""
    view = run_view(job_id)
    st.progress(view.progress or 0.0, text=f"{view.status} · {view.message}")
    if view.status in ("queued", "running"):
        if st.button("Cancel run", key="train.cancel"):
            from podium.jobs.queue import request_cancel

            request_cancel(job_id)
            st.rerun()
    if view.error:
        st.error(view.error)
    if not view.groups:
        st.caption("No metrics yet.")
    for left, right in zip(view.groups[::2], view.groups[1::2] + [None], strict=False):
        cols = st.columns(2)
        for col, group in zip(cols, (left, right), strict=False):
            if group is not None:
                col.markdown(f"**{group[0]}**")
                col.line_chart(group[1])
    if view.samples:
        st.markdown("**Sample completions**")
        for s in view.samples[-4:]:
            scores = ", ".join(f"{k[7:]}={v:g}" for k, v in s.items() if k.startswith("reward/"))
            st.markdown(f"step {s['step']} · {scores}\n\n> {s.get('prompt', '')}")
            st.code(str(s.get("completion", "")), language=None)
    if view.checkpoint:
        st.success(f"Checkpoint **{view.checkpoint}** registered (from {view.base}).")
        c1, c2 = st.columns(2)
        if c1.button(f"Chat with {view.checkpoint}", key="train.chat"):
            st.switch_page(GENERATE_PAGE, query_params={"model": view.checkpoint})
        if view.base and c2.button(f"Compare with {view.base}", key="train.compare"):
            st.switch_page(COMPARE_PAGE, query_params={"models": f"{view.base},{view.checkpoint}"})
    return view.finished


def _runs() -> None:
    runs = training_runs()
    wanted = st.query_params.get("job")
    ids = [j["id"] for j in runs]
    if wanted and wanted not in ids:
        ids.insert(0, wanted)
    if not ids:
        st.caption("No training runs yet.")
        return
    labels = {j["id"]: run_label(j) for j in runs}
    job_id = st.selectbox(
        "Run",
        ids,
        index=ids.index(wanted) if wanted in ids else 0,
        format_func=lambda i: labels.get(i, i),
        key="train.run",
    )
    active = any(
        j["id"] == job_id and j["status"] in ("queued", "running", "cancelling") for j in runs
    )

    @st.fragment(run_every=2.0 if active else None)
    def live() -> None:
        try:
            finished = _watch(job_id)
        except PodiumError as exc:
            st.error(str(exc))
            return
        if active and finished:
            st.rerun()  # a full rerun stops the polling and shows the finished run

    live()


launch_tab, runs_tab = st.tabs(["Launch", "Runs"])
with launch_tab:
    _launch_form()
with runs_tab:
    _runs()

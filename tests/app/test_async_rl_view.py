# ruff: noqa: F811  (fixtures imported from train_fixtures are requested by name)
"""An async GRPO run in the app: the view model over job records made by the real queue,
reporter and outputs recording, and the Train page and Logbook (AppTest) drawing it.

The records are what trainers/async_rl/run.py writes: per-step metrics through the
JobReporter while it runs, and the outputs' summary (`syncs`, `staleness`, `rollouts`)
when it ends. No real training here: that is tests/async_rl's job."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_pages import shown
from streamlit.testing.v1 import AppTest
from train_fixtures import (  # noqa: F401
    chat_rows,
    make_table,
    memo_pairs,
    tiny_base,
    tiny_checkpoint,
)

from podium.app.async_rl_model import async_view, other_metrics, sync_row
from podium.app.views.train.model import rollout_fields, run_view
from podium.jobs.cards import Card
from podium.jobs.execute import outputs_json
from podium.jobs.launch import submit
from podium.jobs.logbook import metrics_frame
from podium.jobs.queue import claim_next, get_job, list_jobs, transition
from podium.jobs.reporter import JobReporter
from podium.models.registry import register_model
from podium.reporting import JobOutputs
from podium.store.schema import SFT_SCHEMA
from podium.store.write.write import write_table
from trainers.config import GrpoConfig

MAIN = str(Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py")
ROLLOUTS = "rollouts.run"


def _record(checksum: str, got: str | None = None) -> list[dict[str, object]]:
    return [
        {"replica": i, "checksum": got if got and i == 1 else checksum, "expected": checksum,
         "match": not (got and i == 1), "version": 0}
        for i in range(2)
    ]  # fmt: skip


SYNCS = [
    {"version": 1, "backend": "gloo", "bytes": 2_000_000, "seconds": 0.25,
     "replicas": _record("aa" * 32)},
    {"version": 2, "backend": "gloo", "bytes": 2_000_000, "seconds": 0.5,
     "replicas": _record("bb" * 32, got="cc" * 32), "swap": "rolling", "replica_idle_s": 0.125},
    {"version": 2, "backend": "gloo", "bytes": 2_000_000, "seconds": 0.5,
     "replicas": _record("bb" * 32), "joined": 1},
]  # fmt: skip


def _async_job(podium_home: Path, rollout: str = "async") -> str:
    """A grpo card queued and claimed as a worker would: a running job."""
    write_table("t.memo", chat_rows([("q", "a")]), schema=SFT_SCHEMA)
    register_model("policy", kind="base", path=str(podium_home))  # the card names a model
    cfg = GrpoConfig(
        model="policy",
        table={"name": "t.memo"},
        out="run",
        rollout=rollout,
        **({"replicas": 2, "max_staleness": 1} if rollout == "async" else {}),
    )
    job_id = submit(Card("grpo", cfg))
    claimed = claim_next(worker_pid=1, launcher="local")
    assert claimed is not None and claimed["id"] == job_id
    return job_id


def _report_steps(job_id: str, steps: int = 3) -> None:
    """Per-step metrics as trainers/async_rl/run.py reports them: replica 1 holds the
    previous version after the first step (its push still in flight)."""
    job = get_job(job_id)
    with JobReporter(job_id, job["log_path"]) as reporter:
        for step in range(1, steps + 1):
            reporter.metric(
                step,
                {
                    "reward": 0.1 * step,
                    "loss": 1.0 / step,
                    "lag": 0.5,
                    "lag_max": 1.0,
                    "staleness/0": 2,
                    **({"staleness/1": 2} if step > 1 else {}),
                    "policy_version": step,
                    "policy_version/0": step,
                    "policy_version/1": step - 1 if step == 1 else step,
                    "sync_seconds": 0.25 * step,
                    "replica_idle_seconds": 0.125 * step,
                },
            )


def _finish(job_id: str) -> None:
    summary = {"rollout": "async", "syncs": SYNCS, "staleness": {0: 6, 2: 1}, "rollouts": ROLLOUTS}
    outputs = outputs_json(JobOutputs(tables=[ROLLOUTS], checkpoints=["run"], summary=summary))
    assert transition(job_id, "succeeded", outputs=json.dumps(outputs))


def test_running_async_job_shows_versions_staleness_and_sync_times(podium_home: Path) -> None:
    job_id = _async_job(podium_home)
    view = async_view(get_job(job_id))
    assert view is not None and view.versions.empty and view.staleness.empty
    assert "2 replica(s) · max staleness 1 · weight sync gloo · barrier swaps" in view.headline()
    assert view.rollouts == ROLLOUTS  # the default the run derives: rollouts.<out>
    # ... and the run says so: the card named no table.
    assert view.rollouts_note == (
        f"every sample is written to {ROLLOUTS}, in the rollouts namespace by default; "
        "set `rollouts` (--rollouts NAMESPACE.TABLE) to choose"
    )

    _report_steps(job_id, steps=2)
    view = async_view(get_job(job_id))
    assert view is not None
    assert list(view.versions.columns) == ["learner", "replica 0", "replica 1"]
    assert view.versions["replica 1"].tolist() == [0, 2]
    assert view.current_versions == {0: 2, 1: 2}
    assert "replica 0: v2, replica 1: v2" in view.headline()
    assert view.reward["reward"].round(2).tolist() == [0.1, 0.2]
    assert view.sync_seconds["sync_seconds"].tolist() == [0.25, 0.5]
    assert view.idle_seconds["replica_idle_seconds"].tolist() == [0.125, 0.25]
    # Live: summed over the steps reported so far, and said to be so.
    assert view.staleness.to_dict("list") == {"lag": [0, 1], "samples": [4, 2]}
    assert view.staleness_text() == "6 samples so far: lag 0 4 (67%), lag 1 2 (33%)"
    assert view.syncs == []  # verdicts come with the outputs
    # The generic metric panels keep loss, reward and the lag, not the panel's own.
    assert sorted(other_metrics(metrics_frame(job_id)).columns) == [
        "lag", "lag_max", "loss", "reward",
    ]  # fmt: skip


def test_finished_async_job_pins_syncs_histogram_and_rollouts(podium_home: Path) -> None:
    job_id = _async_job(podium_home)
    _report_steps(job_id)
    _finish(job_id)
    view = run_view(job_id).async_rl
    assert view is not None and view.finished
    assert view.rollouts == ROLLOUTS
    # Every sample, from the summary (JSON made the lags strings); a lag with none is a
    # 0 bar.
    assert view.staleness.to_dict("list") == {"lag": [0, 1, 2], "samples": [6, 0, 1]}
    assert view.staleness_text() == "7 samples: lag 0 6 (86%), lag 1 0 (0%), lag 2 1 (14%)"
    assert view.sync_rows() == [
        {"version": 1, "why": "step", "backend": "gloo", "MB": 2.0, "seconds": 0.25,
         "replica idle s": None, "checksums": "2/2 match"},
        {"version": 2, "why": "step", "backend": "gloo", "MB": 2.0, "seconds": 0.5,
         "replica idle s": 0.125,
         "checksums": "MISMATCH on replica 1 (expected bbbbbbbb…, got cccccccc…)"},
        {"version": 2, "why": "replica 1 joined", "backend": "gloo", "MB": 2.0,
         "seconds": 0.5, "replica idle s": None, "checksums": "2/2 match"},
    ]  # fmt: skip
    assert view.sync_failed


def test_sync_without_any_replica_report_is_not_a_match() -> None:
    row = sync_row({"version": 3, "backend": "disk", "bytes": 0, "seconds": 1.0, "replicas": []})
    assert not row.ok and row.verdict == "no replica reported"


def test_sync_run_has_no_async_panel_and_form_hides_async_fields(podium_home: Path) -> None:
    job_id = _async_job(podium_home, rollout="sync")
    assert async_view(get_job(job_id)) is None
    assert run_view(job_id).async_rl is None
    shown, fixed = rollout_fields("grpo", "sync")
    assert shown == () and fixed["rollout"] == "sync" and fixed["replicas"] == 1
    shown, fixed = rollout_fields("grpo", "async")
    assert "max_staleness" in shown and "weight_sync" in shown and fixed == {"rollout": "async"}
    assert rollout_fields("sft", "async") == ((), {})


def _texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    return "\n".join(str(p) for p in parts + [e.value for e in at.error])


def _page(view: str, job_id: str) -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=90)
    at.run()
    at.switch_page(f"views/{view}/view.py")
    at.query_params["job"] = job_id
    at.run()
    assert not at.exception, at.exception
    return at


def test_train_page_and_logbook_draw_the_async_panel(podium_home: Path) -> None:
    job_id = _async_job(podium_home)
    _report_steps(job_id)
    _finish(job_id)
    for view in ("train", "logbook"):
        at = _page(view, job_id)
        text = _texts(at)
        assert "**Async RL**" in text and "**Weight versions**" in text, view
        assert "**Replica idle seconds per push**" in text, view
        assert "7 samples: lag 0 6 (86%), lag 1 0 (0%), lag 2 1 (14%)" in text, view
        assert "**Weight syncs**" in text and "weights differ" in text, view
        assert at.get("vega_lite_chart"), view
        links = [shown(p.proto.label) for p in at.get("page_link")]
        assert f"Rollouts: {ROLLOUTS}" in links, view


@pytest.mark.train
def test_launch_form_queues_an_async_run(tiny_base, make_table, memo_pairs):
    make_table("t.memo", memo_pairs)
    at = AppTest.from_file(MAIN, default_timeout=90)
    at.run()
    at.switch_page("views/train/view.py")
    at.run()
    at.radio(key="train.kind").set_value("grpo").run()
    assert "train.grpo.replicas" not in [w.key for w in at.number_input]  # sync: hidden
    at.radio(key="train.rollout").set_value("async").run()
    at.number_input(key="train.grpo.replicas").set_value(2)
    at.number_input(key="train.grpo.max_staleness").set_value(0)
    at.selectbox(key="train.grpo.weight_sync").set_value("disk")
    at.text_input(key="train.grpo.out").set_value("page-async")
    at.button(key="FormSubmitter:train.grpo-Queue job").click().run()
    assert not at.error, [e.value for e in at.error]
    (job,) = list_jobs()
    cfg = GrpoConfig.model_validate_json(job["config"])
    assert (cfg.rollout, cfg.replicas, cfg.max_staleness, cfg.weight_sync) == (
        "async",
        2,
        0,
        "disk",
    )

"""An async GRPO job cancelled mid-run, as a reviewer does it from the Logbook (a real
worker, a real `podium jobs cancel`, the worker's SIGTERM): it ends the step in hand,
saves and registers its state as `<out>-step-<N>` marked partial, lists it and the
rollouts table among the job's outputs, and the Logbook, Home, `podium models list
--json` and Compare's picker (which never preselects it) all say the same (issue 45,
item 1). Before: the run left no checkpoint (it saved only every `save_every` steps, 0
by default) and the SIGTERM could land in the middle of a learner step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from job_worker import running_worker, tiny_async_card, within
from train_fixtures import assert_partial_everywhere

from podium.cli import app
from podium.jobs.launch import run_or_write_card
from podium.jobs.logbook import outputs_text
from podium.jobs.queue import Job, get_job
from podium.models.registry import get_model_or_none, list_models

pytestmark = [pytest.mark.vllm, pytest.mark.ray, pytest.mark.train]

LIVE = ("queued", "running")


def _stepped_or_ended(job_id: str) -> Job | None:
    job = get_job(job_id)
    return job if job["progress_done"] or job["status"] not in LIVE else None


def _ended(job_id: str) -> Job | None:
    job = get_job(job_id)
    return job if job["status"] not in (*LIVE, "cancelling") else None


def test_a_cancelled_async_run_registers_its_step_marked_partial_everywhere(
    tiny_base: str, make_table: Any, memo_pairs: Any, podium_home: Path
) -> None:
    cfg = tiny_async_card(tiny_base, make_table("demo.memo", memo_pairs), "tiny-halted")
    job_id = str(run_or_write_card("grpo", cfg, foreground=False))
    with running_worker(podium_home):
        # Cancelled once it has taken a step, while it runs.
        job = within(600, lambda: _stepped_or_ended(job_id))
        assert job["status"] == "running", f"{job['status']}: {job['error']}"
        cancel = CliRunner().invoke(app, ["jobs", "cancel", job_id])
        assert cancel.exit_code == 0 and "cancelling" in cancel.output, cancel.output
        done = within(
            300, lambda: (j := get_job(job_id))["status"] not in (*LIVE, "cancelling") and j
        )
    assert done["status"] == "cancelled", done["error"]
    # The job recorded its cancel itself: before, its cleanup asked the private Ray (gone
    # with the same SIGTERM) to reap the replica's server, and Ray ended the process
    # after its 60 s wait for the GCS (exit code 1).
    assert "cancelled: stopped by the worker" in Path(done["log_path"]).read_text()
    assert get_model_or_none("tiny-halted") is None  # no final checkpoint
    (kept,) = [m for m in list_models() if m.kind == "trained"]
    assert kept.step is not None and kept.step >= 1
    assert kept.name == f"tiny-halted-step-{kept.step}" and kept.job_id == job_id
    assert kept.lineage["final"] is False and Path(kept.path or "", "config.json").is_file()
    note = f"cancelled at step {kept.step} of {cfg.max_steps}"
    assert_partial_everywhere(done, kept.name, note, tiny_base)
    assert [t["name"] for t in done["outputs"]["tables"]] == ["rollouts.tiny_halted"]
    assert outputs_text(done) == f"rollouts.tiny_halted, {kept.name} (partial: {note})"

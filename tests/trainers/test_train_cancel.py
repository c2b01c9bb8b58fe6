"""A queued training run cancelled mid-run registers a checkpoint at the step it stopped,
as the README says (the real CLI, a real worker, a real SIGTERM); evaluation shows as a
phase of its own."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner
from train_fixtures import assert_partial_everywhere

from podium.cli import app
from podium.jobs.cards import Card
from podium.jobs.launch import submit
from podium.jobs.logbook import events, outputs_text
from podium.jobs.queue import get_job, list_jobs
from podium.models.registry import get_model, get_model_or_none, list_models
from podium.reporting import Reporter
from podium.store.write.demo import DEMO_TABLES
from podium.validate.job import ValidateConfig
from trainers.config import SftConfig
from trainers.sft import run_sft

pytestmark = pytest.mark.train


def _wait(predicate, timeout: float = 300):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout}s")


def test_cancelled_queued_run_registers_its_step(tiny_base, make_table, memo_pairs):
    """Before: the worker's SIGTERM ended the run mid-step with no checkpoint (and a
    validation queued meanwhile waited for the whole run)."""
    make_table("t.memo", memo_pairs)
    queued = CliRunner().invoke(
        app,
        ["train", "sft", "--model", tiny_base, "--table", "t.memo", "--out", "halted",
         "--preset", "cpu-smoke", "--steps", "2000", "--queue"],
    )  # fmt: skip
    assert queued.exit_code == 0, queued.output
    (job,) = list_jobs()
    worker = subprocess.Popen(
        [sys.executable, "-m", "podium.cli", "worker", "--poll", "0.2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _wait(lambda: (get_job(job["id"])["progress_done"] or 0) >= 2)
        # The light lane: a validation queued behind the running training starts at once.
        DEMO_TABLES["demo.json_sft"]()
        check = submit(
            Card("validate", ValidateConfig(table={"name": "demo.json_sft"}, rules=["json"]))
        )
        _wait(lambda: get_job(check)["status"] == "succeeded", timeout=30)
        assert get_job(job["id"])["status"] == "running"
        cancel = CliRunner().invoke(app, ["jobs", "cancel", job["id"]])
        assert cancel.exit_code == 0 and "cancelling" in cancel.output
        done = _wait(lambda: (j := get_job(job["id"]))["status"] == "cancelled" and j)
    finally:
        worker.send_signal(signal.SIGTERM)
        output = worker.communicate(timeout=60)[0]
    assert get_model_or_none("halted") is None, output  # no final checkpoint
    (kept,) = [m for m in list_models() if m.kind == "trained"]
    assert kept.name == f"halted-step-{kept.step}" and kept.step >= 2
    assert kept.job_id == job["id"] and kept.lineage["final"] is False
    assert get_model(kept.name).path
    assert done["progress_done"] == kept.step  # the step it stopped at
    # Issue 45: the job lists it, marked partial, and every view of it agrees.
    note = f"cancelled at step {kept.step} of 2000"
    assert_partial_everywhere(done, kept.name, note, tiny_base)
    assert outputs_text(done) == f"{kept.name} (partial: {note})"
    log = open(job["log_path"]).read()
    # The worker's SIGTERM, or the job's status read first (a race the cancel may win
    # either way): both stop at a step's end and say so.
    assert re.search(
        rf"stopping at step {kept.step} \((SIGTERM|cancelled)\); its state is registered", log
    ), log
    assert [e["status"] for e in events(job["id"])][-1] == "cancelled"


class Said(Reporter):
    """Every progress message and phase, in order."""

    def __init__(self) -> None:
        super().__init__({"podium.lineage.job_id": "job-test"})
        self.said: list[str] = []

    def progress(self, done, total=None, message=""):  # type: ignore[no-untyped-def]
        self.said.append(message)

    def phase(self, message: str) -> None:
        self.said.append(message)


def test_evaluation_shows_as_a_phase(tiny_base, make_table, memo_pairs):
    """Before: progress sat at "step N" through TRL's evaluation (minutes on a CPU)."""
    make_table("t.memo", memo_pairs * 4)
    cfg = SftConfig(
        model=tiny_base, table={"name": "t.memo"}, out="evaluated", preset="cpu-smoke",
        max_steps=4, save_every=2, eval_fraction=0.25,
    )  # fmt: skip
    said = Said()
    run_sft(cfg, said)
    at = said.said.index("step 2 · evaluating")
    assert said.said[at + 1] == "step 2"  # back to counting once the evaluation is done
    assert "step 4 · evaluating" in said.said

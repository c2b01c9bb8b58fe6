"""A queued training job run by a real worker process: metrics land in the job's rows,
the checkpoint in the registry."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from podium.cli import app
from podium.jobs.logbook import metrics_frame
from podium.jobs.queue import get_job, list_jobs
from podium.models.registry import get_model

pytestmark = pytest.mark.train


def test_worker_runs_a_queued_sft_job_and_streams_metrics(tiny_base, make_table, memo_pairs):
    make_table("t.memo", memo_pairs)
    result = CliRunner().invoke(
        app,
        [
            "train",
            "sft",
            "--model",
            tiny_base,
            "--table",
            "t.memo",
            "--out",
            "worker-sft",
            "--steps",
            "3",
            "--queue",
        ],
    )
    assert result.exit_code == 0, result.output
    (job,) = list_jobs()
    assert job["status"] == "queued"

    podium = Path(sys.executable).with_name("podium")
    proc = subprocess.run(
        [str(podium), "worker", "--once", "--poll", "0.2"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    done = get_job(job["id"])
    assert done["status"] == "succeeded", done["error"]
    frame = metrics_frame(job["id"])
    assert {"loss", "learning_rate", "grad_norm", "tokens_per_s"} <= set(frame.columns)
    assert list(frame.index) == [1, 2, 3]
    info = get_model("worker-sft")
    assert info.job_id == job["id"] and info.lineage["job_id"] == job["id"]
    assert done["outputs"]["checkpoints"] == ["worker-sft"]

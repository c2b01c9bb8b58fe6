"""The Logbook's outputs column: the tables a job wrote and the checkpoint it
registered (it was empty for a training run), never a checkpoint a job only used."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from podium.jobs.logbook import job_rows
from podium.jobs.queue import now


def _job(kind: str, outputs: dict[str, Any]) -> dict[str, Any]:
    at = now()
    return {
        "id": f"20261127-000000-{kind}-0000",
        "kind": kind,
        "status": "succeeded",
        "progress_done": 1,
        "progress_total": 1,
        "created_at": at - timedelta(minutes=2),
        "started_at": at - timedelta(minutes=1),
        "finished_at": at,
        "outputs": outputs,
    }


def test_the_outputs_column_names_the_registered_checkpoint() -> None:
    sft = _job(
        "sft",
        {
            "tables": [],
            "checkpoints": ["chat-sft-step10", "chat-sft"],
            "summary": {"checkpoint": "chat-sft"},
        },
    )
    rollouts = {"name": "demo.grpo_1_rollouts", "snapshot_id": 1}
    grpo = _job("grpo", {"tables": [rollouts], "checkpoints": ["grpo-1"]})
    base = _job("bootstrap", {"tables": [], "checkpoints": ["smollm2-135m-instruct"]})
    samples = {"name": "gen.out", "snapshot_id": 2}
    used = {"tables": [samples], "checkpoints": ["smollm2-135m-instruct"]}
    generate = _job("generate", used)
    rows = {r["kind"]: r["outputs"] for r in job_rows([sft, grpo, base, generate])}
    assert rows == {
        "sft": "chat-sft",  # the final checkpoint, as Compare and Train name it
        "grpo": "demo.grpo_1_rollouts, grpo-1",
        "bootstrap": "smollm2-135m-instruct",
        "generate": "gen.out",  # the model it sampled is an input, not an output
    }

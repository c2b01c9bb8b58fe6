"""`podium jobs metrics ID --json`: every metric row the Logbook charts (step, name,
value), for a job that reported them through its reporter while it ran."""

from __future__ import annotations

import json
from pathlib import Path

from jobs_helpers import podium

from podium.jobs.cards import Card, validate_config
from podium.jobs.launch import run_in_process
from podium.jobs.logbook import metrics_frame
from podium.jobs.queue import get_job
from podium.jobs.reporter import JobReporter


def test_jobs_metrics_json_lists_every_row_the_logbook_charts(jobs_home: Path) -> None:
    job = run_in_process(Card("test-steps", validate_config("test-steps", {"steps": 3})))
    assert job["status"] == "succeeded"
    # As a kind reporting several metrics a step does (async GRPO's is_weight_mean ...).
    with JobReporter(job["id"], get_job(job["id"])["log_path"]) as reporter:
        reporter.metric(3, {"is_weight_mean": 1.0, "behaviour_kl": 0.0, "loss": 0.25})
    rows = json.loads(podium("jobs", "metrics", job["id"][:20], "--json").stdout)
    assert rows == [
        {"step": 0, "name": "loss", "value": 1.0},
        {"step": 1, "name": "loss", "value": 0.5},
        {"step": 2, "name": "loss", "value": 1.0 / 3},
        {"step": 3, "name": "is_weight_mean", "value": 1.0},
        {"step": 3, "name": "behaviour_kl", "value": 0.0},
        {"step": 3, "name": "loss", "value": 0.25},
    ]
    charted = metrics_frame(job["id"])  # what the Logbook draws: the same points
    assert sorted(charted.columns) == sorted({r["name"] for r in rows})
    assert charted.loc[2, "loss"] == 1.0 / 3 and charted.loc[3, "is_weight_mean"] == 1.0

    only = json.loads(podium("jobs", "metrics", job["id"], "--json", "--name", "loss").stdout)
    assert [r["step"] for r in only] == [0, 1, 2, 3]
    text = podium("jobs", "metrics", job["id"]).stdout
    assert "behaviour_kl" in text and "0.333333" in text


def test_a_job_without_metrics_lists_none(jobs_home: Path) -> None:
    config = validate_config("test-sampling", {"rows": 2, "table": "ns.drawn"})
    job = run_in_process(Card("test-sampling", config))
    assert job["status"] == "succeeded"
    assert json.loads(podium("jobs", "metrics", job["id"], "--json").stdout) == []
    assert "reported no metrics" in podium("jobs", "metrics", job["id"]).stdout

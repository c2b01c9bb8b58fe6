"""`podium jobs show ID --json` carries a job's last metrics and its warnings, recorded
while it ran through the job reporter (issue 35: a GRPO run that cannot learn says so)."""

from __future__ import annotations

import json
from pathlib import Path

from jobs_helpers import podium

from podium.jobs.cards import Card, validate_config
from podium.jobs.launch import run_in_process
from podium.jobs.logbook import events


def test_jobs_show_json_has_last_metrics_and_warnings(jobs_home: Path) -> None:
    said = "No learning signal in the first 2 steps: exact_match returned 0."
    config = validate_config("test-steps", {"steps": 3, "warn": said})
    job = run_in_process(Card("test-steps", config))
    assert job["status"] == "succeeded"
    shown = json.loads(podium("jobs", "show", job["id"], "--json").stdout)
    assert shown["metrics"] == {"loss": 1.0 / 3}  # the last value of each metric
    assert shown["warnings"] == [said]
    assert [e["status"] for e in events(job["id"])] == ["running", "warning", "succeeded"]
    text = podium("jobs", "show", job["id"]).stdout
    assert f"warning {said}" in " ".join(text.split())
    quiet = run_in_process(Card("test-steps", validate_config("test-steps", {"steps": 1})))
    shown = json.loads(podium("jobs", "show", quiet["id"], "--json").stdout)
    assert shown["metrics"] == {"loss": 1.0} and shown["warnings"] == []


def test_a_nan_metric_is_a_warning_not_a_crash(jobs_home: Path) -> None:
    """A diverged run reported loss NaN: the metrics flush failed on the database's
    refusal and took the job down. Non-finite values are not charted; the first one of
    each metric becomes a warning."""
    config = validate_config("test-steps", {"steps": 3, "nan_at": 1})
    job = run_in_process(Card("test-steps", config))
    assert job["status"] == "succeeded", job
    shown = json.loads(podium("jobs", "show", job["id"], "--json").stdout)
    assert shown["metrics"] == {"loss": 1.0 / 3}
    assert shown["warnings"] == ["loss was nan at step 1 (not charted): the run may have diverged."]

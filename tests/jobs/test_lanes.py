"""A worker's light lane: short jobs start while a training-like (heavy) job runs, and a
queued job says what it waits for, in `podium jobs` and in the tray's data."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from jobs_helpers import podium, wait_for

from podium.app.job_tray_model import tray_items
from podium.jobs.cards import parse_card
from podium.jobs.lanes import waiting_reason
from podium.jobs.launch import submit
from podium.jobs.queue import active_jobs, get_job, list_jobs, now, request_cancel


def _submit(front: str) -> str:
    return submit(parse_card(f"---\n{front}\n---\n"))


def test_a_light_job_starts_while_a_heavy_one_runs(
    jobs_home: Path, start_worker: Callable[..., object]
) -> None:
    """Before: one job at a time, so a 1-minute job waited for a 10-minute training run."""
    start_worker()  # the defaults `podium up` uses
    heavy = _submit("kind: test-steps-heavy\nsteps: 600\nsleep: 0.1")
    wait_for(lambda: get_job(heavy)["progress_done"], timeout=60)
    light = _submit("kind: test-steps\nsteps: 2")
    wait_for(lambda: get_job(light)["status"] == "succeeded", timeout=30)
    assert get_job(heavy)["status"] == "running"

    second = _submit("kind: test-steps-heavy\nsteps: 2")
    reason = f"waiting for the heavy lane: job {heavy} (test-steps-heavy) is running"
    assert waiting_reason(get_job(second), active_jobs()) == reason
    listing = podium("jobs").stdout
    assert f"{second} is waiting for the heavy lane" in " ".join(listing.split())
    (item,) = [i for i in tray_items(list_jobs(), now()) if i.job_id == second]
    assert item.waiting == reason and reason in item.label
    assert get_job(second)["status"] == "queued"

    request_cancel(heavy)
    wait_for(lambda: get_job(second)["status"] == "succeeded", timeout=60)


def test_light_slots_zero_keeps_one_job_at_a_time(
    jobs_home: Path, start_worker: Callable[..., object]
) -> None:
    start_worker("--light-slots", "0")
    heavy = _submit("kind: test-steps-heavy\nsteps: 600\nsleep: 0.1")
    wait_for(lambda: get_job(heavy)["progress_done"], timeout=60)
    light = _submit("kind: test-steps\nsteps: 2")
    assert waiting_reason(get_job(light), active_jobs()) == (
        f"next in the light lane, which is free beside job {heavy} (test-steps-heavy) "
        "(a worker started with --light-slots 0 runs it after that job)"
    )
    request_cancel(heavy)
    wait_for(lambda: get_job(light)["status"] == "succeeded", timeout=60)


def test_lanes_without_training_run_one_job_at_a_time() -> None:
    """The light slot opens only beside training: two vLLM-backed jobs never share a
    small machine because of it."""
    from podium.jobs.lanes import may_claim

    assert may_claim([], 1, 1) == "any"
    assert may_claim(["validate"], 1, 1) is None
    assert may_claim(["sft"], 1, 1) == "light"
    assert may_claim(["sft", "validate"], 1, 1) is None
    assert may_claim(["sft"], 1, 0) is None
    assert may_claim(["validate"], 2, 1) == "any"


def _job(job_id: str, kind: str, status: str, minute: int) -> dict:
    return {
        "id": job_id,
        "kind": kind,
        "status": status,
        "created_at": now().replace(second=0, microsecond=0).replace(minute=minute),
    }


def test_a_light_job_beside_training_names_the_light_lane_only_when_it_is_busy() -> None:
    """Before: "waiting for a free slot: job t (sft) running" while the light lane was
    free (training holds only the heavy lane)."""
    training = _job("t", "sft", "running", 1)
    validation = _job("v", "validate", "queued", 2)
    free = waiting_reason(validation, [training, validation])
    assert free is not None and "free slot" not in free
    assert free.startswith("next in the light lane, which is free beside job t (sft)")
    compare = _job("c", "compare", "running", 3)
    busy = waiting_reason(validation, [training, compare, validation])
    assert busy == "waiting for the light lane: job c (compare) is running"
    # The heavy lane is named when it is that job's lane that is busy.
    grpo = _job("g", "grpo", "queued", 4)
    assert waiting_reason(grpo, [training, grpo]) == (
        "waiting for the heavy lane: job t (sft) is running"
    )

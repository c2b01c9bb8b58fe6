"""The base-model bootstrap as a job (kind: bootstrap): what Home and every page that
needs a model queue instead of asking for a shell. The conversion itself is tested once
(test_bootstrap.py, through the session's `base_checkpoint`); here the job runs on that
cached conversion, so it is the wiring that is tested, not a second 90-s conversion."""

from __future__ import annotations

from pathlib import Path

from podium.jobs.cards import Card, parse_card
from podium.jobs.kinds import get_kind
from podium.jobs.launch import run_in_process
from podium.jobs.logbook import submit_config
from podium.jobs.queue import get_job
from podium.models import default_base
from podium.models.bootstrap import BASE_NAME, CONVERT_STEPS, is_checkpoint
from podium.models.bootstrap_job import BootstrapConfig


def test_the_bootstrap_job_registers_the_base_and_a_second_one_is_a_quick_success(
    podium_home: Path, base_checkpoint: Path
) -> None:
    assert get_kind("bootstrap").config_model() is BootstrapConfig
    first = run_in_process(parse_card("---\nkind: bootstrap\n---\n"))
    assert first["status"] == "succeeded", first["error"]
    assert first["outputs"]["checkpoints"] == [BASE_NAME]
    assert (first["progress_done"], first["progress_total"]) == (CONVERT_STEPS, CONVERT_STEPS)
    base = default_base()
    assert base.name == BASE_NAME and is_checkpoint(Path(base.path))
    mtime = (base_checkpoint / "model.safetensors").stat().st_mtime_ns
    again = run_in_process(Card("bootstrap", BootstrapConfig()))
    assert again["status"] == "succeeded", again["error"]
    assert default_base() == base  # the same row, nothing converted or registered again
    assert (base_checkpoint / "model.safetensors").stat().st_mtime_ns == mtime


def test_a_bootstrap_job_queues_like_any_other(podium_home: Path) -> None:
    job = get_job(submit_config("bootstrap", {}))
    assert (job["kind"], job["status"]) == ("bootstrap", "queued")

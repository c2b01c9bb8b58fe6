"""The Logbook page in a real Chromium: a finished job's card, log and a link into Browse."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from app_driver import using_home, wait_for_app
from playwright.sync_api import Page, expect

from podium.jobs.cards import Card
from podium.jobs.launch import run_foreground
from podium.store.write.ingest import ImportConfig

pytestmark = pytest.mark.browser


def test_logbook_shows_a_job_and_links_its_output_to_browse(
    app_page: Page, app_url: str, app_home: Path, tmp_path: Path, artifacts_dir: Path
) -> None:
    data = tmp_path / "logbook.jsonl"
    turns = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    data.write_text(json.dumps({"messages": turns}) + "\n")
    with using_home(app_home):
        config = ImportConfig(path=str(data), out="logbook.imported")
        job = run_foreground(Card("import", config, "from the browser test"), quiet=True)

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

"""Data and URL parameters are shown as text in a real Chromium (issue 38, findings 7
and 11): a Markdown image in a turn, in an id, in a link's `sample=`/`split=`, in an
edit's reason (Review's snapshot diff) or in a job's error and warning (Logbook) is never
fetched (no <img> for it, and the CSP would block it anyway), and a row with many turns
is drawn a page of turns at a time."""

from __future__ import annotations

import http.server
import json
import re
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlencode

import pyarrow as pa
import pytest
from app_driver import free_port, using_home, wait_for_app
from playwright.sync_api import Page, expect

from podium.app.rows.saves import delete_rows
from podium.app.rows.turns import TURNS_PER_PAGE
from podium.jobs.cards import Card
from podium.jobs.launch import JobFailed, run_foreground
from podium.jobs.queue import get_job
from podium.jobs.reporter import JobReporter
from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.state.users import acting_user
from podium.store.write.ingest import ImportConfig
from podium.store.write.write import write_table

pytestmark = pytest.mark.browser
TABLE = "lab.hostile"
LONG_TURNS = 120


def as_text(text: str) -> re.Pattern[str]:
    """`text` as the page shows it: a bare URL carries an invisible word joiner
    (U+2060) before `://` so that it does not become a link."""
    pattern = re.escape(text).replace("://", "\u2060?://")
    return re.compile(pattern.replace("/", "\\/"))  # Playwright's selectors need \/


class Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        Recorder.seen.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def pixel_port() -> Iterator[int]:
    """A local HTTP server that records every request (the 'tracking pixel' host)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


def _row(row_id: str, turns: list[str]) -> dict[str, object]:
    return {
        "id": row_id,
        "messages": [
            {"role": "user" if i % 2 == 0 else "assistant", "content": text}
            for i, text in enumerate(turns)
        ],
        "split": "train",
        "created_at": datetime(2026, 1, 1, tzinfo=UTC),
    }


def _failed_import(folder: Path, bad_time: str) -> str:
    """The id of an import job that failed quoting `bad_time` from its file."""
    data = folder / "bad_time.jsonl"
    turns = [{"role": "user", "content": "hi"}]
    data.write_text(json.dumps({"messages": turns, "created_at": bad_time}) + "\n")
    with pytest.raises(JobFailed, match=r"job (\S+) failed") as failed:
        run_foreground(Card("import", ImportConfig(path=str(data), out="lab.bad_time")), quiet=True)
    return failed.value.args[0].split()[1]


def test_markup_from_data_and_links_is_text(
    app_page: Page, app_url: str, app_home: Path, pixel_port: int, tmp_path: Path
) -> None:
    pixel = f"http://127.0.0.1:{pixel_port}"
    image_id = f"![id]({pixel}/id.png)"
    rows = [
        _row("h1", [f"Look: ![x]({pixel}/pixel.png) and [a link]({pixel}/link)", "ok"]),
        _row(image_id, ["hello", "hi"]),
        _row("long", [f"turn {i}" for i in range(LONG_TURNS)]),
    ]
    with using_home(app_home):
        write_table(TABLE, pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA), schema=SFT_SCHEMA)
    page = app_page
    foreign_images = page.locator(f"img[src^='{pixel}']")

    page.goto(f"{app_url}/browse?" + urlencode({"table": TABLE, "sample": "h1"}))
    wait_for_app(page)
    user = page.get_by_test_id("stChatMessage").first
    expect(user).to_contain_text("Look: !x and a link")
    expect(user.locator(f"a[href='{pixel}/link']")).to_have_count(1)  # a link needs a click
    assert foreign_images.count() == 0

    page.goto(f"{app_url}/browse?" + urlencode({"table": TABLE, "sample": image_id}))
    wait_for_app(page)
    expect(page.get_by_role("heading", name=as_text(f"Sample {image_id}"))).to_be_visible()
    assert foreign_images.count() == 0

    hostile_link = urlencode(
        {"table": TABLE, "split": f"![s]({pixel}/split.png)", "sample": f"![p]({pixel}/p.png)"}
    )
    page.goto(f"{app_url}/browse?{hostile_link}")
    wait_for_app(page)
    expect(page.get_by_text(as_text(f"No sample ![p]({pixel}/p.png) in {TABLE}"))).to_be_visible()
    no_split = as_text(f"No split ![s]({pixel}/split.png) in this snapshot")
    expect(page.get_by_text(no_split)).to_be_visible()
    assert foreign_images.count() == 0
    assert page.locator(f"a[href^='{pixel}']").count() == 0  # warnings hold no links

    # A long conversation: one page of turns and a pager, not every turn at once.
    page.goto(f"{app_url}/browse?" + urlencode({"table": TABLE, "sample": "long"}))
    wait_for_app(page)
    expect(page.get_by_text(f"Turns 1-{TURNS_PER_PAGE} of {LONG_TURNS}")).to_be_visible()
    expect(page.get_by_test_id("stChatMessage")).to_have_count(TURNS_PER_PAGE)
    pager = page.get_by_label(f"Page of turns (1-{-(-LONG_TURNS // TURNS_PER_PAGE)})")
    pager.fill("3")
    pager.press("Enter")
    wait_for_app(page)
    expect(page.get_by_test_id("stChatMessage").first).to_contain_text(f"turn {2 * TURNS_PER_PAGE}")

    # A removal's reason on Review's snapshot diff, a job's error and warning in the
    # Logbook: words people and jobs wrote, quoting data.
    why = f"dup ![w]({pixel}/why.png)"
    warning = f"odd row ![v]({pixel}/warn.png)"
    error_image = f"![e]({pixel}/error.png)"
    with using_home(app_home):
        delete_rows(TABLE, ["long"], acting_user(), why=why, base=None)
        failed = _failed_import(tmp_path, error_image)
        reporter = JobReporter(failed, get_job(failed)["log_path"])
        reporter.warn(warning)
        reporter.close()
    page.goto(f"{app_url}/review?" + urlencode({"table": TABLE}))
    wait_for_app(page)
    page.get_by_text("Snapshots", exact=True).click()
    wait_for_app(page)
    expect(page.get_by_text(as_text(why))).to_be_visible()
    assert foreign_images.count() == 0
    page.goto(f"{app_url}/logbook?job={failed}")
    wait_for_app(page)
    expect(page.get_by_text(as_text(f"created_at '{error_image}' is not")).first).to_be_visible()
    expect(page.get_by_text(as_text(warning)).first).to_be_visible()
    assert foreign_images.count() == 0

    assert Recorder.seen == [], f"the browser fetched {Recorder.seen}"


# Issue 44, point 18: three forms where the guess at code misread the text, each with a
# same-origin image (which the CSP allows) that would log out whoever reads the row.
MISREAD_CODE = [
    "\\`![escaped tick](/auth/logout)\\`",
    "`a\n\n![across paragraphs](/auth/logout)\n\nb`",
    "``` `x`\n![fence info tick](/auth/logout)\n```",
]


def test_images_where_code_was_misread_are_text(
    app_page: Page, app_url: str, app_home: Path
) -> None:
    with using_home(app_home):
        write_table(
            "lab.misread",
            pa.Table.from_pylist([_row("m1", MISREAD_CODE)], schema=SFT_ARROW_SCHEMA),
            schema=SFT_SCHEMA,
        )
    app_page.goto(f"{app_url}/browse?" + urlencode({"table": "lab.misread", "sample": "m1"}))
    wait_for_app(app_page)
    turns = app_page.get_by_test_id("stChatMessage")
    expect(turns).to_have_count(len(MISREAD_CODE))
    for name in ("escaped tick", "across paragraphs", "fence info tick"):
        expect(app_page.get_by_test_id("stMain")).to_contain_text(name)  # an image's alt is not
    assert app_page.locator("img[src*='logout']").count() == 0

"""Actions that do what they say, in a real Chromium at 1440x900.

- Browse's Remove turn / Delete row: Enter in "Why" removes nothing (it removed turn 0
  and wrote a snapshot); a missing reason is said before anything is asked; the question
  names the turn, its role and the row, and only its answer removes that turn.
- The Logbook's "Yes, cancel the job" shows on screen, next to the Cancel that asked.
- A failing sample opened from Validate shows in Browse at the error, marked, with the
  line Validate showed.
- The SQL page runs a guarded SELECT over a table and refuses a write.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pytest
from app_driver import choose_option, using_home, wait_for_app
from playwright.sync_api import Page, expect

from podium.jobs.cards import Card
from podium.jobs.launch import run_foreground, submit
from podium.store.catalog.catalog import load_table
from podium.store.read.query import page as read_page
from podium.store.read.refs import TableRef
from podium.store.read.snapshots import list_snapshots
from podium.store.schema import SFT_ARROW_SCHEMA
from podium.store.write.ingest import ImportConfig
from podium.store.write.write import write_table
from podium.validate.job import ValidateConfig

pytestmark = pytest.mark.browser

T = "cf.rows"  # validated
E = "cf.edit"  # edited (a new snapshot would leave T's report behind)
ROWS = 30
BAD = "row-17"  # its answer's JSON block is broken on the block's line 3
PROSE = "\n".join(f"Step {i}: something to read before the record." for i in range(12))
BROKEN = PROSE + '\n\n```json\n{\n  "a": 1,\n  "b": ,\n  "c": 3\n}\n```\nDone.'
ERROR_MARK = 'mark[style*="#ffb3b3"]'
SFT = {"podium.kind": "sft"}


def _row(i: int) -> dict[str, object]:
    answer = BROKEN if f"row-{i}" == BAD else f'```json\n{{"n": {i}}}\n```'
    return {
        "id": f"row-{i}",
        "messages": [
            {"role": "user", "content": f"question {i}"},
            {"role": "assistant", "content": answer},
        ],
        "system": None, "source": "test", "split": "train", "tags": [], "metadata": "{}",
        "created_at": datetime(2026, 1, 1, tzinfo=UTC),
    }  # fmt: skip


@pytest.fixture(scope="module")
def table(app_home: Path) -> str:
    with using_home(app_home):
        rows = [_row(i) for i in range(ROWS)]
        write_table(T, pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA), properties=SFT)
        write_table(E, pa.Table.from_pylist(rows[:5], schema=SFT_ARROW_SCHEMA), properties=SFT)
        config = ValidateConfig(table=TableRef(name=T), rules=["json"])
        run_foreground(Card("validate", config, "confirm test"), quiet=True)
    return T


def _snapshots(home: Path) -> int:
    with using_home(home):
        return len(list_snapshots(load_table(E)))


def _turns(home: Path, row_id: str) -> list[str]:
    with using_home(home):
        (row,) = read_page(E, ids=[row_id]).rows
    return [m["role"] for m in row["messages"]]


def _remove_box(page: Page):  # type: ignore[no-untyped-def]
    return page.locator('[class*="-remove-box"]')  # the container's key as a class


def test_remove_asks_by_name_enter_removes_nothing_and_cancel_asks_on_screen(
    app_page: Page, app_url: str, app_home: Path, table: str, tmp_path: Path,
    artifacts_dir: Path,
) -> None:  # fmt: skip
    page = app_page
    page.set_viewport_size({"width": 1440, "height": 900})
    target = "row-3"
    page.goto(f"{app_url}/browse?table={E}&sample={target}")
    wait_for_app(page)
    expect(page.get_by_role("heading", name=f"Sample {target}")).to_be_visible()
    page.get_by_role("tab", name="Edit").click()
    box = _remove_box(page)
    before = _snapshots(app_home)

    # Enter in "Why" is no click on a destructive button.
    why = box.get_by_label("Why")
    why.fill("duplicate prompt")
    why.press("Enter")
    wait_for_app(page)
    expect(page.get_by_text(re.compile(r"^(Remove turn|Delete row) .*\?"))).to_have_count(0)
    assert _snapshots(app_home) == before
    assert _turns(app_home, target) == ["user", "assistant"]

    # No reason: said at once, nothing asked.
    why.fill("")
    why.press("Tab")
    box.get_by_role("button", name="Delete row", exact=True).click()
    wait_for_app(page)
    expect(page.get_by_text("Say why before removing the row")).to_be_visible()
    expect(page.get_by_role("button", name=re.compile("^Yes, delete"))).to_have_count(0)

    # The question names the chosen turn, its role and the row; only "Yes" removes it.
    why.fill("a broken answer")
    why.press("Tab")
    choose_option(page, box.get_by_label("Turn", exact=True), "1 · assistant")
    box.get_by_role("button", name="Remove turn", exact=True).click()
    wait_for_app(page)
    asked = page.get_by_text(re.compile(rf"^Remove turn 1 \(assistant\) of row {target}\?"))
    expect(asked).to_be_visible()
    assert _snapshots(app_home) == before
    page.screenshot(path=str(artifacts_dir / "confirm-remove-turn.png"))
    page.get_by_role("button", name="Yes, remove turn 1").click()
    wait_for_app(page)
    expect(
        page.get_by_text(re.compile(rf"Removed turn 1 of {target}: snapshot \d+"))
    ).to_be_visible()
    assert _snapshots(app_home) == before + 1
    assert _turns(app_home, target) == ["user"]

    # The Logbook's question shows where the Cancel button was, with a full job list
    # above it (no worker runs beside this app: the jobs stay queued).
    data = tmp_path / "one.jsonl"
    data.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n")
    with using_home(app_home):
        ids = [
            submit(Card("import", ImportConfig(path=str(data), out=f"cf.queued{i}"), ""))
            for i in range(12)
        ]
    page.goto(f"{app_url}/logbook?job={ids[-1]}")
    wait_for_app(page)
    page.get_by_role("button", name="Cancel", exact=True).click()
    wait_for_app(page)
    yes = page.get_by_role("button", name="Yes, cancel the job")
    expect(yes).to_be_in_viewport()
    page.screenshot(path=str(artifacts_dir / "confirm-cancel-job.png"))
    yes.click()
    # The question goes only on the run after the cancel was written. The job detail is a
    # fragment that refreshes itself: its click can wait for a running refresh, longer than
    # wait_for_app's moment for a rerun to start on a busy machine (the job read "queued").
    expect(yes).to_have_count(0, timeout=60_000)
    wait_for_app(page)
    with using_home(app_home):
        from podium.jobs.queue import get_job, request_cancel

        assert get_job(ids[-1])["status"] in ("cancelled", "cancelling")
        for job_id in ids[:-1]:
            request_cancel(job_id)  # nothing left queued for later tests


def test_validate_opens_the_error_in_browse_and_sql_runs_a_select(
    app_page: Page, app_url: str, app_home: Path, table: str, artifacts_dir: Path
) -> None:
    page = app_page
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{app_url}/validate?table={T}")
    wait_for_app(page)
    said = page.get_by_text(re.compile(rf"{BAD} · turn 1 · json · line \d+, column \d+"))
    expect(said).to_be_visible()  # the sample shows above the fold, before chart and list
    where = re.search(
        r"line (\d+), column \d+ of the code block \(line 17 of the message\)", said.inner_text()
    )
    assert where is not None, said.inner_text()  # 12 prose lines, a blank, the fence, 3 more
    assert where.group(1) == "3"  # the block's own line: what the parser and the gutter say
    page.get_by_role("link", name="Open in Browse").click()
    wait_for_app(page)
    expect(page.get_by_role("heading", name=f"Sample {BAD}")).to_be_attached()
    # The same position as Validate, marked, and scrolled to without a hand on the wheel.
    expect(page.get_by_text(f"({where.group(0)})")).to_be_attached()
    mark = page.locator(ERROR_MARK).first
    expect(mark).to_be_in_viewport()
    expect(mark).to_have_text(re.compile(r"^,"))
    # The numbered block's gutter beside the mark shows the line Validate named.
    gutter = mark.evaluate(
        """(m) => { let n = m.previousSibling;
          while (n && !(n.nodeType === 1 && n.tagName === 'SPAN' && !n.closest('mark')
                        && /^\\d+$/.test(n.textContent))) n = n.previousSibling;
          return n ? n.textContent : null; }"""
    )
    assert gutter == where.group(1), gutter
    page.screenshot(path=str(artifacts_dir / "confirm-validate-to-browse.png"))

    page.goto(f"{app_url}/sql")
    wait_for_app(page)
    query = page.get_by_role("textbox", name="Query")
    query.fill(f"SELECT count(*) AS n FROM {T}")
    page.get_by_role("button", name="Run").click()
    wait_for_app(page)
    expect(page.get_by_test_id("stMetricValue")).to_have_text(str(ROWS))
    expect(page.get_by_text("1 row · 1 column")).to_be_visible()
    query.fill(f"DELETE FROM {T}")
    page.get_by_role("button", name="Run").click()
    wait_for_app(page)
    expect(page.get_by_text(re.compile("Only a single SELECT query is allowed"))).to_be_visible()
    page.screenshot(path=str(artifacts_dir / "confirm-sql.png"))
    with using_home(app_home):
        assert read_page(T, limit=1).total == ROWS

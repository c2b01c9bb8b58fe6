"""A reviewer's day, second pass (issue 45), in a real Chromium: the Review page opens on
its controls (not a schema dump), a queue counts among the rows left after a removal,
stops at its end and goes back over labelled rows, and Browse's grid has the page's
width with no raw snapshot id beside its picker; Home shows table names whole."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from app_driver import using_home, wait_for_app
from playwright.sync_api import Page, expect

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "review"))
from review_data import make_table, row_id  # noqa: E402

pytestmark = pytest.mark.browser

T = "rv.day"
LONG = "rv.a_dataset_name_long_enough_to_be_cut_in_a_third"  # Home's table list


@pytest.fixture(scope="module")
def day_table(app_home: Path) -> str:
    with using_home(app_home):
        make_table(T, 10)
        make_table(LONG, 1)
    return T


def _heading(page: Page, text: str) -> None:
    expect(page.get_by_role("heading", name=re.compile(rf"^Row .* · {text}$"))).to_be_visible()


def _click(page: Page, name: str) -> None:
    page.get_by_role("button", name=name, exact=True).click()
    wait_for_app(page)


def test_review_queue_counts_stops_and_goes_back_and_browse_uses_the_width(
    app_page: Page, app_url: str, day_table: str, artifacts_dir: Path
) -> None:
    page = app_page
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{app_url}/review?table={T}")
    wait_for_app(page)
    expect(page.get_by_text("optional string")).to_have_count(0)  # no schema dump on top

    new = page.get_by_test_id("stForm").filter(has=page.get_by_role("button", name="Start queue"))
    new.get_by_label("Rows", exact=True).fill("8")
    new.get_by_role("button", name="Start queue").click()
    wait_for_app(page)
    _heading(page, "queue position 1 of 8")
    for n in range(3):  # each label moves on
        _click(page, "1 good")
        _heading(page, f"queue position {n + 2} of 8")
    _click(page, "Next")
    expect(
        page.get_by_role("heading", name=f"Row {row_id(4)} · queue position 5 of 8")
    ).to_be_visible()
    _click(page, "Edit")
    remove = page.locator('[class*="-remove-box"]')
    remove.get_by_label("Why").fill("duplicate")
    remove.get_by_label("Why").press("Tab")
    wait_for_app(page)
    remove.get_by_role("button", name="Delete row").click()
    wait_for_app(page)
    expect(page.get_by_text(re.compile(rf"^Delete row {row_id(4)}\?"))).to_be_visible()
    _click(page, f"Yes, delete {row_id(4)}")
    # Before: "6 of 7", then "8 of 7", and Next went on counting.
    _heading(page, "queue position 5 of 7")
    for n in (6, 7):
        _click(page, "Next")
        _heading(page, f"queue position {n} of 7")
    expect(page.get_by_role("button", name="Next", exact=True)).to_be_disabled()
    page.screenshot(path=str(artifacts_dir / "review-queue-end.png"))
    for n in range(6, 0, -1):  # back over the labelled rows
        _click(page, "Previous")
        _heading(page, f"queue position {n} of 7")
    expect(
        page.get_by_role("heading", name=f"Row {row_id(0)} · queue position 1 of 7")
    ).to_be_visible()
    expect(page.get_by_role("button", name="Previous", exact=True)).to_be_disabled()

    page.goto(f"{app_url}/browse?table={T}")
    wait_for_app(page)
    grid = page.get_by_test_id("stDataFrame").first
    expect(grid).to_be_visible()
    main = page.get_by_test_id("stMainBlockContainer")
    grid_box, main_box = grid.bounding_box(), main.bounding_box()
    assert grid_box is not None and main_box is not None
    assert grid_box["width"] > 0.85 * main_box["width"], (grid_box, main_box)  # was 3/5
    expect(page.get_by_text(re.compile("^Snapshot id"))).to_have_count(0)
    page.screenshot(path=str(artifacts_dir / "browse-grid-width.png"))

    page.goto(app_url)
    wait_for_app(page)
    link = page.get_by_role("link", name=LONG)
    expect(link).to_be_visible()
    cut = link.evaluate(
        "(a) => [a, ...a.querySelectorAll('*')].some((e) => e.scrollWidth > e.clientWidth + 1)"
    )
    assert not cut, "the table's name is cut short on Home"

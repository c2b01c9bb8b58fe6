"""The Browse page in a real Chromium against a real `podium app` server.

Grid cells are drawn on a canvas, so the checks read captions, inputs, chat messages
and the URL rather than the grid.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from app_driver import choose_option, wait_for_app
from browse_data import APPENDED, CHAT, CHAT_ROWS, NEEDLE, NEEDLE_ID
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser
ROW_PX = 35  # height of a grid row (and of the header row) in Streamlit's data grid


def choose(page: Page, label: str, option: str | re.Pattern[str]) -> None:
    """Pick `option` in the Streamlit selectbox labelled `label`."""
    choose_option(page, page.get_by_label(label, exact=True), option)


def chat_message(page: Page, role: str):
    return page.get_by_test_id("stChatMessage").filter(has=page.get_by_text(role, exact=True))


def test_open_table_search_and_read_a_sample(
    app_page: Page, app_url: str, artifacts_dir: Path
) -> None:
    page = app_page
    page.goto(f"{app_url}/browse")  # Home is the default page; Browse has its own path
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Browse")).to_be_visible()

    choose(page, "Table", re.compile(f"^{re.escape(CHAT)}$"))
    expect(page.get_by_text(f"Rows 1–25 of {CHAT_ROWS + APPENDED}")).to_be_visible()

    search = page.get_by_label("Search messages")
    search.fill(NEEDLE)
    search.press("Enter")
    wait_for_app(page)
    expect(page.get_by_text("Rows 1–1 of 1", exact=True)).to_be_visible()

    choose(page, "Open sample", re.compile(f"^{NEEDLE_ID} "))
    user = chat_message(page, "user")
    expect(user).to_contain_text("Question 42: describe the zebra in JSON")
    assistant = chat_message(page, "assistant")
    # The stored answer is one compact JSON line; the page shows it pretty-printed as code.
    expect(assistant.get_by_test_id("stCode")).to_contain_text('"legs": 4')
    assert '\n  "row": 42\n' in assistant.get_by_test_id("stCode").inner_text()
    expect(chat_message(page, "system")).to_contain_text("You answer in JSON.")

    # The run writes the view into the URL at its end, after drawing the sample.
    expect(page).to_have_url(re.compile(rf"[?&]sample={NEEDLE_ID}(&|$)"))
    query = parse_qs(urlparse(page.url).query)
    assert query["table"] == [CHAT]
    assert query["search"] == [NEEDLE]
    assert query["sample"] == [NEEDLE_ID]
    assert query["snapshot"][0].isdigit()
    page.screenshot(path=str(artifacts_dir / "browse-sample.png"), full_page=True)

    # The link alone reopens the same view in a fresh tab.
    link = page.url
    other = page.context.new_page()
    other.goto(link)
    wait_for_app(other)
    expect(chat_message(other, "user")).to_contain_text("Question 42: describe the zebra")
    expect(other.get_by_label("Search messages")).to_have_value(NEEDLE)
    expect(other.get_by_text("Rows 1–1 of 1", exact=True)).to_be_visible()
    other.close()


def test_time_travel_and_statistics(app_page: Page, app_url: str, artifacts_dir: Path) -> None:
    page = app_page
    page.goto(f"{app_url}/browse?table={CHAT}")
    wait_for_app(page)
    expect(page.get_by_text(f"Rows 1–25 of {CHAT_ROWS + APPENDED}")).to_be_visible()

    # The oldest snapshot is the last option: the table before the append.
    page.get_by_label("Snapshot", exact=True).click()
    page.get_by_role("option").last.click()
    wait_for_app(page)
    expect(page.get_by_text(f"Rows 1–25 of {CHAT_ROWS}", exact=True)).to_be_visible()

    # Clicking a row's selection box in the grid (a canvas) opens that sample.
    grid = page.get_by_test_id("stDataFrame")
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 16, box["y"] + ROW_PX * 3 + ROW_PX / 2)  # header, then row 3
    wait_for_app(page)
    heading = page.get_by_role("heading", name=re.compile(r"^Sample c\d{3}"))
    expect(heading).to_be_visible()
    sample = heading.inner_text().split()[1]
    # The run writes the view into the URL at its end, after drawing the sample.
    expect(page).to_have_url(re.compile(rf"[?&]sample={sample}(&|$)"))
    expect(chat_message(page, "user")).to_contain_text(f"Question {int(sample[1:])}:")

    page.get_by_role("radio", name="Statistics").click()
    wait_for_app(page)
    rows_metric = page.get_by_test_id("stMetric").filter(has_text="Rows")
    expect(rows_metric).to_contain_text(str(CHAT_ROWS))
    expect(page.get_by_text("Sample length (characters)")).to_be_visible()
    page.screenshot(path=str(artifacts_dir / "browse-stats.png"), full_page=True)


def test_a_page_number_out_of_range_is_replaced_by_the_last_page(
    app_page: Page, app_url: str
) -> None:
    """Before: the box kept showing 999 (the widget refused it, the view stayed on page 1)."""
    page = app_page
    page.goto(f"{app_url}/browse?table={CHAT}")
    wait_for_app(page)
    box = page.get_by_label(re.compile(r"^Page \(of 3\)"))
    box.fill("999")
    box.press("Enter")
    wait_for_app(page)
    expect(box).to_have_value("3")
    expect(page.get_by_text(f"Rows 51–65 of {CHAT_ROWS + APPENDED}")).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]page=3(&|$)"))

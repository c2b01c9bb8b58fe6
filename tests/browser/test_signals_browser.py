"""Signals in Browse, in a real Chromium against a real `podium app` server: the Signals
filter with its counts, an opened row's evidence (the screenshot in docs/signals.md and
the README comes from this test's artifacts), and "Keep one per cluster" previewed,
confirmed and written.

Every step waits for a condition the page shows (the row count of a finished run, an
expander's content), never for time: on a busy machine the first run of a fresh page
can still be drawing when `wait_for_app` returns, and an expander clicked while its
element is replaced comes back closed."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from app_driver import choose_option, using_home, wait_for_app
from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "signals"))
from signal_tables import GSM_PROBLEM, PROSE, write_chat  # noqa: E402

pytestmark = pytest.mark.browser
TABLE = "sig.chat"


def test_filter_on_a_signal_and_read_a_row_s_evidence(
    app_page: Page, app_url: str, app_home: Path, artifacts_dir: Path
) -> None:
    from podium.signals.job import SignalsConfig, compute_signals

    texts = [
        PROSE * 2,
        (PROSE * 2).replace("quick", "quack"),
        "Please solve this for me: " + GSM_PROBLEM,
        "Deploy with AWS key AKIAIOSFODNN7EXAMPLE and mail ops@example.com if it fails.",
        PROSE * 2,
        "A row about something else entirely, with nothing to find in it.",
    ]
    with using_home(app_home):
        write_chat(TABLE, texts)
        write_chat("sig.gsm", [GSM_PROBLEM], prefix="g")
        compute_signals(
            SignalsConfig.model_validate(
                {
                    "table": {"name": TABLE},
                    "signals": ["near-dup,contamination,private-data,language"],
                    "contamination": {"evals": ["sig.gsm"]},
                }
            )
        )
    page = app_page
    page.goto(f"{app_url}/browse?table={TABLE}")
    wait_for_app(page)
    expect(page.get_by_text("Rows 1–6 of 6", exact=True)).to_be_visible()
    sidebar = page.get_by_test_id("stSidebar")
    rows_with = sidebar.get_by_role("combobox", name="Rows with")
    open_expander(sidebar.get_by_text("Signals", exact=True), rows_with)
    choose_option(page, rows_with, "near-dup: not canonical (2)", typed="not canonical")
    expect(page.get_by_text("Rows 1–2 of 2", exact=True)).to_be_visible()

    page.goto(f"{app_url}/browse?table={TABLE}&sample=r0003")
    wait_for_app(page)
    expect(page.get_by_text("Sample r0003", exact=True)).to_be_visible()
    secret = page.get_by_text(re.compile(r"secret \(AWS Access Key\) 'AKIA…LE'"))
    open_expander(page.get_by_text(re.compile(r"^Signals \(")), secret)
    expect(page.get_by_text(re.compile(r"email \(email\) 'ops@example.com'"))).to_be_visible()
    page.screenshot(path=str(artifacts_dir / "browse-signals.png"), full_page=True)

    # Keep one per cluster: previewed, confirmed, one snapshot; the page then shows it.
    page.goto(f"{app_url}/browse?table={TABLE}")
    wait_for_app(page)
    expect(page.get_by_text("Rows 1–6 of 6", exact=True)).to_be_visible()
    preview = page.get_by_role("button", name="Preview")
    open_expander(page.get_by_text("Act on signals", exact=True), preview)
    preview.click()
    expect(page.get_by_text(re.compile(r"^Would remove 2 rows: signals: remove"))).to_be_visible()
    do = page.get_by_role("button", name="Keep one per cluster (near-dup): 2 rows")
    confirm_box(page, "Yes, keep one per cluster (near-dup): 2 rows", do)
    do.click()
    expect(page.get_by_text(re.compile(r"^Removed 2 rows: snapshot \d+"))).to_be_visible()
    expect(page.get_by_text("Rows 1–4 of 4", exact=True)).to_be_visible()


def open_expander(summary: Locator, content: Locator, tries: int = 3) -> None:
    """Click an expander's summary until `content` inside it shows: a click that landed
    while the page redrew the expander leaves it closed."""
    for _ in range(tries):
        if content.is_visible():
            return
        summary.click()
        try:
            content.wait_for(state="visible", timeout=10_000)
        except PlaywrightTimeout:
            continue
        return
    expect(content).to_be_visible()


def confirm_box(page: Page, label: str, enabled: Locator, tries: int = 3) -> None:
    """Tick the checkbox `label` until the button it enables is enabled: a click that
    landed while the page reran is lost, and a second click on a ticked box would untick
    it, so the box's state decides."""
    box = page.get_by_test_id("stCheckbox").filter(has_text=label).locator("input")
    for _ in range(tries):
        wait_for_app(page)
        if not box.is_checked():
            page.get_by_text(label, exact=True).click()
        try:
            expect(enabled).to_be_enabled(timeout=10_000)
        except AssertionError:
            continue
        return
    expect(enabled).to_be_enabled()

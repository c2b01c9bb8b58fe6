"""Signals in Browse, in a real Chromium against a real `podium app` server: the Signals
filter with its counts, and an opened row's evidence (the screenshot in docs/signals.md
and the README comes from this test's artifacts)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from app_driver import using_home, wait_for_app
from playwright.sync_api import Page, expect

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
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Signals", exact=True).click()
    sidebar.get_by_role("combobox", name="Rows with").click()
    page.get_by_role("option", name="near-dup: not canonical (2)").click()
    wait_for_app(page)
    expect(page.get_by_text("Rows 1–2 of 2", exact=True)).to_be_visible()

    page.goto(f"{app_url}/browse?table={TABLE}&sample=r0003")
    wait_for_app(page)
    page.get_by_text(re.compile(r"^Signals \(")).click()
    expect(page.get_by_text(re.compile(r"secret \(AWS Access Key\) 'AKIA…LE'"))).to_be_visible()
    expect(page.get_by_text(re.compile(r"email \(email\) 'ops@example.com'"))).to_be_visible()
    page.screenshot(path=str(artifacts_dir / "browse-signals.png"), full_page=True)

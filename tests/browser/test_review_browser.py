# ruff: noqa: F811  (fixtures imported from train_fixtures are requested by name)
"""Review that acts, in a real Chromium: label, edit and remove rows in Browse, read the
rows' history, review from a queue with a key, tag the result, diff it against the
previous snapshot, and queue a cpu-smoke SFT run on the tag from the Train page."""

from __future__ import annotations

import getpass
import re
import sys
from pathlib import Path

import pytest
from app_driver import choose_option, using_home, wait_for_app
from playwright.sync_api import Page, expect
from train_fixtures import tiny_checkpoint  # noqa: F401

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "review"))
from review_data import make_table, row_id  # noqa: E402

pytestmark = pytest.mark.browser

T = "rv.browser"
ME = getpass.getuser()


@pytest.fixture(scope="module")
def review_table(app_home: Path, tiny_checkpoint: Path) -> str:  # noqa: F811
    from podium.models.registry import register_model

    with using_home(app_home):
        make_table(T, 6)
        register_model("review-tiny", kind="base", path=str(tiny_checkpoint))
    return T


def _form(page: Page, button: str):  # type: ignore[no-untyped-def]
    return page.get_by_test_id("stForm").filter(has=page.get_by_role("button", name=button))


def _open_sample(page: Page, app_url: str, sample: str) -> None:
    page.goto(f"{app_url}/browse?table={T}&sample={sample}")
    wait_for_app(page)
    expect(page.get_by_role("heading", name=f"Sample {sample}")).to_be_visible()


def test_label_edit_remove_tag_diff_and_train(
    app_page: Page, app_url: str, app_home: Path, review_table: str, artifacts_dir: Path
) -> None:
    page = app_page
    page.set_viewport_size({"width": 1440, "height": 900})

    # Label row 1 bad, edit its answer; remove row 2.
    _open_sample(page, app_url, row_id(1))
    page.get_by_role("button", name="2 bad").first.click()
    wait_for_app(page)
    expect(page.get_by_text("Labelled 1 row bad.")).to_be_visible()
    page.get_by_role("tab", name="Edit").click()
    edit = _form(page, "Save edit")
    edit.get_by_label("Content").fill("question 1, asked more clearly")
    edit.get_by_label("Why (kept in the snapshot)").fill("clearer prompt")
    edit.get_by_role("button", name="Save edit").click()
    wait_for_app(page)
    page.get_by_role("button", name="Yes, save the edit").click()  # it asks first
    wait_for_app(page)
    expect(page.get_by_text(re.compile(r"Edited row-0000001: snapshot \d+"))).to_be_visible()

    _open_sample(page, app_url, row_id(2))
    page.get_by_role("tab", name="Edit").click()
    remove = page.locator('[class*="-remove-box"]')  # plain buttons: Enter removes nothing
    remove.get_by_label("Why").fill("duplicate")
    remove.get_by_label("Why").press("Tab")
    wait_for_app(page)
    remove.get_by_role("button", name="Delete row").click()
    wait_for_app(page)
    expect(page.get_by_text(re.compile(rf"^Delete row {row_id(2)}\?"))).to_be_visible()  # asks
    page.get_by_role("button", name=f"Yes, delete {row_id(2)}").click()
    wait_for_app(page)
    expect(page.get_by_text(re.compile(r"Removed 1 row: snapshot \d+"))).to_be_visible()
    expect(page.get_by_text("Rows 1–5 of 5")).to_be_visible()

    # The rows' history names each change and its author.
    _open_sample(page, app_url, row_id(1))
    page.get_by_role("tab", name="History").click()
    history = page.get_by_test_id("stMarkdown").filter(has_text="by")
    expect(history.filter(has_text="edit").first).to_contain_text(f"edit by {ME}")
    expect(history.filter(has_text="clearer prompt").first).to_be_visible()
    expect(history.filter(has_text="annotation").first).to_contain_text(f"annotation by {ME}")
    edited = page.get_by_test_id("stChatMessage").filter(has_text="asked more clearly")
    expect(edited).to_have_count(1)
    page.screenshot(path=str(artifacts_dir / "review-browse-annotations.png"))

    # Review queue: a key labels the row and the progress moves.
    page.goto(f"{app_url}/review?table={T}")
    wait_for_app(page)
    new = _form(page, "Start queue")
    new.get_by_label("Rows", exact=True).fill("2")
    new.get_by_role("button", name="Start queue").click()
    wait_for_app(page)
    expect(page.get_by_text(re.compile("0 of 2 reviewed"))).to_be_visible()
    page.get_by_role("heading", name="Review").click()  # focus off the form's fields
    page.keyboard.press("1")
    wait_for_app(page)
    expect(page.get_by_text(re.compile("1 of 2 reviewed"))).to_be_visible()
    page.screenshot(path=str(artifacts_dir / "review-queue.png"))

    # Tag the result and diff it against the previous snapshot.
    page.get_by_role("radio", name="Snapshots").click()
    wait_for_app(page)
    tag = _form(page, "Create tag")
    tag.get_by_label("New tag (on B)").fill("reviewed")
    tag.get_by_role("button", name="Create tag").click()
    wait_for_app(page)
    expect(page.get_by_text(re.compile(r"Tagged: reviewed → snapshot \d+"))).to_be_visible()
    expect(page.get_by_text(re.compile("0 added, 1 removed, 0 changed"))).to_be_visible()
    expect(page.get_by_text(row_id(2)).first).to_be_visible()

    # Train on the tag: the Train page opens with it, and a cpu-smoke SFT run is queued.
    page.reload()
    wait_for_app(page)
    page.get_by_role("radio", name="Snapshots").click()
    wait_for_app(page)
    choose_option(page, page.get_by_role("combobox", name="To (B)"), "reviewed")
    page.get_by_role("button", name="Train on reviewed").click()
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Train")).to_be_visible()
    snapshot = page.get_by_role("combobox", name="Snapshot", exact=True)
    expect(snapshot).to_have_value(re.compile(r"^reviewed \(tag\) · "))  # one label format
    page.get_by_role("button", name="Queue job").first.click()
    wait_for_app(page)

    from podium.jobs.queue import list_jobs
    from podium.store.catalog.catalog import load_table
    from trainers.config import SftConfig

    with using_home(app_home):
        jobs = [j for j in list_jobs() if j["kind"] == "sft"]
        tagged = load_table(T).snapshot_by_name("reviewed").snapshot_id
    assert jobs, "no SFT job was queued"
    cfg = SftConfig.model_validate_json(jobs[0]["config"])
    assert cfg.preset == "cpu-smoke"
    assert (cfg.table.name, cfg.table.snapshot_id, cfg.table.ref) == (T, tagged, "reviewed")
    assert jobs[0]["inputs"] == [f"{T}@{tagged}#reviewed"]

# ruff: noqa: F811  (fixtures imported from train_fixtures are requested by name)
"""A newcomer's day (issue 28), by clicks in a real Chromium at 1440x900: every page
tells the truth about its state.

Home shows where things stand (no demo button once the demo is loaded); Browse opens on
a chat table with its pickers in sight, keeps values (not labels) in the URL, shows a
link's "malformed only" filter and clears it, and ticks the row it has open after a
search; Review shows an edit at once, drops a removed row, refuses to label it, and asks
before deleting; Train shows the run it queued, live, where it was queued, and asks
before cancelling; Validate's status says one thing; Compare's rating counts name the
models. Every request the browser makes goes to the app's own host.

The app runs alone (`podium app`); the test runs what the pages queue with a real worker
in its own process, so the pages watch real jobs. Training is cpu-smoke on a tiny model.
Screenshots land in test-artifacts/newcomer-*.png.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from app_driver import (
    REPO,
    choose_option,
    free_port,
    running,
    server_command,
    using_home,
    wait_for_app,
    wait_healthy,
)
from playwright.sync_api import Browser, Page, expect
from train_fixtures import tiny_checkpoint  # noqa: F401

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "review"))
from queue_runner import run_queued  # noqa: E402
from review_data import make_table, row_id  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.train]
VIEWPORT = {"width": 1440, "height": 900}
REVIEW = "nc.review"
COMPARISON = "cmp.newcomer"


@pytest.fixture(scope="module")
def newcomer(
    tmp_path_factory: pytest.TempPathFactory, artifacts_dir: Path, tiny_checkpoint: Path
) -> Iterator[tuple[str, Path]]:
    """`podium app` on a home with the demo loaded as Home's button loads it, a small
    review table, a tiny base model and a finished comparison of two checkpoints."""
    from compare_data import BAD, GOOD, register_dead, write_prompts, write_samples

    from generators.code_exec.demo_functions import load_demo_functions
    from podium.compare.job import CompareConfig, run_compare
    from podium.models.registry import register_model
    from podium.reporting import Reporter
    from podium.store.read.refs import TableRef
    from podium.store.write.demo import load_demo

    home = tmp_path_factory.mktemp("newcomer-home")
    with using_home(home):
        make_table(REVIEW, 4)
        register_model("nc-tiny", kind="base", path=str(tiny_checkpoint))
        table = write_prompts("evals.nc_colours")
        models = [register_dead("nc-alpha"), register_dead("nc-omega")]
        cfg = CompareConfig(
            models=models, input=TableRef(name=table), out=COMPARISON, max_tokens=32,
            checks=["json"],
        )  # fmt: skip
        write_samples("gen.nc_alpha", models[0], table, cfg, GOOD)
        write_samples("gen.nc_omega", models[1], table, cfg, BAD)
        run_compare(cfg, Reporter())
        # Last, as Home's button does: demo.chat is the newest chat table, and the
        # functions table is written after it (Browse opened on it).
        load_demo()
        load_demo_functions()
    port = free_port()
    env = dict(os.environ, PODIUM_HOME=str(home), PYTHONUNBUFFERED="1")
    log_path = artifacts_dir / "newcomer-app.log"
    with running(server_command(port), env, REPO, log_path) as proc:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(proc, f"{url}/_stcore/health", log_path)
        yield url, home


class Walk:
    """One browser tab at 1440x900 that records the host of every request it makes."""

    def __init__(self, browser: Browser, url: str, home: Path, artifacts: Path) -> None:
        self.url, self.home, self.artifacts = url, home, artifacts
        self.context = browser.new_context(viewport=VIEWPORT)
        self.context.set_default_timeout(60_000)
        self.requests: list[str] = []
        self.context.on("request", lambda r: self.requests.append(r.url))
        self.page: Page = self.context.new_page()

    def open(self, path: str) -> Page:
        self.page.goto(f"{self.url}/{path}")
        wait_for_app(self.page)
        return self.page

    def click(self, role: str, name: str, exact: bool = True) -> None:
        self.page.get_by_role(role, name=name, exact=exact).first.click()  # type: ignore[arg-type]
        wait_for_app(self.page)

    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlparse(self.page.url).query)

    def form(self, button: str):  # type: ignore[no-untyped-def]
        page = self.page
        return page.get_by_test_id("stForm").filter(has=page.get_by_role("button", name=button))

    def run_jobs(self) -> None:
        """What `podium up`'s worker would do with what the pages queued."""
        with using_home(self.home):
            run_queued()

    def choose(
        self, picker: re.Pattern[str] | str, option: re.Pattern[str] | None, multi: bool = False
    ) -> None:
        choose_option(
            self.page, self.page.get_by_role("combobox", name=picker).first, option, multi=multi
        )

    def shot(self, name: str) -> None:
        self.page.screenshot(path=str(self.artifacts / f"newcomer-{name}.png"))

    def foreign_hosts(self) -> set[str]:
        own = urlparse(self.url).hostname
        hosts = {urlparse(u).hostname for u in self.requests if urlparse(u).scheme != "data"}
        return {h for h in hosts if h and h != own}


@pytest.fixture
def walk(newcomer: tuple[str, Path], browser: Browser, artifacts_dir: Path) -> Iterator[Walk]:
    url, home = newcomer
    w = Walk(browser, url, home, artifacts_dir)
    yield w
    w.context.close()
    assert w.requests, "no request was recorded"
    assert w.foreign_hosts() == set(), "pages contacted hosts other than the app's own"


def test_home_and_browse_tell_the_truth(walk: Walk) -> None:
    page = walk.open("")
    expect(page.get_by_role("heading", name="Where things stand")).to_be_visible()
    expect(
        page.get_by_text(re.compile(r"^\d+ tables · 3 models · 0 model servers running"))
    ).to_be_visible()
    expect(page.get_by_role("button", name="Load the demo data")).to_have_count(0)
    walk.shot("home")

    # Browse opens on a chat table, with its pickers in sight at 900 px.
    page = walk.open("browse")
    table = page.get_by_role("combobox", name="Table", exact=True)
    expect(table).to_have_value("demo.chat")
    for picker in (table, page.get_by_role("combobox", name="Snapshot", exact=True)):
        box = picker.bounding_box()
        assert box is not None and box["y"] + box["height"] <= VIEWPORT["height"], box
    walk.shot("browse")

    # A filter puts its value in the URL, never the picker's label; so does the sample.
    page = walk.open("browse?table=demo.chat")
    page.get_by_text("Filters", exact=True).click()
    walk.choose(re.compile("^Selected .*Split|^Split"), re.compile(r"^train \("), multi=True)
    expect(page).to_have_url(re.compile(r"split=train(&|$)"))
    walk.choose("Open sample", re.compile(r"^chat-00001 "))
    expect(page).to_have_url(re.compile(r"[?&]sample="))  # the URL follows a moment later
    sample = walk.query()["sample"][0]
    assert " — " not in sample and re.fullmatch(r"[\w.-]+", sample), sample
    expect(page.get_by_role("heading", name=f"Sample {sample}")).to_be_visible()
    walk.choose(re.compile("^Selected .*Source|^Source"), None, multi=True)
    expect(page).to_have_url(re.compile(r"[?&]source="))
    query = walk.query()
    assert query["split"] == ["train"] and all("(" not in v for v in query["source"]), query
    assert all(" — " not in v for v in query.get("sample", [])), query
    page.reload()
    wait_for_app(page)
    expect(page.get_by_role("button", name=re.compile(r"^Split: train"))).to_be_visible()

    # After a search the ticked row is the open sample.
    page = walk.open("browse?table=demo.chat")
    walk.choose("Open sample", re.compile(r"^chat-00001 "))
    expect(page).to_have_url(re.compile(r"[?&]sample="))
    opened = walk.query()["sample"][0]
    # A phrase of the open sample's question: it stays in the results, at another row.
    question = page.get_by_test_id("stChatMessage").first.inner_text().split("\n")[-1]
    search = page.get_by_label("Search messages")
    search.fill(question[:24])
    search.press("Enter")
    wait_for_app(page)
    expect(page).to_have_url(re.compile(r"[?&]search="))
    assert walk.query()["sample"] == [opened]
    expect(page.get_by_role("heading", name=f"Sample {opened}")).to_be_visible()
    # The grid draws its selection a moment after the rerun ends (CI once read it too early).
    ticked = page.wait_for_function(
        """() => {
             const rows = [...document.querySelectorAll(
                 '[data-testid="stDataFrame"] [aria-selected="true"]')]
               .map(e => (e.closest('tr') || e).innerText);
             return rows.length ? rows : null;
           }""",
        timeout=20_000,
    ).json_value()
    assert ticked and all(opened in t for t in ticked), (opened, ticked)
    walk.shot("browse-search")


def test_validate_status_and_the_malformed_filter(walk: Walk) -> None:
    page = walk.open("validate?table=demo.json_sft")
    expect(page.get_by_role("combobox", name="Extract")).to_have_value("auto")
    walk.click("button", "Queue job")
    expect(page.get_by_text(re.compile("^Queued job "))).to_be_visible()
    walk.run_jobs()
    expect(page.get_by_text("Malformed rows", exact=True)).to_be_visible()
    status = page.locator("strong", has_text=re.compile(r"^(succeeded|running|queued)$"))
    expect(status).to_have_count(1)
    expect(status).to_have_text("succeeded")
    walk.shot("validate")

    # Validate's link filters Browse to the malformed rows; the filter shows and clears.
    walk.click("link", "Open the malformed rows in Browse")
    expect(page).to_have_url(re.compile(r"malformed=1"))
    chip = page.get_by_role("button", name="Malformed only", exact=True)
    expect(chip).to_be_visible()
    walk.shot("browse-malformed")
    chip.click()
    wait_for_app(page)
    expect(page.get_by_role("button", name="Malformed only", exact=True)).to_have_count(0)
    assert "malformed" not in walk.query()


def test_review_shows_edits_drops_removed_rows_and_asks_first(walk: Walk) -> None:
    from podium.store.catalog.catalog import load_table

    page = walk.open(f"review?table={REVIEW}")
    new = walk.form("Start queue")
    new.get_by_label("Rows", exact=True).fill("3")
    new.get_by_role("button", name="Start queue").click()
    wait_for_app(page)
    expect(page.get_by_text(re.compile("0 of 3 reviewed"))).to_be_visible()
    expect(page.get_by_role("heading", name=re.compile(f"^Row {row_id(0)} "))).to_be_visible()
    with using_home(walk.home):
        before = load_table(REVIEW).current_snapshot().snapshot_id  # type: ignore[union-attr]

    # An edit shows in the queue at once.
    walk.click("button", "Edit")
    edit = walk.form("Save edit")
    edit.get_by_label("Content").fill("question 0, asked more clearly")
    edit.get_by_label("Why (kept in the snapshot)").fill("clearer prompt")
    edit.get_by_role("button", name="Save edit").click()
    wait_for_app(page)
    # It asks first, showing the change; nothing is written until the answer.
    expect(
        page.get_by_text(re.compile(rf"^Save this edit of message 0 \(user\) of row {row_id(0)}\?"))
    ).to_be_visible()
    preview = page.get_by_test_id("stCode").filter(has_text="+question 0, asked more clearly")
    expect(preview).to_be_visible()
    expect(page.get_by_text(re.compile("^Edited "))).to_have_count(0)
    walk.shot("review-edit-asks")
    walk.click("button", "Yes, save the edit")
    expect(page.get_by_text(re.compile(rf"Edited {row_id(0)}: snapshot \d+"))).to_be_visible()
    bubbles = page.get_by_test_id("stChatMessage")
    expect(bubbles.filter(has_text="question 0, asked more clearly")).to_have_count(1)
    page.reload()
    wait_for_app(page)
    expect(bubbles.filter(has_text="question 0, asked more clearly")).to_have_count(1)
    walk.shot("review-edited")

    # Delete asks first; then the row leaves the queue.
    if not page.get_by_role("button", name="Delete row").count():
        walk.click("button", "Edit")
    remove = page.locator('[class*="-remove-box"]')  # plain buttons: Enter removes nothing
    remove.get_by_label("Why").fill("duplicate")
    remove.get_by_label("Why").press("Tab")
    wait_for_app(page)
    remove.get_by_role("button", name="Delete row").click()
    wait_for_app(page)
    expect(page.get_by_text(re.compile(rf"^Delete row {row_id(0)}\?"))).to_be_visible()
    expect(page.get_by_text(re.compile("Removed 1 row"))).to_have_count(0)  # nothing yet
    walk.shot("review-delete-asks")
    walk.click("button", f"Yes, delete {row_id(0)}")
    expect(page.get_by_text(re.compile(r"Removed 1 row: snapshot \d+"))).to_be_visible()
    expect(page.get_by_role("heading", name=re.compile(f"^Row {row_id(1)} "))).to_be_visible()
    expect(page.get_by_text(re.compile("0 of 2 reviewed"))).to_be_visible()

    # The removed row, seen at the snapshot before, cannot be labelled.
    page = walk.open(f"browse?table={REVIEW}&snapshot={before}&sample={row_id(0)}")
    expect(page.get_by_text(re.compile("^Showing an older snapshot"))).to_be_visible()
    walk.click("button", "2 bad")
    expect(
        page.get_by_text(re.compile(rf"{row_id(0)}.* was removed after snapshot"))
    ).to_be_visible()
    expect(page.get_by_text(re.compile(r"^Labelled 1 row"))).to_have_count(0)
    walk.shot("review-removed-refused")


def test_a_queued_run_shows_its_live_curve_where_it_was_queued(walk: Walk) -> None:
    page = walk.open("train?table=demo.chat")
    expect(page.get_by_role("heading", name="Train")).to_be_visible()
    box = page.get_by_label("Learning rate", exact=True)
    expect(box).not_to_have_value(re.compile(r"^0\.00$"))
    steps = page.get_by_label("Max steps", exact=True)
    steps.fill("2")
    steps.press("Tab")
    walk.click("button", "Queue job")
    label = page.locator("strong", has_text=re.compile(r"^sft → .* · queued · "))
    expect(label.first).to_be_visible()
    job_id = label.first.inner_text().rsplit(" · ", 1)[1]

    # Cancel asks first; keeping it leaves the run queued.
    walk.click("button", "Cancel run")
    expect(page.get_by_text(re.compile(rf"^Cancel run {job_id} \(queued\)\?"))).to_be_visible()
    walk.shot("train-cancel-asks")
    walk.click("button", "Keep it")
    with using_home(walk.home):
        from podium.jobs.queue import get_job

        assert get_job(job_id)["status"] == "queued"

    walk.run_jobs()
    with using_home(walk.home):
        assert get_job(job_id)["status"] == "succeeded", get_job(job_id)["error"]
    # Still on the Launch tab: the run's curves and checkpoint, where it was queued.
    launch = page.get_by_role("tabpanel").first
    expect(launch.locator("strong", has_text=re.compile(r"^Loss$")).first).to_be_visible()
    expect(launch.get_by_test_id("stVegaLiteChart").first).to_be_visible()
    expect(launch.get_by_text(re.compile(r"^Checkpoint .* registered"))).to_be_visible()
    expect(
        launch.locator("strong", has_text=re.compile(rf"· succeeded · {job_id}$"))
    ).to_be_visible()
    walk.shot("train-launch-live")
    # A mouse wheel over a chart scrolls the page (it zoomed the chart).
    chart = launch.get_by_test_id("stVegaLiteChart").first
    chart.scroll_into_view_if_needed()
    box = chart.bounding_box()
    assert box is not None
    scrolled = "() => document.querySelector('[data-testid=\"stMain\"]').scrollTop"
    before = page.evaluate(scrolled)
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, 300)
    page.wait_for_timeout(500)
    assert page.evaluate(scrolled) > before
    # The Runs tab preselects it and names its status as it is now.
    page.get_by_role("tab", name="Runs").click()
    wait_for_app(page)
    expect(page.get_by_role("combobox", name="Run")).to_have_value(
        re.compile(rf"succeeded · {job_id}$")
    )


def test_rating_counts_name_the_models(walk: Walk) -> None:
    page = walk.open(f"compare?name={COMPARISON}")
    expect(page.get_by_text(re.compile("sampling .*max tokens 32"))).to_be_visible()
    expect(page.get_by_text(re.compile(r"sampling \{"))).to_have_count(0)
    page.get_by_text("Blind vote", exact=True).click()
    wait_for_app(page)
    walk.click("button", "A is better")
    expect(page.get_by_text(re.compile("^A was "))).to_be_visible()
    page.get_by_text("Ratings", exact=True).click()
    wait_for_app(page)
    expect(
        page.get_by_text(
            re.compile(
                r"1 votes · nc-(alpha|omega) better: [01] · nc-(alpha|omega) better: [01] · tie: 0"
            )
        )
    ).to_be_visible()
    expect(page.get_by_text("A is better: ")).to_have_count(0)
    walk.shot("compare-ratings")

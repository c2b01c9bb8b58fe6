"""Blind voting in a real Chromium: names hidden, a key votes, names revealed, ratings move."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import cli_fork
import pytest
from app_driver import using_home, wait_for_app
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser_comparison(app_home: Path) -> str:
    from compare_data import BAD, GOOD, register_dead, write_prompts, write_samples

    from podium.compare.job import CompareConfig, run_compare
    from podium.reporting import Reporter
    from podium.store.read.refs import TableRef

    with using_home(app_home):
        table = write_prompts("evals.vote_colours")
        models = [register_dead("vote-alpha"), register_dead("vote-omega")]
        cfg = CompareConfig(
            models=models,
            input=TableRef(name=table),
            out="cmp.vote_browser",
            max_tokens=32,
            checks=["json"],
        )
        write_samples("gen.vote_alpha", models[0], table, cfg, GOOD)
        write_samples("gen.vote_omega", models[1], table, cfg, BAD)
        run_compare(cfg, Reporter())
    return cfg.out


def test_blind_vote_with_keyboard_changes_ratings(
    app_page: Page, app_url: str, app_home: Path, browser_comparison: str, artifacts_dir: Path
) -> None:
    from podium.compare.ratings import ratings_report
    from podium.compare.table import load_comparison
    from podium.compare.votes import list_votes
    from podium.identity import local_user

    page = app_page
    page.goto(f"{app_url}/compare?name={browser_comparison}")
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Compare")).to_be_visible()
    expect(page.get_by_text("prompt 1 of 4")).to_be_visible()
    page.get_by_text("Blind vote", exact=True).click()
    wait_for_app(page)
    # Votes are the signed-in user's (the OS user in local mode), never a typed-in name.
    voter = local_user().name
    expect(page.get_by_text(f"0 of 4 prompts voted by {voter}")).to_be_visible()
    expect(page.get_by_label("Your name")).to_have_count(0)
    expect(page.get_by_role("button", name="B is better")).to_be_visible()
    assert page.get_by_text(re.compile("vote-alpha|vote-omega")).count() == 0  # blind
    page.screenshot(path=str(artifacts_dir / "compare-blind.png"), full_page=True)

    page.get_by_role("heading", name="Compare").click()  # focus on the page, not a widget
    page.keyboard.press("2")  # shortcut: B is better
    wait_for_app(page)
    expect(page.get_by_text(re.compile(r"A was vote-(alpha|omega), B was"))).to_be_visible()
    expect(page.get_by_text(f"1 of 4 prompts voted by {voter}")).to_be_visible()
    page.keyboard.press("j")  # shortcut: next prompt
    wait_for_app(page)
    expect(page.get_by_text("prompt 2 of 4")).to_be_visible()
    page.get_by_role("button", name="A is better").click()
    wait_for_app(page)
    expect(page.get_by_text(f"2 of 4 prompts voted by {voter}")).to_be_visible()
    page.screenshot(path=str(artifacts_dir / "compare-revealed.png"), full_page=True)

    with using_home(app_home):
        votes = list_votes(browser_comparison)
        assert [(v["voter"], v["verdict"]) for v in votes] == [
            (voter, "B"),
            (voter, "A"),
        ]
        report = ratings_report(load_comparison(browser_comparison), votes, bootstrap=20)
    assert report["votes"] == 2
    winners = [v["winner"] for v in votes]
    assert report["ratings"][0]["wins"] == max(winners.count(m) for m in set(winners))
    cli = cli_fork.run(  # what a person sees after voting in the UI
        [sys.executable, "-m", "podium.cli", "compare", "ratings", browser_comparison, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PODIUM_HOME=str(app_home)),
    )
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["votes"] == 2

    page.get_by_text("Ratings", exact=True).click()
    wait_for_app(page)
    expect(page.get_by_text("2 votes").first).to_be_visible()

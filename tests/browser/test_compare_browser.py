"""A new comparison by clicks in a real Chromium: queued from the page, run by a real
worker, then opened by its "Open ..." button (issue 45: the link did nothing); a named
judge judging a comparison from its Judges section (issue 47)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from app_driver import using_home, wait_for_app
from playwright.sync_api import Page, expect
from vllm_fixtures import VllmServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))
from queue_runner import run_queued  # noqa: E402

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def open_setup(app_home: Path) -> tuple[list[str], str]:
    """Two models on a closed port whose samples for the page's defaults already exist:
    the comparison the page queues succeeds without a vLLM server."""
    from compare_data import BAD, GOOD, register_dead, write_prompts, write_samples

    from podium.app.views.compare import model as cm
    from podium.compare.job import CompareConfig
    from podium.store.read.refs import TableRef

    with using_home(app_home):
        table = write_prompts("evals.open_colours")
        models = [register_dead("open-alpha"), register_dead("open-omega")]
        values = cm.new_form_values(models, table)
        cfg = CompareConfig(models=models, input=TableRef(name=table), **values)
        write_samples("gen.open_alpha", models[0], table, cfg, GOOD)
        write_samples("gen.open_omega", models[1], table, cfg, BAD)
    return models, table


def test_open_shows_the_comparison_just_made(
    app_page: Page, app_url: str, app_home: Path, open_setup: tuple[list[str], str]
) -> None:
    models, table = open_setup
    page = app_page
    page.goto(f"{app_url}/compare?models={','.join(models)}&table={table}")
    wait_for_app(page)
    page.get_by_role("button", name="Queue job").click()
    wait_for_app(page)
    expect(page.get_by_text("Details in the Logbook")).to_be_visible()  # the job, watched
    with using_home(app_home):
        run_queued()
    opener = page.get_by_text("Open cmp.open_colours")  # was a link, now a button
    expect(opener).to_be_visible(timeout=60_000)
    opener.click()
    wait_for_app(page)
    expect(page.get_by_text("prompt 1 of 4")).to_be_visible()
    expect(page.get_by_role("radio", name="Side by side")).to_be_checked()
    expect(page.get_by_role("heading", name="open-alpha")).to_be_visible()
    assert "name=cmp.open_colours" in page.url


def test_a_partial_checkpoint_says_so_on_home_and_in_compare(
    app_page: Page, app_url: str, app_home: Path, tmp_path: Path
) -> None:
    """Before: a cancelled run's checkpoint read as a finished one on Home and in
    Compare's picker, which preselected it as the newest checkpoint (issue 45)."""
    from podium.models.registry import register_model

    ckpt = tmp_path / "cut"
    ckpt.mkdir()
    with using_home(app_home):
        register_model(
            "grpo-cut-step-2",
            kind="trained",
            path=str(ckpt),
            parent="open-alpha",
            lineage={"partial": "cancelled at step 2 of 20"},
        )
    page = app_page
    page.goto(app_url)
    wait_for_app(page)
    expect(page.get_by_text("grpo-cut-step-2 (partial: cancelled at step 2 of 20)")).to_be_visible()
    page.goto(f"{app_url}/compare")
    wait_for_app(page)
    page.get_by_text("New comparison", exact=True).click()
    wait_for_app(page)
    picker = page.get_by_role("combobox", name="Checkpoints").first
    expect(page.get_by_text("grpo-cut-step-2", exact=False)).to_have_count(0)  # not chosen
    picker.click()
    expect(
        page.get_by_role("option", name="grpo-cut-step-2 (partial: cancelled at step 2 of 20)")
    ).to_be_visible()


def test_a_named_judge_judges_a_comparison_by_clicks_and_the_agreement_table_shows(
    app_page: Page, app_url: str, app_home: Path, vllm_server: VllmServer, tmp_path: Path
) -> None:
    """The Judges section with a real judge: the session's vLLM server (the base model)
    as an endpoint bound to a named judge, picked on the page, its job run by a real
    worker; then the agreement with people's votes, with its counts (issue 47)."""
    from compare_data import BAD, GOOD, register_dead, write_prompts, write_samples

    from podium.compare.job import CompareConfig, run_compare
    from podium.compare.judge_registry import add_judge
    from podium.compare.table import load_comparison
    from podium.compare.votes import BlindPair, cast_vote
    from podium.identity import User
    from podium.models.registry import add_endpoint
    from podium.reporting import Reporter
    from podium.store.read.refs import TableRef

    url = vllm_server.base_url  # in the session's home, where the server runs
    with using_home(app_home):
        table = write_prompts("evals.judge_colours")
        models = [register_dead("judge-alpha"), register_dead("judge-omega")]
        cfg = CompareConfig(models=models, input=TableRef(name=table), out="cmp.judged")
        write_samples("gen.judge_alpha", models[0], table, cfg, GOOD)
        write_samples("gen.judge_omega", models[1], table, cfg, BAD)
        run_compare(cfg, Reporter())
        comparison = load_comparison(cfg.out)
        ann = User(name="ann", role="reviewer", source="oidc")
        for item in comparison.items:  # people prefer the good answers
            cast_vote(comparison, BlindPair(item.prompt_id, *models), "A", ann)
        add_endpoint(url, "judge-smol", remote_model=vllm_server.model)
        add_judge("smol-strict", "judge-smol", "pairwise")
    page = app_page
    page.goto(f"{app_url}/compare?name={cfg.out}")
    wait_for_app(page)
    page.get_by_text("Judges", exact=True).click()
    wait_for_app(page)
    expect(page.get_by_text("people: 4 votes on 4 pairs")).to_be_visible()
    picker = page.get_by_role("combobox", name="Judge")  # the named judge comes first
    expect(picker).to_have_value("smol-strict (pairwise judge: judge-smol, pairwise-v1)")
    page.get_by_role("button", name="Queue job").click()
    wait_for_app(page)
    expect(page.get_by_text("Details in the Logbook")).to_be_visible()
    with using_home(app_home):
        run_queued()
    page.reload()
    wait_for_app(page)
    page.get_by_text("Judges", exact=True).click()
    wait_for_app(page)
    line = page.get_by_text(re.compile(r"judge:smol-strict@pairwise-v1: accuracy .* \(4 shared"))
    expect(line).to_be_visible(timeout=60_000)
    expect(page.get_by_text(re.compile(r"position consistency .* \(4 pairs"))).to_be_visible()
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible()  # the agreement table
    with using_home(app_home):
        from podium.compare.judge import list_verdicts

        rows = list_verdicts(cfg.out)
    assert [r["voter"] for r in rows] == ["judge:smol-strict"] * 4
    assert [r["problem"] for r in rows] == [None] * 4  # guided decoding: every verdict parses

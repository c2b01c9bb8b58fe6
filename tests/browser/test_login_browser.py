"""Login through a real OpenID Connect provider, in a real Chromium, as two people.

The provider is panva/node-oidc-provider (tests/oidc/provider.mjs, installed by `make
oidc-provider` with `npm ci`) on a loopback port; `podium app` runs with login configured
(PODIUM_OIDC_*), so Streamlit's `st.login` redirects to it, and the app resolves the
e-mail it vouches for through the users table: viewer@example.org is a viewer,
reviewer@example.org a reviewer. The viewer sees no job, vote or re-run controls and the
server refuses the same request; the reviewer's vote is stored under their e-mail; the
Logbook names who submitted each job. The app is served as docker-compose.yml serves a
team: two app processes behind `podium app`'s sticky proxy.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from app_driver import (
    REPO,
    free_port,
    running,
    server_command,
    using_home,
    wait_for_app,
    wait_healthy,
)
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser

OIDC_DIR = REPO / "tests" / "oidc"
ADMIN = "boss@example.org"
OPERATOR = "op@example.org"
VIEWER = "viewer@example.org"
REVIEWER = "reviewer@example.org"
NAMES = {VIEWER: "Vera Viewer", REVIEWER: "Rita Reviewer"}  # as tests/oidc/provider.mjs
UNVERIFIED_ADMIN = "claims-the-admin"  # the provider says email ADMIN, email_verified false
CLIENT = {"PODIUM_OIDC_CLIENT_ID": "podium", "PODIUM_OIDC_CLIENT_SECRET": "podium-test-secret"}


@dataclass(frozen=True)
class Stack:
    url: str
    home: Path
    comparison: str
    jobs: dict[str, str]  # job id -> submitter


def _seed(home: Path) -> tuple[str, dict[str, str]]:
    """Users and roles, a comparison to vote on, and two jobs by two submitters."""
    from compare_data import BAD, GOOD, register_dead, write_prompts, write_samples

    from podium.compare.job import CompareConfig, run_compare
    from podium.identity import User
    from podium.jobs.cards import Card
    from podium.jobs.queue import create_job
    from podium.reporting import Reporter
    from podium.store.read.export import ExportConfig
    from podium.store.read.refs import TableRef
    from podium.store.state.users import grant

    admin = User(name=ADMIN, role="admin", source="config")
    for name, role in ((VIEWER, "viewer"), (REVIEWER, "reviewer"), (OPERATOR, "operator")):
        grant(admin, name, role)
    table = write_prompts("evals.login_colours")
    models = [register_dead("login-alpha"), register_dead("login-omega")]
    cfg = CompareConfig(
        models=models, input=TableRef(name=table), out="cmp.login", max_tokens=32, checks=["json"]
    )
    write_samples("gen.login_alpha", models[0], table, cfg, GOOD)
    write_samples("gen.login_omega", models[1], table, cfg, BAD)
    run_compare(cfg, Reporter())
    jobs = {}
    for who in (User(name=OPERATOR, role="operator", source="config"), admin):
        export = ExportConfig(input=TableRef(name=table), path=f"{who.name}.jsonl")
        jobs[create_job(Card("export", export), user=who)] = who.name  # queued; no worker
    return cfg.out, jobs


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, artifacts_dir: Path) -> Iterator[Stack]:
    if shutil.which("node") is None or not (OIDC_DIR / "node_modules").is_dir():
        pytest.fail("the test OIDC provider is not installed: run `make oidc-provider`")
    home = tmp_path_factory.mktemp("login-home")
    issuer_port, app_port = free_port(), free_port()
    issuer, url = f"http://127.0.0.1:{issuer_port}", f"http://127.0.0.1:{app_port}"
    settings = {
        "PODIUM_HOME": str(home),
        "PODIUM_OIDC_ISSUER": issuer,
        "PODIUM_ADMINS": ADMIN,
        "PODIUM_DEFAULT_ROLE": "none",
        **CLIENT,
    }
    saved = {k: os.environ.get(k) for k in settings}
    os.environ.update(settings)
    try:
        with using_home(home):
            comparison, jobs = _seed(home)
    finally:
        for key, value in saved.items():
            os.environ.pop(key) if value is None else os.environ.__setitem__(key, value)
    provider_env = dict(
        os.environ,
        ISSUER_PORT=str(issuer_port),
        REDIRECT_URI=f"{url}/oauth2callback",
        CLIENT_ID=CLIENT["PODIUM_OIDC_CLIENT_ID"],
        CLIENT_SECRET=CLIENT["PODIUM_OIDC_CLIENT_SECRET"],
    )
    provider_log = artifacts_dir / "login-oidc-provider.log"
    app_log = artifacts_dir / "login-app-server.log"
    # As docker-compose.yml serves a team: two app processes behind the sticky proxy, so
    # the login's redirects, its cookie and every session stay on one process.
    app_env = dict(os.environ, **settings, PYTHONUNBUFFERED="1", PODIUM_APP_PROCESSES="2")
    with running(["node", "provider.mjs"], provider_env, OIDC_DIR, provider_log) as provider:
        wait_healthy(provider, f"{issuer}/.well-known/openid-configuration", provider_log)
        with running(server_command(app_port), app_env, REPO, app_log) as app:
            wait_healthy(app, f"{url}/_stcore/health", app_log)
            yield Stack(url=url, home=home, comparison=comparison, jobs=jobs)


def log_in(page: Page, stack: Stack, email: str, path: str = "", *, signed_in: bool = True) -> None:
    """The whole redirect dance: app -> provider's login and consent pages -> app."""
    page.goto(f"{stack.url}/{path}")
    wait_for_app(page)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/interaction/**")
    page.locator("input[name=login]").fill(email)
    page.locator("input[name=password]").fill("any password")
    page.get_by_role("button", name="Sign-in").click()
    page.get_by_role("button", name="Continue").click()  # consent to share e-mail, profile
    page.wait_for_url(f"{stack.url}/**")
    wait_for_app(page)
    if signed_in:
        expect(page.get_by_text(f"Signed in as {NAMES[email]}")).to_be_visible()


def test_an_unverified_email_never_signs_in_even_as_the_admins_address(
    app_page: Page, stack: Stack, artifacts_dir: Path
) -> None:
    """Issue 38: a provider returning email_verified false for the admin's address made
    that login admin."""
    page = app_page
    log_in(page, stack, UNVERIFIED_ADMIN, "logbook", signed_in=False)
    expect(page.get_by_text("has not verified", exact=False)).to_be_visible()
    assert page.get_by_text("Signed in as", exact=False).count() == 0
    assert page.get_by_text("· admin", exact=False).count() == 0
    assert page.get_by_role("heading", name="Logbook").count() == 0
    page.screenshot(path=str(artifacts_dir / "login-unverified.png"), full_page=True)


def test_a_viewer_sees_no_write_controls_and_the_server_refuses_them(
    app_page: Page, stack: Stack, artifacts_dir: Path
) -> None:
    from podium.compare.table import load_comparison
    from podium.compare.votes import blind_pair, cast_vote, list_votes
    from podium.errors import PermissionDenied
    from podium.jobs.cards import Card
    from podium.jobs.queue import create_job, list_jobs
    from podium.store.read.export import ExportConfig
    from podium.store.read.refs import TableRef
    from podium.store.state.users import oidc_user

    page = app_page
    log_in(page, stack, VIEWER, "logbook")
    expect(page.get_by_text("· viewer", exact=False).first).to_be_visible()
    page.goto(f"{stack.url}/logbook")
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Logbook")).to_be_visible()
    assert page.get_by_text("New job").count() == 0
    assert page.get_by_role("button", name="Re-run").count() == 0
    page.goto(f"{stack.url}/compare?name={stack.comparison}")
    wait_for_app(page)
    page.get_by_text("Blind vote", exact=True).click()
    wait_for_app(page)
    expect(page.get_by_text("voting needs reviewer")).to_be_visible()
    assert page.get_by_role("button", name="A is better").count() == 0
    page.screenshot(path=str(artifacts_dir / "login-viewer.png"), full_page=True)

    # A forged request reaches the same functions with the identity the login resolved.
    with using_home(stack.home):
        viewer = oidc_user(VIEWER)
        assert viewer.role == "viewer"
        comparison = load_comparison(stack.comparison)
        pair = blind_pair(comparison, comparison.items[0], viewer.name)
        with pytest.raises(PermissionDenied, match="vote needs 'reviewer'"):
            cast_vote(comparison, pair, "A", viewer)
        export = ExportConfig(input=TableRef(name="evals.login_colours"), path="v.jsonl")
        with pytest.raises(PermissionDenied, match="run job needs 'operator'"):
            create_job(Card("export", export), user=viewer)
        assert list_votes(stack.comparison) == [] and len(list_jobs()) == 2


def test_a_reviewer_votes_as_themselves(app_page: Page, stack: Stack) -> None:
    from podium.compare.votes import list_votes

    page = app_page
    log_in(page, stack, REVIEWER)
    page.goto(f"{stack.url}/compare?name={stack.comparison}")
    wait_for_app(page)
    page.get_by_text("Blind vote", exact=True).click()
    wait_for_app(page)
    expect(page.get_by_text(f"0 of 4 prompts voted by {REVIEWER}")).to_be_visible()
    page.get_by_role("button", name="A is better").click()
    wait_for_app(page)
    expect(page.get_by_text(f"1 of 4 prompts voted by {REVIEWER}")).to_be_visible()
    with using_home(stack.home):
        assert [v["voter"] for v in list_votes(stack.comparison)] == [REVIEWER]


def test_the_logbook_names_each_jobs_submitter(app_page: Page, stack: Stack) -> None:
    page = app_page
    log_in(page, stack, REVIEWER)
    for job_id, submitter in stack.jobs.items():
        page.goto(f"{stack.url}/logbook?job={job_id}")
        wait_for_app(page)
        expect(page.get_by_text(f"submitted by {submitter}")).to_be_visible()


def test_log_out_ends_a_copied_login_cookie(app_page: Page, stack: Stack) -> None:
    """Issue 44, point 21: a login cookie copied before "Log out" worked for 30 days."""
    log_in(app_page, stack, REVIEWER)
    copied = app_page.context.cookies()
    assert any(c["name"].startswith("_streamlit_user") for c in copied)
    app_page.get_by_role("button", name="Log out").click()
    # The app clears its cookie, then sends the browser to the provider's logout page.
    for _ in range(120):
        if not any(c["name"].startswith("_streamlit_user") for c in app_page.context.cookies()):
            break
        app_page.wait_for_timeout(250)
    else:
        pytest.fail("Log out left the login cookie in this browser")

    browser = app_page.context.browser
    assert browser is not None
    other = browser.new_context()
    try:
        other.add_cookies(copied)  # type: ignore[arg-type]  # as read, so as written
        page = other.new_page()
        page.goto(stack.url)
        wait_for_app(page)
        expect(page.get_by_text("This login was ended by Log out")).to_be_visible()
        assert page.get_by_text(f"Signed in as {NAMES[REVIEWER]}").count() == 0
    finally:
        other.close()
    # A new login counts again (the provider kept its own session: no password asked).
    app_page.goto(stack.url)
    wait_for_app(app_page)
    app_page.get_by_role("button", name="Log in").click()
    expect(app_page.get_by_text(f"Signed in as {NAMES[REVIEWER]}")).to_be_visible()

"""Real-browser fixtures: one Podium app server and one Debian Chromium per session.

- `app_home`: the Podium home the server reads (demo tables + the Browse test tables).
  Other tests may write more data into it with `using_home(app_home)`; the running app
  reads the catalog on every rerun, so new tables show up without a restart.
- `app_url`: base URL of `podium app` on a free loopback port, healthy before tests run.
- `browser`: Playwright driving the `chromium` binary from the Debian package (never a
  browser downloaded by `playwright install`).
- `app_page`: a fresh browser tab (own context) per test.

Helpers (`wait_for_app`, `using_home`, ...) live in `app_driver.py`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from app_driver import (
    CHROMIUM_FLAGS,
    REPO,
    free_port,
    running,
    server_command,
    using_home,
    wait_healthy,
)
from playwright.sync_api import Browser, Page, expect, sync_playwright

# The machine is shared and slow; Streamlit reruns over real tables can take seconds.
expect.set_options(timeout=30_000)


@pytest.fixture(scope="session")
def app_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from browse_data import make_browse_tables

    from podium.store.write.demo import load_demo

    home = tmp_path_factory.mktemp("browser-home")
    with using_home(home):
        load_demo()
        make_browse_tables()
    return home


@pytest.fixture(scope="session")
def app_url(app_home: Path, artifacts_dir: Path) -> Iterator[str]:
    port = free_port()
    env = dict(os.environ, PODIUM_HOME=str(app_home), PYTHONUNBUFFERED="1")
    log_path = artifacts_dir / "browser-app-server.log"
    with running(server_command(port), env, REPO, log_path) as proc:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(proc, f"{url}/_stcore/health", log_path)
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # Module scope: Playwright's sync API keeps an asyncio loop running in this thread
    # while it is open, and code under test elsewhere calls asyncio.run().
    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("Debian's chromium is not installed: apt-get install -y chromium")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture
def app_page(browser: Browser, app_url: str) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    context.set_default_timeout(30_000)
    page = context.new_page()
    yield page
    context.close()

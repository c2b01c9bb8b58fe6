"""Helpers for driving `podium app` in a real browser: a loopback port, the server
command, starting a server and waiting until it is healthy, pointing this process at a
Podium home, and waiting for a Streamlit rerun."""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Locator, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from podium.config import reset_settings

REPO = Path(__file__).resolve().parents[2]
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
START_TIMEOUT_S = 90


@contextlib.contextmanager
def using_home(home: Path) -> Iterator[None]:
    """Point this test process's Podium settings at `home` for the duration."""
    old = os.environ.get("PODIUM_HOME")
    os.environ["PODIUM_HOME"] = str(home)
    reset_settings()
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("PODIUM_HOME", None)
        else:
            os.environ["PODIUM_HOME"] = old
        reset_settings()


def stop_process_group(proc: subprocess.Popen[bytes], timeout_s: float = 15) -> None:
    """SIGTERM a server started with start_new_session=True and all it started; then KILL."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@contextlib.contextmanager
def running(
    command: list[str], env: dict[str, str], cwd: Path, log: Path, stop_timeout_s: float = 15
) -> Iterator[subprocess.Popen[bytes]]:
    """A server in its own process group (so that stopping it stops all it started),
    its output in `log`; stopped when the block ends."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        yield proc
    finally:
        stop_process_group(proc, stop_timeout_s)


def wait_healthy(proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
    """Poll `url` until it answers 200; fail the test if the server exits or is too slow."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if proc.poll() is not None:
            pytest.fail(f"{url}: process exited with {proc.returncode}; see {log}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2).status_code == 200:
                return
        if time.monotonic() > deadline:
            pytest.fail(f"{url} not up after {START_TIMEOUT_S}s; see {log}")
        time.sleep(0.5)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_command(port: int) -> list[str]:
    """`podium app` on a loopback port, as a person would start it."""
    return [sys.executable, "-m", "podium.cli", "app", "--host", "127.0.0.1", "--port", str(port)]


# True once the app has settled: its script state "notRunning" and unchanged for
# `quietMs` since its last change during this wait, or, when it has not changed since the
# wait began, for `startMs` (time for an action's rerun to begin: it starts only once the
# server has the browser's message). A MutationObserver stamps every change of the state,
# so a run shorter than a poll still counts. The state, not Streamlit's status widget:
# `--client.toolbarMode minimal` never draws that widget, so waiting for it to go was a
# one-second sleep that returned mid-run. The quiet spell is short: the job tray and the
# Logbook's panels rerun as fragments every 2 s each, flicking the state to "running"
# and back, and a 300-ms spell was rarely free of them on the Logbook at load 25.
_SETTLED = """([quietMs, startMs, wait]) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (app === null) return false;
  const now = performance.now();
  if (window.__podiumApp !== app) {
    window.__podiumApp = app;
    window.__podiumChanged = -Infinity;
    new MutationObserver(() => { window.__podiumChanged = performance.now(); })
      .observe(app, {attributes: true, attributeFilter: ["data-test-script-state"]});
  }
  if (window.__podiumWait !== wait) {
    window.__podiumWait = wait;
    window.__podiumStart = now;
  }
  if (app.getAttribute("data-test-script-state") !== "notRunning") return false;
  return window.__podiumChanged > window.__podiumStart
    ? now - window.__podiumChanged >= quietMs
    : now - window.__podiumStart >= startMs;
}"""
QUIET_MS = 100
START_MS = 500
_waits = itertools.count()


def wait_for_app(page: Page, timeout_ms: int = 60_000) -> None:
    """Wait until the app is drawn and its runs are over: the run the last action asked
    for, if it began within START_MS. What the step needs next is for the caller to wait
    for (`expect(...)`)."""
    page.wait_for_function(
        _SETTLED, arg=[QUIET_MS, START_MS, next(_waits)], polling=50, timeout=timeout_ms
    )


def choose_option(
    page: Page,
    combobox: Locator,
    option: re.Pattern[str] | str | None,
    *,
    typed: str = "",
    multi: bool = False,
    tries: int = 3,
) -> None:
    """Open a select or multiselect and click `option` (the first when None). `typed` is
    typed into the box first, so the option is among the few the list draws (a long list
    draws only the options in view). A click that lands while the page reruns closes the
    list, before the option shows or between finding it and clicking it (CI: "element
    was detached from the DOM", then 60 s waiting for an option no longer drawn): the
    list is opened again, up to `tries` times."""
    options = page.get_by_role("option", name=option) if option else page.get_by_role("option")
    for attempt in range(tries):
        wait_for_app(page)
        combobox.click()
        if typed:
            combobox.press_sequentially(typed)
        try:
            options.first.wait_for(state="visible", timeout=10_000)
            options.first.click(timeout=10_000)
        except PlaywrightTimeout:
            if attempt == tries - 1:
                raise
            page.keyboard.press("Escape")
            continue
        if multi:  # a multiselect stays open for more
            page.keyboard.press("Escape")
        wait_for_app(page)
        return

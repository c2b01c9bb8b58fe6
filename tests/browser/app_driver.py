"""Helpers for driving `podium app` in a real browser: a loopback port, the server
command, pointing this process at a Podium home, and waiting for a Streamlit rerun."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from playwright.sync_api import Page
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


def stop_process_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM a server started with start_new_session=True and all it started; then KILL."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_command(port: int) -> list[str]:
    """`podium app` on a loopback port, as a person would start it."""
    return [sys.executable, "-m", "podium.cli", "app", "--host", "127.0.0.1", "--port", str(port)]


def wait_for_app(page: Page, timeout_ms: int = 60_000) -> None:
    """Wait until the app is drawn and no rerun is running.

    The status widget ('Running…') shows while a rerun runs; a rerun triggered by the
    last action may not have started yet, so give it a moment to appear first.
    """
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout_ms)
    status = page.get_by_test_id("stStatusWidget")
    with contextlib.suppress(PlaywrightTimeout):
        status.wait_for(state="attached", timeout=1_000)
    status.wait_for(state="detached", timeout=timeout_ms)

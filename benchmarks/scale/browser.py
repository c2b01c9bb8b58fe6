"""The Browse page at scale, in real Chromium (Playwright, Debian's chromium) against one
`podium up`: the benchmark's table beside a small table cut from the same JSONL, in the
same home, server and browser, so each figure has a baseline from the same run.

Per table: the first paint of its first open in the server (its snapshot's statistics and
pages not cached yet), the first paint in a new tab (median of 3), `changes` seeded page
changes typed into the page box (p50, p95), the page at 90% of the rows, a search for the
rare word, and opening a sample by its id. A paint is timed from the navigation (or the
Enter) to the caption that shows the asked rows ("Rows 1–25 of 10,000,000") with the
app idle; every step checks that no error is shown. The server's peak RSS (its process
group: app and worker) is sampled throughout.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from benchmarks.scale.data import WORD
from benchmarks.scale.measure import NAN, Run, progress, timed
from benchmarks.scale.report import Figure
from benchmarks.scale.steps import TABLE, Bench

REPO = Path(__file__).resolve().parents[2]
SMALL_TABLE = "bench.small"
SMALL_ROWS = 10_000
NEW_TABS = 3
FIRST_TRY_MS = 180_000  # the first open of Browse, before it is loaded again
CAPTION = re.compile(r"^(Rows [\d,]+–[\d,]+|No rows) of [\d,]+$")


def _load_run() -> Any:
    """tests/load/load_run.py: the load harness's server, sampler and page-box helpers
    (the same code the load test runs, not a copy of it)."""
    sys.path[:0] = [str(REPO / "tests" / "load"), str(REPO / "tests")]
    return __import__("load_run")


@dataclass
class Paints:
    """One table's timings in seconds, by step."""

    rows: int
    times: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def add(self, step: str, seconds: float) -> None:
        self.times.setdefault(step, []).append(seconds)
        progress(f"browser {self.rows:,} rows, {step}: {seconds:.2f} s")


def browser_steps(b: Bench, changes: int = 20) -> list[Figure]:
    """The Browse page on the benchmark's table against a SMALL_ROWS-row table."""
    lr = _load_run()
    small = b.work / "small.jsonl"
    with b.data.open("rb") as src, small.open("wb") as dst:
        for _, line in zip(range(SMALL_ROWS), src, strict=False):
            dst.write(line)
    timed(b.podium("import", str(small), "--table", SMALL_TABLE), b.env)
    small_rows = min(SMALL_ROWS, b.rows)
    with _server(b, lr) as (url, pgid), lr.RssSampler(pgid) as rss:
        try:
            big, little = asyncio.run(_both(lr, url, (b.rows, small_rows), changes, b.seed))
        except Exception as exc:
            # A browser step that times out says only that it waited: what the server was
            # doing then (its log, and its threads' stacks where py-spy is installed) is
            # what the next person needs, and it is gone once the server stops.
            # The failure last: a caller that keeps only the tail (pytest's assertion
            # keeps 4,000 characters) lost it behind the thread stacks.
            raise SystemExit(
                _server_state(b.work / "podium-up.log", pgid)
                + f"\nthe Browse benchmark failed: {type(exc).__name__}: {str(exc)[:2000]}"
            ) from exc
    problems = big.errors + little.errors
    if problems:
        raise SystemExit("the Browse page showed errors:\n" + "\n".join(problems[:20]))
    server_mib = rss.peak / 2**20
    against = f"{small_rows:,}-row table"
    figures = []
    for step, values in big.times.items():
        if step == "page change":
            for name, pick in (("p50", statistics.median), ("p95", lr.p95)):
                figures.append(
                    Figure.timed(
                        f"Browse: page change {name} ({len(values)} pages)",
                        Run(pick(values), NAN),
                        Run(pick(little.times[step]), NAN),
                        against,
                    )
                )
            continue
        fig = Figure.timed(
            f"Browse: {step}",
            Run(statistics.median(values), NAN),
            Run(statistics.median(little.times[step]), NAN),
            against,
        )
        figures.append(fig)
    figures[0].extra = {"server peak RSS MiB": server_mib}
    return figures


@contextmanager
def _server(b: Bench, lr: Any) -> Iterator[tuple[str, int]]:
    """`podium up` on a free port in the benchmark's home; (its URL, its process group)."""
    port = lr.free_port()
    url = f"http://127.0.0.1:{port}"
    log = (b.work / "podium-up.log").open("wb")
    up = subprocess.Popen(
        b.podium("up", "--host", "127.0.0.1", "--port", str(port)),
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**b.env, "PYTHONUNBUFFERED": "1"},
        start_new_session=True,
    )
    try:
        lr.wait_healthy(url, up)
        yield url, up.pid
    finally:
        lr.stop_server(up)
        log.close()


async def _both(
    lr: Any, url: str, rows: tuple[int, int], changes: int, seed: int
) -> tuple[Paints, Paints]:
    from playwright.async_api import async_playwright

    executable = shutil.which("chromium")
    if executable is None:
        raise SystemExit("Debian's chromium is not installed: apt-get install -y chromium")
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=executable, args=lr.CHROMIUM_FLAGS)
        try:
            # The Browse page's first run (its imports) is paid by neither table.
            warm = await _tab(browser)
            await warm.goto(f"{url}/browse")
            await _first_run_over(warm)
            await warm.context.close()
            little = await _table(lr, browser, url, SMALL_TABLE, rows[1], changes, seed)
            big = await _table(lr, browser, url, TABLE, rows[0], changes, seed)
        finally:
            await browser.close()
    return big, little


async def _first_run_over(page: Any) -> None:
    """Until the server's first run of Browse is over, within the tab's timeout (10
    minutes, as every measured step: this run imports the app's modules on a machine
    that CI shares with another lane, and once took over the 2 minutes it was given).

    Twice in CI the page never drew while the server sat idle, no script running: a page
    still not drawn after FIRST_TRY_MS is loaded again once (said in the progress
    output), so one lost first connection does not cost the whole run. On a timeout, the
    page's state each time goes into the error."""
    states: list[str] = []
    for timeout in (FIRST_TRY_MS, None):
        try:
            await page.wait_for_function(_NOT_RUNNING, polling=100, timeout=timeout)
            return
        except Exception as exc:
            state = await page.evaluate(_SCRIPT_STATE)
            shown = (await page.inner_text("body"))[:1500]
            states.append(f"script state {state!r}, page text:\n{shown}")
            if timeout is None:
                raise RuntimeError(
                    "Browse's first run did not end: " + "\n-- then, reloaded: ".join(states)
                ) from exc
            progress(f"Browse's first run not over after {timeout / 1000:.0f} s: {states[0]}")
            await page.reload()


def _server_state(log: Path, pgid: int) -> str:
    """The server log's last lines and, where py-spy is on PATH, every Python thread's
    stack in the server's process group."""
    lines = log.read_text(errors="replace").splitlines()[-60:] if log.exists() else []
    parts = ["--- podium up log, last lines ---", *lines]
    spy = shutil.which("py-spy")
    if spy is not None:
        for proc in psutil.process_iter(["pid", "name"]):
            try:
                if os.getpgid(proc.pid) != pgid or "python" not in (proc.info["name"] or ""):
                    continue
            except (ProcessLookupError, psutil.Error):
                continue
            dump = subprocess.run(
                [spy, "dump", "--pid", str(proc.pid)], capture_output=True, text=True, timeout=60
            )
            parts += [f"--- py-spy dump of {proc.pid} ---", dump.stdout[-6000:], dump.stderr[-500:]]
    return "\n".join(parts)


async def _tab(browser: Any) -> Any:
    context = await browser.new_context(viewport={"width": 1440, "height": 1000})
    context.set_default_timeout(600_000)
    return await context.new_page()


_SCRIPT_STATE = (
    "() => document.querySelector('[data-testid=\"stApp\"]')"
    "?.getAttribute('data-test-script-state') ?? null"
)
_NOT_RUNNING = f"() => ({_SCRIPT_STATE})() === 'notRunning'"


async def _idle(page: Any) -> None:
    """Until the app's rerun is over. Called once what the step waits for is shown (so
    the rerun has begun). Not Streamlit's status widget: the app's minimal toolbar never
    draws it, so waiting for it to go was no wait at all (tests/load/load_run.py)."""
    await page.wait_for_function(_NOT_RUNNING, polling=100)


async def _timed(paints: Paints, step: str, act: Callable[[], Awaitable[None]]) -> None:
    started = time.perf_counter()
    await act()
    paints.add(step, time.perf_counter() - started)


async def _table(
    lr: Any, browser: Any, url: str, table: str, rows: int, changes: int, seed: int
) -> Paints:
    paints = Paints(rows)
    link = f"{url}/browse?table={table}"
    first = re.compile(r"^Rows 1–[\d,]+ of [\d,]+$")

    async def open_page(page: Any) -> None:
        await page.goto(link)
        await page.get_by_text(first).first.wait_for()
        await _idle(page)

    for i in range(1 + NEW_TABS):
        page = await _tab(browser)
        step = "first paint, the table's first open" if i == 0 else "first paint, a new tab"
        await _timed(paints, step, lambda: open_page(page))  # noqa: B023 - awaited now
        if i < NEW_TABS:
            await page.context.close()
    box = page.get_by_label(re.compile(r"^Page \(of "))
    pages = await lr._page_count(box)
    rng = random.Random(seed)

    async def go_to(target: int) -> None:
        shown = await lr._type_page(page, box, target)
        await shown.wait_for()
        await _idle(page)

    for _ in range(changes):
        target = rng.randint(1, pages)
        await _timed(paints, "page change", lambda: go_to(target))  # noqa: B023 - awaited now
    await _timed(paints, "the page at 90% of the rows", lambda: go_to(max(1, pages * 9 // 10)))
    paints.errors += await lr._shown_errors(page)

    async def search() -> None:
        caption = page.get_by_text(CAPTION).first
        before = await caption.inner_text()
        search_box = page.get_by_label("Search messages")
        await search_box.fill(WORD)
        await search_box.press("Enter")
        while await caption.inner_text() == before:
            await asyncio.sleep(0.05)
        await _idle(page)

    await _timed(paints, f"search for a rare word ({WORD})", search)
    paints.errors += await lr._shown_errors(page)

    sample = f"row-{max(0, math.floor(rows * 0.9) - 1):08d}"

    async def open_sample() -> None:
        await page.goto(f"{link}&sample={sample}")
        await page.get_by_text(f"Sample {sample}").first.wait_for()
        await _idle(page)

    await _timed(paints, "open a sample by id (row at 90%)", open_sample)
    paints.errors += await lr._shown_errors(page)
    await page.context.close()
    return paints

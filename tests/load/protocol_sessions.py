"""The load run's protocol mode: each session is a WebSocket speaking Streamlit's own
protocol (benchmarks/load_protocol.py), doing the browser mode's seeded mix (page
changes, searches, sample openings, labels) with the same widget changes a browser
sends. The client decodes messages and draws nothing, so ten sessions cost the server
what ten reviewers' browsers on their own machines would, and this machine almost
nothing besides.

A page change is timed from sending the page box's new value until the run that answers
it finished (`script_finished`) with the new "Rows a–b" caption and its rows."""

from __future__ import annotations

import asyncio
import random
import re
import sys
import time
from pathlib import Path

from session_mix import MIX, WORDS, SessionResult

from podium.app.rows.view_state import DEFAULT_PAGE_SIZE

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.load_protocol import Drawn, StreamSession  # noqa: E402

PAGE_BOX = re.compile(r"^Page \(of ([\d,]+)\)")
SEARCH_BOX = re.compile(r"^Search messages$")
LABEL_BUTTON = re.compile(r"^\d (good|bad)$")


class Tab:
    """One session's tab: a URL opened is a new WebSocket, as a page load is."""

    def __init__(self, url: str, table: str) -> None:
        self.url, self.table = url, table
        self.stream: StreamSession | None = None
        self.cookie: str | None = None

    async def goto(self, query: str) -> Drawn:
        await self.close()
        if self.cookie is None:
            self.cookie = await _page_cookies(self.url)
        self.stream = StreamSession(self.url, "browse", query, self.cookie)
        await self.stream.__aenter__()
        return await self.stream.open()

    async def close(self) -> None:
        if self.stream is not None:
            await self.stream.__aexit__(None, None, None)
            self.stream = None

    @property
    def live(self) -> StreamSession:
        assert self.stream is not None, "open the table first"
        return self.stream


async def _page_cookies(url: str) -> str:
    """The cookies a browser's first page load gets (the app process's route among them,
    behind `podium up --app-processes N`), as one Cookie header."""
    import httpx

    async with httpx.AsyncClient() as client:
        answer = await client.get(url, timeout=120)
    return "; ".join(f"{name}={value}" for name, value in answer.cookies.items())


def _pages(drawn: Drawn) -> int:
    found = PAGE_BOX.match(drawn.widget("number_input", PAGE_BOX).label)
    assert found
    return int(found.group(1).replace(",", ""))


async def _open(tab: Tab, rng: random.Random, result: SessionResult) -> None:
    await tab.goto(f"table={tab.table}")


async def _page(tab: Tab, rng: random.Random, result: SessionResult) -> None:
    if tab.live.drawn.rows_range() is None:  # a search matched nothing: no pages to change
        await _open(tab, rng, result)
    target = rng.randint(1, max(1, _pages(tab.live.drawn)))
    started = time.perf_counter()
    drawn = await tab.live.set_number(PAGE_BOX, target)
    first = (target - 1) * DEFAULT_PAGE_SIZE + 1
    shown = drawn.rows_range()
    if shown is None or shown[0] != first or not drawn.tables():
        raise AssertionError(f"page {target}: rows {shown} drawn, not from {first}")
    result.page_changes.append(time.perf_counter() - started)


async def _search(tab: Tab, rng: random.Random, result: SessionResult) -> None:
    text = rng.choice(WORDS) if rng.random() < 0.7 else ""
    await tab.live.set_text(SEARCH_BOX, text)


async def _sample(tab: Tab, rng: random.Random, result: SessionResult) -> None:
    row = f"row-{rng.randrange(0, 1000):08d}"
    await tab.goto(f"table={tab.table}&sample={row}")


async def _label(tab: Tab, rng: random.Random, result: SessionResult) -> None:
    await _sample(tab, rng, result)
    buttons = [
        b
        for _, e in sorted(tab.live.drawn.elements.items())
        if e.WhichOneof("type") == "button" and LABEL_BUTTON.match((b := e.button).label)
    ]
    if not buttons:
        raise AssertionError("no label buttons on the opened sample")
    choice = re.compile(f"^{re.escape(rng.choice(buttons).label)}$")
    drawn = await tab.live.click(choice)
    if not any(t.startswith("Labelled 1 row") for t in drawn.texts()):
        raise AssertionError("the label's run did not say 'Labelled 1 row'")
    await _open(tab, rng, result)


ACTIONS = {"page": _page, "search": _search, "sample": _sample, "label": _label}


async def session(
    url: str,
    table: str,
    seed: int,
    seconds: float,
    base_seed: int,
    result: SessionResult,
    think: float = 0.0,
) -> SessionResult:
    """The browser mode's loop (load_run.session), over the protocol; with `think`, a
    pause after each action, uniform over 0 to twice `think` seconds (a reviewer reading
    the page), drawn apart from the actions so a seed makes the same mix either way."""
    rng = random.Random(base_seed * 1000 + seed)
    pauses = random.Random(base_seed * 1000 + seed + 500)
    tab = Tab(url, table)
    deadline = time.monotonic() + seconds
    action, turn = "open", seed
    try:
        while time.monotonic() < deadline or turn - seed < 3:
            try:
                if action == "open":
                    await _open(tab, rng, result)
                action, turn = MIX[turn % len(MIX)], turn + 1
                await ACTIONS[action](tab, rng, result)
            except Exception as exc:  # noqa: BLE001 - a timeout or a missing widget is a failure
                result.errors.append(f"{action}: {type(exc).__name__}: {str(exc)[:300]}")
                result.actions[action] = result.actions.get(action, 0) + 1
                action = "open"
                continue
            result.actions[action] = result.actions.get(action, 0) + 1
            if think:
                await asyncio.sleep(pauses.uniform(0, 2 * think))
    finally:
        await tab.close()
    return result


async def sessions(
    url: str, table: str, count: int, seconds: float, seed: int, think: float = 0.0
) -> list[SessionResult]:
    return list(
        await asyncio.gather(
            *(session(url, table, i, seconds, seed, SessionResult(), think) for i in range(count))
        )
    )

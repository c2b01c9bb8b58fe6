"""The load benchmark's protocol client (benchmarks/load_protocol.py) against the real
app: a session spoken in Streamlit's own WebSocket protocol, no browser. Each page change
(the page box's new value, as the browser sends it) returns the rows of the page asked
for, read back from the Arrow the server sent, and the URL the run wrote."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest
from browse_data import CHAT, chat_row

from podium.app.rows.view_state import DEFAULT_PAGE_SIZE

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.load_protocol import StreamSession  # noqa: E402

pytestmark = pytest.mark.browser  # the browser tests' app server (no Chromium here)

PAGE_BOX = re.compile(r"^Page \(of ")


def test_a_page_change_over_the_protocol_returns_the_rows_of_that_page(app_url: str) -> None:
    async def session() -> None:
        async with StreamSession(app_url, "browse", f"table={CHAT}") as tab:
            first = await tab.open()
            rows = first.rows_range()
            assert rows is not None and rows[:2] == (1, DEFAULT_PAGE_SIZE)
            total = rows[2]
            assert [r["id"] for r in first.tables()[0].to_pylist()] == [
                chat_row(i)["id"] for i in range(DEFAULT_PAGE_SIZE)
            ]
            third = await tab.set_number(PAGE_BOX, 3)
            start = 2 * DEFAULT_PAGE_SIZE
            stop = min(total, start + DEFAULT_PAGE_SIZE)
            assert third.rows_range() == (start + 1, stop, total)
            shown = third.tables()[0].to_pylist()
            assert [r["id"] for r in shown] == [chat_row(i)["id"] for i in range(start, stop)]
            assert "page=3" in tab.query.split("&")  # the URL the run wrote
            # A second change in the same session (each rerun names the page by the hash
            # the server gave it: one named by its path read as a new visit, and every
            # other change was lost)
            second = await tab.set_number(PAGE_BOX, 2)
            assert second.rows_range() == (DEFAULT_PAGE_SIZE + 1, 2 * DEFAULT_PAGE_SIZE, total)
            shown = second.tables()[0].to_pylist()
            assert [r["id"] for r in shown] == [
                chat_row(i)["id"] for i in range(DEFAULT_PAGE_SIZE, 2 * DEFAULT_PAGE_SIZE)
            ]

    asyncio.run(session())

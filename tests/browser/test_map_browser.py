"""The Map page in a real Chromium against a real `podium app`: a table's rows drawn
as a WebGL scatter (pydeck), hover shows a row, a clicked point is selected and its
Browse link opens Browse filtered to exactly that row. Saves the README's screenshot."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from app_driver import using_home, wait_for_app
from playwright.sync_api import FloatRect, Page, expect

pytestmark = pytest.mark.browser
TABLE = "mapped.topics"
VIBES = "mapped.vibes"


@pytest.fixture(scope="module")
def mapped(app_home: Path) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "signals"))
    from signal_tables import write_chat  # type: ignore[import-not-found]
    from topic_corpus import topic_rows  # type: ignore[import-not-found]

    from podium.signals.job import SignalsConfig, compute_signals

    with using_home(app_home):
        write_chat(TABLE, [text for text, _ in topic_rows(120, k=6)])
        write_chat(VIBES, ["What do vaccines do to a virus?", "How do I knead dough?"], "v")
        compute_signals(
            SignalsConfig.model_validate(
                {
                    "table": {"name": TABLE},
                    "signals": ["embedding,topics,projection"],
                    "roles": ["assistant"],
                    "topics": {"clusters": 6, "categories": 3},
                }
            )
        )
        compute_signals(
            SignalsConfig.model_validate(
                {"table": {"name": VIBES}, "signals": ["embedding"], "roles": ["assistant"]}
            )
        )


def drawn_points(png: bytes, box: FloatRect) -> list[tuple[float, float]]:
    """Page positions of coloured pixels on the canvas (the points), a few per blob."""
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    sx, sy = box["width"] / image.width, box["height"] / image.height
    found: list[tuple[float, float]] = []
    for y in range(0, image.height, 3):
        for x in range(0, image.width, 3):
            r, g, b = image.getpixel((x, y))  # type: ignore[misc]
            if max(r, g, b) - min(r, g, b) > 80 and all(
                abs(x - fx) + abs(y - fy) > 12 for fx, fy in found
            ):
                found.append((x, y))
    return [(box["x"] + x * sx, box["y"] + y * sy) for x, y in found[:60]]


def test_the_map_draws_hovers_and_a_selection_opens_browse(
    app_page: Page, app_url: str, app_home: Path, mapped: None, artifacts_dir: Path
) -> None:
    page = app_page
    page.goto(f"{app_url}/map?table={TABLE}")
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Map")).to_be_visible()
    expect(page.get_by_text("120 rows with a point")).to_be_visible()
    canvas = page.locator("canvas#deckgl-overlay, [data-testid='stDeckGlJsonChart'] canvas")
    expect(canvas.first).to_be_visible()
    box = canvas.first.bounding_box()
    assert box is not None
    page.screenshot(path=str(artifacts_dir / "map.png"))
    expect(page.get_by_role("heading", name="Coverage")).to_be_visible()

    tooltip = page.locator(".deck-tooltip")
    spot, row = None, ""
    for x, y in drawn_points(canvas.first.screenshot(), box):  # hover what is drawn
        page.mouse.move(x, y)
        page.wait_for_timeout(60)
        text = tooltip.first.text_content() if tooltip.count() else ""
        found = re.match(r"(r\d{4}) · topic", text or "")
        if found and tooltip.first.is_visible():
            spot, row = (x, y), found.group(1)
            break
    assert spot is not None, "no tooltip over any drawn point"
    expect(tooltip).to_contain_text("topic")

    page.mouse.click(*spot)
    wait_for_app(page)
    link = page.get_by_role("link", name=re.compile(r"Open the 1 selected rows in Browse"))
    expect(link).to_be_visible()
    link.click()
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Browse")).to_be_visible()
    expect(page.get_by_text("Rows 1–1 of 1", exact=True)).to_be_visible()
    query = parse_qs(urlparse(page.url).query)
    assert query["table"] == [TABLE] and query["where"] == [f"id IN ('{row}')"]

    page.goto(f"{app_url}/map?table={TABLE}")
    wait_for_app(page)
    page.get_by_label("Eval set", exact=True).click()
    page.get_by_role("option", name=VIBES).first.click()
    wait_for_app(page)
    expect(page.get_by_text("1 prompts with no training row within 0.5")).to_be_visible()
    expect(page.get_by_role("button", name="Queue job")).to_be_visible()

    page.get_by_label("Rows like this text", exact=True).fill("a supernova and its galaxy")
    page.get_by_role("button", name="Find similar rows").click()
    wait_for_app(page)
    expect(page.get_by_role("link", name="Open these 10 rows in Browse")).to_be_visible()

"""The Map page in a real Chromium against a real `podium app`: a table's rows drawn
as a WebGL scatter (plotly's scattergl), hover shows a point's topic, a lasso drawn with the mouse
selects rows and its Browse link opens Browse filtered to exactly those rows; drawn as
one image (a big map), the lasso's shape selects exactly the points inside it. Saves the
README's screenshot."""

from __future__ import annotations

import json
import re
import sys
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


def drag_around_left_half(page: Page, box: FloatRect) -> None:
    """Drag the mouse around the left half of `box` (a lasso, in a lasso mode)."""
    left, top, width, height = box["x"], box["y"], box["width"], box["height"]
    corners = [(0.02, 0.02), (0.5, 0.02), (0.5, 0.98), (0.02, 0.98), (0.02, 0.03)]
    page.mouse.move(left + width * 0.02, top + height * 0.02)
    page.mouse.down()
    for fx, fy in corners:
        page.mouse.move(left + width * fx, top + height * fy, steps=12)
    page.mouse.up()


def lasso_left_half(page: Page, box: FloatRect) -> tuple[list[float], list[float]]:
    """Draw a lasso around the plot's left half; its shape as plotly keeps it (data
    coordinates), read before the page reruns."""
    drag_around_left_half(page, box)
    path = page.wait_for_function(
        "() => (document.querySelector(\"[data-testid='stPlotlyChart'] .js-plotly-plot\")"
        ".layout.selections || [])[0]?.path"
    ).json_value()
    vertices = [v.split(",") for v in path.strip("MZ").split("L")]
    return [float(x) for x, _ in vertices], [float(y) for _, y in vertices]


def browse_ids(page: Page) -> set[str]:
    """Follow the selection's Browse link: the ids it filters to, once Browse shows as
    many rows."""
    wait_for_app(page)
    link = page.get_by_role("link", name=re.compile(r"Open the \d+ selected rows in Browse"))
    expect(link).to_be_visible()
    selected = int(re.findall(r"\d+", link.inner_text())[0])
    link.click()
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Browse")).to_be_visible()
    expect(page.get_by_text(re.compile(rf"Rows 1–\d+ of {selected}$"))).to_be_visible()
    query = parse_qs(urlparse(page.url).query)
    assert query["table"] == [TABLE] and query["where"][0].startswith("id IN ('r")
    ids = set(re.findall(r"'(r\d+)'", query["where"][0]))
    assert len(ids) == selected
    return ids


def sent_elements(page: Page) -> list[str]:
    """The elements the server sends the page, in order, as the websocket brings them:
    the map's chart as "placeholder" or "chart", its caption as "caption"."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    from podium.app.views.map.figure import PLACEHOLDER_TEXT

    sent: list[str] = []

    def element(payload: str | bytes) -> None:
        if isinstance(payload, str):
            return
        message = ForwardMsg.FromString(payload)
        if message.WhichOneof("type") != "delta" or not message.delta.HasField("new_element"):
            return
        new = message.delta.new_element
        kind = new.WhichOneof("type") or ""
        if kind == "plotly_chart":
            kind = "placeholder" if PLACEHOLDER_TEXT in new.plotly_chart.spec else "chart"
        elif kind == "markdown" and "rows with a point" in new.markdown.body:
            kind = "caption"
        sent.append(kind)

    page.on("websocket", lambda ws: ws.on("framereceived", element))
    return sent


def test_the_map_starts_plotly_before_reading_its_points(
    app_page: Page, app_url: str, mapped: None
) -> None:
    """The Map's first run, with the map not built yet, shows an empty chart of its size
    before it reads the points, so the browser fetches and compiles Streamlit's plotly.js
    chunk (4.7 MB) while the server draws the map, not after (a cold first load of 1M
    points spent 2.5 s of 3.9 there); the map then takes the placeholder's place. A rerun
    sends no placeholder again (the drawn map stays until the next one replaces it), nor
    does a new tab on a map already built (it comes at once). `draw=points`: a map no
    other test here draws, so it is not built before this test."""
    page = app_page
    sent = sent_elements(page)
    url = f"{app_url}/map?table={TABLE}&draw=points"
    page.goto(url)
    wait_for_app(page)
    chart = page.locator("[data-testid='stPlotlyChart'] .js-plotly-plot")
    expect(chart.locator("canvas").first).to_be_visible()
    expect(page.get_by_text("120 rows with a point")).to_be_visible()
    assert "placeholder" in sent and "chart" in sent, sent
    assert sent.index("placeholder") < sent.index("caption") < sent.index("chart"), sent
    expect(page.get_by_text("Drawing the map")).to_have_count(0)
    assert page.locator("[data-testid='stPlotlyChart']").count() == 1

    first_run = len(sent)
    page.get_by_text("category", exact=True).click()  # a rerun, colored by category
    wait_for_app(page)
    expect(
        chart.locator(".legendtext", has_text=re.compile(r"^category \d+$")).first
    ).to_be_visible()
    assert "chart" in sent[first_run:] and "placeholder" not in sent[first_run:], sent

    tab = page.context.new_page()  # a new session on the map the server has built
    sent_again = sent_elements(tab)
    tab.goto(url)
    wait_for_app(tab)
    expect(
        tab.locator("[data-testid='stPlotlyChart'] .js-plotly-plot canvas").first
    ).to_be_visible()
    assert "chart" in sent_again and "placeholder" not in sent_again, sent_again


def test_the_map_draws_hovers_and_a_lasso_opens_browse(
    app_page: Page, app_url: str, app_home: Path, mapped: None, artifacts_dir: Path
) -> None:
    page = app_page
    page.goto(f"{app_url}/map?table={TABLE}")
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Map")).to_be_visible()
    expect(page.get_by_text("120 rows with a point")).to_be_visible()
    chart = page.locator("[data-testid='stPlotlyChart'] .js-plotly-plot")
    expect(chart.locator("canvas").first).to_be_visible()
    plot = chart.locator(".nsewdrag").first  # the plot area plotly's drag modes act on
    box = plot.bounding_box()
    assert box is not None
    page.screenshot(path=str(artifacts_dir / "map.png"))
    expect(page.get_by_role("heading", name="Coverage")).to_be_visible()

    hover = chart.locator(".hoverlayer .hovertext")
    found = None
    for x, y in drawn_points(page.screenshot(clip=box), box):  # hover what is drawn
        page.mouse.move(x, y)
        page.wait_for_timeout(60)
        text = hover.first.text_content() if hover.count() else ""
        found = re.match(r"\d+: \w", text or "")  # the topic's number and title
        if found:
            break
    assert found is not None, "no hover text over any drawn point"

    # a lasso around the left half of the plot (dragmode is lasso): its rows, and only
    # those, open in Browse
    lasso_left_half(page, box)
    assert 0 < len(browse_ids(page)) < 120

    # drawn as one image (as a big map is) by the canvas component, without plotly.js:
    # its markers hover their topic, and a lasso drawn with the mouse selects every point
    # inside its shape (found on the server), and only those
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{app_url}/map?table={TABLE}&draw=image")
    wait_for_app(page)
    expect(page.get_by_text(re.compile("drawn as one image with 120 of them"))).to_be_visible()
    canvas = page.locator("[data-testid='podium-map']")
    expect(canvas).to_have_attribute("data-drawn", re.compile(r"^\d"))  # the image painted
    assert page.locator("[data-testid='stPlotlyChart']").count() == 0
    page.screenshot(path=str(artifacts_dir / "map-image.png"))
    area = canvas.locator("canvas.podium-map-over")
    area.scroll_into_view_if_needed()  # the page's positions below are the viewport's
    box = area.bounding_box()
    assert box is not None
    tip = canvas.locator(".podium-map-tip")
    found = None
    for x, y in drawn_points(page.screenshot(clip=box), box):
        page.mouse.move(x, y)
        page.wait_for_timeout(30)
        found = re.match(r"\d+: \w", tip.text_content() or "") if tip.is_visible() else None
        if found:
            break
    assert found is not None, "no topic shown over any drawn marker"
    tables = page.locator("[data-testid='stDataFrame']")
    before = tables.count()
    page.mouse.click(x, y)  # the hovered marker: its row shows under the map
    wait_for_app(page)
    expect(tables).to_have_count(before + 1)
    assert canvas.get_attribute("data-shape") is None  # a click sends no shape
    drag_around_left_half(page, box)
    sent = json.loads(canvas.get_attribute("data-shape") or "null")  # before the rerun
    assert sent["box"] is False and len(sent["x"]) > 10
    shape = sent["x"], sent["y"]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))
    from even_odd import even_odd

    with using_home(app_home):
        from podium.store.read.read import read_small

        projected = read_small(f"{TABLE}__sig_projection")[0].to_pylist()
    inside = {p["id"] for p in projected if even_odd(p["x"], p["y"], *shape)}
    assert 0 < len(inside) < 120
    assert browse_ids(page) == inside
    assert not errors, errors  # the component's script threw nothing

    page.goto(f"{app_url}/map?table={TABLE}")
    wait_for_app(page)
    # Typed into the select's search, not picked from its list: the list a click opens
    # can close again as the page's periodic job tray redraws it.
    page.get_by_label("Eval set", exact=True).click()
    page.keyboard.type(VIBES)
    page.keyboard.press("Enter")
    wait_for_app(page)
    expect(page.get_by_text("1 prompts with no training row within 0.5")).to_be_visible()
    expect(page.get_by_role("button", name="Queue job")).to_be_visible()

    page.get_by_label("Rows like this text", exact=True).fill("a supernova and its galaxy")
    page.get_by_role("button", name="Find similar rows").click()
    wait_for_app(page)
    expect(page.get_by_role("link", name="Open these 10 rows in Browse")).to_be_visible()

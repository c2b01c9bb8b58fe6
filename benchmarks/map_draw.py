"""The Map page drawing N points, measured in Debian's Chromium: from the page's request to
the points drawn, against the same page drawing every point as a marker in the same run,
and a lasso on the big map to Browse's first page of the rows inside it.

    .venv/bin/python benchmarks/map_draw.py --points 1000000 --json

The draw depends only on the points, so nothing is embedded: a table of N short rows is
written to a fresh Podium home with its projection signal (points in K blobs) and its
topics signal (the blob of each point) written straight into map-ready signal tables.
Then `podium app` runs on that home and Playwright drives the `chromium` binary from the
Debian package (never a downloaded browser) as the browser tests do. Each round opens,
each in a new tab, the Map page drawing the N points as one image with a sample of
markers (`draw=image`, what `draw=auto` does above `RASTER_ABOVE`; drawn by the canvas
component, whose drawn time is the frame after its image was painted) and, as the baseline,
the same page with every point a scattergl marker (`draw=points`, the Map before the
image), and reads in the page the time (from navigation start) of the page title (its
script has begun to draw), of the chart element, and of plotly's first
`plotly_afterplot` with the figure's traces (and image) in the chart, then one more
frame (painted). The first round is cold (the app computes each figure, the browser
fetches and compiles plotly.js); the next ones reuse what the app cached for the
snapshot and, each side's tabs sharing one browser profile, the browser's cache, as a
person opening the Map again would. The ratio is the page's time over the baseline's,
round by round. Each round also opens, from a file, the image map as a plotly figure
in an HTML page with plotly.js from the plotly package (`ratios_to_bare`: what
Streamlit's page adds to plotly itself; a plotly.js of plotly's release, not
Streamlit's bundle). Then a lasso is drawn over the middle of the big map: the time to the
button (or link) that opens the selected rows in Browse, and from its click to Browse's
first page of them. The load average is reported beside.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "browser"))

TABLE = "bench.draw"
BATCH = 100_000

# Set before the page's scripts run: once the plot div appears, note when plotly has
# drawn it with every point (expected >= 0) or with its image and markers (expected < 0),
# and the frame after (the canvas composited).
WATCH = """() => {
  window.__drawn = null;
  const expected = %d;
  const points = (gd) => (gd._fullData || []).reduce((n, t) => n + (t._length || 0), 0);
  const ready = (gd) => expected >= 0 ? points(gd) >= expected
    : (gd._fullLayout.images || []).length > 0 && points(gd) > 0;
  const check = () => {
    if (window.__title == null && document.querySelector('h1')) {
      window.__title = performance.now();  // the page's script has begun to draw
    }
    if (window.__chart == null && document.querySelector(
        '[data-testid="stPlotlyChart"], [data-testid="podium-map"]')) {
      window.__chart = performance.now();
    }
    const canvas = document.querySelector('[data-testid="podium-map"][data-drawn]');
    if (expected < 0 && canvas && window.__drawn === null) {  // the canvas component's draw
      const at = parseFloat(canvas.dataset.drawn);  // the frame after its image was painted
      window.__drawn = {afterplot: at, painted: at, points: parseInt(canvas.dataset.markers),
                        chart: window.__chart, title: window.__title};
      return;
    }
    const gd = document.querySelector('[data-testid="stPlotlyChart"] .js-plotly-plot');
    if (gd && gd._fullLayout && ready(gd) && window.__drawn === null) {
      window.__drawn = {afterplot: performance.now(), points: points(gd), chart: window.__chart,
                       title: window.__title};
      requestAnimationFrame(() => { window.__drawn.painted = performance.now(); });
      return;
    }
    if (gd && !gd.__watched && gd.on) {
      gd.__watched = true;
      gd.on('plotly_afterplot', check);
    }
    if (window.__drawn === null) setTimeout(check, 20);
  };
  check();
}"""


def write_map(points: int, clusters: int, seed: int) -> None:
    """A table of `points` short rows, its projection (K blobs) and topics signals."""
    import numpy as np
    import pyarrow as pa

    from podium.signals.projection import Projection
    from podium.signals.store import Described, signal_table_name, write_signal
    from podium.signals.topics import PROP_TOPICS, Topics
    from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
    from podium.store.write.write import write_batches

    def rows() -> Iterator[pa.RecordBatch]:
        for start in range(0, points, BATCH):
            n = min(BATCH, points - start)
            yield pa.RecordBatch.from_pylist(
                [
                    {
                        "id": f"r{i:07d}",
                        "messages": [
                            {"role": "user", "content": f"Question {i}"},
                            {"role": "assistant", "content": f"Answer {i}, topic {i % clusters}"},
                        ],
                    }
                    for i in range(start, start + n)
                ],
                schema=SFT_ARROW_SCHEMA,
            )

    table = write_batches(TABLE, rows(), schema=SFT_SCHEMA)
    snap = table.current_snapshot()
    assert snap is not None
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 10, (clusters, 2))

    def blobs() -> Iterator[tuple[pa.Array, Any, Any]]:
        for start in range(0, points, BATCH):
            n = min(BATCH, points - start)
            cluster = (np.arange(start, start + n) % clusters).astype(np.int32)
            xy = (centers[cluster] + rng.normal(0, 1.5, (n, 2))).astype(np.float32)
            ids = pa.array([f"r{i:07d}" for i in range(start, start + n)])
            yield ids, cluster, xy

    def described(signal: str, version: int) -> Described:
        return Described(signal, version, {"seed": seed}, TABLE, snap.snapshot_id)

    write_signal(
        signal_table_name(TABLE, "projection"),
        (
            pa.RecordBatch.from_arrays(
                [ids, pa.array(xy[:, 0]), pa.array(xy[:, 1])], schema=Projection.schema
            )
            for ids, _, xy in blobs()
        ),
        Projection.schema,
        described("projection", Projection.version),
        {},
        lambda: {"rows": points},
    )
    topics = write_signal(
        signal_table_name(TABLE, "topics"),
        (
            pa.RecordBatch.from_arrays(
                [ids, pa.array(c // 4), pa.array(c), pa.array(np.zeros(len(c), np.float32))],
                schema=Topics.schema,
            )
            for ids, c, _ in blobs()
        ),
        Topics.schema,
        described("topics", Topics.version),
        {},
        lambda: {"rows": points},
    )
    titles = [
        {
            "cluster": c,
            "category": c // 4,
            "rows": points // clusters,
            "title": f"blob {c}",
            "description": "",
            "keywords": [],
        }
        for c in range(clusters)
    ]
    with topics.transaction() as tx:
        tx.set_properties({PROP_TOPICS: json.dumps(titles)})


# The image map as a plotly figure (the page draws it in the canvas), alone in a page
# with plotly.js from the plotly package: what plotly itself costs in this browser,
# without Streamlit.
BARE = """<!doctype html><html><body><div id="g" style="width:1100px;height:560px"></div>
<script src="plotly.min.js"></script><script>
const figure = %s;
Plotly.newPlot("g", figure.data, figure.layout).then(() => { window.__bare = performance.now(); });
</script></body></html>"""


def bare_page(home: Path) -> Path:
    """An HTML file drawing the Map's image figure of the table with plotly.js alone."""
    import plotly  # type: ignore[import-untyped]  # no type hints

    from podium.app.views.map.figure import drawn_map, plotly_figure

    folder = home / "bare"
    folder.mkdir()
    shutil.copy(Path(plotly.__file__).parent / "package_data" / "plotly.min.js", folder)
    spec = plotly_figure(drawn_map(TABLE, draw="image")).to_json()
    page = folder / "map.html"
    page.write_text(BARE % spec.replace("</", "<\\/"))
    return page


def open_bare(context: Any, page_file: Path) -> dict[str, Any]:
    page = context.new_page()
    page.goto(page_file.as_uri())
    page.wait_for_function("() => window.__bare != null", timeout=300_000, polling=50)
    done = page.evaluate("() => window.__bare")
    page.close()
    return {"afterplot_s": round(done / 1000, 3)}


def open_map(context: Any, url: str, draw: str, expected: int) -> tuple[Any, dict[str, Any]]:
    """A new tab on the Map page drawn as `draw`, once drawn: the tab and its times."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = context.new_page()
    page.add_init_script(f"({WATCH % expected})();")
    page.goto(f"{url}/map?table={TABLE}&draw={draw}")
    page.wait_for_function("() => window.__drawn != null", timeout=300_000, polling=50)
    try:  # a frame after the plot (none comes while the tab draws nothing new)
        page.wait_for_function("() => window.__drawn.painted", timeout=5_000)
    except PlaywrightTimeout:
        pass
    drawn = page.evaluate("() => window.__drawn")
    nav = page.evaluate("() => performance.getEntriesByType('navigation')[0].toJSON()")
    plotly_js = page.evaluate(  # Streamlit's chunk holding plotly.js, fetched on first use
        "() => performance.getEntriesByType('resource')"
        ".filter(e => e.name.includes('PlotlyChart'))"
        ".map(e => [e.startTime, e.responseEnd])[0] ?? [null, null]"
    )
    return page, {
        "afterplot_s": round(drawn["afterplot"] / 1000, 3),
        "painted_s": round(drawn["painted"] / 1000, 3) if "painted" in drawn else None,
        "html_s": round(nav["responseEnd"] / 1000, 3),
        "title_s": round(drawn["title"] / 1000, 3),
        "chart_element_s": round(drawn["chart"] / 1000, 3),
        "plotly_js_requested_s": round(plotly_js[0] / 1000, 3) if plotly_js[0] else None,
        "plotly_js_fetched_s": round(plotly_js[1] / 1000, 3) if plotly_js[1] else None,
        "markers": drawn["points"],
    }


def lasso_to_browse(page: Any) -> dict[str, Any]:
    """A lasso around the middle third of the drawn map: seconds from the mouse's release
    to the control that opens the rows in Browse, and from its click to Browse's first
    page of exactly that many rows."""
    import re

    from playwright.sync_api import expect

    plot = page.locator("[data-testid='podium-map'] canvas.podium-map-over").first
    plot.scroll_into_view_if_needed()
    box = plot.bounding_box()
    left, top, width, height = box["x"], box["y"], box["width"], box["height"]
    corners = [(1 / 3, 1 / 3), (2 / 3, 1 / 3), (2 / 3, 2 / 3), (1 / 3, 2 / 3), (1 / 3, 0.34)]
    page.mouse.move(left + width * corners[0][0], top + height * corners[0][1])
    page.mouse.down()
    for fx, fy in corners:
        page.mouse.move(left + width * fx, top + height * fy, steps=8)
    page.mouse.up()
    released = time.perf_counter()
    opens = page.get_by_text(re.compile(r"^Open the [\d,]+ selected rows in Browse$"))
    expect(opens).to_be_visible(timeout=300_000)
    shown = time.perf_counter()
    selected = int(re.sub(r"\D", "", opens.inner_text()))
    opens.click()
    expect(page.get_by_text(re.compile(rf"Rows 1–\d+ of {selected:,}$"))).to_be_visible(
        timeout=300_000
    )
    return {
        "selected": selected,
        "to_button_s": round(shown - released, 3),
        "to_browse_s": round(time.perf_counter() - shown, 3),
    }


def measure(url: str, points: int, rounds: int, shots: Path | None, bare: Path) -> dict[str, Any]:
    """Rounds of the page (draw=image), its baseline (draw=points) and the bare page of
    the image figure, then a lasso."""
    from app_driver import CHROMIUM_FLAGS  # type: ignore[import-not-found]
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    if executable is None:
        raise SystemExit("Debian's chromium is not installed: apt-get install -y chromium")
    out: dict[str, Any] = {"loads": [], "baseline": [], "bare_plotly": []}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        warm = browser.new_page()  # the server's first page imports its modules: neither side's
        warm.goto(url)
        warm.get_by_role("heading", name="Podium").first.wait_for(timeout=300_000)
        warm.context.close()
        sides = [("loads", "image", -1), ("baseline", "points", points)]
        contexts = {
            key: browser.new_context(viewport={"width": 1440, "height": 1000})
            for key in ("loads", "baseline", "bare")
        }
        for n in range(rounds):
            for key, draw, expected in sides:
                page, times = open_map(contexts[key], url, draw, expected)
                out[key].append({"load": n, **times})
                if shots is not None:
                    page.screenshot(path=str(shots / f"map_draw_{points}_{draw}_{n}.png"))
                if key == "loads" and n == rounds - 1:
                    out["lasso"] = lasso_to_browse(page)
                page.close()
            out["bare_plotly"].append({"load": n, **open_bare(contexts["bare"], bare)})
        browser.close()
    for name, against in (("ratios", "baseline"), ("ratios_to_bare", "bare_plotly")):
        out[name] = [
            round(a["afterplot_s"] / b["afterplot_s"], 3)
            for a, b in zip(out["loads"], out[against], strict=True)
        ]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=200_000)
    parser.add_argument("--clusters", type=int, default=24)
    parser.add_argument(
        "--rounds", type=int, default=3, help="page and baseline loads (the first is cold)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--screenshots", type=Path, help="save each load's page here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from app_driver import (
        free_port,
        running,
        server_command,
        wait_healthy,
    )

    home = Path(tempfile.mkdtemp(prefix="podium-map-draw-"))
    report: dict[str, Any] = {"points": args.points, "load_average": [os.getloadavg()[0]]}
    try:
        os.environ["PODIUM_HOME"] = str(home)
        started = time.perf_counter()
        write_map(args.points, args.clusters, args.seed)
        report["write_s"] = round(time.perf_counter() - started, 1)
        bare = bare_page(home)
        port = free_port()
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        log = home / "app.log"
        with running(server_command(port), env, ROOT, log) as proc:
            url = f"http://127.0.0.1:{port}"
            wait_healthy(proc, f"{url}/_stcore/health", log)
            report.update(measure(url, args.points, args.rounds, args.screenshots, bare))
        report["load_average"].append(os.getloadavg()[0])
    finally:
        shutil.rmtree(home, ignore_errors=True)
    if args.json:
        print(json.dumps(report))
    else:
        for key in ("loads", "baseline", "bare_plotly"):
            for row in report[key]:
                print(key, row)
        print("page / baseline (afterplot)", report["ratios"])
        print("page / bare plotly (afterplot)", report["ratios_to_bare"])
        print("lasso", report["lasso"])
        print("load average", report["load_average"])


if __name__ == "__main__":
    main()
